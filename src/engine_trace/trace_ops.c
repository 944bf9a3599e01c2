/* The trace engine's data ops: every step of a motif context is recorded
 * into the attached contend_traffic (see trace.h), nothing is sent.
 * Point-to-point and one-sided steps are exact node pairs; collectives are
 * counted by the shared rule (contend_traffic_coll) and expanded with a
 * textbook algorithm (dissemination barrier, recursive-doubling allreduce,
 * pairwise alltoall) into the estimated node pairs, since MPI libraries
 * choose their own.  File I/O counts volume only; compute adds its time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/error.h"
#include "contend/traffic.h"
#include "trace.h"

/* One allocation: len > 0 for a private mapping, 0 for the heap. */
typedef struct trace_mem {
  void *p;
  size_t len;
} trace_mem;

typedef struct trace_impl {
  contend_traffic *traffic; /* attached with `count`, or NULL */
  int nfiles;
  trace_mem *mem; /* what alloc/win_alloc gave, freed at close */
  int nmem, capmem;
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

/* From this size on, alloc maps pages itself: calloc would reuse (and
 * zero, so commit) freed heap memory once glibc's dynamic mmap threshold
 * has grown, and thousands of ranks' message buffers that nobody writes
 * would become resident. */
#define TRACE_MAP_BYTES ((size_t)64 * 1024)

/* Zeroed, freed at close; pages nobody touches stay uncommitted. */
static void *t_alloc(contend_ctx *c, size_t bytes) {
  trace_impl *t = c->impl;
  if (t->nmem == t->capmem) {
    const int cap = t->capmem ? 2 * t->capmem : 8;
    trace_mem *m = realloc(t->mem, sizeof *m * (size_t)cap);
    if (!m)
      contend_fail("out of memory (trace engine)");
    t->mem = m;
    t->capmem = cap;
  }
  trace_mem m = {NULL, 0};
  if (bytes >= TRACE_MAP_BYTES) {
    m.p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
               0);
    if (m.p == MAP_FAILED)
      contend_fail("trace engine alloc of %zu B: %s", bytes, strerror(errno));
    m.len = bytes;
  } else if (!(m.p = calloc(1, bytes ? bytes : 1))) {
    contend_fail("out of memory: trace engine alloc of %zu B", bytes);
  }
  t->mem[t->nmem++] = m;
  return m.p;
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

static void t_barrier(contend_ctx *c) { /* dissemination */
  contend_traffic_coll(attached(c), CONTEND_COLL_BARRIER, 0);
  for (int k = 1; k < c->size; k *= 2)
    record_estimated(c, c->rank, (c->rank + k) % c->size, 0);
}
/* Receive buffers keep what they held: copying the contribution would
 * commit every rank's result buffer (4 MiB per rank for dl_allreduce)
 * for a result nobody may rely on anyway. */
static void t_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op op) {
  (void)s, (void)r, (void)op;
  const size_t bytes = contend_dtype_bytes(dt) * (size_t)count;
  contend_traffic_coll(attached(c), CONTEND_COLL_ALLREDUCE, (double)bytes);
  for (int mask = 1; mask < c->size; mask <<= 1) { /* recursive doubling */
    const int partner = c->rank ^ mask;
    if (partner < c->size)
      record_estimated(c, c->rank, partner, bytes);
  }
}
/* Receive buffers keep what they held. */
static void t_alltoall(contend_ctx *c, const void *s, void *r, size_t per) {
  (void)s, (void)r;
  contend_traffic_coll(attached(c), CONTEND_COLL_ALLTOALL, (double)per * (c->size - 1));
  for (int k = 1; k < c->size; k++) /* pairwise */
    record_estimated(c, c->rank, (c->rank + k) % c->size, per);
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
  for (int k = 0; k < t->nmem; k++)
    if (t->mem[k].len)
      munmap(t->mem[k].p, t->mem[k].len);
    else
      free(t->mem[k].p);
  free(t->mem);
  contend_ctx_free_state(c);
  c->impl = NULL;
  c->node_of = NULL; /* may be released just below */
  if (t->on_close)
    t->on_close(t->on_close_arg);
  free(t);
}
