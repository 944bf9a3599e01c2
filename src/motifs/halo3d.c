/* halo3d: 7-point halo exchange over a 3-D process grid: one face with each
 * of the (up to) 6 neighbours, sizes from the local block of the
 * nx x ny x nz domain. */
#include "halo.h"

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"nx", CONTEND_P_INT, "256", "cells", "global domain, x", 1, 1e9},
    {"ny", CONTEND_P_INT, "256", "cells", "global domain, y", 1, 1e9},
    {"nz", CONTEND_P_INT, "256", "cells", "global domain, z", 1, 1e9},
    {"px", CONTEND_P_INT, "0", "ranks", "process grid, x (0: chosen)", 0, 1e7},
    {"py", CONTEND_P_INT, "0", "ranks", "process grid, y (0: chosen)", 0, 1e7},
    {"pz", CONTEND_P_INT, "0", "ranks", "process grid, z (0: chosen)", 0, 1e7},
    {"depth", CONTEND_P_INT, "1", "cells", "halo depth", 1, 64},
    {"fields", CONTEND_P_INT, "1", "count", "fields exchanged together", 1, 1024},
    {"elem_bytes", CONTEND_P_INT, "8", "B", "bytes per cell and field", 1, 1024},
    {"periodic", CONTEND_P_BOOL, "0", "", "wrap around the domain edges", 1, 0},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return halo_validate(p, nranks, 3, err, errlen);
}

static int setup(contend_ctx *c) { return halo_setup(c, 3); }

const contend_motif contend_motif_halo3d = {
    .name = "halo3d",
    .label = "Halo 3-D (7-point)",
    .help = "7-point halo exchange over a px x py x pz grid; face sizes from the domain",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(halo_state),
    .setup = setup,
    .prepare = halo_prepare,
    .iterate = halo_iterate,
    .check = halo_check,
    .validate = validate,
};
