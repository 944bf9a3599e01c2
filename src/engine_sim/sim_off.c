/* The simulator's commands in a build without it (-DCONTEND_WITH_SIM=OFF):
 * `contend sim` and `contend topology` say it is not built, exit status 2.
 * (--engine sim is refused by the run options, src/run/options.c.) */
#include <stdio.h>

#include "sim_cmd.h"
#include "topo_cmd.h"

static int not_built(const char *cmd) {
  fprintf(stderr,
          "contend %s: the simulator is not built (configured with -DCONTEND_WITH_SIM=OFF); "
          "`contend version` lists the parts this binary has\n",
          cmd);
  return 2;
}

int contend_sim_main(int argc, char **argv) {
  (void)argc, (void)argv;
  return not_built("sim");
}

int contend_topology_main(int argc, char **argv) {
  (void)argc, (void)argv;
  return not_built("topology");
}
