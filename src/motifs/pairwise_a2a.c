/* pairwise_a2a congestor: all-to-all by pairwise exchange (step s: send to
 * rank+s, receive from rank-s), more uniform across MPI libraries than a
 * tuned MPI_Alltoall (GPCNeT section 3.2.2). */
#include "msgbuf.h"

static const contend_param_def params[] = MSGBUF_PARAMS(256, 1, 512, 1, "bytes to each peer");

static int setup(contend_ctx *c) {
  msgbuf_state *s = msgbuf_setup(c, 1);
  s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  c->metric_scale = msgbuf_mib(s, c->size - 1);
  return 0;
}

static void iterate(contend_ctx *c) {
  msgbuf_state *s = c->state;
  for (int step = 1; step < c->size; step++) {
    int to = (c->rank + step) % c->size, from = (c->rank - step + c->size) % c->size;
    contend_irecv(c, s->r + (size_t)from * s->bytes, s->bytes, from, 0);
    contend_isend(c, s->s, s->bytes, to, 0);
    contend_waitall(c);
  }
}

static void check(contend_ctx *c) {
  msgbuf_state *s = c->state;
  for (int j = 0; j < c->size; j++)
    if (j != c->rank)
      contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
}

const contend_motif contend_motif_pairwise_a2a = {
    .name = "pairwise_a2a",
    .label = "Alltoall (pairwise)",
    .help = "congestor: all-to-all by pairwise exchange; MiB/s sent per rank",
    .role = CONTEND_ROLE_CONGESTOR,
    .iters_base_ranks = 32,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(msgbuf_state),
    .setup = setup,
    .prepare = msgbuf_prepare,
    .iterate = iterate,
    .check = check,
};
