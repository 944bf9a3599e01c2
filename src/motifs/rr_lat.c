/* rr_lat: random ring, Irecv+Isend with both neighbours then Waitall; latency = time/2 */
#include "ring.h"

static const contend_param_def params[] = RING_LAT_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_TWO_SIDED, 0, 0, 2); }

const contend_motif contend_motif_rr_lat = {
    .name = "rr_lat",
    .label = "RR Two-sided Lat",
    .help = "random ring, Irecv+Isend with both neighbours then Waitall; latency = time/2",
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .setup = setup,
    RING_MOTIF_HOOKS,
};
