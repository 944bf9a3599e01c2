/* wl_allreduce: MPI_Allreduce of `count` doubles over the job with
 * op=sum|min|max (TeaLeaf's dot products and norms).  The GPCNeT canary
 * `allreduce` (sums only, loop counts of the benchmark) is a different
 * motif. */
#include <stdio.h>
#include <string.h>

#include "workload.h"

typedef struct {
  double *s, *r;
  int count;
  contend_op op;
} state;

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
  state *s = c->state;
  s->count = (int)contend_param_int(c->params, "count");
  parse_op(contend_param_str(c->params, "op"), &s->op);
  s->s = contend_alloc(c, sizeof(double) * (size_t)s->count);
  s->r = contend_alloc(c, sizeof(double) * (size_t)s->count);
  c->msg_bytes = sizeof(double) * (size_t)s->count;
  c->metric_scale = 1.0;
  return 0;
}

/* Small integers: sums are exact whatever the reduction order. */
static double contribution(int rank, long iter, int i) {
  return (double)((rank * 7 + 3) % 101 + (iter & 1023) + i % 5);
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int i = 0; i < s->count; i++)
    s->s[i] = contribution(c->rank, c->iter, i);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  contend_allreduce(c, s->s, s->r, s->count, CONTEND_DT_DOUBLE, s->op);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  int bad = 0;
  if (c->verify_inject > 0 && (c->verify_checked + 1) % (uint64_t)c->verify_inject == 0)
    s->r[0] += 1.0;
  for (int i = 0; i < s->count && !bad; i++) {
    double want = contribution(0, c->iter, i);
    for (int r = 1; r < c->size; r++) {
      double v = contribution(r, c->iter, i);
      if (s->op == CONTEND_OP_SUM)
        want += v;
      else if (s->op == CONTEND_OP_MIN)
        want = v < want ? v : want;
      else
        want = v > want ? v : want;
    }
    bad = s->r[i] != want;
  }
  c->verify_checked++;
  c->verify_errors += (uint64_t)bad;
}

const contend_motif contend_motif_wl_allreduce = {
    .name = "wl_allreduce",
    .label = "Allreduce",
    .help = "MPI_Allreduce of count doubles over the job, op=sum|min|max",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
};
