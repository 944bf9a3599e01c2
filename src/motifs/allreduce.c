/* allreduce: MPI_Allreduce (sum of doubles) on every sub-communicator at
 * once (GPCNeT "Multiple Allreduce"); latency per call. */
#include "contend/motif.h"

typedef struct {
  double *s, *r;
  int count;
} state;

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(100000, 1, 200, 1),
    {"msg_bytes", CONTEND_P_INT, "8", "B", "reduction size (multiple of 8: doubles)", 8, 1 << 30},
    CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->count = (int)(contend_param_int(c->params, "msg_bytes") / 8);
  s->s = contend_alloc(c, sizeof(double) * (size_t)s->count);
  s->r = contend_alloc(c, sizeof(double) * (size_t)s->count);
  c->msg_bytes = sizeof(double) * (size_t)s->count;
  c->metric_scale = 1.0;
  return 0;
}

/* Small integers keep the double sum exact whatever the reduction order. */
static double contribution(int rank, long iter, int i) {
  return (double)((rank + 1) * 3 + (iter & 1023) + i % 7);
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int i = 0; i < s->count; i++)
    s->s[i] = contribution(c->rank, c->iter, i);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  contend_allreduce(c, s->s, s->r, s->count, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  int bad = 0;
  if (c->verify_inject > 0 && (c->verify_checked + 1) % (uint64_t)c->verify_inject == 0)
    s->r[0] += 1.0;
  for (int i = 0; i < s->count && !bad; i++) {
    double want = 0;
    for (int r = 0; r < c->size; r++)
      want += contribution(r, c->iter, i);
    bad = s->r[i] != want;
  }
  c->verify_checked++;
  c->verify_errors += (uint64_t)bad;
}

const contend_motif contend_motif_allreduce = {
    .name = "allreduce",
    .label = "Multiple Allreduce",
    .help = "MPI_Allreduce (sum) on every sub-communicator at once; latency per call",
    .role = CONTEND_ROLE_CANARY,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
};
