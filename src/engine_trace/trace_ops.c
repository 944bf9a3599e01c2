/* The trace engine's data ops: every step of a motif context is recorded
 * into the attached contend_traffic (see trace.h), nothing is sent.
 * Point-to-point and one-sided steps are exact node pairs; collectives are
 * counted by the shared rule (contend_traffic_coll) and expanded with a
 * textbook algorithm (dissemination barrier, recursive-doubling allreduce,
 * pairwise alltoall) into the estimated node pairs, since MPI libraries
 * choose their own.  File I/O counts volume only; compute adds its time. */
#include <stdlib.h>

#include "../core/arena.h"
#include "../core/coll_expand.h"
#include "../core/error.h"
#include "contend/traffic.h"
#include "trace.h"

typedef struct trace_impl {
  contend_traffic *traffic; /* attached with `count`, or NULL */
  int nfiles;
  contend_arena mem; /* what alloc/win_alloc gave, freed at close */
  void (*on_close)(void *arg);
  void *on_close_arg;
} trace_impl;

static contend_traffic *attached(contend_ctx *c) { return ((trace_impl *)c->impl)->traffic; }

/* An exact step: `bytes` from group rank `from` to group rank `to`. */
static void record(contend_ctx *c, int from, int to, size_t bytes) {
  contend_traffic *t = attached(c);
  if (t)
    contend_flow_add(&t->flows, c->node_of[from], c->node_of[to], (double)bytes, 1);
}

/* A step of a collective's textbook expansion. */
static void record_estimated(contend_ctx *c, int from, int to, size_t bytes) {
  contend_traffic *t = attached(c);
  if (t)
    contend_flow_add(&t->estimated, c->node_of[from], c->node_of[to], (double)bytes, 1);
}

/* Zeroed, freed at close; pages nobody touches stay uncommitted. */
static void *t_alloc(contend_ctx *c, size_t bytes) {
  return contend_arena_alloc(&((trace_impl *)c->impl)->mem, bytes);
}

static void t_isend(contend_ctx *c, const void *b, size_t n, int peer, int tag) {
  (void)b, (void)tag;
  record(c, c->rank, peer, n);
}
static void t_irecv(contend_ctx *c, void *b, size_t n, int peer, int tag) {
  (void)c, (void)b, (void)n, (void)peer, (void)tag; /* the sender records the flow */
}
static void t_exchange(contend_ctx *c, const contend_xfer *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i].send)
      record(c, c->rank, x[i].peer, x[i].bytes);
}
static void t_repeat(contend_ctx *c, const contend_xfer *x, const int *len, int nsteps,
                     long times) {
  int n = 0;
  for (int k = 0; k < nsteps; k++)
    n += len[k];
  if (!attached(c))
    return;
  for (long i = 0; i < times; i++) /* message by message, as exchange records them */
    t_exchange(c, x, n);
}
static void t_nop(contend_ctx *c) { (void)c; }
static void t_put(contend_ctx *c, const void *b, size_t n, int peer, size_t off) {
  (void)b, (void)off;
  record(c, c->rank, peer, n);
}
static void t_get(contend_ctx *c, void *b, size_t n, int peer, size_t off) {
  (void)b, (void)off;
  record(c, peer, c->rank, n); /* data flows from the target */
}

/* A collective's textbook expansion (shared with the simulated fabric),
 * each step of `bytes` as an estimated node pair. */
static void record_coll(contend_ctx *c, contend_coll_kind k, size_t bytes) {
  const int rounds = contend_coll_rounds(k, c->size);
  for (int i = 0; i < rounds; i++) {
    int to, from;
    contend_coll_round(k, c->rank, c->size, i, &to, &from);
    if (to >= 0)
      record_estimated(c, c->rank, to, bytes);
  }
}

static void t_barrier(contend_ctx *c) {
  contend_traffic_coll(attached(c), CONTEND_COLL_BARRIER, 0);
  record_coll(c, CONTEND_COLL_BARRIER, 0);
}
/* Receive buffers keep what they held: copying the contribution would
 * commit every rank's result buffer (4 MiB per rank for dl_allreduce)
 * for a result nobody may rely on anyway. */
static void t_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op op) {
  (void)s, (void)r, (void)op;
  const size_t bytes = contend_dtype_bytes(dt) * (size_t)count;
  contend_traffic_coll(attached(c), CONTEND_COLL_ALLREDUCE, (double)bytes);
  record_coll(c, CONTEND_COLL_ALLREDUCE, bytes);
}
/* Receive buffers keep what they held. */
static void t_alltoall(contend_ctx *c, const void *s, void *r, size_t per) {
  (void)s, (void)r;
  contend_traffic_coll(attached(c), CONTEND_COLL_ALLTOALL, (double)per * (c->size - 1));
  record_coll(c, CONTEND_COLL_ALLTOALL, per);
}
static void t_compute(contend_ctx *c, double sec) {
  contend_traffic *t = attached(c);
  if (t)
    t->compute_s += sec;
}

/* File I/O: volume only; nothing touches a disk (read buffers keep what
 * they held). */
static int t_file_open(contend_ctx *c, const contend_io_spec *s) {
  (void)s;
  return ((trace_impl *)c->impl)->nfiles++;
}
static void t_file_write_at(contend_ctx *c, int fh, const void *b, size_t n,
                            unsigned long long off) {
  (void)fh, (void)b, (void)off;
  contend_traffic *t = attached(c);
  if (t) {
    t->io_write_bytes += (double)n;
    t->io_write_ops += 1;
  }
}
static void t_file_read_at(contend_ctx *c, int fh, void *b, size_t n, unsigned long long off) {
  (void)fh, (void)b, (void)off;
  contend_traffic *t = attached(c);
  if (t) {
    t->io_read_bytes += (double)n;
    t->io_read_ops += 1;
  }
}
static void t_file_fh(contend_ctx *c, int fh) { (void)c, (void)fh; }
static void t_file_remove(contend_ctx *c, const contend_io_spec *s) { (void)c, (void)s; }
static void t_count(contend_ctx *c, contend_traffic *tr) { ((trace_impl *)c->impl)->traffic = tr; }

static const contend_engine_ops trace_ops = {
    .name = "trace",
    .alloc = t_alloc,
    .win_alloc = t_alloc,
    .isend = t_isend,
    .irecv = t_irecv,
    .exchange = t_exchange,
    .repeat = t_repeat,
    .waitall = t_nop,
    .put = t_put,
    .get = t_get,
    .flush_all = t_nop,
    .barrier = t_barrier,
    .allreduce = t_allreduce,
    .alltoall = t_alltoall,
    .compute = t_compute,
    .file_open = t_file_open,
    .file_write_at = t_file_write_at,
    .file_read_at = t_file_read_at,
    .file_sync = t_file_fh,
    .file_close = t_file_fh,
    .file_remove = t_file_remove,
    .count = t_count,
};

int contend_trace_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                           int rank, int size, const int *node_of, uint64_t seed,
                           const contend_ctx *job) {
  trace_impl *t = calloc(1, sizeof *t);
  if (!t)
    contend_fail("out of memory (trace engine context)");
  contend_ctx_init(c, m, p, rank, size, node_of, seed, job);
  c->ops = &trace_ops;
  c->impl = t;
  return m->setup ? m->setup(c) : 0;
}

void contend_trace_ctx_on_close(contend_ctx *c, void (*fn)(void *arg), void *arg) {
  trace_impl *t = c->impl;
  t->on_close = fn;
  t->on_close_arg = arg;
}

void contend_trace_ctx_close(contend_ctx *c) {
  trace_impl *t = c->impl;
  if (!t)
    return;
  contend_arena_release(&t->mem);
  contend_ctx_free_state(c);
  c->impl = NULL;
  c->node_of = NULL; /* may be released just below */
  if (t->on_close)
    t->on_close(t->on_close_arg);
  free(t);
}
