/* halo2d: 5-point halo exchange over a 2-D process grid (TeaLeaf-like):
 * the nx x ny domain is split into px x py blocks (chosen to minimise the
 * halo when 0); every rank exchanges one face with each of its (up to) 4
 * neighbours: ly x depth x fields x elem_bytes bytes in x, lx x ... in y. */
#include "halo.h"

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"nx", CONTEND_P_INT, "4000", "cells", "global domain, x", 1, 1e9},
    {"ny", CONTEND_P_INT, "4000", "cells", "global domain, y", 1, 1e9},
    {"px", CONTEND_P_INT, "0", "ranks", "process grid, x (0: chosen with py)", 0, 1e7},
    {"py", CONTEND_P_INT, "0", "ranks", "process grid, y (0: chosen with px)", 0, 1e7},
    {"depth", CONTEND_P_INT, "1", "cells", "halo depth", 1, 64},
    {"fields", CONTEND_P_INT, "1", "count", "fields exchanged together", 1, 1024},
    {"elem_bytes", CONTEND_P_INT, "8", "B", "bytes per cell and field", 1, 1024},
    {"periodic", CONTEND_P_BOOL, "0", "", "wrap around the domain edges", 1, 0},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return halo_validate(p, nranks, 2, err, errlen);
}

static int setup(contend_ctx *c) { return halo_setup(c, 2); }

const contend_motif contend_motif_halo2d = {
    .name = "halo2d",
    .label = "Halo 2-D (5-point)",
    .help = "5-point halo exchange over a px x py grid; face sizes from the nx x ny domain",
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
