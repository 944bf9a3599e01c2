/* rr_get_lat: random ring, MPI_Get from both neighbours then flush; latency = time/2 */
#include "ring.h"

static const contend_param_def params[] = RING_LAT_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_GET, 0, 0, 2); }

const contend_motif contend_motif_rr_get_lat = {
    .name = "rr_get_lat",
    .label = "RR Get Lat",
    .help = "random ring, MPI_Get from both neighbours then flush; latency = time/2",
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .setup = setup,
    RING_MOTIF_HOOKS,
    .epoch_of = ring_epoch,
};
