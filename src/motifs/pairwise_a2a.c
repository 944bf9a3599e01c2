/* pairwise_a2a congestor: all-to-all by pairwise exchange (step s: send to
 * rank+s, receive from rank-s), more uniform across MPI libraries than a
 * tuned MPI_Alltoall (GPCNeT section 3.2.2). */
#include "contend/motif.h"

typedef struct {
  unsigned char *s, *r;
  size_t bytes;
} state;

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(256, 1, 512, 1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes to each peer", 1, 1 << 26},
    CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->s = contend_alloc(c, s->bytes);
  s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  c->msg_bytes = s->bytes;
  c->metric_scale = (double)(c->size - 1) * (double)s->bytes / (1024.0 * 1024.0);
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_fill(s->s, s->bytes, c->rank, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  for (int step = 1; step < c->size; step++) {
    int to = (c->rank + step) % c->size, from = (c->rank - step + c->size) % c->size;
    contend_irecv(c, s->r + (size_t)from * s->bytes, s->bytes, from, 0);
    contend_isend(c, s->s, s->bytes, to, 0);
    contend_waitall(c);
  }
}

static void check(contend_ctx *c) {
  state *s = c->state;
  for (int j = 0; j < c->size; j++)
    if (j != c->rank)
      contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
}

const contend_motif contend_motif_pairwise_a2a = {
    .name = "pairwise_a2a",
    .label = "Alltoall (pairwise)",
    .help = "congestor: all-to-all by pairwise exchange; MiB/s sent per rank",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
};
