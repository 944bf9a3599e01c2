/* `contend throttle` in a build without the throttle
 * (-DCONTEND_WITH_THROTTLE=OFF): says it is not built, exit status 2. */
#include <stdio.h>

#include "cmd.h"

int contend_throttle_main(int argc, char **argv, int verbose) {
  (void)argc, (void)argv;
  if (verbose)
    fprintf(stderr, "contend throttle: the throttle library is not built (configured with "
                    "-DCONTEND_WITH_THROTTLE=OFF); `contend version` lists the parts this "
                    "binary has\n");
  return 2;
}

int contend_throttle_library(char *out, size_t len) {
  snprintf(out, len, "not built (-DCONTEND_WITH_THROTTLE=OFF)");
  return -1;
}
