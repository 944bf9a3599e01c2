/* allreduce: MPI_Allreduce (sum of doubles) on every sub-communicator at
 * once (GPCNeT "Multiple Allreduce"); latency per call. */
#include "allreduce_kernel.h"

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(100000, 1, 200, 1),
    {"msg_bytes", CONTEND_P_INT, "8", "B", "reduction size (multiple of 8: doubles)", 8, 1 << 30},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  (void)nranks;
  return contend_allreduce_bytes_validate(p, "msg_bytes", err, errlen);
}

static int setup(contend_ctx *c) {
  contend_allreduce_kernel_setup(c, c->state, (int)(contend_param_int(c->params, "msg_bytes") / 8),
                                 CONTEND_OP_SUM);
  return 0;
}
static void prepare(contend_ctx *c) { contend_allreduce_kernel_prepare(c, c->state); }
static void iterate(contend_ctx *c) { contend_allreduce_kernel_iterate(c, c->state); }
static void check(contend_ctx *c) { contend_allreduce_kernel_check(c, c->state); }

const contend_motif contend_motif_allreduce = {
    .name = "allreduce",
    .label = "Multiple Allreduce",
    .help = "MPI_Allreduce (sum) on every sub-communicator at once; latency per call",
    .role = CONTEND_ROLE_CANARY,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(contend_allreduce_kernel),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
    .flags = CONTEND_MOTIF_COLL_DATA,
};
