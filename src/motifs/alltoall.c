/* alltoall: MPI_Alltoall on every sub-communicator at once (GPCNeT
 * "Multiple Alltoall"); MiB/s sent to other ranks per rank. */
#include "contend/motif.h"

typedef struct {
  unsigned char *s, *r;
  size_t bytes;
} state;

static const contend_param_def params[] = {
    CONTEND_LOOP_PARAMS(10000, 1, 64, 1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes to each peer", 1, 1 << 26},
    CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->s = contend_alloc(c, s->bytes * (size_t)c->size);
  s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  c->msg_bytes = s->bytes;
  c->metric_scale = (double)(c->size - 1) * (double)s->bytes / (1024.0 * 1024.0);
  return 0;
}

/* Block j sent to rank j carries pattern words starting at j*bytes/8. */
static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int j = 0; j < c->size; j++)
    contend_pattern_fill(s->s + (size_t)j * s->bytes, s->bytes, c->rank, c->iter,
                         (size_t)j * (s->bytes / 8 + 1));
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  contend_alltoall(c, s->s, s->r, s->bytes);
}

static void check(contend_ctx *c) {
  state *s = c->state;
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
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .flags = CONTEND_MOTIF_COLL_DATA,
};
