/* rma_put_incast congestor: every rank MPI_Puts one message into its own
 * slot of rank 0's window, then flushes (GPCNeT section 3.2.4).  The root
 * is a passive target: it takes no samples. */
#include "contend/motif.h"

typedef struct {
  unsigned char *s, *win;
  size_t bytes;
} state;

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(256, 1, 512, 1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes each rank puts per iteration", 1, 1 << 26},
    CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->s = contend_alloc(c, s->bytes);
  s->win = contend_win_alloc(c, c->rank == 0 ? s->bytes * (size_t)c->size : 0);
  c->msg_bytes = s->bytes;
  c->metric_scale = c->rank == 0 ? 0.0 : (double)s->bytes / 1048576.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_fill(s->s, s->bytes, c->rank, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  if (c->rank != 0) {
    contend_put(c, s->s, s->bytes, 0, (size_t)c->rank * s->bytes);
    contend_flush_all(c);
  }
}

static void check(contend_ctx *c) {
  state *s = c->state;
  contend_barrier(c); /* every put of this iteration is flushed */
  if (c->rank == 0)
    for (int j = 1; j < c->size; j++)
      contend_pattern_check(c, s->win + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
  contend_barrier(c);
}

const contend_motif contend_motif_rma_put_incast = {
    .name = "rma_put_incast",
    .label = "RMA Incast",
    .help = "congestor: every rank MPI_Puts into rank 0's window, then flushes",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
};
