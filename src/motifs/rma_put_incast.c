/* rma_put_incast congestor: every rank MPI_Puts one message into its own
 * slot of rank 0's window, then flushes (GPCNeT section 3.2.4).  The root
 * is a passive target: it takes no samples. */
#include "msgbuf.h"

static const contend_param_def params[] =
    MSGBUF_PARAMS(256, 1, 512, 1, "bytes each rank puts per iteration");

/* r: the window, a slot per rank at the root */
static int setup(contend_ctx *c) {
  msgbuf_state *s = msgbuf_setup(c, 1);
  s->r = contend_win_alloc(c, c->rank == 0 ? s->bytes * (size_t)c->size : 0);
  c->metric_scale = c->rank == 0 ? 0.0 : msgbuf_mib(s, 1);
  return 0;
}

static void iterate(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank != 0) {
    contend_put(c, s->s, s->bytes, 0, (size_t)c->rank * s->bytes);
    contend_flush_all(c);
  }
}

static void check(contend_ctx *c) {
  msgbuf_state *s = c->state;
  contend_barrier(c); /* every put of this iteration is flushed */
  if (c->rank == 0)
    for (int j = 1; j < c->size; j++)
      contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
  contend_barrier(c);
}

const contend_motif contend_motif_rma_put_incast = {
    .name = "rma_put_incast",
    .label = "RMA Incast",
    .help = "congestor: every rank MPI_Puts into rank 0's window, then flushes",
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
