/* `contend record` in a build without OTF2: says so (exit status 2). */
#include <stdio.h>

#include "../trace_otf2/trace.h"
#include "cmd.h"

int contend_record_main(int argc, char **argv, int first) {
  (void)argc, (void)argv;
  const char *why = NULL;
  contend_trace_available(&why);
  if (first)
    fprintf(stderr, "contend record: error: not built: %s\n", why ? why : "no OTF2");
  return 2;
}
