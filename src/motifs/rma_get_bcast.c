/* rma_get_bcast congestor: a naive one-sided broadcast, every rank
 * MPI_Gets one message from rank 0's window, then flushes (GPCNeT section
 * 3.2.5): the requests form an incast at the root.  The root takes no
 * samples. */
#include "msgbuf.h"

static const contend_param_def params[] =
    MSGBUF_PARAMS(256, 1, 512, 1, "bytes each rank gets per iteration");

/* s: the window, the root's message */
static int setup(contend_ctx *c) {
  msgbuf_state *s = msgbuf_setup(c, 0);
  s->r = contend_alloc(c, s->bytes);
  s->s = contend_win_alloc(c, c->rank == 0 ? s->bytes : 0);
  if (c->rank == 0)
    contend_pattern_fill(s->s, s->bytes, 0, 0, 0);
  contend_barrier(c);
  c->metric_scale = c->rank == 0 ? 0.0 : msgbuf_mib(s, 1);
  return 0;
}

static void iterate(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank != 0) {
    contend_get(c, s->r, s->bytes, 0, 0);
    contend_flush_all(c);
  }
}

static void check(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank != 0)
    contend_pattern_check(c, s->r, s->bytes, 0, 0, 0);
}

const contend_motif contend_motif_rma_get_bcast = {
    .name = "rma_get_bcast",
    .label = "RMA Bcast",
    .help = "congestor: every rank MPI_Gets from rank 0's window, then flushes",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(msgbuf_state),
    .setup = setup,
    .iterate = iterate,
    .check = check,
};
