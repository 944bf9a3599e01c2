/* pingpong: round trips of msg_bytes between pairs of ranks (rank i and
 * i + size/2, by default only ranks 0 and size/2): the initiator posts the
 * receive of the reply, sends, waits; the responder receives, then
 * replies.  Latency = round-trip time / 2, taken on the initiator (other
 * ranks take no samples), timed over the block of iterations as a
 * hand-written latency loop is. */
#include "workload.h"

typedef struct {
  wl_pair_state pp;
  size_t bytes;
} state;

static const contend_param_def params[] = {
    {"iters", CONTEND_P_INT, "1000", "count", "timed round trips per invocation", 1, 1e9},
    {"warmup", CONTEND_P_INT, "10", "count", "untimed round trips before them", 0, 1e9},
    {"msg_bytes", CONTEND_P_INT, "8", "B", "message size", 0, 1 << 30},
    WL_PAIRS_PARAM,
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return wl_pair_validate(p, nranks, err, errlen);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  wl_pair_setup(c, &s->pp, s->bytes);
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  if (s->pp.active)
    contend_pattern_fill(s->pp.s, s->bytes, c->rank, c->iter, 0);
}

static void iterate_block(contend_ctx *c, long n) {
  state *s = c->state;
  if (s->pp.active)
    wl_pingpong(c, s->pp.s, s->pp.r, s->bytes, s->pp.peer, s->pp.initiator, n);
}

static void iterate(contend_ctx *c) { iterate_block(c, 1); }

static void check(contend_ctx *c) {
  state *s = c->state;
  if (s->pp.active)
    contend_pattern_check(c, s->pp.r, s->bytes, s->pp.peer, c->iter, 0);
}

const contend_motif contend_motif_pingpong = {
    .name = "pingpong",
    .label = "Ping-pong",
    .help = "round trips between rank pairs; latency = round trip / 2 (usec)",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
    .flags = CONTEND_MOTIF_BLOCK_TIMING,
    .iterate_block = iterate_block,
};
