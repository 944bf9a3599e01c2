/* incast: every rank but the root Isends msg_bytes to the root, which
 * posts one receive per sender (StressBench's Incast; the GPCNeT congestor
 * p2p_incast is the same kernel with the benchmark's loop counts). */
#include <stdio.h>

#include "workload.h"

typedef struct {
  unsigned char *s, *r;
  size_t bytes;
  int root;
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes each sender sends per iteration", 0, 1 << 30},
    {"root", CONTEND_P_INT, "0", "rank", "receiving rank (in the job)", 0, 1e7},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  if (nranks > 0 && contend_param_int(p, "root") >= nranks) {
    snprintf(err, errlen, "root=%lld but the job has %d ranks",
             (long long)contend_param_int(p, "root"), nranks);
    return -1;
  }
  return 0;
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->root = (int)contend_param_int(c->params, "root");
  s->s = contend_alloc(c, s->bytes);
  if (c->rank == s->root)
    s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  c->msg_bytes = s->bytes;
  c->metric_scale = 1.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_fill(s->s, s->bytes, c->rank, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  if (c->rank == s->root) {
    for (int j = 0; j < c->size; j++)
      if (j != s->root)
        contend_irecv(c, s->r + (size_t)j * s->bytes, s->bytes, j, 0);
  } else {
    contend_isend(c, s->s, s->bytes, s->root, 0);
  }
  contend_waitall(c);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  if (c->rank == s->root)
    for (int j = 0; j < c->size; j++)
      if (j != s->root)
        contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
}

const contend_motif contend_motif_incast = {
    .name = "incast",
    .label = "Incast",
    .help = "every rank sends msg_bytes to the root rank of the job",
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
