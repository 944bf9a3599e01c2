/* pingpong_sweep: the ping-pong kernel over message sizes 0 B, 1 B, 2 B,
 * ... max_bytes (powers of two), as IMB PingPong / OSU latency: per size
 * `skip` untimed then `reps` timed round trips (`reps_large` above
 * large_bytes).  Each size is a series: the runner reports the latency
 * (round trip / 2, usec) per message size. */
#include <stdio.h>

#include "workload.h"

enum { MAXSIZES = 40 };

typedef struct {
  wl_pair_state pp;
  int nsizes;
  double *size;             /* series values (engine memory) */
  long first[MAXSIZES + 1]; /* first iteration of each size; first[nsizes] = total */
  long skip;
} state;

static const contend_param_def params[] = {
    {"min_bytes", CONTEND_P_INT, "0", "B", "smallest size (0, or rounded up to a power of two)", 0,
     1 << 30},
    {"max_bytes", CONTEND_P_INT, "4194304", "B", "largest size (4 MiB)", 0, 1 << 30},
    {"reps", CONTEND_P_INT, "1000", "count", "timed round trips per size up to large_bytes", 1,
     1e9},
    {"reps_large", CONTEND_P_INT, "100", "count", "timed round trips per size above large_bytes", 1,
     1e9},
    {"large_bytes", CONTEND_P_INT, "8192", "B", "sizes above this use reps_large", 0, 1 << 30},
    {"skip", CONTEND_P_INT, "10", "count", "untimed round trips before each size", 0, 1e9},
    WL_PAIRS_PARAM,
    CONTEND_PARAM_END};

/* The sizes of the sweep; returns their number. */
static int sizes(const contend_params *p, double *out) {
  const long lo = (long)contend_param_int(p, "min_bytes"),
             hi = (long)contend_param_int(p, "max_bytes");
  int n = 0;
  if (lo == 0)
    out[n++] = 0;
  for (long b = 1; b <= hi && n < MAXSIZES; b *= 2)
    if (b >= lo)
      out[n++] = (double)b;
  return n;
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  double v[MAXSIZES];
  if (contend_param_int(p, "min_bytes") > contend_param_int(p, "max_bytes") || sizes(p, v) == 0) {
    snprintf(err, errlen, "no message size between min_bytes=%lld and max_bytes=%lld",
             (long long)contend_param_int(p, "min_bytes"),
             (long long)contend_param_int(p, "max_bytes"));
    return -1;
  }
  return wl_pair_validate(p, nranks, err, errlen);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  double v[MAXSIZES];
  s->nsizes = sizes(c->params, v);
  s->size = contend_alloc(c, sizeof(double) * (size_t)s->nsizes);
  s->skip = (long)contend_param_int(c->params, "skip");
  const long reps = (long)contend_param_int(c->params, "reps"),
             reps_large = (long)contend_param_int(c->params, "reps_large"),
             large = (long)contend_param_int(c->params, "large_bytes");
  long it = 0;
  for (int k = 0; k < s->nsizes; k++) {
    s->size[k] = v[k];
    s->first[k] = it;
    it += s->skip + (v[k] > (double)large ? reps_large : reps);
  }
  s->first[s->nsizes] = it;
  wl_pair_setup(c, &s->pp, (size_t)v[s->nsizes - 1]);
  c->iterations = it;
  c->nseries = s->nsizes;
  c->series_value = s->size;
  return 0;
}

/* Size index of iteration it (binary search over the first iterations). */
static int size_of(const state *s, long it) {
  int lo = 0, hi = s->nsizes - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (it >= s->first[mid])
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

static int series_of(const contend_ctx *c, long *same) {
  const state *s = c->state;
  const int k = size_of(s, c->iter);
  const long timed_from = s->first[k] + s->skip; /* skip iterations, then timed ones */
  *same = c->iter < timed_from ? timed_from - c->iter : s->first[k + 1] - c->iter;
  return c->iter < timed_from ? -1 : k;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  if (s->pp.active)
    contend_pattern_fill(s->pp.s, (size_t)s->size[size_of(s, c->iter)], c->rank, c->iter, 0);
}

/* All n iterations from c->iter on have the size of c->iter (one series
 * run, or a single iteration). */
static void iterate_block(contend_ctx *c, long n) {
  state *s = c->state;
  if (s->pp.active)
    wl_pingpong(c, s->pp.s, s->pp.r, (size_t)s->size[size_of(s, c->iter)], s->pp.peer,
                s->pp.initiator, n);
}

static void iterate(contend_ctx *c) { iterate_block(c, 1); }

static void check(contend_ctx *c) {
  state *s = c->state;
  if (s->pp.active)
    contend_pattern_check(c, s->pp.r, (size_t)s->size[size_of(s, c->iter)], s->pp.peer, c->iter, 0);
}

const contend_motif contend_motif_pingpong_sweep = {
    .name = "pingpong_sweep",
    .label = "Ping-pong sweep",
    .help = "ping-pong latency per message size, 0 B to 4 MiB in powers of two (usec)",
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
    .series_key = "message_bytes",
    .series_of = series_of,
    .iterate_block = iterate_block,
};
