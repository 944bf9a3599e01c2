/* rr_put_bw: random ring, N MPI_Put to each neighbour then flush; MiB/s sent per rank */
#include "ring.h"

static const contend_param_def params[] = RING_BW_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_PUT, 0, 0, 0); }

const contend_motif contend_motif_rr_put_bw = {
    .name = "rr_put_bw",
    .label = "RR Put BW",
    .help = "random ring, N MPI_Put to each neighbour then flush; MiB/s sent per rank",
    .role = CONTEND_ROLE_CANARY,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(ring_state),
    .setup = setup,
    .round = ring_round,
    .ring_of = ring_order,
    .epoch_of = ring_epoch,
    .prepare = ring_prepare,
    .iterate = ring_iterate,
    .check = ring_check,
};
