/* rr_put_bw: random ring, N MPI_Put to each neighbour then flush; MiB/s sent per rank */
#include "ring.h"

static const contend_param_def params[] = RING_BW_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_PUT, 0, 0, 0); }

const contend_motif contend_motif_rr_put_bw = {
    .name = "rr_put_bw",
    .label = "RR Put BW",
    .help = "random ring, N MPI_Put to each neighbour then flush; MiB/s sent per rank",
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .setup = setup,
    RING_MOTIF_HOOKS,
    .epoch_of = ring_epoch,
};
