/* wl_allreduce: MPI_Allreduce of `count` doubles over the job with
 * op=sum|min|max (TeaLeaf's dot products and norms).  The GPCNeT canary
 * `allreduce` (sums only, loop counts of the benchmark) is a different
 * motif. */
#include <stdio.h>
#include <string.h>

#include "allreduce_kernel.h"
#include "workload.h"

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"count", CONTEND_P_INT, "1", "count", "doubles reduced per call", 1, 1 << 27},
    {"op", CONTEND_P_STRING, "sum", "", "reduction: sum, min or max", 1, 0},
    CONTEND_PARAM_END};

static int parse_op(const char *s, contend_op *op) {
  if (!strcmp(s, "sum"))
    *op = CONTEND_OP_SUM;
  else if (!strcmp(s, "min"))
    *op = CONTEND_OP_MIN;
  else if (!strcmp(s, "max"))
    *op = CONTEND_OP_MAX;
  else
    return -1;
  return 0;
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  (void)nranks;
  contend_op op;
  if (parse_op(contend_param_str(p, "op"), &op)) {
    snprintf(err, errlen, "op='%s' is not valid: expected sum, min or max",
             contend_param_str(p, "op"));
    return -1;
  }
  return 0;
}

static int setup(contend_ctx *c) {
  contend_op op = CONTEND_OP_SUM;
  parse_op(contend_param_str(c->params, "op"), &op);
  contend_allreduce_kernel_setup(c, c->state, (int)contend_param_int(c->params, "count"), op);
  return 0;
}

const contend_motif contend_motif_wl_allreduce = {
    .name = "wl_allreduce",
    .label = "Allreduce",
    .help = "MPI_Allreduce of count doubles over the job, op=sum|min|max",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .setup = setup,
    .validate = validate,
    ALLREDUCE_MOTIF_HOOKS,
};
