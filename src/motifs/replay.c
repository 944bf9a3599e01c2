/* replay: plays a recorded MPI program (an OTF2 archive, docs/trace.md)
 * through the engine interface, one trace rank per group rank.
 *
 * One iteration is the whole trace of the rank, in order: sends and
 * receives are posted where the program posted them (tags kept apart per
 * communicator), and completed (waitall) where the program had no request
 * open any more; compute gaps are compute, times compute_scale
 * (contend_compute_replayed: wall-time gaps keep their recorded sum, a
 * gap that overran shortening the next ones; CPU-time gaps of a
 * --compute-cpu archive last until the thread has run them);
 * collectives on the whole group (barrier, allreduce, alltoall) are engine
 * collectives, every other collective (other kinds, sub-communicators) is
 * played as point-to-point messages among its members (textbook
 * algorithms, contend_coll_round, or root to/from each member);
 * puts and gets go to one window (offset 0) and are completed at the end
 * of their epoch (fence).  The trace's rank count must equal the group's. */
#include <stdio.h>
#include <string.h>

#include "../core/coll_expand.h"
#include "../trace_otf2/trace.h"
#include "workload.h"

/* Tags: point-to-point messages below COLL_TAG0 (recorded tag mixed with
 * the communicator), played collectives from COLL_TAG0 on (per
 * communicator); all below 32767, the smallest MPI_TAG_UB. */
enum { P2P_TAGS = 16384, COLL_TAG0 = 16384, COLL_TAGS = 8192 };

typedef struct {
  const contend_tstep *step;
  size_t nstep;
  const contend_tcomm *comm;
  int ncomm;
  const unsigned char *is_group; /* per comm: its members are the group, in order */
  /* one send and one receive buffer for every transfer: the replay moves
   * volume, not data (concurrent receives share rbuf) */
  unsigned char *sbuf, *rbuf, *win;
  size_t buf_bytes; /* of sbuf and rbuf: more than the largest step of any rank */
  double scale;
  int cpu; /* the gaps are CPU time (contend_trace.compute_cpu) */
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"trace", CONTEND_P_STRING, "", "",
     "the OTF2 archive (its directory or .otf2 file), e.g. from `contend record`", 1, 0},
    {"compute_scale", CONTEND_P_DOUBLE, "1", "factor",
     "recorded compute time between MPI calls is replayed times this", 0, 1000},
    CONTEND_PARAM_END};

/* The refusal of a trace recorded on another rank count than the job's. */
static int rank_mismatch(const char *path, int traced, int job, char *err, size_t errlen) {
  snprintf(err, errlen,
           "trace=%s was recorded on %d ranks, the job has %d: replay needs the recorded rank "
           "count",
           path, traced, job);
  return -1;
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  const char *path = contend_param_str(p, "trace");
  const char *why;
  if (!*path) {
    snprintf(err, errlen, "trace= is required: the OTF2 archive to replay");
    return -1;
  }
  if (!contend_trace_available(&why)) {
    snprintf(err, errlen, "trace=%s: %s", path, why);
    return -1;
  }
  if (nranks <= 0)
    return 0;
  contend_trace_sizes sz;
  if (contend_trace_check(path, &sz, err, errlen))
    return -1;
  return sz.nranks != nranks ? rank_mismatch(path, sz.nranks, nranks, err, errlen) : 0;
}

static size_t max_sz(size_t a, size_t b) { return a > b ? a : b; }

/* Copies the trace into engine memory (freed with the context). */
static void adopt(contend_ctx *c, state *s, contend_trace *t) {
  contend_tstep *step = contend_alloc(c, max_sz(t->nstep, 1) * sizeof *step);
  contend_tcomm *comm = contend_alloc(c, (size_t)(t->ncomm ? t->ncomm : 1) * sizeof *comm);
  unsigned char *is_group = contend_alloc(c, (size_t)(t->ncomm ? t->ncomm : 1));
  memcpy(step, t->step, t->nstep * sizeof *step);
  for (int k = 0; k < t->ncomm; k++) {
    comm[k].size = t->comm[k].size;
    int *w = contend_alloc(c, (size_t)comm[k].size * sizeof *w);
    for (int i = 0; i < comm[k].size; i++)
      w[i] = t->comm[k].world[i] < 0 ? c->rank : t->comm[k].world[i];
    comm[k].world = w;
    int whole = comm[k].size == c->size;
    for (int i = 0; whole && i < comm[k].size; i++)
      whole = w[i] == i;
    is_group[k] = (unsigned char)whole;
  }
  s->step = step;
  s->nstep = t->nstep;
  s->comm = comm;
  s->ncomm = t->ncomm;
  s->is_group = is_group;
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  const char *path = contend_param_str(c->params, "trace");
  s->scale = contend_param_double(c->params, "compute_scale");
  contend_trace t;
  contend_trace_sizes sz;
  if (!*path) {
    snprintf(c->error, sizeof c->error, "trace= is required: the OTF2 archive to replay");
    return -1;
  }
  /* every rank's sizes (remembered from validate): buffers and the window */
  if (contend_trace_check(path, &sz, c->error, sizeof c->error) ||
      contend_trace_read(path, c->rank, &t, c->error, sizeof c->error))
    return -1;
  if (t.nranks != c->size) {
    contend_trace_free(&t);
    return rank_mismatch(path, t.nranks, c->size, c->error, sizeof c->error);
  }
  adopt(c, s, &t);
  s->cpu = t.compute_cpu;
  contend_trace_free(&t);
  s->buf_bytes = (size_t)max_sz(sz.msg_max, sz.rma_max) + 8;
  s->sbuf = contend_alloc(c, s->buf_bytes);
  s->rbuf = contend_alloc(c, s->buf_bytes);
  if (sz.rma_max > 0) /* the same on every rank: win_alloc is collective */
    s->win = contend_win_alloc(c, (size_t)sz.rma_max);
  c->msg_bytes = (size_t)sz.msg_max;
  c->metric_scale = 1.0;
  return 0;
}

static int p2p_tag(int comm, int tag) {
  return (int)(((unsigned)comm * 1009u + (unsigned)tag) % P2P_TAGS);
}

/* Collective x played as messages among the members of comm m, this rank
 * being member me; completes them (and everything open) before returning. */
static void play_coll(contend_ctx *c, state *s, const contend_tstep *x, const contend_tcomm *m,
                      int me) {
  const int n = m->size, tag = COLL_TAG0 + x->comm % COLL_TAGS;
  const size_t cap = s->buf_bytes;
  contend_coll_kind k = CONTEND_COLL_N;
  size_t bytes = 0;
  switch (x->coll) {
  case CONTEND_TC_BARRIER:
    k = CONTEND_COLL_BARRIER;
    break;
  case CONTEND_TC_ALLREDUCE:
  case CONTEND_TC_REDUCE_SCATTER:
  case CONTEND_TC_SCAN:
  case CONTEND_TC_EXSCAN:
  case CONTEND_TC_REDUCE_SCATTER_BLOCK:
    k = CONTEND_COLL_ALLREDUCE;
    bytes = x->bytes;
    break;
  case CONTEND_TC_ALLGATHER:
  case CONTEND_TC_ALLGATHERV:
  case CONTEND_TC_ALLTOALL:
  case CONTEND_TC_ALLTOALLV:
  case CONTEND_TC_ALLTOALLW:
    k = CONTEND_COLL_ALLTOALL;
    bytes = x->bytes / (size_t)(n - 1);
    break;
  default:
    break;
  }
  if (k != CONTEND_COLL_N) {
    const int rounds = contend_coll_rounds(k, n);
    for (int i = 0; i < rounds; i++) {
      int to, from;
      contend_coll_round(k, me, n, i, &to, &from);
      if (from >= 0)
        contend_irecv(c, s->rbuf, cap, m->world[from], tag);
      if (to >= 0)
        contend_isend(c, s->sbuf, bytes, m->world[to], tag);
      contend_waitall(c);
    }
    return;
  }
  /* rooted: bcast/scatter(v) from the root, gather(v)/reduce to it */
  const int root = x->peer;
  const int from_root = x->coll == CONTEND_TC_BCAST || x->coll == CONTEND_TC_SCATTER ||
                        x->coll == CONTEND_TC_SCATTERV;
  if (root < 0)
    return;
  if (c->rank == root) {
    for (int i = 0; i < n; i++) {
      if (m->world[i] == root)
        continue;
      if (from_root)
        contend_isend(c, s->sbuf, x->bytes / (size_t)(n - 1), m->world[i], tag);
      else
        contend_irecv(c, s->rbuf, cap, m->world[i], tag);
    }
  } else if (from_root) {
    contend_irecv(c, s->rbuf, cap, root, tag);
  } else {
    contend_isend(c, s->sbuf, x->bytes, root, tag);
  }
  contend_waitall(c);
}

static void coll(contend_ctx *c, state *s, const contend_tstep *x) {
  const contend_tcomm *m = &s->comm[x->comm];
  if (m->size < 2)
    return;
  if (s->is_group[x->comm]) {
    if (x->coll == CONTEND_TC_BARRIER) {
      contend_barrier(c);
      return;
    }
    if (x->coll == CONTEND_TC_ALLREDUCE) { /* in doubles: the vector rounded up to 8 bytes */
      contend_allreduce(c, s->sbuf, s->rbuf, (int)((x->bytes + 7) / 8), CONTEND_DT_DOUBLE,
                        CONTEND_OP_SUM);
      return;
    }
    if (x->coll == CONTEND_TC_ALLTOALL) {
      contend_alltoall(c, s->sbuf, s->rbuf, x->bytes / (size_t)(c->size - 1));
      return;
    }
  }
  int me = 0;
  while (me < m->size && m->world[me] != c->rank)
    me++;
  if (me < m->size)
    play_coll(c, s, x, m, me);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  for (size_t i = 0; i < s->nstep; i++) {
    const contend_tstep *x = &s->step[i];
    switch (x->kind) {
    case CONTEND_TS_SEND:
      contend_isend(c, s->sbuf, x->bytes, x->peer, p2p_tag(x->comm, x->tag));
      break;
    case CONTEND_TS_RECV:
      contend_irecv(c, s->rbuf, x->bytes, x->peer, p2p_tag(x->comm, x->tag));
      break;
    case CONTEND_TS_WAIT:
      contend_waitall(c);
      break;
    case CONTEND_TS_COLL:
      coll(c, s, x);
      break;
    case CONTEND_TS_COMPUTE:
      if (s->scale > 0)
        contend_compute_replayed(c, x->seconds * s->scale, s->cpu);
      break;
    case CONTEND_TS_PUT:
      contend_put(c, s->sbuf, x->bytes, x->peer, 0);
      break;
    case CONTEND_TS_GET:
      contend_get(c, s->rbuf, x->bytes, x->peer, 0);
      break;
    case CONTEND_TS_RMA_SYNC:
      if (s->win)
        contend_flush_all(c);
      break;
    default:
      break;
    }
  }
}

const contend_motif contend_motif_replay = {
    .name = "replay",
    .label = "Replay",
    .help = "replays a recorded MPI program (OTF2 trace, `contend record`) at its rank count",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .iterate = iterate,
    .validate = validate,
};
