/* nat_bw: natural ring (unshuffled node order) bandwidth */
#include "ring.h"

static const contend_param_def params[] = RING_BW_PARAMS;

static int setup(contend_ctx *c) { return ring_setup(c, RING_TWO_SIDED, 0, 1, 0); }

const contend_motif contend_motif_nat_bw = {
    .name = "nat_bw",
    .label = "Nat Two-sided BW",
    .help = "natural ring (unshuffled node order) bandwidth",
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .setup = setup,
    RING_MOTIF_HOOKS,
};
