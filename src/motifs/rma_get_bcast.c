/* rma_get_bcast congestor: a naive one-sided broadcast, every rank
 * MPI_Gets one message from rank 0's window, then flushes (GPCNeT section
 * 3.2.5): the requests form an incast at the root.  The root takes no
 * samples. */
#include "contend/motif.h"

typedef struct {
  unsigned char *r, *win;
  size_t bytes;
} state;

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(256, 1, 512, 1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes each rank gets per iteration", 1, 1 << 26},
    CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->r = contend_alloc(c, s->bytes);
  s->win = contend_win_alloc(c, c->rank == 0 ? s->bytes : 0);
  if (c->rank == 0)
    contend_pattern_fill(s->win, s->bytes, 0, 0, 0);
  contend_barrier(c);
  c->msg_bytes = s->bytes;
  c->metric_scale = c->rank == 0 ? 0.0 : (double)s->bytes / 1048576.0;
  return 0;
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  if (c->rank != 0) {
    contend_get(c, s->r, s->bytes, 0, 0);
    contend_flush_all(c);
  }
}

static void check(contend_ctx *c) {
  state *s = c->state;
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
    .state_size = sizeof(state),
    .setup = setup,
    .iterate = iterate,
    .check = check,
};
