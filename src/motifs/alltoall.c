/* alltoall: MPI_Alltoall on every sub-communicator at once (GPCNeT
 * "Multiple Alltoall"); MiB/s sent to other ranks per rank. */
#include "msgbuf.h"

static const contend_param_def params[] = MSGBUF_PARAMS(10000, 1, 64, 1, "bytes to each peer");

static int setup(contend_ctx *c) {
  msgbuf_state *s = msgbuf_setup(c, (size_t)c->size);
  s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  c->metric_scale = msgbuf_mib(s, c->size - 1);
  return 0;
}

/* Block j sent to rank j carries pattern words starting at j*bytes/8. */
static void prepare(contend_ctx *c) {
  msgbuf_state *s = c->state;
  for (int j = 0; j < c->size; j++)
    contend_pattern_fill(s->s + (size_t)j * s->bytes, s->bytes, c->rank, c->iter,
                         (size_t)j * (s->bytes / 8 + 1));
}

static void iterate(contend_ctx *c) {
  msgbuf_state *s = c->state;
  contend_alltoall(c, s->s, s->r, s->bytes);
}

static void check(contend_ctx *c) {
  msgbuf_state *s = c->state;
  for (int j = 0; j < c->size; j++)
    contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter,
                          (size_t)c->rank * (s->bytes / 8 + 1));
}

const contend_motif contend_motif_alltoall = {
    .name = "alltoall",
    .label = "Multiple Alltoall",
    .help = "MPI_Alltoall on every sub-communicator at once; MiB/s sent per rank",
    .role = CONTEND_ROLE_CANARY,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(msgbuf_state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .flags = CONTEND_MOTIF_COLL_DATA,
};
