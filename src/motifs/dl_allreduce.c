/* dl_allreduce congestor (optional): large-message MPI_Allreduce, like the
 * gradient reductions of deep-learning training. */
#include "allreduce_kernel.h"

typedef struct {
  double *s, *r;
  int count;
} state;

static const contend_param_def params[] = {CONTEND_LOOP_PARAMS(256, 1, 16, 1),
                                           {"msg_bytes", CONTEND_P_INT, "4194304", "B",
                                            "reduction size (multiple of 8: doubles)", 8, 1 << 30},
                                           CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  (void)nranks;
  return contend_allreduce_bytes_validate(p, "msg_bytes", err, errlen);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->count = (int)(contend_param_int(c->params, "msg_bytes") / 8);
  s->s = contend_alloc(c, sizeof(double) * (size_t)s->count);
  s->r = contend_alloc(c, sizeof(double) * (size_t)s->count);
  c->msg_bytes = sizeof(double) * (size_t)s->count;
  c->metric_scale = (double)c->msg_bytes / 1048576.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int i = 0; i < s->count; i++)
    s->s[i] = (double)(c->rank + (i & 15));
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  contend_allreduce(c, s->s, s->r, s->count, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  double ranks = (double)c->size * (c->size - 1) / 2.0;
  int bad = 0;
  if (c->verify_inject > 0 && (c->verify_checked + 1) % (uint64_t)c->verify_inject == 0)
    s->r[s->count / 2] += 1.0;
  for (int i = 0; i < s->count && !bad; i++)
    bad = s->r[i] != ranks + (double)c->size * (i & 15);
  c->verify_checked++;
  c->verify_errors += (uint64_t)bad;
}

const contend_motif contend_motif_dl_allreduce = {
    .name = "dl_allreduce",
    .label = "Allreduce (large)",
    .help = "congestor (optional): large-message MPI_Allreduce, deep-learning like",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
    .flags = CONTEND_MOTIF_COLL_DATA,
};
