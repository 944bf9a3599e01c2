/* p2p_bcast congestor (optional): rank 0 Isends one message to every other
 * rank (a naive point-to-point broadcast).  Only the receivers take
 * samples (MiB/s received): the root's Isends complete eagerly. */
#include "msgbuf.h"

static const contend_param_def params[] =
    MSGBUF_PARAMS(256, 1, 512, 1, "bytes the root sends to each rank");

static int setup(contend_ctx *c) {
  msgbuf_state *s = msgbuf_setup(c, 1);
  s->r = contend_alloc(c, s->bytes);
  c->metric_scale = c->rank == 0 ? 0.0 : msgbuf_mib(s, 1);
  return 0;
}

static void prepare(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank == 0)
    contend_pattern_fill(s->s, s->bytes, 0, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank == 0)
    for (int j = 1; j < c->size; j++)
      contend_isend(c, s->s, s->bytes, j, 0);
  else
    contend_irecv(c, s->r, s->bytes, 0, 0);
  contend_waitall(c);
}

static void check(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank != 0)
    contend_pattern_check(c, s->r, s->bytes, 0, c->iter, 0);
}

const contend_motif contend_motif_p2p_bcast = {
    .name = "p2p_bcast",
    .label = "P2P Bcast",
    .help = "congestor (optional): rank 0 Isends to every rank of its sub-communicator",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(msgbuf_state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
};
