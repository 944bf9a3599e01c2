/* The OTF2 reader: one rank of an archive as replay steps (see trace.h).
 *
 * Definitions: the MPI ranks are the members of the archive's MPI
 * communication-locations group (else the CPU-thread locations in the order
 * they are defined); communicators are groups of ranks; regions of the MPI
 * paradigm are MPI calls, everything else counts as compute.  Events: sends
 * and receives (blocking, non-blocking and persistent, which OTF2 records
 * as non-blocking ones), request completions and cancellations,
 * collectives, one-sided puts/gets and epoch ends, and the time from the
 * end of one MPI call to the start of the next.  A non-blocking receive is
 * posted where the program posted it, with the source and size its
 * completion recorded; a request never completed is left out.  Requests
 * are completed (a WAIT step) where the rank has none open any more. */
#define _GNU_SOURCE
#include <dirent.h>
#include <otf2/otf2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "otf2_errors.h"
#include "trace.h"

_Static_assert((int)CONTEND_TC_ALLREDUCE == (int)OTF2_COLLECTIVE_OP_ALLREDUCE &&
                   (int)CONTEND_TC_BCAST == (int)OTF2_COLLECTIVE_OP_BCAST &&
                   (int)CONTEND_TC_ALLTOALLV == (int)OTF2_COLLECTIVE_OP_ALLTOALLV &&
                   (int)CONTEND_TC_REDUCE_SCATTER_BLOCK ==
                       (int)OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
               "contend_tcoll follows OTF2_CollectiveOp");

int contend_trace_available(const char **why_not) {
  if (why_not)
    *why_not = NULL;
  return 1;
}

/* A growable array of int indexed by definition id (-1: not defined). */
typedef struct idmap {
  int *v;
  size_t n;
} idmap;

static int idmap_set(idmap *m, uint64_t id, int val) {
  if (id >= CONTEND_TRACE_MAX_DEFS)
    return -1;
  if (id >= m->n) {
    size_t n = m->n ? m->n : 64;
    while (n <= id)
      n *= 2;
    int *v = realloc(m->v, n * sizeof *v);
    if (!v)
      return -1;
    for (size_t i = m->n; i < n; i++)
      v[i] = -1;
    m->v = v;
    m->n = n;
  }
  m->v[id] = val;
  return 0;
}
static int idmap_get(const idmap *m, uint64_t id) { return id < m->n ? m->v[id] : -1; }

typedef struct group {
  uint8_t type; /* OTF2_GroupType */
  uint32_t n;
  uint64_t *members;
} group;

typedef struct pending {
  uint64_t id;
  size_t step; /* index of the post in steps */
} pending;

typedef struct reader {
  const char *arch;
  char *err;
  size_t errlen;
  int failed;
  /* definitions */
  uint64_t resolution;
  idmap region_mpi; /* region id -> 1 if an MPI call */
  idmap group_of;   /* group id -> index into groups */
  group *groups;
  int ngroups, cgroups;
  idmap comm_of;        /* comm id -> index into comms */
  uint64_t *comm_group; /* per comm index: its group id */
  int ncomms, ccomms;
  idmap win_comm; /* RMA window id -> comm id */
  uint64_t *locs; /* CPU-thread locations in definition order */
  int nlocs, clocs;
  int rank_group; /* index of the comm-locations group, or -1 */
  /* the rank being read */
  int rank;
  uint64_t loc;
  contend_trace *t;
  size_t cap;
  pending *open;
  size_t nopen;
  int depth; /* nesting of MPI regions */
  int have_leave;
  uint64_t last_leave;
} reader;

__attribute__((format(printf, 3, 4))) static OTF2_CallbackCode fail(reader *r, const char *event,
                                                                    const char *fmt, ...) {
  if (r->failed)
    return OTF2_CALLBACK_INTERRUPT;
  r->failed = 1;
  char what[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (event)
    snprintf(r->err, r->errlen, "%s: location %llu (rank %d): event %s: %s", r->arch,
             (unsigned long long)r->loc, r->rank, event, what);
  else
    snprintf(r->err, r->errlen, "%s: %s", r->arch, what);
  return OTF2_CALLBACK_INTERRUPT;
}

/* ---- definitions --------------------------------------------------------- */

static OTF2_CallbackCode d_clock(void *ud, uint64_t res, uint64_t off, uint64_t len, uint64_t rt) {
  (void)off, (void)len, (void)rt;
  ((reader *)ud)->resolution = res;
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_location(void *ud, OTF2_LocationRef self, OTF2_StringRef name,
                                    OTF2_LocationType type, uint64_t nev,
                                    OTF2_LocationGroupRef lg) {
  (void)name, (void)nev, (void)lg;
  reader *r = ud;
  if (type != OTF2_LOCATION_TYPE_CPU_THREAD)
    return OTF2_CALLBACK_SUCCESS;
  if (r->nlocs >= CONTEND_TRACE_MAX_RANKS)
    return fail(r, NULL, "more than %d locations (the limit of ranks)", CONTEND_TRACE_MAX_RANKS);
  if (r->nlocs == r->clocs) {
    r->clocs = r->clocs ? 2 * r->clocs : 64;
    uint64_t *v = realloc(r->locs, (size_t)r->clocs * sizeof *v);
    if (!v)
      return fail(r, NULL, "out of memory");
    r->locs = v;
  }
  r->locs[r->nlocs++] = self;
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_region(void *ud, OTF2_RegionRef self, OTF2_StringRef name,
                                  OTF2_StringRef cname, OTF2_StringRef desc, OTF2_RegionRole role,
                                  OTF2_Paradigm paradigm, OTF2_RegionFlag flags,
                                  OTF2_StringRef file, uint32_t l0, uint32_t l1) {
  (void)name, (void)cname, (void)desc, (void)role, (void)flags, (void)file, (void)l0, (void)l1;
  reader *r = ud;
  if (idmap_set(&r->region_mpi, self, paradigm == OTF2_PARADIGM_MPI))
    return fail(r, NULL, "region id %u beyond the limit of %d definitions", self,
                CONTEND_TRACE_MAX_DEFS);
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_group(void *ud, OTF2_GroupRef self, OTF2_StringRef name,
                                 OTF2_GroupType type, OTF2_Paradigm paradigm, OTF2_GroupFlag flags,
                                 uint32_t n, const uint64_t *members) {
  (void)name, (void)flags;
  reader *r = ud;
  if (type != OTF2_GROUP_TYPE_COMM_LOCATIONS && type != OTF2_GROUP_TYPE_COMM_GROUP &&
      type != OTF2_GROUP_TYPE_COMM_SELF)
    return OTF2_CALLBACK_SUCCESS;
  if (n > CONTEND_TRACE_MAX_RANKS)
    return fail(r, NULL, "group %u has %u members, more than the limit of %d ranks", self, n,
                CONTEND_TRACE_MAX_RANKS);
  if (r->ngroups == r->cgroups) {
    r->cgroups = r->cgroups ? 2 * r->cgroups : 16;
    group *g = realloc(r->groups, (size_t)r->cgroups * sizeof *g);
    if (!g)
      return fail(r, NULL, "out of memory");
    r->groups = g;
  }
  group *g = &r->groups[r->ngroups];
  g->type = (uint8_t)type;
  g->n = n;
  g->members = malloc((n ? n : 1) * sizeof *g->members);
  if (!g->members)
    return fail(r, NULL, "out of memory");
  if (n)
    memcpy(g->members, members, n * sizeof *members);
  if (idmap_set(&r->group_of, self, r->ngroups))
    return fail(r, NULL, "group id %u beyond the limit of %d definitions", self,
                CONTEND_TRACE_MAX_DEFS);
  if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS && paradigm == OTF2_PARADIGM_MPI)
    r->rank_group = r->ngroups;
  r->ngroups++;
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_comm(void *ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef grp,
                                OTF2_CommRef parent, OTF2_CommFlag flags) {
  (void)name, (void)parent, (void)flags;
  reader *r = ud;
  if (r->ncomms >= CONTEND_TRACE_MAX_COMMS)
    return fail(r, NULL, "more than %d communicators (the limit)", CONTEND_TRACE_MAX_COMMS);
  if (r->ncomms == r->ccomms) {
    r->ccomms = r->ccomms ? 2 * r->ccomms : 16;
    uint64_t *v = realloc(r->comm_group, (size_t)r->ccomms * sizeof *v);
    if (!v)
      return fail(r, NULL, "out of memory");
    r->comm_group = v;
  }
  r->comm_group[r->ncomms] = grp;
  if (idmap_set(&r->comm_of, self, r->ncomms))
    return fail(r, NULL, "communicator id %u beyond the limit of %d definitions", self,
                CONTEND_TRACE_MAX_DEFS);
  r->ncomms++;
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode d_rmawin(void *ud, OTF2_RmaWinRef self, OTF2_StringRef name,
                                  OTF2_CommRef comm, OTF2_RmaWinFlag flags) {
  (void)name, (void)flags;
  reader *r = ud;
  if (idmap_set(&r->win_comm, self, (int)comm))
    return fail(r, NULL, "window id %u beyond the limit of %d definitions", self,
                CONTEND_TRACE_MAX_DEFS);
  return OTF2_CALLBACK_SUCCESS;
}

/* The ranks (location of each) and communicators (world ranks of their
 * members) from the definitions read. */
static int resolve(reader *r, contend_trace *t) {
  const uint64_t *rank_loc = r->locs;
  int n = r->nlocs;
  if (r->rank_group >= 0) {
    rank_loc = r->groups[r->rank_group].members;
    n = (int)r->groups[r->rank_group].n;
  }
  if (n < 1) {
    fail(r, NULL, "no MPI ranks defined (not an MPI trace)");
    return -1;
  }
  t->nranks = n;
  t->ncomm = r->ncomms;
  t->comm = calloc((size_t)(r->ncomms ? r->ncomms : 1), sizeof *t->comm);
  if (!t->comm) {
    fail(r, NULL, "out of memory");
    return -1;
  }
  for (int k = 0; k < r->ncomms; k++) {
    const int gi = idmap_get(&r->group_of, r->comm_group[k]);
    if (gi < 0) {
      fail(r, NULL, "communicator %d refers to group %llu, which is not defined", k,
           (unsigned long long)r->comm_group[k]);
      return -1;
    }
    const group *g = &r->groups[gi];
    contend_tcomm *c = &t->comm[k];
    if (g->type == OTF2_GROUP_TYPE_COMM_SELF) { /* resolved per rank: -1 */
      c->size = 1;
      c->world = malloc(sizeof *c->world);
      if (!c->world) {
        fail(r, NULL, "out of memory");
        return -1;
      }
      c->world[0] = -1;
      continue;
    }
    c->size = (int)g->n;
    c->world = malloc((g->n ? g->n : 1) * sizeof *c->world);
    if (!c->world) {
      fail(r, NULL, "out of memory");
      return -1;
    }
    for (uint32_t i = 0; i < g->n; i++) {
      /* COMM_GROUP members are ranks; a COMM_LOCATIONS group used as a
       * communicator (the world) lists locations, whose rank is their index */
      uint64_t m = g->members[i];
      if (g->type == OTF2_GROUP_TYPE_COMM_LOCATIONS)
        m = i;
      if (m >= (uint64_t)n) {
        fail(r, NULL, "communicator %d has member %llu, beyond the %d ranks", k,
             (unsigned long long)m, n);
        return -1;
      }
      c->world[i] = (int)m;
    }
  }
  if (r->rank >= 0)
    r->loc = rank_loc[r->rank];
  return 0;
}

/* ---- events -------------------------------------------------------------- */

static contend_tstep *push(reader *r, const char *event, int kind) {
  contend_trace *t = r->t;
  if (t->nstep >= CONTEND_TRACE_MAX_STEPS) {
    fail(r, event, "more than %d replay steps on this rank (the limit)", CONTEND_TRACE_MAX_STEPS);
    return NULL;
  }
  if (t->nstep == r->cap) {
    size_t cap = r->cap ? 2 * r->cap : 256;
    contend_tstep *s = realloc(t->step, cap * sizeof *s);
    if (!s) {
      fail(r, event, "out of memory");
      return NULL;
    }
    t->step = s;
    r->cap = cap;
  }
  contend_tstep *s = &t->step[t->nstep++];
  memset(s, 0, sizeof *s);
  s->kind = (uint8_t)kind;
  s->peer = -1;
  return s;
}

/* Communicator index of ref, or -1 (failed). */
static int comm_index(reader *r, const char *event, OTF2_CommRef ref) {
  const int k = idmap_get(&r->comm_of, ref);
  if (k < 0)
    fail(r, event, "unknown communicator %u (not in the definitions)", ref);
  return k;
}

/* World rank of rank `peer` of communicator k, or -1 (failed). */
static int world_of(reader *r, const char *event, int k, uint64_t peer) {
  const contend_tcomm *c = &r->t->comm[k];
  if (peer >= (uint64_t)c->size) {
    fail(r, event, "rank %llu outside communicator %d of %d ranks", (unsigned long long)peer, k,
         c->size);
    return -1;
  }
  return c->world[peer] < 0 ? r->rank : c->world[peer];
}

static int check_bytes(reader *r, const char *event, uint64_t bytes) {
  if (bytes > CONTEND_TRACE_MAX_BYTES) {
    fail(r, event, "%llu bytes in one transfer, more than the limit of %llu",
         (unsigned long long)bytes, (unsigned long long)CONTEND_TRACE_MAX_BYTES);
    return -1;
  }
  return 0;
}

/* A point-to-point post; requestID != UINT64_MAX: open until completed. */
static OTF2_CallbackCode p2p(reader *r, const char *event, int kind, uint32_t peer,
                             OTF2_CommRef comm, uint32_t tag, uint64_t bytes, uint64_t req) {
  const int k = comm_index(r, event, comm);
  if (k < 0 || check_bytes(r, event, bytes))
    return OTF2_CALLBACK_INTERRUPT;
  const int w = world_of(r, event, k, peer);
  if (w < 0)
    return OTF2_CALLBACK_INTERRUPT;
  contend_tstep *s = push(r, event, kind);
  if (!s)
    return OTF2_CALLBACK_INTERRUPT;
  s->bytes = bytes;
  s->peer = w;
  s->tag = (int)(tag & 0x7fffffff);
  s->comm = k;
  if (req == UINT64_MAX) { /* blocking: complete at once */
    if (!r->nopen && !push(r, event, CONTEND_TS_WAIT))
      return OTF2_CALLBACK_INTERRUPT;
    return OTF2_CALLBACK_SUCCESS;
  }
  if (r->nopen >= CONTEND_TRACE_MAX_PENDING)
    return fail(r, event, "more than %d requests open at once (the limit)",
                CONTEND_TRACE_MAX_PENDING);
  r->open[r->nopen].id = req;
  r->open[r->nopen].step = r->t->nstep - 1;
  r->nopen++;
  return OTF2_CALLBACK_SUCCESS;
}

/* Completes open request req: returns its post (NULL: unknown request,
 * failed). */
static contend_tstep *complete(reader *r, const char *event, uint64_t req) {
  for (size_t i = r->nopen; i-- > 0;)
    if (r->open[i].id == req) {
      const size_t post = r->open[i].step;
      r->open[i] = r->open[--r->nopen];
      if (!r->nopen && !push(r, event, CONTEND_TS_WAIT)) /* may move the steps */
        return NULL;
      return &r->t->step[post];
    }
  fail(r, event, "request %llu completed but never posted", (unsigned long long)req);
  return NULL;
}

#define EV_ARGS                                                                                    \
  OTF2_LocationRef loc, OTF2_TimeStamp time, uint64_t pos, void *ud, OTF2_AttributeList *al
#define EV_UNUSED (void)loc, (void)time, (void)pos, (void)al

static OTF2_CallbackCode e_enter(EV_ARGS, OTF2_RegionRef region) {
  EV_UNUSED;
  reader *r = ud;
  if (idmap_get(&r->region_mpi, region) != 1)
    return OTF2_CALLBACK_SUCCESS;
  if (r->depth++ == 0 && r->have_leave && time > r->last_leave && r->resolution) {
    contend_tstep *s = push(r, "Enter", CONTEND_TS_COMPUTE);
    if (!s)
      return OTF2_CALLBACK_INTERRUPT;
    s->seconds = (double)(time - r->last_leave) / (double)r->resolution;
  }
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode e_leave(EV_ARGS, OTF2_RegionRef region) {
  EV_UNUSED;
  reader *r = ud;
  if (idmap_get(&r->region_mpi, region) != 1 || r->depth == 0)
    return OTF2_CALLBACK_SUCCESS;
  if (--r->depth == 0) {
    r->have_leave = 1;
    r->last_leave = time;
  }
  return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode e_send(EV_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
                                uint64_t len) {
  EV_UNUSED;
  return p2p(ud, "MpiSend", CONTEND_TS_SEND, peer, comm, tag, len, UINT64_MAX);
}
static OTF2_CallbackCode e_isend(EV_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t len, uint64_t req) {
  EV_UNUSED;
  return p2p(ud, "MpiIsend", CONTEND_TS_SEND, peer, comm, tag, len, req);
}
static OTF2_CallbackCode e_isend_done(EV_ARGS, uint64_t req) {
  EV_UNUSED;
  return complete(ud, "MpiIsendComplete", req) ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}
static OTF2_CallbackCode e_recv(EV_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
                                uint64_t len) {
  EV_UNUSED;
  return p2p(ud, "MpiRecv", CONTEND_TS_RECV, peer, comm, tag, len, UINT64_MAX);
}
/* The post of a receive: source, tag and size come with its completion. */
static OTF2_CallbackCode e_irecv_req(EV_ARGS, uint64_t req) {
  EV_UNUSED;
  reader *r = ud;
  if (!push(r, "MpiIrecvRequest", CONTEND_TS_SKIP))
    return OTF2_CALLBACK_INTERRUPT;
  if (r->nopen >= CONTEND_TRACE_MAX_PENDING)
    return fail(r, "MpiIrecvRequest", "more than %d requests open at once (the limit)",
                CONTEND_TRACE_MAX_PENDING);
  r->open[r->nopen].id = req;
  r->open[r->nopen].step = r->t->nstep - 1;
  r->nopen++;
  return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_irecv(EV_ARGS, uint32_t peer, OTF2_CommRef comm, uint32_t tag,
                                 uint64_t len, uint64_t req) {
  EV_UNUSED;
  reader *r = ud;
  const char *ev = "MpiIrecv";
  const int k = comm_index(r, ev, comm);
  if (k < 0 || check_bytes(r, ev, len))
    return OTF2_CALLBACK_INTERRUPT;
  const int w = world_of(r, ev, k, peer);
  if (w < 0)
    return OTF2_CALLBACK_INTERRUPT;
  contend_tstep *s = complete(r, ev, req);
  if (!s)
    return OTF2_CALLBACK_INTERRUPT;
  s->kind = CONTEND_TS_RECV;
  s->bytes = len;
  s->peer = w;
  s->tag = (int)(tag & 0x7fffffff);
  s->comm = k;
  return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_cancelled(EV_ARGS, uint64_t req) {
  EV_UNUSED;
  contend_tstep *s = complete(ud, "MpiRequestCancelled", req);
  if (!s)
    return OTF2_CALLBACK_INTERRUPT;
  s->kind = CONTEND_TS_SKIP;
  return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_coll(EV_ARGS, OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root,
                                uint64_t sent, uint64_t recvd) {
  EV_UNUSED;
  reader *r = ud;
  const char *ev = "MpiCollectiveEnd";
  const int k = comm_index(r, ev, comm);
  if (k < 0 || check_bytes(r, ev, sent) || check_bytes(r, ev, recvd))
    return OTF2_CALLBACK_INTERRUPT;
  if (op > CONTEND_TC_REDUCE_SCATTER_BLOCK)
    return OTF2_CALLBACK_SUCCESS; /* handle creation and the like: no data */
  int w = -1;
  if (root != OTF2_UNDEFINED_UINT32 && root < (uint32_t)r->t->comm[k].size) {
    w = world_of(r, ev, k, root);
    if (w < 0)
      return OTF2_CALLBACK_INTERRUPT;
  }
  contend_tstep *s = push(r, ev, CONTEND_TS_COLL);
  if (!s)
    return OTF2_CALLBACK_INTERRUPT;
  s->coll = (uint8_t)op;
  s->comm = k;
  s->peer = w;
  s->bytes = sent;
  s->bytes2 = recvd;
  return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode rma(reader *r, const char *ev, int kind, OTF2_RmaWinRef win,
                             uint32_t remote, uint64_t bytes) {
  const int comm = idmap_get(&r->win_comm, win);
  if (comm < 0)
    return fail(r, ev, "unknown window %u (not in the definitions)", win);
  const int k = comm_index(r, ev, (OTF2_CommRef)comm);
  if (k < 0 || check_bytes(r, ev, bytes))
    return OTF2_CALLBACK_INTERRUPT;
  const int w = world_of(r, ev, k, remote);
  if (w < 0)
    return OTF2_CALLBACK_INTERRUPT;
  contend_tstep *s = push(r, ev, kind);
  if (!s)
    return OTF2_CALLBACK_INTERRUPT;
  s->peer = w;
  s->bytes = bytes;
  return OTF2_CALLBACK_SUCCESS;
}
static OTF2_CallbackCode e_put(EV_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                               uint64_t id) {
  EV_UNUSED, (void)id;
  return rma(ud, "RmaPut", CONTEND_TS_PUT, win, remote, bytes);
}
static OTF2_CallbackCode e_get(EV_ARGS, OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes,
                               uint64_t id) {
  EV_UNUSED, (void)id;
  return rma(ud, "RmaGet", CONTEND_TS_GET, win, remote, bytes);
}
/* A collective synchronisation of a window (fence): ends the epoch. */
static OTF2_CallbackCode e_rma_coll(EV_ARGS, OTF2_CollectiveOp op, OTF2_RmaSyncLevel lvl,
                                    OTF2_RmaWinRef win, uint32_t root, uint64_t sent,
                                    uint64_t recvd) {
  EV_UNUSED, (void)lvl, (void)win, (void)root, (void)sent, (void)recvd;
  reader *r = ud;
  if (op >= OTF2_COLLECTIVE_OP_CREATE_HANDLE)
    return OTF2_CALLBACK_SUCCESS; /* window creation and freeing */
  return push(r, "RmaCollectiveEnd", CONTEND_TS_RMA_SYNC) ? OTF2_CALLBACK_SUCCESS
                                                          : OTF2_CALLBACK_INTERRUPT;
}

/* ---- the archive --------------------------------------------------------- */

/* Whether the archive's files next to anchor (DIR/NAME.otf2: NAME.def and
 * the files in NAME/) are regular files or absent: a FIFO or a device
 * would block or flood the reader.  Returns 0, or -1 with err. */
static int regular_files(const char *anchor, char *err, size_t errlen) {
  char base[4096], p[4096 + 512];
  const size_t n = strlen(anchor);
  snprintf(base, sizeof base, "%.*s", (int)(n - 5), anchor); /* without ".otf2" */
  struct stat st;
  snprintf(p, sizeof p, "%s.def", base);
  if (!stat(p, &st) && !S_ISREG(st.st_mode))
    goto bad;
  DIR *d = opendir(base);
  if (!d)
    return 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.')
      continue;
    snprintf(p, sizeof p, "%s/%s", base, e->d_name);
    if (!stat(p, &st) && !S_ISREG(st.st_mode)) {
      closedir(d);
      goto bad;
    }
  }
  closedir(d);
  return 0;
bad:
  snprintf(err, errlen, "%s: not a regular file (an OTF2 archive holds only files)", p);
  return -1;
}

/* The anchor file of path (a directory holding one, or the file); the
 * archive's files must be regular files. */
static int anchor_of(const char *path, char *out, size_t len, char *err, size_t errlen) {
  struct stat st;
  if (stat(path, &st)) {
    snprintf(err, errlen, "%s: no such archive (no file or directory by that name)", path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    const size_t n = strlen(path);
    if (n < 5 || strcmp(path + n - 5, ".otf2")) {
      snprintf(err, errlen, "%s: not an OTF2 archive (give its directory or its .otf2 file)", path);
      return -1;
    }
    snprintf(out, len, "%s", path);
  } else {
    snprintf(out, len, "%s/traces.otf2", path);
    if (stat(out, &st)) {
      DIR *d = opendir(path);
      int found = 0;
      if (d) {
        for (struct dirent *e; (e = readdir(d));) {
          const size_t n = strlen(e->d_name);
          if (n > 5 && !strcmp(e->d_name + n - 5, ".otf2")) {
            found++;
            snprintf(out, len, "%s/%s", path, e->d_name);
          }
        }
        closedir(d);
      }
      if (found != 1) {
        snprintf(err, errlen, "%s: not an OTF2 archive (%s .otf2 anchor file in the directory)",
                 path, found ? "more than one" : "no");
        return -1;
      }
    }
  }
  if (stat(out, &st) || !S_ISREG(st.st_mode)) {
    snprintf(err, errlen, "%s: not a regular file (an OTF2 anchor file)", out);
    return -1;
  }
  return regular_files(out, err, errlen);
}

static void reader_free(reader *r) {
  for (int i = 0; i < r->ngroups; i++)
    free(r->groups[i].members);
  free(r->groups);
  free(r->region_mpi.v);
  free(r->group_of.v);
  free(r->comm_of.v);
  free(r->comm_group);
  free(r->win_comm.v);
  free(r->locs);
  free(r->open);
}

void contend_trace_free(contend_trace *t) {
  if (!t)
    return;
  for (int k = 0; k < t->ncomm; k++)
    free(t->comm[k].world);
  free(t->comm);
  free(t->step);
  memset(t, 0, sizeof *t);
}

/* A library call's failure as the reader's error. */
static int lib_failed(reader *r, OTF2_ErrorCode rc, const char *what) {
  if (r->failed)
    return -1;
  fail(r, NULL, "%s: %s", what,
       *contend_otf2_last_error() ? contend_otf2_last_error() : OTF2_Error_GetDescription(rc));
  return -1;
}

static int read_defs(reader *r, OTF2_Reader *rd, contend_trace *t) {
  OTF2_GlobalDefReader *g = OTF2_Reader_GetGlobalDefReader(rd);
  if (!g)
    return lib_failed(r, OTF2_ERROR_INVALID, "cannot read the global definitions");
  OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
  OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, d_clock);
  OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, d_location);
  OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, d_region);
  OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, d_group);
  OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, d_comm);
  OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, d_rmawin);
  OTF2_ErrorCode rc = OTF2_Reader_RegisterGlobalDefCallbacks(rd, g, cb, r);
  OTF2_GlobalDefReaderCallbacks_Delete(cb);
  uint64_t n = 0;
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Reader_ReadAllGlobalDefinitions(rd, g, &n);
  OTF2_Reader_CloseGlobalDefReader(rd, g);
  if (rc != OTF2_SUCCESS || r->failed)
    return lib_failed(r, rc, "the global definitions are unreadable (truncated or corrupted)");
  if (!r->resolution)
    return fail(r, NULL, "no clock properties in the definitions"), -1;
  return resolve(r, t);
}

static int read_events(reader *r, OTF2_Reader *rd) {
  OTF2_ErrorCode rc = OTF2_Reader_SelectLocation(rd, r->loc);
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Reader_OpenDefFiles(rd);
  if (rc == OTF2_SUCCESS) { /* local definitions: the id mappings of this location */
    OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, r->loc);
    if (dr) {
      uint64_t n = 0;
      rc = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
      OTF2_Reader_CloseDefReader(rd, dr);
    }
    OTF2_Reader_CloseDefFiles(rd);
  }
  if (rc != OTF2_SUCCESS)
    return lib_failed(r, rc, "the local definitions are unreadable");
  rc = OTF2_Reader_OpenEvtFiles(rd);
  if (rc != OTF2_SUCCESS)
    return lib_failed(r, rc, "the event files are unreadable");
  OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(rd, r->loc);
  if (!er) {
    OTF2_Reader_CloseEvtFiles(rd);
    return lib_failed(r, OTF2_ERROR_INVALID, "no event reader for the rank's location");
  }
  OTF2_EvtReaderCallbacks *cb = OTF2_EvtReaderCallbacks_New();
  OTF2_EvtReaderCallbacks_SetEnterCallback(cb, e_enter);
  OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, e_leave);
  OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, e_send);
  OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, e_isend);
  OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, e_isend_done);
  OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, e_recv);
  OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, e_irecv_req);
  OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, e_irecv);
  OTF2_EvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, e_cancelled);
  OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, e_coll);
  OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, e_put);
  OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, e_get);
  OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cb, e_rma_coll);
  rc = OTF2_Reader_RegisterEvtCallbacks(rd, er, cb, r);
  OTF2_EvtReaderCallbacks_Delete(cb);
  uint64_t n = 0;
  if (rc == OTF2_SUCCESS)
    rc = OTF2_Reader_ReadAllLocalEvents(rd, er, &n);
  OTF2_Reader_CloseEvtReader(rd, er);
  OTF2_Reader_CloseEvtFiles(rd);
  if (r->failed)
    return -1;
  if (rc != OTF2_SUCCESS) {
    char what[96];
    snprintf(what, sizeof what, "location %llu (rank %d): events unreadable after %llu events",
             (unsigned long long)r->loc, r->rank, (unsigned long long)n);
    return lib_failed(r, rc, what);
  }
  return 0;
}

/* Drops what was never posted (SKIP), ends with a WAIT when anything is
 * still open. */
static int finish(reader *r) {
  contend_trace *t = r->t;
  size_t o = 0;
  for (size_t i = 0; i < t->nstep; i++)
    if (t->step[i].kind != CONTEND_TS_SKIP)
      t->step[o++] = t->step[i];
  t->nstep = o;
  int posted = 0;
  for (size_t i = t->nstep; i-- > 0 && t->step[i].kind != CONTEND_TS_WAIT;)
    posted |= t->step[i].kind == CONTEND_TS_SEND || t->step[i].kind == CONTEND_TS_RECV;
  if (posted && !push(r, "(end)", CONTEND_TS_WAIT))
    return -1;
  return 0;
}

/* Whether the archive has property name with this value (asked only when
 * listed: a missing property would be an OTF2 error report). */
static int has_property(OTF2_Reader *rd, const char *name, const char *value) {
  uint32_t n = 0;
  char **names = NULL;
  int found = 0;
  if (OTF2_Reader_GetPropertyNames(rd, &n, &names) != OTF2_SUCCESS)
    return 0;
  for (uint32_t i = 0; i < n && !found; i++)
    found = !strcasecmp(names[i], name);
  free(names);
  char *v = NULL;
  if (!found || OTF2_Reader_GetProperty(rd, name, &v) != OTF2_SUCCESS || !v)
    return 0;
  found = !strcmp(v, value);
  free(v);
  return found;
}

int contend_trace_read(const char *path, int rank, contend_trace *t, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  char anchor[4096];
  if (anchor_of(path, anchor, sizeof anchor, err, errlen))
    return -1;
  reader r = {.arch = path, .err = err, .errlen = errlen, .rank_group = -1, .rank = rank, .t = t};
  OTF2_ErrorCallback prev_cb = contend_otf2_errors_capture();
  int rc = -1;
  OTF2_Reader *rd = OTF2_Reader_Open(anchor);
  if (!rd) {
    lib_failed(&r, OTF2_ERROR_INVALID, "not a readable OTF2 archive");
    goto out;
  }
  OTF2_Reader_SetSerialCollectiveCallbacks(rd);
  if (read_defs(&r, rd, t))
    goto out;
  t->compute_cpu = has_property(rd, "CONTEND::COMPUTE_CLOCK", "cpu");
  if (rank >= t->nranks) {
    fail(&r, NULL, "has %d ranks, no rank %d", t->nranks, rank);
    goto out;
  }
  if (rank >= 0) {
    r.open = malloc(CONTEND_TRACE_MAX_PENDING * sizeof *r.open);
    if (!r.open) {
      fail(&r, NULL, "out of memory");
      goto out;
    }
    if (read_events(&r, rd) || finish(&r))
      goto out;
  }
  rc = 0;
out:
  if (rd)
    OTF2_Reader_Close(rd);
  contend_otf2_errors_restore(prev_cb);
  reader_free(&r);
  if (rc)
    contend_trace_free(t);
  return rc;
}

int contend_trace_check(const char *path, contend_trace_sizes *sz, char *err, size_t errlen) {
  static struct {
    char path[4096];
    struct stat st;
    contend_trace_sizes sz;
  } last;
  char anchor[4096];
  struct stat st;
  memset(sz, 0, sizeof *sz);
  if (anchor_of(path, anchor, sizeof anchor, err, errlen))
    return -1;
  if (!stat(anchor, &st) && !strcmp(last.path, path) && st.st_ino == last.st.st_ino &&
      st.st_mtime == last.st.st_mtime && st.st_size == last.st.st_size) {
    *sz = last.sz;
    return 0;
  }
  contend_trace t;
  if (contend_trace_read(path, -1, &t, err, errlen))
    return -1;
  sz->nranks = t.nranks;
  contend_trace_free(&t);
  for (int q = 0; q < sz->nranks; q++) {
    if (contend_trace_read(path, q, &t, err, errlen))
      return -1;
    sz->steps += t.nstep;
    if (sz->steps > CONTEND_TRACE_MAX_TOTAL) {
      snprintf(err, errlen,
               "%s: more than %d replay steps over the ranks up to rank %d (the limit of a "
               "trace: the dry run and the simulator hold every rank's steps)",
               path, CONTEND_TRACE_MAX_TOTAL, q);
      contend_trace_free(&t);
      return -1;
    }
    for (size_t i = 0; i < t.nstep; i++) {
      const contend_tstep *x = &t.step[i];
      uint64_t *m =
          x->kind == CONTEND_TS_PUT || x->kind == CONTEND_TS_GET ? &sz->rma_max : &sz->msg_max;
      const uint64_t b = x->bytes > x->bytes2 ? x->bytes : x->bytes2;
      *m = b > *m ? b : *m;
    }
    contend_trace_free(&t);
  }
  snprintf(last.path, sizeof last.path, "%s", path);
  last.st = st;
  last.sz = *sz;
  return 0;
}
