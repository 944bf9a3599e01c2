/* The MPI engine's motif operations (contend_engine_ops): motif steps as
 * real MPI calls on the context's measured communicator, the same steps
 * counted into a traffic accumulator, and the context's life cycle. */
#include "engine_mpi.h"
#include <dlfcn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../core/pace.h"
#include "contend/traffic.h"
#include "io_backend.h"
#include "mpi_check.h"
#include "rma_policy.h"

typedef struct mpi_impl {
  MPI_Comm comm; /* measured: every motif step */
  MPI_Comm ctl;  /* control: the engine's own agreements (see engine_mpi.h) */
  MPI_Win win;
  void *win_mem;     /* MPI_Alloc_mem (freed after the window) or the window's own */
  int win_allocated; /* win_mem came from MPI_Win_allocate */
  int have_win;
  /* flush per target (contend_mpi_rma.flush_per_target): the targets used
   * since the last flush, each once (marked in used[], group size) */
  int flush_per_target;
  unsigned char *used;
  int *targets, ntargets;
  MPI_Request *req;
  int nreq, capreq;
  void **mem;
  int nmem, capmem;
  int *node_of;
  contend_traffic *traffic; /* attached by count(), else NULL */
  /* while counting: per group peer, what went to it (isend, put) and came
   * from it (get); folded into traffic->flows when counting stops, so the
   * per-message cost is two additions */
  struct peer_count *pc;
  int *touched, ntouched;
  io_file *files; /* file handles of this context */
  int nfiles;
  contend_pace pace, pace_cpu; /* compute_replayed: overruns of wall and CPU-time gaps */
} mpi_impl;

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n);
  if (!q)
    contend_fail("out of memory (%zu bytes)", n);
  return q;
}

/* Motif buffers are zeroed and touched page by page here, untimed: a
 * never-written buffer would be sent from the kernel's shared zero page
 * (always in cache: optimistic for large messages) and the first timed
 * iteration would take the page faults; touching also places the pages
 * on this rank's memory (first touch). */
static void *e_alloc(contend_ctx *c, size_t bytes) {
  mpi_impl *m = c->impl;
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p)
    contend_fail("out of memory allocating %zu bytes for motif buffers", bytes);
  for (size_t i = 0; i < bytes; i += 4096)
    ((volatile unsigned char *)p)[i] = 0;
  if (m->nmem == m->capmem) {
    m->capmem = m->capmem ? 2 * m->capmem : 8;
    m->mem = xrealloc(m->mem, sizeof(void *) * (size_t)m->capmem);
  }
  m->mem[m->nmem++] = p;
  return p;
}

/* The window as contend_mpi_rma_policy says: MPI_Win_allocate (GPCNeT's
 * choice; Open MPI maps it into shared memory on one node) or
 * MPI_Win_create over MPI_Alloc_mem where the library is known to be wrong
 * with MPI_Win_allocate (or the user forced it). */
static void *e_win_alloc(contend_ctx *c, size_t bytes) {
  mpi_impl *m = c->impl;
  if (m->have_win)
    contend_fail("a motif asked for a second RMA window (one per context)");
  const contend_mpi_rma *pol = contend_mpi_rma_policy();
  /* Open MPI 4.1.4's MPI_Win_create fails on a one-rank communicator */
  if (!pol->win_create || c->size == 1) {
    CONTEND_MPI_CHECK(
        MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, m->comm, &m->win_mem, &m->win));
    m->win_allocated = 1;
  } else {
    CONTEND_MPI_CHECK(MPI_Alloc_mem((MPI_Aint)(bytes ? bytes : 8), MPI_INFO_NULL, &m->win_mem));
    CONTEND_MPI_CHECK(
        MPI_Win_create(m->win_mem, (MPI_Aint)bytes, 1, MPI_INFO_NULL, m->comm, &m->win));
  }
  if (bytes)
    memset(m->win_mem, 0, bytes);
  CONTEND_MPI_CHECK(MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN));
  m->have_win = 1;
  m->flush_per_target = pol->flush_per_target;
  if (m->flush_per_target) {
    m->used = calloc((size_t)c->size, 1);
    m->targets = malloc(sizeof(int) * (size_t)c->size);
    if (!m->used || !m->targets)
      contend_fail("out of memory");
  }
  CONTEND_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win));
  return m->win_mem;
}

/* Notes a target for a per-target flush. */
static inline void use_target(mpi_impl *m, int peer) {
  if (m->flush_per_target && !m->used[peer]) {
    m->used[peer] = 1;
    m->targets[m->ntargets++] = peer;
  }
}

static inline MPI_Request *next_req(mpi_impl *m) {
  if (__builtin_expect(m->nreq == m->capreq, 0)) {
    m->capreq = m->capreq ? 2 * m->capreq : 64;
    m->req = xrealloc(m->req, sizeof(MPI_Request) * (size_t)m->capreq);
  }
  return &m->req[m->nreq++];
}

static void e_isend(contend_ctx *c, const void *buf, size_t bytes, int peer, int tag) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Isend(buf, (int)bytes, MPI_BYTE, peer, tag, m->comm, next_req(m)));
}

static void e_irecv(contend_ctx *c, void *buf, size_t bytes, int peer, int tag) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Irecv(buf, (int)bytes, MPI_BYTE, peer, tag, m->comm, next_req(m)));
}

static void e_waitall(contend_ctx *c) {
  mpi_impl *m = c->impl;
  if (m->nreq == 0)
    return;
  if (m->nreq == 1) { /* Open MPI's MPI_Wait is ~50 ns cheaper than Waitall of one */
    CONTEND_MPI_CHECK(MPI_Wait(&m->req[0], MPI_STATUS_IGNORE));
    m->nreq = 0;
    return;
  }
  /* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1 and annotates
   * MPI_Waitall's access, which GCC 12 misreads as an overflow */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
  CONTEND_MPI_CHECK(MPI_Waitall(m->nreq, m->req, MPI_STATUSES_IGNORE));
#pragma GCC diagnostic pop
  m->nreq = 0;
}

/* Posts one transfer on request r. */
static inline void post(const mpi_impl *m, const contend_xfer *x, MPI_Request *r) {
  if (x->send)
    CONTEND_MPI_CHECK(MPI_Isend(x->buf, (int)x->bytes, MPI_BYTE, x->peer, x->tag, m->comm, r));
  else
    CONTEND_MPI_CHECK(MPI_Irecv(x->buf, (int)x->bytes, MPI_BYTE, x->peer, x->tag, m->comm, r));
}

/* One exchange of n transfers on requests r (n <= the caller's array). */
static inline void step(const mpi_impl *m, const contend_xfer *x, int n, MPI_Request *r) {
  for (int i = 0; i < n; i++)
    post(m, &x[i], &r[i]);
  if (n == 1) {
    CONTEND_MPI_CHECK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    return;
  }
#pragma GCC diagnostic push /* see e_waitall */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
  CONTEND_MPI_CHECK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
#pragma GCC diagnostic pop
}

enum { STACK_XFERS = 8 }; /* exchanges up to this wide keep their requests on the stack */

static void e_exchange(contend_ctx *c, const contend_xfer *x, int n) {
  mpi_impl *m = c->impl;
  if (n >= 1 && n <= STACK_XFERS && m->nreq == 0) { /* as a hand-written loop would */
    MPI_Request r[STACK_XFERS];
    step(m, x, n, r);
    return;
  }
  for (int i = 0; i < n; i++)
    post(m, &x[i], next_req(m));
  e_waitall(c);
}

static void e_repeat(contend_ctx *c, const contend_xfer *x, const int *len, int nsteps,
                     long times) {
  mpi_impl *m = c->impl;
  int widest = 0;
  for (int k = 0; k < nsteps; k++)
    widest = len[k] > widest ? len[k] : widest;
  if (widest > STACK_XFERS) { /* wide steps: the general path */
    for (long t = 0; t < times; t++)
      for (int k = 0, o = 0; k < nsteps; o += len[k++])
        e_exchange(c, &x[o], len[k]);
    return;
  }
  MPI_Request r[STACK_XFERS];
  if (nsteps == 1) { /* e.g. a ping-pong initiator: receive + send, then wait */
    for (long t = 0; t < times; t++)
      step(m, x, len[0], r);
    return;
  }
  for (long t = 0; t < times; t++)
    for (int k = 0, o = 0; k < nsteps; o += len[k++])
      step(m, &x[o], len[k], r);
}

static void e_put(contend_ctx *c, const void *buf, size_t bytes, int peer, size_t off) {
  mpi_impl *m = c->impl;
  use_target(m, peer);
  CONTEND_MPI_CHECK(
      MPI_Put(buf, (int)bytes, MPI_BYTE, peer, (MPI_Aint)off, (int)bytes, MPI_BYTE, m->win));
}

static void e_get(contend_ctx *c, void *buf, size_t bytes, int peer, size_t off) {
  mpi_impl *m = c->impl;
  use_target(m, peer);
  CONTEND_MPI_CHECK(
      MPI_Get(buf, (int)bytes, MPI_BYTE, peer, (MPI_Aint)off, (int)bytes, MPI_BYTE, m->win));
}

static void e_flush_all(contend_ctx *c) {
  mpi_impl *m = c->impl;
  if (!m->flush_per_target) {
    CONTEND_MPI_CHECK(MPI_Win_flush_all(m->win));
    return;
  }
  for (int i = 0; i < m->ntargets; i++) {
    CONTEND_MPI_CHECK(MPI_Win_flush(m->targets[i], m->win));
    m->used[m->targets[i]] = 0;
  }
  m->ntargets = 0;
}

static void e_rma_epoch(contend_ctx *c, const contend_rma *x, int n) {
  mpi_impl *m = c->impl;
  const MPI_Win win = m->win;
  for (int i = 0; i < n; i++) {
    const contend_rma *r = &x[i];
    const int rc = r->put ? MPI_Put(r->buf, (int)r->bytes, MPI_BYTE, r->peer, (MPI_Aint)r->offset,
                                    (int)r->bytes, MPI_BYTE, win)
                          : MPI_Get(r->buf, (int)r->bytes, MPI_BYTE, r->peer, (MPI_Aint)r->offset,
                                    (int)r->bytes, MPI_BYTE, win);
    if (__builtin_expect(rc != MPI_SUCCESS, 0))
      contend_mpi_fail(__FILE__, __LINE__, r->put ? "MPI_Put" : "MPI_Get", rc);
  }
  if (__builtin_expect(m->flush_per_target, 0)) {
    for (int i = 0; i < n; i++)
      use_target(m, x[i].peer);
    e_flush_all(c);
    return;
  }
  CONTEND_MPI_CHECK(MPI_Win_flush_all(win));
}

static void e_barrier(contend_ctx *c) {
  mpi_impl *m = c->impl;
  /* with a window, make local stores and remote updates visible (separate
   * memory model) around the synchronisation */
  if (m->have_win)
    CONTEND_MPI_CHECK(MPI_Win_sync(m->win));
  CONTEND_MPI_CHECK(MPI_Barrier(m->comm));
  if (m->have_win)
    CONTEND_MPI_CHECK(MPI_Win_sync(m->win));
}

MPI_Datatype contend_mpi_dtype(contend_dtype dt) {
  switch (dt) {
  case CONTEND_DT_INT64:
    return MPI_INT64_T;
  case CONTEND_DT_DOUBLE:
    return MPI_DOUBLE;
  case CONTEND_DT_BYTE:
    break;
  }
  return MPI_UINT8_T;
}

MPI_Op contend_mpi_op(contend_op o) {
  switch (o) {
  case CONTEND_OP_MIN:
    return MPI_MIN;
  case CONTEND_OP_MAX:
    return MPI_MAX;
  case CONTEND_OP_SUM:
    break;
  }
  return MPI_SUM;
}

static void e_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op o) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Allreduce(s, r, count, contend_mpi_dtype(dt), contend_mpi_op(o), m->comm));
}

static void e_alltoall(contend_ctx *c, const void *s, void *r, size_t per_peer) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Alltoall(s, (int)per_peer, MPI_BYTE, r, (int)per_peer, MPI_BYTE, m->comm));
}

static void e_compute(contend_ctx *c, double seconds) {
  mpi_impl *m = c->impl;
  if (m->traffic)
    m->traffic->compute_s += seconds;
  double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
}

static double wtime(void) { return MPI_Wtime(); }

static double thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void e_compute_replayed(contend_ctx *c, double seconds, int cpu) {
  mpi_impl *m = c->impl;
  if (m->traffic)
    m->traffic->compute_s += seconds;
  if (cpu)
    contend_pace_busy(&m->pace_cpu, seconds, thread_cpu);
  else
    contend_pace_busy(&m->pace, seconds, wtime);
}

/* ---- file I/O ------------------------------------------------------------ */

/* Files this process created and has not removed: removed by
 * contend_mpi_io_remove_tracked when the run aborts.  Fixed size, so that
 * a signal handler can walk it; a file beyond the last slot is not
 * tracked (best effort). */
enum { NTRACK = 256 };
static char *volatile g_tracked[NTRACK];

static void track(const char *path) {
  contend_set_abort_hook(contend_mpi_io_remove_tracked); /* also on this rank's own abort */
  for (int i = 0; i < NTRACK; i++)
    if (!g_tracked[i]) {
      g_tracked[i] = strdup(path);
      return;
    }
}

static void untrack(const char *path) {
  for (int i = 0; i < NTRACK; i++)
    if (g_tracked[i] && !strcmp(g_tracked[i], path)) {
      char *p = g_tracked[i];
      g_tracked[i] = NULL;
      free(p);
      return;
    }
}

void contend_mpi_io_remove_tracked(void) {
  for (int i = 0; i < NTRACK; i++) {
    char *p = g_tracked[i];
    if (p)
      unlink(p); /* async-signal-safe; the strings stay allocated */
  }
}

static const io_backend *backend(contend_io_api api) {
  switch (api) {
  case CONTEND_IO_POSIX:
    return &contend_io_posix;
  case CONTEND_IO_MPIIO:
    return &contend_io_mpiio;
  case CONTEND_IO_HDF5:
#ifdef CONTEND_HAVE_HDF5
    return &contend_io_hdf5;
#else
    break;
#endif
  }
  return NULL;
}

/* An I/O error after a successful open ends the run: remove what this
 * process created first. */
static void io_fail(contend_ctx *c, const char *what, const char *err) {
  contend_mpi_io_remove_tracked();
  contend_fail("%s%s: file I/O %s: %s", c->job_name ? "job " : "", c->job_name ? c->job_name : "",
               what, err);
}

static int e_file_open(contend_ctx *c, const contend_io_spec *s) {
  mpi_impl *m = c->impl;
  const io_backend *be = backend(s->api);
  int rank = 0, ok = 1;
  CONTEND_MPI_CHECK(MPI_Comm_rank(m->comm, &rank));
  m->files = xrealloc(m->files, sizeof(io_file) * (size_t)(m->nfiles + 1));
  io_file *f = &m->files[m->nfiles];
  memset(f, 0, sizeof *f);
  f->be = be;
  f->comm = s->shared ? m->comm : MPI_COMM_SELF;
  f->shared = s->shared;
  f->collective = s->collective;
  f->create = s->create;
  const int owner = s->create && (!s->shared || rank == 0); /* who created the file */
  if (!be) {
    snprintf(c->error, sizeof c->error, "this build has no HDF5 back end");
    ok = 0;
  } else if (be->open(f, s, c->error, sizeof c->error)) {
    ok = 0;
  }
  if (ok && owner)
    track(s->path);
  /* one answer for the group (on the control communicator): a failed
   * open anywhere fails it everywhere */
  int all = ok;
  CONTEND_MPI_CHECK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, m->ctl));
  if (!all) {
    if (ok) {
      char e[256];
      be->close(f, e, sizeof e);
      if (owner) {
        be->remove(s->path, e, sizeof e);
        untrack(s->path);
      }
      c->error[0] = 0; /* the reason is on the rank that failed */
    }
    return -1;
  }
  f->is_open = 1;
  return m->nfiles++;
}

static io_file *file_of(contend_ctx *c, int fh) {
  mpi_impl *m = c->impl;
  if (fh < 0 || fh >= m->nfiles || !m->files[fh].is_open)
    contend_fail("motif used file handle %d that is not open", fh);
  return &m->files[fh];
}

static void e_file_write_at(contend_ctx *c, int fh, const void *buf, size_t n,
                            unsigned long long off) {
  mpi_impl *m = c->impl;
  io_file *f = file_of(c, fh);
  char err[256];
  if (f->be->write_at(f, buf, n, off, err, sizeof err))
    io_fail(c, "write", err);
  if (m->traffic) {
    m->traffic->io_write_bytes += (double)n;
    m->traffic->io_write_ops += 1;
  }
}

static void e_file_read_at(contend_ctx *c, int fh, void *buf, size_t n, unsigned long long off) {
  mpi_impl *m = c->impl;
  io_file *f = file_of(c, fh);
  char err[256];
  if (f->be->read_at(f, buf, n, off, err, sizeof err))
    io_fail(c, "read", err);
  if (m->traffic) {
    m->traffic->io_read_bytes += (double)n;
    m->traffic->io_read_ops += 1;
  }
}

static void e_file_sync(contend_ctx *c, int fh) {
  io_file *f = file_of(c, fh);
  char err[256];
  if (f->be->sync(f, err, sizeof err))
    io_fail(c, "sync", err);
}

static void e_file_close(contend_ctx *c, int fh) {
  io_file *f = file_of(c, fh);
  char err[256];
  f->is_open = 0;
  if (f->be->close(f, err, sizeof err))
    io_fail(c, "close", err);
}

static void e_file_remove(contend_ctx *c, const contend_io_spec *s) {
  mpi_impl *m = c->impl;
  const io_backend *be = backend(s->api);
  int rank = 0;
  char err[256];
  CONTEND_MPI_CHECK(MPI_Comm_rank(m->comm, &rank));
  if (s->shared) /* everyone has closed it before rank 0 deletes it */
    CONTEND_MPI_CHECK(MPI_Barrier(m->ctl));
  if (be && (!s->shared || rank == 0)) {
    untrack(s->path);
    if (be->remove(s->path, err, sizeof err))
      io_fail(c, "remove", err);
  }
  if (s->shared)
    CONTEND_MPI_CHECK(MPI_Barrier(m->ctl));
}

/* ---- traffic accounting: the same steps, counted ------------------------ */

typedef struct peer_count {
  double out_bytes, out_msgs, in_bytes, in_msgs;
} peer_count;

static const contend_engine_ops counting_ops;

/* Folds the per-peer counts into the node pairs of the attached traffic. */
static void flush_counts(contend_ctx *c) {
  mpi_impl *m = c->impl;
  const int me = m->node_of[c->rank];
  for (int i = 0; i < m->ntouched; i++) {
    const int q = m->touched[i];
    peer_count *p = &m->pc[q];
    if (p->out_msgs > 0)
      contend_flow_add(&m->traffic->flows, me, m->node_of[q], p->out_bytes, p->out_msgs);
    if (p->in_msgs > 0)
      contend_flow_add(&m->traffic->flows, m->node_of[q], me, p->in_bytes, p->in_msgs);
    *p = (peer_count){0, 0, 0, 0};
  }
  m->ntouched = 0;
}

static void e_count(contend_ctx *c, contend_traffic *t) {
  mpi_impl *m = c->impl;
  if (m->traffic)
    flush_counts(c);
  if (t && !m->pc) {
    m->pc = calloc((size_t)c->size, sizeof(peer_count));
    m->touched = malloc(sizeof(int) * (size_t)c->size);
    if (!m->pc || !m->touched)
      contend_fail("out of memory");
  }
  m->traffic = t;
  c->ops = t ? &counting_ops : &contend_mpi_ops;
}

static inline peer_count *peer(mpi_impl *m, int q) {
  peer_count *p = &m->pc[q];
  if (p->out_msgs == 0 && p->in_msgs == 0)
    m->touched[m->ntouched++] = q;
  return p;
}

static void k_isend(contend_ctx *c, const void *buf, size_t bytes, int q, int tag) {
  peer_count *p = peer(c->impl, q);
  p->out_bytes += (double)bytes;
  p->out_msgs += 1;
  e_isend(c, buf, bytes, q, tag);
}

static void k_exchange(contend_ctx *c, const contend_xfer *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i].send) {
      peer_count *p = peer(c->impl, x[i].peer);
      p->out_bytes += (double)x[i].bytes;
      p->out_msgs += 1;
    }
  e_exchange(c, x, n);
}

static void k_repeat(contend_ctx *c, const contend_xfer *x, const int *len, int nsteps,
                     long times) {
  int n = 0;
  for (int k = 0; k < nsteps; k++)
    n += len[k];
  for (int i = 0; i < n; i++) /* counted once for all rounds, not per message */
    if (x[i].send) {
      peer_count *p = peer(c->impl, x[i].peer);
      p->out_bytes += (double)x[i].bytes * (double)times;
      p->out_msgs += (double)times;
    }
  e_repeat(c, x, len, nsteps, times);
}

static void k_put(contend_ctx *c, const void *buf, size_t bytes, int q, size_t off) {
  peer_count *p = peer(c->impl, q);
  p->out_bytes += (double)bytes;
  p->out_msgs += 1;
  e_put(c, buf, bytes, q, off);
}

static void k_get(contend_ctx *c, void *buf, size_t bytes, int q, size_t off) {
  peer_count *p = peer(c->impl, q);
  p->in_bytes += (double)bytes;
  p->in_msgs += 1;
  e_get(c, buf, bytes, q, off);
}

static void k_barrier(contend_ctx *c) {
  mpi_impl *m = c->impl;
  contend_traffic_coll(m->traffic, CONTEND_COLL_BARRIER, 0);
  e_barrier(c);
}

static void k_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op o) {
  mpi_impl *m = c->impl;
  contend_traffic_coll(m->traffic, CONTEND_COLL_ALLREDUCE,
                       (double)count * (double)contend_dtype_bytes(dt));
  e_allreduce(c, s, r, count, dt, o);
}

static void k_alltoall(contend_ctx *c, const void *s, void *r, size_t per_peer) {
  mpi_impl *m = c->impl;
  contend_traffic_coll(m->traffic, CONTEND_COLL_ALLTOALL, (double)per_peer * (c->size - 1));
  e_alltoall(c, s, r, per_peer);
}

static const contend_engine_ops counting_ops = {
    .name = "mpi",
    .alloc = e_alloc,
    .win_alloc = e_win_alloc,
    .isend = k_isend,
    .irecv = e_irecv,
    .waitall = e_waitall,
    .exchange = k_exchange,
    .repeat = k_repeat,
    .put = k_put,
    .get = k_get,
    .flush_all = e_flush_all,
    .rma_epoch = NULL, /* put/get one by one: counted by k_put/k_get */
    .barrier = k_barrier,
    .allreduce = k_allreduce,
    .alltoall = k_alltoall,
    .compute = e_compute,
    .compute_replayed = e_compute_replayed,
    .file_open = e_file_open,
    .file_write_at = e_file_write_at,
    .file_read_at = e_file_read_at,
    .file_sync = e_file_sync,
    .file_close = e_file_close,
    .file_remove = e_file_remove,
    .count = e_count,
    .files_hold_data = 1,
    .colls_compute = 1,
};

const contend_engine_ops contend_mpi_ops = {
    .name = "mpi",
    .alloc = e_alloc,
    .win_alloc = e_win_alloc,
    .isend = e_isend,
    .irecv = e_irecv,
    .waitall = e_waitall,
    .exchange = e_exchange,
    .repeat = e_repeat,
    .put = e_put,
    .get = e_get,
    .flush_all = e_flush_all,
    .rma_epoch = e_rma_epoch,
    .barrier = e_barrier,
    .allreduce = e_allreduce,
    .alltoall = e_alltoall,
    .compute = e_compute,
    .compute_replayed = e_compute_replayed,
    .file_open = e_file_open,
    .file_write_at = e_file_write_at,
    .file_read_at = e_file_read_at,
    .file_sync = e_file_sync,
    .file_close = e_file_close,
    .file_remove = e_file_remove,
    .count = e_count,
    .files_hold_data = 1,
    .colls_compute = 1,
};

/* The throttle library (libcontend-throttle.so, when preloaded) takes the
 * delay sensitivity of the job a rank runs (CONTEND_THROTTLE_CA=JOB=C_A,...):
 * contend jobs tells it the job through this optional symbol. */
static void throttle_hint(const char *job) {
  static const char *told;
  if (!job || job == told)
    return;
  told = job;
  int (*bind)(const char *) =
      (int (*)(const char *))dlsym(RTLD_DEFAULT, "contend_throttle_bind_job");
  if (bind)
    bind(job);
}

int contend_mpi_ctx_open(contend_ctx *c, const contend_motif *mo, const contend_params *p,
                         MPI_Comm data, MPI_Comm ctl, int my_node, uint64_t seed,
                         const contend_ctx *job) {
  throttle_hint(job ? job->job_name : NULL);
  mpi_impl *m = calloc(1, sizeof *m);
  int rank = 0, size = 0;
  if (!m)
    contend_fail("out of memory");
  m->comm = data;
  m->ctl = ctl;
  CONTEND_MPI_CHECK(MPI_Comm_rank(data, &rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(data, &size));
  m->node_of = malloc(sizeof(int) * (size_t)size);
  if (!m->node_of)
    contend_fail("out of memory");
  CONTEND_MPI_CHECK(MPI_Allgather(&my_node, 1, MPI_INT, m->node_of, 1, MPI_INT, ctl));
  contend_ctx_init(c, mo, p, rank, size, m->node_of, seed, job);
  c->impl = m;
  c->ops = &contend_mpi_ops;
  int rc = mo->setup ? mo->setup(c) : 0;
  /* a failed setup on any rank fails it everywhere */
  CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, ctl));
  return rc < 0 ? -1 : 0;
}

void contend_mpi_ctx_close(contend_ctx *c) {
  mpi_impl *m = c->impl;
  if (!m)
    return;
  if (m->have_win) {
    CONTEND_MPI_CHECK(MPI_Win_unlock_all(m->win));
    CONTEND_MPI_CHECK(MPI_Win_free(&m->win));
    if (!m->win_allocated)
      CONTEND_MPI_CHECK(MPI_Free_mem(m->win_mem));
  }
  for (int i = 0; i < m->nfiles; i++) /* files a motif left open (after an error) */
    if (m->files[i].is_open) {
      char err[256];
      m->files[i].is_open = 0;
      m->files[i].be->close(&m->files[i], err, sizeof err);
    }
  free(m->files);
  if (m->traffic)
    flush_counts(c);
  free(m->pc);
  free(m->touched);
  for (int i = 0; i < m->nmem; i++)
    free(m->mem[i]);
  free(m->mem);
  free(m->req);
  free(m->node_of);
  free(m->used);
  free(m->targets);
  free(m);
  contend_ctx_free_state(c);
  c->impl = NULL;
}
