/* rr_bw_sync: random ring bandwidth, then a barrier on the sub-communicator */
#include "ring.h"

static const contend_param_def params[] = RING_BW_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_TWO_SIDED, 1, 0, 0); }

const contend_motif contend_motif_rr_bw_sync = {
    .name = "rr_bw_sync",
    .label = "RR Two-sided BW+Sync",
    .help = "random ring bandwidth, then a barrier on the sub-communicator",
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .setup = setup,
    RING_MOTIF_HOOKS,
};
