/* barrier: MPI_Barrier over the job. */
#include "workload.h"

static const contend_param_def params[] = {WL_ITERS(1), CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  c->metric_scale = 1.0;
  return 0;
}

static void iterate(contend_ctx *c) { contend_barrier(c); }

const contend_motif contend_motif_barrier = {
    .name = "barrier",
    .label = "Barrier",
    .help = "MPI_Barrier over the job",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .setup = setup,
    .iterate = iterate,
};
