/* p2p_incast congestor: every rank sends one message to rank 0, which
 * posts one receive per sender (GPCNeT section 3.2.3).  Only the root takes
 * samples, the MiB/s it receives: a sender's 4 KiB Isend completes eagerly,
 * before its data arrives, so its own rate would mean nothing.  The root's
 * rate is over whole rounds (CONTEND_MOTIF_ROUND_TIMING): the senders run
 * ahead of it, their eager messages arrive before the receives that take
 * them are posted, and per-iteration rates counted that data in too short
 * a time (above the root's link rate). */
#include "contend/motif.h"

typedef struct {
  unsigned char *s, *r;
  size_t bytes;
} state;

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(256, 1, 512, 1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes each sender sends per iteration", 1, 1 << 26},
    CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->s = contend_alloc(c, s->bytes);
  if (c->rank == 0)
    s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  c->msg_bytes = s->bytes;
  c->metric_scale = c->rank == 0 ? (double)(c->size - 1) * (double)s->bytes / 1048576.0 : 0.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_fill(s->s, s->bytes, c->rank, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  if (c->rank == 0)
    for (int j = 1; j < c->size; j++)
      contend_irecv(c, s->r + (size_t)j * s->bytes, s->bytes, j, 0);
  else
    contend_isend(c, s->s, s->bytes, 0, 0);
  contend_waitall(c);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  if (c->rank == 0)
    for (int j = 1; j < c->size; j++)
      contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
}

const contend_motif contend_motif_p2p_incast = {
    .name = "p2p_incast",
    .label = "P2P Incast",
    .help =
        "congestor: every rank Isends to rank 0 of its sub-communicator; MiB/s received at rank 0",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .flags = CONTEND_MOTIF_ROUND_TIMING,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
};
