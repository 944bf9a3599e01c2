#include "engine_mpi.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

typedef struct mpi_impl {
  MPI_Comm comm;
  MPI_Win win;
  int have_win;
  MPI_Request *req;
  int nreq, capreq;
  void **mem;
  int nmem, capmem;
  int *node_of;
} mpi_impl;

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n);
  if (!q)
    contend_fail("out of memory (%zu bytes)", n);
  return q;
}

static void *e_alloc(contend_ctx *c, size_t bytes) {
  mpi_impl *m = c->impl;
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p)
    contend_fail("out of memory allocating %zu bytes for motif buffers", bytes);
  if (m->nmem == m->capmem) {
    m->capmem = m->capmem ? 2 * m->capmem : 8;
    m->mem = xrealloc(m->mem, sizeof(void *) * (size_t)m->capmem);
  }
  m->mem[m->nmem++] = p;
  return p;
}

static void *e_win_alloc(contend_ctx *c, size_t bytes) {
  mpi_impl *m = c->impl;
  void *base = NULL;
  if (m->have_win)
    contend_fail("a motif asked for a second RMA window (one per context)");
  CONTEND_MPI_CHECK(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, m->comm, &base, &m->win));
  CONTEND_MPI_CHECK(MPI_Win_set_errhandler(m->win, MPI_ERRORS_RETURN));
  m->have_win = 1;
  if (bytes)
    memset(base, 0, bytes);
  CONTEND_MPI_CHECK(MPI_Win_lock_all(MPI_MODE_NOCHECK, m->win));
  return base;
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
  CONTEND_MPI_CHECK(MPI_Waitall(m->nreq, m->req, MPI_STATUSES_IGNORE));
  m->nreq = 0;
}

static void e_put(contend_ctx *c, const void *buf, size_t bytes, int peer, size_t off) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(
      MPI_Put(buf, (int)bytes, MPI_BYTE, peer, (MPI_Aint)off, (int)bytes, MPI_BYTE, m->win));
}

static void e_get(contend_ctx *c, void *buf, size_t bytes, int peer, size_t off) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(
      MPI_Get(buf, (int)bytes, MPI_BYTE, peer, (MPI_Aint)off, (int)bytes, MPI_BYTE, m->win));
}

static void e_flush_all(contend_ctx *c) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Win_flush_all(m->win));
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

static MPI_Datatype dtype(contend_dtype d) {
  switch (d) {
  case CONTEND_DT_INT64:
    return MPI_INT64_T;
  case CONTEND_DT_DOUBLE:
    return MPI_DOUBLE;
  default:
    return MPI_BYTE;
  }
}

static MPI_Op op(contend_op o) {
  switch (o) {
  case CONTEND_OP_MIN:
    return MPI_MIN;
  case CONTEND_OP_MAX:
    return MPI_MAX;
  default:
    return MPI_SUM;
  }
}

static void e_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op o) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Allreduce(s, r, count, dtype(dt), op(o), m->comm));
}

static void e_alltoall(contend_ctx *c, const void *s, void *r, size_t per_peer) {
  mpi_impl *m = c->impl;
  CONTEND_MPI_CHECK(MPI_Alltoall(s, (int)per_peer, MPI_BYTE, r, (int)per_peer, MPI_BYTE, m->comm));
}

static void e_compute(contend_ctx *c, double seconds) {
  (void)c;
  double end = MPI_Wtime() + seconds;
  while (MPI_Wtime() < end) {
  }
}

const contend_engine_ops contend_mpi_ops = {
    .name = "mpi",
    .alloc = e_alloc,
    .win_alloc = e_win_alloc,
    .isend = e_isend,
    .irecv = e_irecv,
    .waitall = e_waitall,
    .put = e_put,
    .get = e_get,
    .flush_all = e_flush_all,
    .barrier = e_barrier,
    .allreduce = e_allreduce,
    .alltoall = e_alltoall,
    .compute = e_compute,
};

int contend_mpi_ctx_open(contend_ctx *c, const contend_motif *mo, const contend_params *p,
                         MPI_Comm comm, int my_node, uint64_t seed) {
  memset(c, 0, sizeof *c);
  mpi_impl *m = calloc(1, sizeof *m);
  if (!m)
    contend_fail("out of memory");
  m->comm = comm;
  CONTEND_MPI_CHECK(MPI_Comm_rank(comm, &c->rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(comm, &c->size));
  m->node_of = malloc(sizeof(int) * (size_t)c->size);
  if (!m->node_of)
    contend_fail("out of memory");
  CONTEND_MPI_CHECK(MPI_Allgather(&my_node, 1, MPI_INT, m->node_of, 1, MPI_INT, comm));
  c->node_of = m->node_of;
  c->impl = m;
  c->ops = &contend_mpi_ops;
  c->params = p;
  c->seed = seed;
  c->state = calloc(1, mo->state_size ? mo->state_size : 1);
  if (!c->state)
    contend_fail("out of memory");
  int rc = mo->setup ? mo->setup(c) : 0;
  /* a failed setup on any rank fails it everywhere */
  CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MIN, comm));
  return rc;
}

int contend_mpi_ctx_open_serial(contend_ctx *c, const contend_motif *mo, const contend_params *p,
                                MPI_Comm comm, int my_node, uint64_t seed, MPI_Comm over, int slot,
                                int nslots) {
  int rc = 0;
  for (int s = 0; s < nslots; s++) {
    if (s == slot)
      rc = contend_mpi_ctx_open(c, mo, p, comm, my_node, seed);
    CONTEND_MPI_CHECK(MPI_Barrier(over));
  }
  return rc;
}

void contend_mpi_ctx_close(contend_ctx *c) {
  mpi_impl *m = c->impl;
  if (!m)
    return;
  if (m->have_win) {
    CONTEND_MPI_CHECK(MPI_Win_unlock_all(m->win));
    CONTEND_MPI_CHECK(MPI_Win_free(&m->win));
  }
  for (int i = 0; i < m->nmem; i++)
    free(m->mem[i]);
  free(m->mem);
  free(m->req);
  free(m->node_of);
  free(m);
  free(c->state);
  c->impl = NULL;
  c->state = NULL;
}

MPI_Comm contend_mpi_ctx_comm(const contend_ctx *c) { return ((const mpi_impl *)c->impl)->comm; }
