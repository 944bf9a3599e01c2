/* rr_bw: random ring, N messages each way per neighbour; MiB/s sent per rank */
#include "ring.h"

static const contend_param_def params[] = RING_BW_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_TWO_SIDED, 0, 0, 0); }

const contend_motif contend_motif_rr_bw = {
    .name = "rr_bw",
    .label = "RR Two-sided BW",
    .help = "random ring, N messages each way per neighbour; MiB/s sent per rank",
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .setup = setup,
    RING_MOTIF_HOOKS,
};
