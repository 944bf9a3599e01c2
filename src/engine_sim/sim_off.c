/* The simulator in a build without it (-DCONTEND_WITH_SIM=OFF): `contend
 * sim` and `contend topology` say it is not built, exit status 2, and the
 * registered engine `sim` says so to --engine sim.  It keeps the throttle
 * rows as its options, as the built engine has them. */
#include <stdio.h>

#include "../throttle/params.h"
#include "contend/world.h"
#include "sim_cmd.h"
#include "topo_cmd.h"

static const contend_engine_options sim_options[] = {{ct_param_defs, CT_PARAM_WHAT}, {NULL, NULL}};

const contend_engine contend_engine_sim = {
    .name = "sim",
    .help = "the simulated fabric (not built)",
    .not_built = "the simulator is not built (configured with -DCONTEND_WITH_SIM=OFF)",
    .options = sim_options,
};

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
