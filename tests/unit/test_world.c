/* Conformance test of the control plane (contend_world_ops), the same on
 * every engine: a body run on every rank calls each op with rank-dependent
 * inputs and checks what comes back against what the contract in
 * contend/world.h promises.  The first failed check ends the run (exit
 * status 3, the check named); success prints one line from rank 0.
 *
 *   test_world --engine NAME [--nodes N] [--ranks-per-node P]
 *
 * In-process engines play N x P ranks; on MPI the rank count is mpirun's
 * and P (if given) asks for virtual nodes of P consecutive ranks.  Ranks
 * of in-process engines share this process's globals: the body keeps its
 * state on its own stack. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/error.h"
#include "../../src/run/envelope.h"
#include "contend/traffic.h"
#include "contend/world.h"

typedef struct options {
  const char *engine;
  int nodes, ppn;
  int in_process;
} options;

/* One rank's test state. */
typedef struct T {
  contend_group *w;
  const options *o;
  long checks;
} T;

static void check_at(T *t, int ok, int line, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void check_at(T *t, int ok, int line, const char *what, const char *fmt, ...) {
  t->checks++;
  if (ok)
    return;
  char detail[512] = "";
  if (fmt) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
  }
  contend_fail("world conformance: engine %s: check failed at %s:%d: %s%s%s", t->o->engine,
               __FILE__, line, what, *detail ? ": " : "", detail);
}
#define CHECK(t, cond) check_at(t, !!(cond), __LINE__, #cond, NULL)
#define CHECKF(t, cond, ...) check_at(t, !!(cond), __LINE__, #cond, __VA_ARGS__)

static void *xmalloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p)
    contend_fail("out of memory");
  return p;
}

/* A rank-dependent value in [-500, 508]. */
static int64_t value_of(int r) { return ((int64_t)r * 7919 + 13) % 1009 - 500; }

/* ---- collectives on the world group ---- */

static void test_allreduce(T *t) {
  contend_group *w = t->w;
  const int n = w->size, r = w->rank;
  int64_t v[3] = {r + 1, -r, (int64_t)r * r};
  contend_gallreduce(w, v, 3, CONTEND_DT_INT64, CONTEND_OP_SUM);
  CHECKF(t, v[0] == (int64_t)n * (n + 1) / 2, "%lld", (long long)v[0]);
  CHECK(t, v[1] == -(int64_t)n * (n - 1) / 2);
  CHECK(t, v[2] == (int64_t)(n - 1) * n * (2 * n - 1) / 6);

  int64_t lo = value_of(0), hi = value_of(0);
  for (int i = 1; i < n; i++) {
    lo = value_of(i) < lo ? value_of(i) : lo;
    hi = value_of(i) > hi ? value_of(i) : hi;
  }
  int64_t mn = value_of(r), mx = value_of(r);
  contend_gallreduce(w, &mn, 1, CONTEND_DT_INT64, CONTEND_OP_MIN);
  contend_gallreduce(w, &mx, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
  CHECKF(t, mn == lo && mx == hi, "min %lld max %lld", (long long)mn, (long long)mx);

  double d[2] = {0.25 * r, 0.5 * (double)value_of(r)}; /* exact in binary */
  contend_gallreduce(w, d, 1, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  CHECK(t, d[0] == 0.25 * n * (n - 1) / 2 && d[1] == 0.5 * (double)value_of(r));
  double dmin = 0.5 * (double)value_of(r), dmax = dmin;
  contend_gallreduce(w, &dmin, 1, CONTEND_DT_DOUBLE, CONTEND_OP_MIN);
  contend_gallreduce(w, &dmax, 1, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  CHECK(t, dmin == 0.5 * (double)lo && dmax == 0.5 * (double)hi);

  unsigned char b[3] = {(unsigned char)(r * 37), (unsigned char)(r * 37), (unsigned char)(r & 1)};
  unsigned char bmin = 255, bmax = 0, bsum = 0;
  for (int i = 0; i < n; i++) {
    const unsigned char x = (unsigned char)(i * 37);
    bmin = x < bmin ? x : bmin;
    bmax = x > bmax ? x : bmax;
    bsum = (unsigned char)(bsum + (i & 1)); /* modulo 256 */
  }
  contend_gallreduce(w, &b[0], 1, CONTEND_DT_BYTE, CONTEND_OP_MIN);
  contend_gallreduce(w, &b[1], 1, CONTEND_DT_BYTE, CONTEND_OP_MAX);
  contend_gallreduce(w, &b[2], 1, CONTEND_DT_BYTE, CONTEND_OP_SUM);
  CHECKF(t, b[0] == bmin && b[1] == bmax && b[2] == bsum, "%d %d %d", b[0], b[1], b[2]);
}

static void test_reduce(T *t) {
  contend_group *w = t->w;
  const int n = w->size, r = w->rank;
  int64_t s[2] = {r, value_of(r)};
  contend_greduce(w, s, 2, CONTEND_DT_INT64, CONTEND_OP_SUM);
  int64_t sum = 0;
  for (int i = 0; i < n; i++)
    sum += value_of(i);
  if (r == 0)
    CHECK(t, s[0] == (int64_t)n * (n - 1) / 2 && s[1] == sum);
  else
    CHECK(t, s[0] == r && s[1] == value_of(r)); /* unchanged */
  double m = -(double)r;
  contend_greduce(w, &m, 1, CONTEND_DT_DOUBLE, CONTEND_OP_MIN);
  CHECK(t, r == 0 ? m == -(double)(n - 1) : m == -(double)r);
}

static void test_bcast(T *t) {
  contend_group *w = t->w;
  unsigned char buf[1000];
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = w->rank == 0 ? (unsigned char)(i * 13 + 1) : 0xee;
  contend_gbcast(w, buf, sizeof buf);
  int ok = 1;
  for (size_t i = 0; i < sizeof buf; i++)
    ok &= buf[i] == (unsigned char)(i * 13 + 1);
  CHECK(t, ok);
  int64_t x = w->rank == 0 ? 12345 : -w->rank;
  contend_gbcast(w, &x, sizeof x);
  CHECK(t, x == 12345);
}

static void test_gathers(T *t) {
  contend_group *w = t->w;
  const int n = w->size, r = w->rank;
  int32_t mine[2] = {r, 3 * r + 1};
  int32_t *all = r == 0 ? xmalloc(sizeof mine * (size_t)n) : NULL;
  contend_ggather(w, mine, sizeof mine, all);
  if (r == 0) {
    int ok = 1;
    for (int i = 0; i < n; i++)
      ok &= all[2 * i] == i && all[2 * i + 1] == 3 * i + 1;
    CHECK(t, ok);
  }
  free(all);

  int64_t me = (int64_t)r * r - 5;
  int64_t *every = xmalloc(sizeof me * (size_t)n);
  contend_gallgather(w, &me, sizeof me, every);
  int ok = 1;
  for (int i = 0; i < n; i++)
    ok &= every[i] == (int64_t)i * i - 5;
  CHECK(t, ok);
  free(every);

  /* gatherv: rank i gives i % 4 bytes (some give none) */
  unsigned char v[3];
  const size_t nb = (size_t)(r % 4);
  for (size_t i = 0; i < nb; i++)
    v[i] = (unsigned char)(r * 5 + (int)i);
  size_t *counts = r == 0 ? xmalloc(sizeof(size_t) * (size_t)n) : NULL;
  unsigned char *cat = contend_ggatherv(w, v, nb, counts);
  if (r == 0) {
    CHECK(t, cat != NULL);
    size_t at = 0;
    ok = 1;
    for (int i = 0; i < n; i++) {
      ok &= counts[i] == (size_t)(i % 4);
      for (int k = 0; k < i % 4; k++)
        ok &= cat[at++] == (unsigned char)(i * 5 + k);
    }
    CHECK(t, ok);
  } else {
    CHECK(t, cat == NULL);
  }
  free(cat);
  /* nothing from anyone: still a buffer at rank 0, and counts not needed */
  cat = contend_ggatherv(w, v, 0, NULL);
  CHECK(t, r == 0 ? cat != NULL : cat == NULL);
  free(cat);
  if (r == 0) {
    for (int i = 0; i < n; i++)
      counts[i] = 99;
    cat = contend_ggatherv(w, NULL, 0, counts);
    ok = cat != NULL;
    for (int i = 0; i < n; i++)
      ok &= counts[i] == 0;
    CHECK(t, ok);
  } else {
    cat = contend_ggatherv(w, NULL, 0, NULL);
    CHECK(t, cat == NULL);
  }
  free(cat);
  free(counts);
}

/* ---- split ---- */

/* Checks that g holds exactly the world ranks expect[0 .. n-1], in that
 * order, and that collectives on it see only them. */
static void check_members(T *t, contend_group *g, const int *expect, int n) {
  CHECKF(t, g && g->size == n, "size %d, expected %d", g ? g->size : -1, n);
  CHECK(t, g->rank >= 0 && g->rank < n && expect[g->rank] == t->w->rank);
  int me = t->w->rank;
  int *got = xmalloc(sizeof(int) * (size_t)n);
  contend_gallgather(g, &me, sizeof me, got);
  int ok = 1;
  for (int i = 0; i < n; i++)
    ok &= got[i] == expect[i];
  CHECK(t, ok);
  free(got);
  int64_t sum = me, want = 0;
  for (int i = 0; i < n; i++)
    want += expect[i];
  contend_gallreduce(g, &sum, 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
  CHECK(t, sum == want);
  contend_gbarrier(g);
}

static int color3(int r) { return r % 5 == 4 ? -1 : r % 3; }

static void test_split(T *t) {
  contend_group *w = t->w;
  const int n = w->size, r = w->rank;
  int *expect = xmalloc(sizeof(int) * (size_t)n);

  /* colors r % 3 (every fifth rank out), key -r: descending world rank */
  contend_group *g = contend_split(w, color3(r), -r);
  if (color3(r) < 0) {
    CHECK(t, g == NULL);
  } else {
    int m = 0;
    for (int i = n - 1; i >= 0; i--)
      if (color3(i) == color3(r))
        expect[m++] = i;
    check_members(t, g, expect, m);
  }
  /* ties in key keep the order of the parent group */
  contend_group *h = contend_split(w, 7, (n - 1 - r) / 2);
  int *order = xmalloc(sizeof(int) * (size_t)n); /* h's members: key k holds n-2-2k, n-1-2k */
  int m = 0;
  for (int k = 0; k <= (n - 1) / 2; k++)
    for (int i = n - 2 - 2 * k; i <= n - 1 - 2 * k; i++)
      if (i >= 0)
        order[m++] = i;
  check_members(t, h, order, m);
  /* a split of a split: h's ranks by the parity of their rank in h, in
   * h's order (equal keys) */
  contend_group *hh = contend_split(h, h->rank % 2, 0);
  m = 0;
  for (int i = 0; i < n; i++)
    if (i % 2 == h->rank % 2)
      expect[m++] = order[i];
  check_members(t, hh, expect, m);
  free(order);
  contend_group_free(hh);
  contend_group_free(h);
  contend_group_free(g);
  contend_group_free(NULL);
  /* nobody in: every rank gets NULL */
  g = contend_split(w, -1, r);
  CHECK(t, g == NULL);
  free(expect);
}

/* ---- signals ---- */

static void test_signals(T *t) {
  contend_group *w = t->w;
  const int n = w->size, r = w->rank;
  contend_group *dup = contend_split(w, 0, r); /* a second group: its own ordering */

  /* the last rank posts only after every other rank has seen the signal
   * incomplete (the dup signal orders it); the others poll until done */
  if (r != n - 1 || n == 1) {
    contend_signal *s = contend_signal_post(w);
    if (n > 1)
      CHECK(t, contend_signal_test(w, s) == 0);
    contend_signal *d = contend_signal_post(dup);
    long polls = 0;
    while (!contend_signal_test(w, s))
      polls++;
    CHECK(t, contend_signal_test(w, s) == 1);
    contend_signal_wait(w, s, 0); /* complete: returns at once */
    contend_signal_wait(dup, d, 1);
    contend_signal_free(dup, d);
    contend_signal_free(w, s);
  } else {
    contend_signal *d = contend_signal_post(dup);
    contend_signal_wait(dup, d, 0);
    contend_signal *s = contend_signal_post(w);
    contend_signal_wait(w, s, 0);
    CHECK(t, contend_signal_test(w, s) == 1);
    contend_signal_free(dup, d);
    contend_signal_free(w, s);
  }

  /* rank 0 tests before the others post (they wait in a barrier on dup
   * that rank 0 enters only after its test) */
  contend_signal *s;
  if (r == 0) {
    s = contend_signal_post(w);
    CHECK(t, n == 1 || contend_signal_test(w, s) == 0);
    contend_gbarrier(dup);
  } else {
    contend_gbarrier(dup);
    s = contend_signal_post(w);
  }
  contend_signal_wait(w, s, 0);
  CHECK(t, contend_signal_test(w, s) == 1);
  contend_signal_free(w, s);

  /* two outstanding at once, completed in posting order */
  contend_signal *a = contend_signal_post(w), *b = contend_signal_post(w);
  contend_signal_wait(w, b, 0);
  CHECK(t, contend_signal_test(w, a) == 1);
  contend_signal_wait(w, a, 1);
  contend_signal_free(w, b);
  contend_signal_free(w, a);
  contend_group_free(dup);
}

/* ---- nodes, names ---- */

static void test_nodes(T *t, contend_nodes *nd) {
  contend_group *w = t->w;
  const int n = w->size, r = w->rank;
  char err[512] = "";
  const int rc = w->ops->nodes(w, t->o->ppn, nd, err, sizeof err);
  if (rc) { /* only for virtual nodes that do not divide the ranks */
    CHECKF(t, !t->o->in_process && t->o->ppn > 0 && n % t->o->ppn && *err, "%s", err);
    return;
  }
  CHECK(t, nd->node_of_rank && nd->node_of_rank[r] == nd->my_node);
  CHECK(t, nd->nnodes >= 1 && nd->my_node >= 0 && nd->my_node < nd->nnodes);
  int *per = calloc((size_t)nd->nnodes, sizeof(int));
  int top = -1, ok = 1, lower = 0;
  for (int i = 0; i < n; i++) { /* numbered by lowest world rank */
    const int k = nd->node_of_rank[i];
    ok &= k >= 0 && k <= top + 1 && k < nd->nnodes;
    if (k == top + 1)
      top = k;
    if (ok)
      per[k]++;
    lower += i < r && k == nd->my_node;
  }
  CHECK(t, ok && top == nd->nnodes - 1);
  CHECK(t, nd->local_size == per[nd->my_node] && nd->local_rank == lower);
  int pmin = n, pmax = 0;
  for (int k = 0; k < nd->nnodes; k++) {
    pmin = per[k] < pmin ? per[k] : pmin;
    pmax = per[k] > pmax ? per[k] : pmax;
  }
  CHECK(t, nd->ppn_min == pmin && nd->ppn_max == pmax);
  free(per);
  if (t->o->in_process)
    CHECK(t, nd->nnodes == t->o->nodes && nd->local_size == t->o->ppn);
  else if (t->o->ppn > 0)
    CHECK(t, nd->local_size == t->o->ppn && nd->nnodes == n / t->o->ppn);
  /* every rank sees the same map */
  int *root = xmalloc(sizeof(int) * (size_t)n);
  memcpy(root, nd->node_of_rank, sizeof(int) * (size_t)n);
  contend_gbcast(w, root, sizeof(int) * (size_t)n);
  CHECK(t, !memcmp(root, nd->node_of_rank, sizeof(int) * (size_t)n));
  free(root);

  /* host names: non-empty, the same on ranks of one node */
  enum { W = 64 };
  char mine[W];
  memset(mine, 0, W);
  w->ops->host_name(w, mine, W);
  CHECK(t, mine[0] != 0 && memchr(mine, 0, W));
  char *names = xmalloc((size_t)n * W);
  contend_gallgather(w, mine, W, names);
  int *first = xmalloc(sizeof(int) * (size_t)nd->nnodes); /* lowest rank of each node */
  for (int i = n - 1; i >= 0; i--)
    first[nd->node_of_rank[i]] = i;
  ok = 1;
  for (int i = 0; i < n; i++)
    ok &= !strcmp(names + (size_t)i * W, names + (size_t)first[nd->node_of_rank[i]] * W);
  CHECK(t, ok);
  free(first);
  free(names);

  char lib[256] = "";
  int ver = -1, sub = -1;
  w->ops->library(w, lib, sizeof lib, &ver, &sub);
  CHECK(t, lib[0] && ver >= 0 && sub >= 0);
  CHECK(t, w->ops->peak_rss_mib(w) > 0);
  CHECK(t, w->ops->engine && !strcmp(w->ops->engine->name, t->o->engine));
}

/* ---- motif contexts ---- */

typedef struct ring_state {
  unsigned char *sbuf, *rbuf;
} ring_state;

static const contend_param_def ring_defs[] = {
    {"bytes", CONTEND_P_INT, "8", "B", "message size", 1, 1 << 20},
    {"fail_rank", CONTEND_P_INT, "-1", "", "group rank whose setup fails (-1: none)", -1, 1e9},
    CONTEND_PARAM_END};

static int ring_setup(contend_ctx *c) {
  ring_state *s = c->state;
  if (s->sbuf || s->rbuf)
    return snprintf(c->error, sizeof c->error, "state not zeroed"), -1;
  if (c->rank == contend_param_int(c->params, "fail_rank"))
    return snprintf(c->error, sizeof c->error, "deliberate failure at rank %d", c->rank), -1;
  c->msg_bytes = (size_t)contend_param_int(c->params, "bytes");
  s->sbuf = contend_alloc(c, c->msg_bytes);
  s->rbuf = contend_alloc(c, c->msg_bytes);
  for (size_t i = 0; i < c->msg_bytes; i++)
    if (s->sbuf[i] || s->rbuf[i])
      return snprintf(c->error, sizeof c->error, "alloc not zeroed"), -1;
  c->metric_scale = 1;
  return 0;
}

/* One message to the next rank of a ring, one barrier. */
static void ring_iterate(contend_ctx *c) {
  ring_state *s = c->state;
  contend_irecv(c, s->rbuf, c->msg_bytes, (c->rank + c->size - 1) % c->size, 1);
  contend_isend(c, s->sbuf, c->msg_bytes, (c->rank + 1) % c->size, 1);
  contend_waitall(c);
  contend_barrier(c);
}

static const contend_motif ring_motif = {
    .name = "conformance_ring",
    .label = "conformance ring",
    .help = "one message to the next rank, one barrier",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = ring_defs,
    .state_size = sizeof(ring_state),
    .setup = ring_setup,
    .iterate = ring_iterate,
};

static void test_ctx(T *t, const contend_nodes *nd) {
  contend_group *w = t->w;
  const int r = w->rank;
  char err[512];
  contend_params p;
  if (contend_params_init(&p, ring_defs, "conformance_ring", err, sizeof err))
    contend_fail("%s", err);
  CHECK(t, contend_params_set(&p, contend_params_find(&p, "bytes"), "24", err, sizeof err) == 0);
  /* two groups (even and odd world ranks), reverse order */
  contend_group *g = contend_split(w, r % 2, -r);
  int *wr = xmalloc(sizeof(int) * (size_t)g->size);
  contend_gallgather(g, &r, sizeof r, wr);

  const contend_ctx job = {.job_name = "conf", .job_index = 3, .run_id = "run1", .stream = 77};
  contend_ctx c;
  memset(&c, 0, sizeof c);
  int rc = w->ops->ctx_open(&c, &ring_motif, &p, g, nd->my_node, 42, &job);
  CHECKF(t, rc == 0, "%s", c.error);
  CHECK(t, c.rank == g->rank && c.size == g->size && c.seed == 42 && c.params == &p);
  CHECK(t, c.msg_bytes == 24 && c.ops && c.node_of);
  CHECK(t, c.job_name && !strcmp(c.job_name, "conf") && c.job_index == 3 &&
               !strcmp(c.run_id, "run1") && c.stream == 77);
  int ok = 1;
  for (int i = 0; i < g->size; i++)
    ok &= c.node_of[i] == nd->node_of_rank[wr[i]];
  CHECK(t, ok);

  contend_traffic tr;
  contend_traffic_init(&tr);
  c.ops->count(&c, &tr);
  c.iter = 0;
  ring_motif.iterate(&c);
  c.ops->count(&c, NULL);
  double bytes, msgs;
  contend_flows_total(&tr.flows, &bytes, &msgs);
  CHECKF(t, bytes == 24 && msgs == 1 && tr.flows.n == 1, "%g B, %g messages", bytes, msgs);
  const int next = nd->node_of_rank[wr[(g->rank + 1) % g->size]];
  size_t nf;
  contend_flow *f = contend_flows_sorted(&tr.flows, &nf);
  CHECK(t, nf == 1 && f[0].src == nd->my_node && f[0].dst == next);
  free(f);
  CHECK(t, tr.coll_calls[CONTEND_COLL_BARRIER] == 1 && tr.coll_calls[CONTEND_COLL_ALLREDUCE] == 0);
  contend_traffic_free(&tr);
  w->ops->ctx_close(&c);

  /* setup fails on the last rank of each group: -1 everywhere */
  char last[16];
  snprintf(last, sizeof last, "%d", g->size - 1);
  CHECK(t,
        contend_params_set(&p, contend_params_find(&p, "fail_rank"), last, err, sizeof err) == 0);
  rc = w->ops->ctx_open(&c, &ring_motif, &p, g, nd->my_node, 43, NULL);
  CHECK(t, rc == -1);
  if (g->rank == g->size - 1)
    CHECK(t, strstr(c.error, "deliberate failure") != NULL);
  w->ops->ctx_close(&c);

  free(wr);
  contend_group_free(g);
  contend_params_free(&p);
}

/* ---- the body ---- */

static int body(contend_group *world, void *arg) {
  T t = {.w = world, .o = arg};
  CHECK(&t, world->ops && world->now && world->size >= 1);
  CHECK(&t, world->rank >= 0 && world->rank < world->size);
  if (t.o->in_process)
    CHECK(&t, world->size == t.o->nodes * t.o->ppn);
  const double t0 = contend_now(world);
  test_allreduce(&t);
  test_reduce(&t);
  test_bcast(&t);
  test_gathers(&t);
  test_split(&t);
  test_signals(&t);
  contend_nodes nd;
  memset(&nd, 0, sizeof nd);
  test_nodes(&t, &nd);
  if (nd.node_of_rank)
    test_ctx(&t, &nd);
  world->ops->watchdog(world, 3600, "test_world: watchdog");
  world->ops->watchdog(world, 0, NULL);
  const double t1 = contend_now(world);
  CHECK(&t, t1 >= t0);
  int64_t total = t.checks;
  contend_greduce(world, &total, 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
  if (world->rank == 0)
    printf("world conformance: %lld checks passed on engine %s with %d ranks\n", (long long)total,
           t.o->engine, world->size);
  return 0;
}

static int usage(const char *why) {
  fprintf(stderr,
          "test_world: %s\nusage: test_world --engine NAME [--nodes N] [--ranks-per-node P]\n",
          why);
  return 2;
}

int main(int argc, char **argv) {
  options o = {.engine = NULL, .nodes = 0, .ppn = 0};
  for (int i = 1; i < argc; i++) {
    const int more = i + 1 < argc;
    if (!strcmp(argv[i], "--engine") && more)
      o.engine = argv[++i];
    else if (!strcmp(argv[i], "--nodes") && more)
      o.nodes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ranks-per-node") && more)
      o.ppn = atoi(argv[++i]);
    else
      return usage("bad arguments");
  }
  if (!o.engine)
    return usage("--engine is required");
  const contend_engine *e = contend_engine_find(o.engine);
  if (!e)
    return usage("unknown engine");
  o.in_process = e->in_process;
  if (e->in_process && (o.nodes < 1 || o.ppn < 1))
    return usage("in-process engines need --nodes and --ranks-per-node");
  /* the run options an engine reads (the simulator builds its fabric
   * from them: the default topology) */
  contend_param_def *defs = contend_run_defs_with(NULL);
  contend_params opts;
  char err[1024];
  if (contend_params_init(&opts, defs, "run", err, sizeof err) ||
      contend_params_set(&opts, contend_params_find(&opts, "engine"), o.engine, err, sizeof err))
    contend_fail("%s", err);
  if (e->in_process) {
    char n[16], p[16];
    snprintf(n, sizeof n, "%d", o.nodes);
    snprintf(p, sizeof p, "%d", o.ppn);
    if (contend_params_set(&opts, contend_params_find(&opts, "nodes"), n, err, sizeof err) ||
        contend_params_set(&opts, contend_params_find(&opts, "ranks_per_node"), p, err, sizeof err))
      contend_fail("%s", err);
  }
  if (e->check && e->check(&opts, err, sizeof err))
    return usage(err);
  contend_launch l = {
      .argc = &argc, .argv = &argv, .nodes = o.nodes, .ranks_per_node = o.ppn, .opts = &opts};
  const int rc = e->launch(&l, body, &o);
  contend_params_free(&opts);
  free(defs);
  return rc;
}
