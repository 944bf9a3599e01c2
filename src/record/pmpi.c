/* libcontend-record.so: the PMPI recorder behind `contend record`
 * (docs/trace.md).  Preloaded into an unmodified MPI program, it writes
 * one OTF2 archive with OTF2's MPI-parallel writer (collective callbacks
 * over a duplicate of MPI_COMM_WORLD, OTF2_MPI_Collectives.h): one event
 * location per rank, written by that rank; definitions gathered to rank 0
 * at MPI_Finalize and written there.
 *
 * Recorded, each inside an Enter/Leave of its MPI region: blocking and
 * non-blocking sends (every mode) and receives (MpiSend/MpiRecv,
 * MpiIsend/MpiIrecv with their requests), Sendrecv (as a non-blocking
 * pair), persistent requests
 * (each MPI_Start as a non-blocking post), completions from
 * Wait/Waitall/Waitany/Waitsome/Test/Testall/Testany/Testsome and
 * cancellations; the blocking collectives (v-variants, reduce_scatter and
 * scans too) with their communicator, root and sizes (bytes to and from
 * the other ranks); communicators created by
 * split, split_type, dup and create (one 4-byte broadcast on the new
 * communicator agrees on its id); windows (create, allocate) with their
 * puts, gets and fences.  Everything else is not recorded: the calls seen
 * are counted and listed in one warning per rank at MPI_Finalize.
 * The time between two MPI calls is the program's compute; with
 * CONTEND_RECORD_COMPUTE_SCALE=F it is recorded times F, and with
 * CONTEND_RECORD_COMPUTE_CLOCK=cpu it is the calling thread's CPU time in
 * that interval instead of the wall time (the timestamps shift
 * accordingly).  Two archive properties say what the timestamps cannot:
 * CONTEND::COMPUTE_CLOCK (wall or cpu: how the replay plays the gaps) and
 * CONTEND::RUNTIME_NS (the slowest rank's real time from the end of
 * MPI_Init to the start of MPI_Finalize).
 *
 * Environment (set by `contend record`): CONTEND_RECORD_DIR (the archive,
 * created by rank 0; must not exist), CONTEND_RECORD_COMPUTE_SCALE,
 * CONTEND_RECORD_COMPUTE_CLOCK.
 * Single-threaded use of MPI is assumed (MPI_THREAD_MULTIPLE programs
 * calling MPI from several threads are not supported). */
#define _GNU_SOURCE
#include <mpi.h>
#define OTF2_MPI_USE_PMPI
#define OTF2_MPI_UINT64_T MPI_UINT64_T
#define OTF2_MPI_INT64_T MPI_INT64_T
#include <otf2/OTF2_MPI_Collectives.h>
#include <otf2/otf2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../trace_otf2/otf2_errors.h"

#define WARN "contend-record: warning: "

/* ---- regions: one per wrapped call --------------------------------------- */

#define REGIONS(X)                                                                                 \
  X(INIT, "MPI_Init", FUNCTION)                                                                    \
  X(FINALIZE, "MPI_Finalize", FUNCTION)                                                            \
  X(SEND, "MPI_Send", POINT2POINT)                                                                 \
  X(SSEND, "MPI_Ssend", POINT2POINT)                                                               \
  X(BSEND, "MPI_Bsend", POINT2POINT)                                                               \
  X(RSEND, "MPI_Rsend", POINT2POINT)                                                               \
  X(RECV, "MPI_Recv", POINT2POINT)                                                                 \
  X(ISEND, "MPI_Isend", POINT2POINT)                                                               \
  X(ISSEND, "MPI_Issend", POINT2POINT)                                                             \
  X(IBSEND, "MPI_Ibsend", POINT2POINT)                                                             \
  X(IRSEND, "MPI_Irsend", POINT2POINT)                                                             \
  X(IRECV, "MPI_Irecv", POINT2POINT)                                                               \
  X(SENDRECV, "MPI_Sendrecv", POINT2POINT)                                                         \
  X(SEND_INIT, "MPI_Send_init", POINT2POINT)                                                       \
  X(RECV_INIT, "MPI_Recv_init", POINT2POINT)                                                       \
  X(START, "MPI_Start", POINT2POINT)                                                               \
  X(STARTALL, "MPI_Startall", POINT2POINT)                                                         \
  X(WAIT, "MPI_Wait", POINT2POINT)                                                                 \
  X(WAITALL, "MPI_Waitall", POINT2POINT)                                                           \
  X(WAITANY, "MPI_Waitany", POINT2POINT)                                                           \
  X(WAITSOME, "MPI_Waitsome", POINT2POINT)                                                         \
  X(TEST, "MPI_Test", POINT2POINT)                                                                 \
  X(TESTALL, "MPI_Testall", POINT2POINT)                                                           \
  X(TESTANY, "MPI_Testany", POINT2POINT)                                                           \
  X(TESTSOME, "MPI_Testsome", POINT2POINT)                                                         \
  X(BARRIER, "MPI_Barrier", BARRIER)                                                               \
  X(BCAST, "MPI_Bcast", COLL_ONE2ALL)                                                              \
  X(REDUCE, "MPI_Reduce", COLL_ALL2ONE)                                                            \
  X(ALLREDUCE, "MPI_Allreduce", COLL_ALL2ALL)                                                      \
  X(GATHER, "MPI_Gather", COLL_ALL2ONE)                                                            \
  X(SCATTER, "MPI_Scatter", COLL_ONE2ALL)                                                          \
  X(ALLGATHER, "MPI_Allgather", COLL_ALL2ALL)                                                      \
  X(ALLTOALL, "MPI_Alltoall", COLL_ALL2ALL)                                                        \
  X(ALLTOALLV, "MPI_Alltoallv", COLL_ALL2ALL)                                                      \
  X(GATHERV, "MPI_Gatherv", COLL_ALL2ONE)                                                          \
  X(SCATTERV, "MPI_Scatterv", COLL_ONE2ALL)                                                        \
  X(ALLGATHERV, "MPI_Allgatherv", COLL_ALL2ALL)                                                    \
  X(REDUCE_SCATTER, "MPI_Reduce_scatter", COLL_ALL2ALL)                                            \
  X(REDUCE_SCATTER_BLOCK, "MPI_Reduce_scatter_block", COLL_ALL2ALL)                                \
  X(SCAN, "MPI_Scan", COLL_OTHER)                                                                  \
  X(EXSCAN, "MPI_Exscan", COLL_OTHER)                                                              \
  X(COMM_SPLIT, "MPI_Comm_split", COLL_OTHER)                                                      \
  X(COMM_SPLIT_TYPE, "MPI_Comm_split_type", COLL_OTHER)                                            \
  X(COMM_DUP, "MPI_Comm_dup", COLL_OTHER)                                                          \
  X(COMM_CREATE, "MPI_Comm_create", COLL_OTHER)                                                    \
  X(WIN_CREATE, "MPI_Win_create", COLL_OTHER)                                                      \
  X(WIN_ALLOCATE, "MPI_Win_allocate", COLL_OTHER)                                                  \
  X(WIN_FENCE, "MPI_Win_fence", BARRIER)                                                           \
  X(PUT, "MPI_Put", POINT2POINT)                                                                   \
  X(GET, "MPI_Get", POINT2POINT)

#define X_ENUM(id, name, role) R_##id,
enum { REGIONS(X_ENUM) R_N };
#define X_NAME(id, name, role) name,
static const char *const region_name[R_N] = {REGIONS(X_NAME)};
#define X_ROLE(id, name, role) OTF2_REGION_ROLE_##role,
static const OTF2_RegionRole region_role[R_N] = {REGIONS(X_ROLE)};

/* Calls seen but not recorded (listed at MPI_Finalize). */
#define SKIPPED(X)                                                                                 \
  X(ACCUMULATE, "MPI_Accumulate")                                                                  \
  X(WIN_LOCK, "MPI_Win_lock")                                                                      \
  X(WIN_LOCK_ALL, "MPI_Win_lock_all")                                                              \
  X(WIN_FLUSH, "MPI_Win_flush")                                                                    \
  X(IBARRIER, "MPI_Ibarrier")                                                                      \
  X(IALLREDUCE, "MPI_Iallreduce")                                                                  \
  X(IALLTOALL, "MPI_Ialltoall")                                                                    \
  X(UNKNOWN_COMM, "calls on communicators not recorded")
#define S_ENUM(id, name) S_##id,
enum { SKIPPED(S_ENUM) S_N };
#define S_NAME(id, name) name,
static const char *const skipped_name[S_N] = {SKIPPED(S_NAME)};
static uint64_t skipped[S_N];

/* ---- state ---------------------------------------------------------------- */

enum { MAX_COMMS_PER_RANK = 4096, COMM_WORLD_ID = 0, COMM_SELF_ID = 1 };

typedef struct comm_def {
  MPI_Comm h; /* MPI_COMM_NULL once freed (the definition stays) */
  uint32_t id;
  int n;
  int *world; /* members' world ranks */
} comm_def;

typedef struct win_def {
  MPI_Win h;
  uint32_t id, comm;
} win_def;

typedef struct req {
  MPI_Request h;
  uint64_t id;
  int send, persistent, active;
  uint32_t peer, comm, tag; /* persistent: what each MPI_Start posts */
  uint64_t bytes;
} req;

static struct {
  int on; /* recording (between MPI_Init and MPI_Finalize) */
  int rank, size;
  MPI_Comm comm; /* dup of the world: OTF2's collectives and the final gather */
  OTF2_Archive *ar;
  OTF2_EvtWriter *ev;
  double scale;
  int depth;
  uint64_t last_leave_real, first, last_leave_cpu;
  uint64_t init_real, fin_real; /* real time at the end of MPI_Init, the start of MPI_Finalize */
  int cpu; /* compute is the thread's CPU time between calls, not the wall time */
  int64_t shift;
  comm_def *comms;
  int ncomms, ccomms, created;
  win_def *wins;
  int nwins, cwins;
  req *reqs;
  size_t nreqs, creqs;
  uint64_t next_req;
} g;

static uint64_t real_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Recorded time: real time with every gap between two MPI calls scaled
 * (g.cpu: replaced by the calling thread's CPU time in the gap, scaled). */
static uint64_t enter(int region) {
  const uint64_t now = real_ns();
  if (!g.on)
    return now;
  if (g.depth == 0 && g.last_leave_real && g.cpu) {
    const uint64_t cpu = cpu_ns();
    g.shift +=
        (int64_t)((double)(cpu - g.last_leave_cpu) * g.scale) - (int64_t)(now - g.last_leave_real);
  } else if (g.depth == 0 && g.last_leave_real && g.scale != 1.0)
    g.shift += (int64_t)((double)(now - g.last_leave_real) * (g.scale - 1.0));
  const uint64_t t = (uint64_t)((int64_t)now + g.shift);
  if (g.depth++ == 0)
    OTF2_EvtWriter_Enter(g.ev, NULL, t, (OTF2_RegionRef)region);
  return t;
}
static uint64_t now_rec(void) { return (uint64_t)((int64_t)real_ns() + g.shift); }
static void leave(int region) {
  if (!g.on || g.depth == 0)
    return;
  if (--g.depth == 0) {
    const uint64_t now = real_ns();
    g.last_leave_real = now;
    if (g.cpu)
      g.last_leave_cpu = cpu_ns();
    OTF2_EvtWriter_Leave(g.ev, NULL, (uint64_t)((int64_t)now + g.shift), (OTF2_RegionRef)region);
  }
}
/* Only the outermost wrapped call records its events. */
static int outer(void) { return g.on && g.depth == 1; }

static uint64_t type_bytes(int count, MPI_Datatype dt) {
  int sz = 0;
  if (count <= 0 || PMPI_Type_size(dt, &sz) != MPI_SUCCESS || sz <= 0)
    return 0;
  return (uint64_t)count * (uint64_t)sz;
}

static comm_def *comm_find(MPI_Comm c) {
  for (int i = 0; i < g.ncomms; i++)
    if (g.comms[i].h == c && c != MPI_COMM_NULL)
      return &g.comms[i];
  return NULL;
}
/* OTF2 id of c, or -1 (not recorded: counted). */
static int64_t comm_id(MPI_Comm c) {
  const comm_def *d = comm_find(c);
  if (d)
    return d->id;
  skipped[S_UNKNOWN_COMM]++;
  return -1;
}

static void comm_add(MPI_Comm h, uint32_t id) {
  if (g.ncomms == g.ccomms) {
    g.ccomms = g.ccomms ? 2 * g.ccomms : 16;
    comm_def *v = realloc(g.comms, (size_t)g.ccomms * sizeof *v);
    if (!v)
      return;
    g.comms = v;
  }
  comm_def *d = &g.comms[g.ncomms];
  MPI_Group grp, wgrp;
  PMPI_Comm_size(h, &d->n);
  d->world = malloc((size_t)d->n * sizeof *d->world);
  int *idx = malloc((size_t)d->n * sizeof *idx);
  if (!d->world || !idx) {
    free(d->world);
    free(idx);
    return;
  }
  for (int i = 0; i < d->n; i++)
    idx[i] = i;
  PMPI_Comm_group(h, &grp);
  PMPI_Comm_group(MPI_COMM_WORLD, &wgrp);
  PMPI_Group_translate_ranks(grp, d->n, idx, wgrp, d->world);
  PMPI_Group_free(&grp);
  PMPI_Group_free(&wgrp);
  free(idx);
  d->h = h;
  d->id = id;
  g.ncomms++;
}

/* A communicator just created (collective over it): agree on its id, the
 * creator's (its rank 0's) world rank and count, and define it. */
static uint32_t new_id(MPI_Comm over) {
  uint32_t id = (uint32_t)g.rank * MAX_COMMS_PER_RANK + (uint32_t)g.created + 2;
  if (g.created >= MAX_COMMS_PER_RANK)
    id = UINT32_MAX; /* too many: not recorded */
  g.created++;
  PMPI_Bcast(&id, 1, MPI_UINT32_T, 0, over);
  return id;
}
static void comm_created(MPI_Comm c) {
  if (!g.on || c == MPI_COMM_NULL)
    return;
  const uint32_t id = new_id(c);
  if (id != UINT32_MAX)
    comm_add(c, id);
}

static req *req_find(MPI_Request h) {
  if (h == MPI_REQUEST_NULL)
    return NULL;
  for (size_t i = g.nreqs; i-- > 0;)
    if (g.reqs[i].h == h)
      return &g.reqs[i];
  return NULL;
}
static req *req_add(MPI_Request h) {
  if (g.nreqs == g.creqs) {
    size_t n = g.creqs ? 2 * g.creqs : 64;
    req *v = realloc(g.reqs, n * sizeof *v);
    if (!v)
      return NULL;
    g.reqs = v;
    g.creqs = n;
  }
  req *r = &g.reqs[g.nreqs++];
  memset(r, 0, sizeof *r);
  r->h = h;
  return r;
}
static void req_drop(req *r) { *r = g.reqs[--g.nreqs]; }

/* A post: records the send (MpiIsend) or receive request. */
static void post(req *r) {
  r->id = g.next_req++;
  r->active = 1;
  if (r->send)
    OTF2_EvtWriter_MpiIsend(g.ev, NULL, now_rec(), r->peer, r->comm, r->tag, r->bytes, r->id);
  else
    OTF2_EvtWriter_MpiIrecvRequest(g.ev, NULL, now_rec(), r->id);
}

/* Request h (its handle before the completing call) completed with st. */
static void completed(MPI_Request h, MPI_Status *st) {
  req *r = req_find(h);
  if (!r || !r->active)
    return;
  int cancelled = 0;
  PMPI_Test_cancelled(st, &cancelled);
  if (cancelled)
    OTF2_EvtWriter_MpiRequestCancelled(g.ev, NULL, now_rec(), r->id);
  else if (r->send)
    OTF2_EvtWriter_MpiIsendComplete(g.ev, NULL, now_rec(), r->id);
  else {
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    OTF2_EvtWriter_MpiIrecv(g.ev, NULL, now_rec(), (uint32_t)st->MPI_SOURCE, r->comm,
                            (uint32_t)st->MPI_TAG, n > 0 ? (uint64_t)n : 0, r->id);
  }
  if (r->persistent)
    r->active = 0;
  else
    req_drop(r);
}

/* ---- archive ----------------------------------------------------------- */

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
                                bool final) {
  (void)ud, (void)ft, (void)loc, (void)cd, (void) final;
  return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) {
  (void)ud, (void)ft, (void)loc;
  return now_rec();
}
static OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

static void start(uint64_t t_init) {
  const char *dir = getenv("CONTEND_RECORD_DIR");
  const char *sc = getenv("CONTEND_RECORD_COMPUTE_SCALE");
  g.scale = sc && *sc ? strtod(sc, NULL) : 1.0;
  const char *clk = getenv("CONTEND_RECORD_COMPUTE_CLOCK");
  g.cpu = clk && !strcmp(clk, "cpu");
  if (!(g.scale >= 0 && g.scale <= 1000))
    g.scale = 1.0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.size);
  if (!dir || !*dir) {
    if (g.rank == 0)
      fprintf(stderr,
              WARN "CONTEND_RECORD_DIR is not set: nothing recorded (use contend record)\n");
    return;
  }
  PMPI_Comm_dup(MPI_COMM_WORLD, &g.comm);
  contend_otf2_errors_capture(); /* OTF2's errors: one warning of ours */
  g.ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                           OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  int ok = g.ar != NULL;
  if (ok)
    ok = OTF2_Archive_SetFlushCallbacks(g.ar, &flush_cbs, NULL) == OTF2_SUCCESS &&
         OTF2_MPI_Archive_SetCollectiveCallbacks(g.ar, g.comm, MPI_COMM_NULL) == OTF2_SUCCESS &&
         OTF2_Archive_OpenEvtFiles(g.ar) == OTF2_SUCCESS;
  int all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, g.comm);
  if (all)
    g.ev = OTF2_Archive_GetEvtWriter(g.ar, (OTF2_LocationRef)g.rank);
  if (!all || !g.ev) {
    if (g.rank == 0)
      fprintf(stderr, WARN "cannot create the OTF2 archive %s: %s: nothing recorded\n", dir,
              *contend_otf2_last_error() ? contend_otf2_last_error() : "error");
    return;
  }
  comm_add(MPI_COMM_WORLD, COMM_WORLD_ID);
  comm_add(MPI_COMM_SELF, COMM_SELF_ID);
  g.first = t_init;
  g.on = 1;
  OTF2_EvtWriter_Enter(g.ev, NULL, t_init, R_INIT); /* MPI_Init's region, from its start */
  g.depth = 1;
}

int MPI_Init(int *argc, char ***argv) {
  const uint64_t t = real_ns();
  const int rc = PMPI_Init(argc, argv);
  start(t);
  leave(R_INIT);
  g.init_real = g.last_leave_real;
  return rc;
}
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
  const uint64_t t = real_ns();
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  start(t);
  leave(R_INIT);
  g.init_real = g.last_leave_real;
  return rc;
}

/* Definitions this rank knows (communicators, windows) as flat words:
 * comm: 0, id, n, members...; window: 1, id, comm. */
static uint32_t *defs_flat(int *len) {
  size_t n = 0;
  for (int i = 0; i < g.ncomms; i++)
    n += 3 + (size_t)g.comms[i].n;
  n += 3 * (size_t)g.nwins;
  uint32_t *v = malloc((n ? n : 1) * sizeof *v), *p = v;
  if (!v) {
    *len = 0;
    return NULL;
  }
  for (int i = 0; i < g.ncomms; i++) {
    *p++ = 0, *p++ = g.comms[i].id, *p++ = (uint32_t)g.comms[i].n;
    for (int k = 0; k < g.comms[i].n; k++)
      *p++ = (uint32_t)g.comms[i].world[k];
  }
  for (int i = 0; i < g.nwins; i++)
    *p++ = 1, *p++ = g.wins[i].id, *p++ = g.wins[i].comm;
  *len = (int)n;
  return v;
}

static uint32_t nstr;
static OTF2_StringRef str(OTF2_GlobalDefWriter *w, const char *s) {
  OTF2_GlobalDefWriter_WriteString(w, nstr, s);
  return nstr++;
}

/* Rank 0: every definition of the archive.  Communicators and windows
 * carry dense ids here (their index in cid/wid, ascending sparse ids);
 * the ranks' mapping tables translate the sparse ids of their events. */
static void write_globals(uint64_t t0, uint64_t t1, const uint64_t *nev, const uint32_t *all,
                          size_t nall, const uint32_t *cid, int nc, const uint32_t *wid, int nw) {
  OTF2_GlobalDefWriter *w = OTF2_Archive_GetGlobalDefWriter(g.ar);
  OTF2_GlobalDefWriter_WriteClockProperties(w, 1000000000ULL, t0, t1 - t0, OTF2_UNDEFINED_UINT64);
  const OTF2_StringRef empty = str(w, "");
  for (int r = 0; r < R_N; r++) {
    const OTF2_StringRef n = str(w, region_name[r]);
    OTF2_GlobalDefWriter_WriteRegion(w, (OTF2_RegionRef)r, n, n, empty, region_role[r],
                                     OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, empty, 0, 0);
  }
  OTF2_GlobalDefWriter_WriteSystemTreeNode(w, 0, str(w, "machine"), str(w, "machine"),
                                           OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  uint64_t *members = malloc((size_t)g.size * sizeof *members);
  if (!members)
    return;
  for (int r = 0; r < g.size; r++) {
    char name[32];
    snprintf(name, sizeof name, "MPI rank %d", r);
    OTF2_GlobalDefWriter_WriteLocationGroup(w, (OTF2_LocationGroupRef)r, str(w, name),
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    OTF2_GlobalDefWriter_WriteLocation(w, (OTF2_LocationRef)r, str(w, "master thread"),
                                       OTF2_LOCATION_TYPE_CPU_THREAD, nev[r],
                                       (OTF2_LocationGroupRef)r);
    members[r] = (uint64_t)r;
  }
  OTF2_GlobalDefWriter_WriteGroup(w, 0, str(w, "MPI ranks"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                  OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)g.size,
                                  members);
  free(members);
  /* the group of communicator k is k + 1 */
  for (int k = 0; k < nc; k++)
    for (size_t p = 0; p < nall; p += all[p] == 0 ? 3 + all[p + 2] : 3) {
      if (all[p] != 0 || all[p + 1] != cid[k])
        continue;
      const uint32_t n = all[p + 2];
      uint64_t *m = malloc((n ? n : 1) * sizeof *m);
      for (uint32_t i = 0; m && i < n; i++)
        m[i] = all[p + 3 + i];
      OTF2_GlobalDefWriter_WriteGroup(
          w, (OTF2_GroupRef)k + 1, empty,
          cid[k] == COMM_SELF_ID ? OTF2_GROUP_TYPE_COMM_SELF : OTF2_GROUP_TYPE_COMM_GROUP,
          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, cid[k] == COMM_SELF_ID ? 0 : n, m);
      free(m);
      break;
    }
  for (int k = 0; k < nc; k++) {
    char name[32];
    if (cid[k] == COMM_WORLD_ID)
      snprintf(name, sizeof name, "MPI_COMM_WORLD");
    else if (cid[k] == COMM_SELF_ID)
      snprintf(name, sizeof name, "MPI_COMM_SELF");
    else
      snprintf(name, sizeof name, "communicator %d", k);
    OTF2_GlobalDefWriter_WriteComm(w, (OTF2_CommRef)k, str(w, name), (OTF2_GroupRef)k + 1,
                                   OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
  }
  for (int k = 0; k < nw; k++)
    for (size_t p = 0; p < nall; p += all[p] == 0 ? 3 + all[p + 2] : 3)
      if (all[p] == 1 && all[p + 1] == wid[k]) {
        int c = 0;
        while (c < nc && cid[c] != all[p + 2])
          c++;
        char name[32];
        snprintf(name, sizeof name, "window %d", k);
        OTF2_GlobalDefWriter_WriteRmaWin(w, (OTF2_RmaWinRef)k, str(w, name), (OTF2_CommRef)c,
                                         OTF2_RMA_WIN_FLAG_NONE);
        break;
      }
}

/* Rank 0: what the timestamps cannot say (docs/trace.md): the clock of
 * the compute gaps (CONTEND::COMPUTE_CLOCK: wall or cpu) and the program's
 * runtime, the slowest rank's real time from the end of MPI_Init to the
 * start of MPI_Finalize in nanoseconds (CONTEND::RUNTIME_NS; with cpu or a
 * compute scale the timestamps no longer give it). */
static void write_properties(uint64_t runtime_ns) {
  char v[32];
  snprintf(v, sizeof v, "%llu", (unsigned long long)runtime_ns);
  OTF2_Archive_SetProperty(g.ar, "CONTEND::COMPUTE_CLOCK", g.cpu ? "cpu" : "wall", true);
  OTF2_Archive_SetProperty(g.ar, "CONTEND::RUNTIME_NS", v, true);
}

static int cmp_u32(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* The distinct ids of kind (0 communicators, 1 windows) in all, ascending,
 * into out (room for nall / 3 + 1); returns how many. */
static int distinct(const uint32_t *all, size_t nall, uint32_t kind, uint32_t *out) {
  int n = 0;
  for (size_t p = 0; p < nall; p += all[p] == 0 ? 3 + all[p + 2] : 3)
    if (all[p] == kind)
      out[n++] = all[p + 1];
  qsort(out, (size_t)n, sizeof *out, cmp_u32);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!m || out[m - 1] != out[i])
      out[m++] = out[i];
  return m;
}

/* This rank's mapping table of type t: sparse id ids[k] -> k; none when
 * n == 0 (OTF2's readers refuse a map of capacity 0). */
static void write_mapping(OTF2_DefWriter *dw, OTF2_MappingType t, const uint32_t *ids, int n) {
  if (n == 0)
    return;
  OTF2_IdMap *m = OTF2_IdMap_Create(OTF2_ID_MAP_SPARSE, (uint64_t)n);
  if (!m)
    return;
  for (int k = 0; k < n; k++)
    OTF2_IdMap_AddIdPair(m, ids[k], (uint64_t)k);
  OTF2_DefWriter_WriteMappingTable(dw, t, m);
  OTF2_IdMap_Free(m);
}

/* MPI_Finalize: closes the events, gathers the definitions to rank 0,
 * which numbers communicators and windows densely and broadcasts the
 * numbering; every rank writes its mapping tables, rank 0 the global
 * definitions.  Collective over the world (g.comm). */
static void stop(void) {
  uint64_t nev = 0;
  OTF2_EvtWriter_GetNumberOfEvents(g.ev, &nev);
  const uint64_t last = now_rec();
  OTF2_Archive_CloseEvtWriter(g.ar, g.ev);
  OTF2_Archive_CloseEvtFiles(g.ar);
  uint64_t t0 = 0, t1 = 0, *nevs = g.rank == 0 ? malloc((size_t)g.size * sizeof *nevs) : NULL;
  PMPI_Reduce(&g.first, &t0, 1, MPI_UINT64_T, MPI_MIN, 0, g.comm);
  PMPI_Reduce(&last, &t1, 1, MPI_UINT64_T, MPI_MAX, 0, g.comm);
  const uint64_t run = g.fin_real - g.init_real;
  uint64_t run_max = 0;
  PMPI_Reduce(&run, &run_max, 1, MPI_UINT64_T, MPI_MAX, 0, g.comm);
  PMPI_Gather(&nev, 1, MPI_UINT64_T, nevs, 1, MPI_UINT64_T, 0, g.comm);
  int len = 0;
  uint32_t *mine = defs_flat(&len);
  int *lens = g.rank == 0 ? malloc((size_t)g.size * sizeof *lens) : NULL;
  int *offs = g.rank == 0 ? malloc((size_t)g.size * sizeof *offs) : NULL;
  PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, g.comm);
  size_t total = 0;
  if (g.rank == 0)
    for (int r = 0; r < g.size; r++)
      offs[r] = (int)total, total += (size_t)lens[r];
  uint32_t *all = g.rank == 0 ? malloc((total ? total : 1) * sizeof *all) : NULL;
  PMPI_Gatherv(mine, len, MPI_UINT32_T, all, lens, offs, MPI_UINT32_T, 0, g.comm);
  int counts[2] = {0, 0};
  uint32_t *ids = NULL;
  if (g.rank == 0) {
    ids = malloc((total / 3 + 2) * 2 * sizeof *ids);
    counts[0] = distinct(all, total, 0, ids);
    counts[1] = distinct(all, total, 1, ids + counts[0]);
  }
  PMPI_Bcast(counts, 2, MPI_INT, 0, g.comm);
  if (g.rank != 0)
    ids = malloc((size_t)(counts[0] + counts[1] + 1) * sizeof *ids);
  PMPI_Bcast(ids, counts[0] + counts[1], MPI_UINT32_T, 0, g.comm);
  OTF2_Archive_OpenDefFiles(g.ar);
  OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(g.ar, (OTF2_LocationRef)g.rank);
  write_mapping(dw, OTF2_MAPPING_COMM, ids, counts[0]);
  write_mapping(dw, OTF2_MAPPING_RMA_WIN, ids + counts[0], counts[1]);
  OTF2_Archive_CloseDefWriter(g.ar, dw);
  OTF2_Archive_CloseDefFiles(g.ar);
  if (g.rank == 0) {
    write_globals(t0, t1 > t0 ? t1 : t0 + 1, nevs, all, total, ids, counts[0], ids + counts[0],
                  counts[1]);
    write_properties(run_max);
  }
  OTF2_Archive_Close(g.ar);
  free(mine), free(lens), free(offs), free(all), free(nevs), free(ids);
  PMPI_Comm_free(&g.comm);
  char list[1024] = "";
  size_t o = 0;
  for (int i = 0; i < S_N; i++)
    if (skipped[i] && o < sizeof list)
      o += (size_t)snprintf(list + o, sizeof list - o, "%s%s x%llu", o ? ", " : "", skipped_name[i],
                            (unsigned long long)skipped[i]);
  if (o)
    fprintf(stderr, WARN "rank %d: not recorded: %s\n", g.rank, list);
}

int MPI_Finalize(void) {
  if (g.on) {
    g.fin_real = real_ns();
    enter(R_FINALIZE);
    leave(R_FINALIZE);
    g.on = 0;
    stop();
  }
  return PMPI_Finalize();
}

/* ---- point-to-point ---------------------------------------------------- */

static void send_event(int dest, MPI_Comm comm, int tag, uint64_t bytes) {
  const int64_t id = comm_id(comm);
  if (id >= 0 && dest >= 0)
    OTF2_EvtWriter_MpiSend(g.ev, NULL, now_rec(), (uint32_t)dest, (OTF2_CommRef)id, (uint32_t)tag,
                           bytes);
}

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);

/* The blocking sends (standard, synchronous, buffered, ready): MpiSend. */
static int blocking_send(int region, send_fn fn, const void *buf, int count, MPI_Datatype dt,
                         int dest, int tag, MPI_Comm comm) {
  enter(region);
  if (outer())
    send_event(dest, comm, tag, type_bytes(count, dt));
  const int rc = fn(buf, count, dt, dest, tag, comm);
  leave(region);
  return rc;
}
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(R_SEND, PMPI_Send, buf, count, dt, dest, tag, comm);
}
int MPI_Ssend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(R_SSEND, PMPI_Ssend, buf, count, dt, dest, tag, comm);
}
int MPI_Bsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(R_BSEND, PMPI_Bsend, buf, count, dt, dest, tag, comm);
}
int MPI_Rsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm) {
  return blocking_send(R_RSEND, PMPI_Rsend, buf, count, dt, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *st) {
  MPI_Status local;
  if (st == MPI_STATUS_IGNORE)
    st = &local;
  enter(R_RECV);
  const int rc = PMPI_Recv(buf, count, dt, src, tag, comm, st);
  if (outer() && rc == MPI_SUCCESS && st->MPI_SOURCE >= 0) {
    const int64_t id = comm_id(comm);
    int n = 0;
    PMPI_Get_count(st, MPI_BYTE, &n);
    if (id >= 0)
      OTF2_EvtWriter_MpiRecv(g.ev, NULL, now_rec(), (uint32_t)st->MPI_SOURCE, (OTF2_CommRef)id,
                             (uint32_t)st->MPI_TAG, n > 0 ? (uint64_t)n : 0);
  }
  leave(R_RECV);
  return rc;
}

/* A request of a non-blocking or persistent call (NULL: not recorded). */
static req *track(MPI_Request h, int send, int peer, MPI_Comm comm, int tag, uint64_t bytes,
                  int persistent) {
  const int64_t id = comm_id(comm);
  if (id < 0 || peer < 0 || h == MPI_REQUEST_NULL)
    return NULL;
  req *r = req_add(h);
  if (!r)
    return NULL;
  r->send = send;
  r->peer = (uint32_t)peer;
  r->comm = (uint32_t)id;
  r->tag = (uint32_t)tag;
  r->bytes = bytes;
  r->persistent = persistent;
  return r;
}

typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

/* The non-blocking sends (standard, synchronous, buffered, ready): MpiIsend. */
static int nonblocking_send(int region, isend_fn fn, const void *buf, int count, MPI_Datatype dt,
                            int dest, int tag, MPI_Comm comm, MPI_Request *rq) {
  enter(region);
  const int rc = fn(buf, count, dt, dest, tag, comm, rq);
  if (outer() && rc == MPI_SUCCESS) {
    req *r = track(*rq, 1, dest, comm, tag, type_bytes(count, dt), 0);
    if (r)
      post(r);
  }
  leave(region);
  return rc;
}
int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *rq) {
  return nonblocking_send(R_ISEND, PMPI_Isend, buf, count, dt, dest, tag, comm, rq);
}
int MPI_Issend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *rq) {
  return nonblocking_send(R_ISSEND, PMPI_Issend, buf, count, dt, dest, tag, comm, rq);
}
int MPI_Ibsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *rq) {
  return nonblocking_send(R_IBSEND, PMPI_Ibsend, buf, count, dt, dest, tag, comm, rq);
}
int MPI_Irsend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
               MPI_Request *rq) {
  return nonblocking_send(R_IRSEND, PMPI_Irsend, buf, count, dt, dest, tag, comm, rq);
}
int MPI_Irecv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
              MPI_Request *rq) {
  enter(R_IRECV);
  const int rc = PMPI_Irecv(buf, count, dt, src, tag, comm, rq);
  if (outer() && rc == MPI_SUCCESS) {
    req *r = track(*rq, 0, src == MPI_ANY_SOURCE ? 0 : src, comm, tag, 0, 0);
    if (r)
      post(r);
  }
  leave(R_IRECV);
  return rc;
}

/* As a non-blocking pair, so that a replay posts both before waiting. */
int MPI_Sendrecv(const void *sb, int sc, MPI_Datatype st, int dest, int stag, void *rb, int rc_,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *status) {
  MPI_Status local;
  if (status == MPI_STATUS_IGNORE)
    status = &local;
  enter(R_SENDRECV);
  const int rc = PMPI_Sendrecv(sb, sc, st, dest, stag, rb, rc_, rt, src, rtag, comm, status);
  const int64_t id = outer() && rc == MPI_SUCCESS ? comm_id(comm) : -1;
  if (id >= 0) {
    const uint64_t s = g.next_req++, r = g.next_req++;
    const uint64_t t = now_rec();
    int n = 0;
    PMPI_Get_count(status, MPI_BYTE, &n);
    if (dest >= 0)
      OTF2_EvtWriter_MpiIsend(g.ev, NULL, t, (uint32_t)dest, (OTF2_CommRef)id, (uint32_t)stag,
                              type_bytes(sc, st), s);
    if (status->MPI_SOURCE >= 0)
      OTF2_EvtWriter_MpiIrecvRequest(g.ev, NULL, t, r);
    if (dest >= 0)
      OTF2_EvtWriter_MpiIsendComplete(g.ev, NULL, t, s);
    if (status->MPI_SOURCE >= 0)
      OTF2_EvtWriter_MpiIrecv(g.ev, NULL, t, (uint32_t)status->MPI_SOURCE, (OTF2_CommRef)id,
                              (uint32_t)status->MPI_TAG, n > 0 ? (uint64_t)n : 0, r);
  }
  leave(R_SENDRECV);
  return rc;
}

int MPI_Send_init(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                  MPI_Request *rq) {
  enter(R_SEND_INIT);
  const int rc = PMPI_Send_init(buf, count, dt, dest, tag, comm, rq);
  if (outer() && rc == MPI_SUCCESS)
    track(*rq, 1, dest, comm, tag, type_bytes(count, dt), 1);
  leave(R_SEND_INIT);
  return rc;
}
int MPI_Recv_init(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
                  MPI_Request *rq) {
  enter(R_RECV_INIT);
  const int rc = PMPI_Recv_init(buf, count, dt, src, tag, comm, rq);
  if (outer() && rc == MPI_SUCCESS)
    track(*rq, 0, src == MPI_ANY_SOURCE ? 0 : src, comm, tag, 0, 1);
  leave(R_RECV_INIT);
  return rc;
}
int MPI_Start(MPI_Request *rq) {
  enter(R_START);
  const int rc = PMPI_Start(rq);
  req *r = outer() && rc == MPI_SUCCESS ? req_find(*rq) : NULL;
  if (r)
    post(r);
  leave(R_START);
  return rc;
}
int MPI_Startall(int n, MPI_Request rq[]) {
  enter(R_STARTALL);
  const int rc = PMPI_Startall(n, rq);
  for (int i = 0; outer() && rc == MPI_SUCCESS && i < n; i++) {
    req *r = req_find(rq[i]);
    if (r)
      post(r);
  }
  leave(R_STARTALL);
  return rc;
}
int MPI_Request_free(MPI_Request *rq) {
  req *r = g.on ? req_find(*rq) : NULL;
  if (r) /* an active request completes unseen (a replay completes it at the end) */
    req_drop(r);
  return PMPI_Request_free(rq);
}

/* ---- completions ------------------------------------------------------- */

/* Handles before a completing call (the call may set them to NULL). */
static MPI_Request *saved(int n, const MPI_Request *rq, MPI_Request *stack, int nstack) {
  MPI_Request *h = n <= nstack ? stack : malloc((size_t)n * sizeof *h);
  if (h)
    memcpy(h, rq, (size_t)n * sizeof *h);
  return h;
}
static MPI_Status *statuses(int n, MPI_Status *st, MPI_Status *stack, int nstack) {
  if (st != MPI_STATUSES_IGNORE)
    return st;
  return n <= nstack ? stack : malloc((size_t)n * sizeof *st);
}
enum { NSTACK = 16 };

int MPI_Wait(MPI_Request *rq, MPI_Status *st) {
  MPI_Status local;
  if (st == MPI_STATUS_IGNORE)
    st = &local;
  const MPI_Request h = *rq;
  enter(R_WAIT);
  const int rc = PMPI_Wait(rq, st);
  if (outer() && rc == MPI_SUCCESS)
    completed(h, st);
  leave(R_WAIT);
  return rc;
}
int MPI_Test(MPI_Request *rq, int *flag, MPI_Status *st) {
  MPI_Status local;
  if (st == MPI_STATUS_IGNORE)
    st = &local;
  const MPI_Request h = *rq;
  enter(R_TEST);
  const int rc = PMPI_Test(rq, flag, st);
  if (outer() && rc == MPI_SUCCESS && *flag)
    completed(h, st);
  leave(R_TEST);
  return rc;
}

/* Waitall/Testall (flag NULL: wait). */
static int all_of(int region, int n, MPI_Request rq[], int *flag, MPI_Status st[]) {
  MPI_Request hs[NSTACK];
  MPI_Status ss[NSTACK];
  MPI_Request *h = saved(n, rq, hs, NSTACK);
  MPI_Status *s = statuses(n, st, ss, NSTACK);
  enter(region);
  const int rc = flag ? PMPI_Testall(n, rq, flag, s ? s : st) : PMPI_Waitall(n, rq, s ? s : st);
  if (outer() && rc == MPI_SUCCESS && h && s && (!flag || *flag))
    for (int i = 0; i < n; i++)
      completed(h[i], &s[i]);
  leave(region);
  if (h != hs)
    free(h);
  if (s != ss && s != st)
    free(s);
  return rc;
}
int MPI_Waitall(int n, MPI_Request rq[], MPI_Status st[]) {
  return all_of(R_WAITALL, n, rq, NULL, st);
}
int MPI_Testall(int n, MPI_Request rq[], int *flag, MPI_Status st[]) {
  return all_of(R_TESTALL, n, rq, flag, st);
}

/* Waitany/Testany (flag NULL: wait). */
static int any_of(int region, int n, MPI_Request rq[], int *idx, int *flag, MPI_Status *st) {
  MPI_Request hs[NSTACK];
  MPI_Status local;
  if (st == MPI_STATUS_IGNORE)
    st = &local;
  MPI_Request *h = saved(n, rq, hs, NSTACK);
  enter(region);
  const int rc = flag ? PMPI_Testany(n, rq, idx, flag, st) : PMPI_Waitany(n, rq, idx, st);
  if (outer() && rc == MPI_SUCCESS && h && (!flag || *flag) && *idx != MPI_UNDEFINED)
    completed(h[*idx], st);
  leave(region);
  if (h != hs)
    free(h);
  return rc;
}
int MPI_Waitany(int n, MPI_Request rq[], int *idx, MPI_Status *st) {
  return any_of(R_WAITANY, n, rq, idx, NULL, st);
}
int MPI_Testany(int n, MPI_Request rq[], int *idx, int *flag, MPI_Status *st) {
  return any_of(R_TESTANY, n, rq, idx, flag, st);
}

/* Waitsome/Testsome. */
static int some_of(int region, int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[],
                   int test) {
  MPI_Request hs[NSTACK];
  MPI_Status ss[NSTACK];
  MPI_Request *h = saved(n, rq, hs, NSTACK);
  MPI_Status *s = statuses(n, st, ss, NSTACK);
  enter(region);
  const int rc = test ? PMPI_Testsome(n, rq, out, idx, s ? s : st)
                      : PMPI_Waitsome(n, rq, out, idx, s ? s : st);
  if (outer() && rc == MPI_SUCCESS && h && s && *out != MPI_UNDEFINED)
    for (int i = 0; i < *out; i++)
      completed(h[idx[i]], &s[i]);
  leave(region);
  if (h != hs)
    free(h);
  if (s != ss && s != st)
    free(s);
  return rc;
}
int MPI_Waitsome(int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[]) {
  return some_of(R_WAITSOME, n, rq, out, idx, st, 0);
}
int MPI_Testsome(int n, MPI_Request rq[], int *out, int idx[], MPI_Status st[]) {
  return some_of(R_TESTSOME, n, rq, out, idx, st, 1);
}

/* ---- collectives ------------------------------------------------------- */

static int size_of(MPI_Comm c) {
  int n = 1;
  PMPI_Comm_size(c, &n);
  return n;
}
static int rank_of(MPI_Comm c) {
  int r = 0;
  PMPI_Comm_rank(c, &r);
  return r;
}

/* The end of a collective: sizes are bytes to and from the other ranks. */
static void coll(OTF2_CollectiveOp op, MPI_Comm comm, int root, uint64_t sent, uint64_t recvd) {
  if (!outer())
    return;
  const int64_t id = comm_id(comm);
  if (id < 0)
    return;
  OTF2_EvtWriter_MpiCollectiveBegin(g.ev, NULL, now_rec());
  OTF2_EvtWriter_MpiCollectiveEnd(g.ev, NULL, now_rec(), op, (OTF2_CommRef)id,
                                  root < 0 ? OTF2_UNDEFINED_UINT32 : (uint32_t)root, sent, recvd);
}

int MPI_Barrier(MPI_Comm comm) {
  enter(R_BARRIER);
  const int rc = PMPI_Barrier(comm);
  coll(OTF2_COLLECTIVE_OP_BARRIER, comm, -1, 0, 0);
  leave(R_BARRIER);
  return rc;
}
int MPI_Bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  enter(R_BCAST);
  const int rc = PMPI_Bcast(buf, count, dt, root, comm);
  const uint64_t b = type_bytes(count, dt), others = (uint64_t)size_of(comm) - 1;
  const int me = rank_of(comm) == root;
  coll(OTF2_COLLECTIVE_OP_BCAST, comm, root, me ? b * others : 0, me ? 0 : b);
  leave(R_BCAST);
  return rc;
}
int MPI_Reduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, int root,
               MPI_Comm comm) {
  enter(R_REDUCE);
  const int rc = PMPI_Reduce(s, r, count, dt, op, root, comm);
  const uint64_t b = type_bytes(count, dt), others = (uint64_t)size_of(comm) - 1;
  const int me = rank_of(comm) == root;
  coll(OTF2_COLLECTIVE_OP_REDUCE, comm, root, me ? 0 : b, me ? b * others : 0);
  leave(R_REDUCE);
  return rc;
}
int MPI_Allreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  enter(R_ALLREDUCE);
  const int rc = PMPI_Allreduce(s, r, count, dt, op, comm);
  const uint64_t b = type_bytes(count, dt);
  coll(OTF2_COLLECTIVE_OP_ALLREDUCE, comm, -1, b, b);
  leave(R_ALLREDUCE);
  return rc;
}
int MPI_Gather(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, int root,
               MPI_Comm comm) {
  enter(R_GATHER);
  const int rc = PMPI_Gather(s, sc, st, r, rc_, rt, root, comm);
  const int me = rank_of(comm) == root;
  const uint64_t others = (uint64_t)size_of(comm) - 1;
  coll(OTF2_COLLECTIVE_OP_GATHER, comm, root, me ? 0 : type_bytes(sc, st),
       me ? type_bytes(rc_, rt) * others : 0);
  leave(R_GATHER);
  return rc;
}
int MPI_Scatter(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt, int root,
                MPI_Comm comm) {
  enter(R_SCATTER);
  const int rc = PMPI_Scatter(s, sc, st, r, rc_, rt, root, comm);
  const int me = rank_of(comm) == root;
  const uint64_t others = (uint64_t)size_of(comm) - 1;
  coll(OTF2_COLLECTIVE_OP_SCATTER, comm, root, me ? type_bytes(sc, st) * others : 0,
       me ? 0 : type_bytes(rc_, rt));
  leave(R_SCATTER);
  return rc;
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,
                  MPI_Comm comm) {
  enter(R_ALLGATHER);
  const int rc = PMPI_Allgather(s, sc, st, r, rc_, rt, comm);
  const uint64_t others = (uint64_t)size_of(comm) - 1;
  coll(OTF2_COLLECTIVE_OP_ALLGATHER, comm, -1, type_bytes(sc, st) * others,
       type_bytes(rc_, rt) * others);
  leave(R_ALLGATHER);
  return rc;
}
int MPI_Alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,
                 MPI_Comm comm) {
  enter(R_ALLTOALL);
  const int rc = PMPI_Alltoall(s, sc, st, r, rc_, rt, comm);
  const uint64_t others = (uint64_t)size_of(comm) - 1;
  coll(OTF2_COLLECTIVE_OP_ALLTOALL, comm, -1, type_bytes(sc, st) * others,
       type_bytes(rc_, rt) * others);
  leave(R_ALLTOALL);
  return rc;
}
int MPI_Alltoallv(const void *s, const int sc[], const int sd[], MPI_Datatype st, void *r,
                  const int rc_[], const int rd[], MPI_Datatype rt, MPI_Comm comm) {
  enter(R_ALLTOALLV);
  const int rc = PMPI_Alltoallv(s, sc, sd, st, r, rc_, rd, rt, comm);
  const int n = size_of(comm), me = rank_of(comm);
  uint64_t sent = 0, recvd = 0;
  for (int i = 0; i < n; i++)
    if (i != me) {
      sent += type_bytes(sc[i], st);
      recvd += type_bytes(rc_[i], rt);
    }
  coll(OTF2_COLLECTIVE_OP_ALLTOALLV, comm, -1, sent, recvd);
  leave(R_ALLTOALLV);
  return rc;
}

/* Bytes of the counts of every rank but me. */
static uint64_t others_bytes(const int counts[], int n, int me, MPI_Datatype dt) {
  uint64_t b = 0;
  for (int i = 0; i < n; i++)
    if (i != me)
      b += type_bytes(counts[i], dt);
  return b;
}

int MPI_Gatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc_[], const int rd[],
                MPI_Datatype rt, int root, MPI_Comm comm) {
  enter(R_GATHERV);
  const int rc = PMPI_Gatherv(s, sc, st, r, rc_, rd, rt, root, comm);
  const int me = rank_of(comm);
  coll(OTF2_COLLECTIVE_OP_GATHERV, comm, root, me == root ? 0 : type_bytes(sc, st),
       me == root ? others_bytes(rc_, size_of(comm), me, rt) : 0);
  leave(R_GATHERV);
  return rc;
}
int MPI_Scatterv(const void *s, const int sc[], const int sd[], MPI_Datatype st, void *r, int rc_,
                 MPI_Datatype rt, int root, MPI_Comm comm) {
  enter(R_SCATTERV);
  const int rc = PMPI_Scatterv(s, sc, sd, st, r, rc_, rt, root, comm);
  const int me = rank_of(comm);
  coll(OTF2_COLLECTIVE_OP_SCATTERV, comm, root,
       me == root ? others_bytes(sc, size_of(comm), me, st) : 0,
       me == root ? 0 : type_bytes(rc_, rt));
  leave(R_SCATTERV);
  return rc;
}
int MPI_Allgatherv(const void *s, int sc, MPI_Datatype st, void *r, const int rc_[], const int rd[],
                   MPI_Datatype rt, MPI_Comm comm) {
  enter(R_ALLGATHERV);
  const int rc = PMPI_Allgatherv(s, sc, st, r, rc_, rd, rt, comm);
  const int n = size_of(comm);
  coll(OTF2_COLLECTIVE_OP_ALLGATHERV, comm, -1, type_bytes(sc, st) * (uint64_t)(n - 1),
       others_bytes(rc_, n, rank_of(comm), rt));
  leave(R_ALLGATHERV);
  return rc;
}
int MPI_Reduce_scatter(const void *s, void *r, const int rc_[], MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm) {
  enter(R_REDUCE_SCATTER);
  const int rc = PMPI_Reduce_scatter(s, r, rc_, dt, op, comm);
  const int n = size_of(comm), me = rank_of(comm);
  coll(OTF2_COLLECTIVE_OP_REDUCE_SCATTER, comm, -1, others_bytes(rc_, n, -1, dt),
       type_bytes(rc_[me], dt));
  leave(R_REDUCE_SCATTER);
  return rc;
}
int MPI_Reduce_scatter_block(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op,
                             MPI_Comm comm) {
  enter(R_REDUCE_SCATTER_BLOCK);
  const int rc = PMPI_Reduce_scatter_block(s, r, count, dt, op, comm);
  const uint64_t b = type_bytes(count, dt);
  coll(OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK, comm, -1, b * (uint64_t)size_of(comm), b);
  leave(R_REDUCE_SCATTER_BLOCK);
  return rc;
}
int MPI_Scan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  enter(R_SCAN);
  const int rc = PMPI_Scan(s, r, count, dt, op, comm);
  const uint64_t b = type_bytes(count, dt);
  coll(OTF2_COLLECTIVE_OP_SCAN, comm, -1, b, b);
  leave(R_SCAN);
  return rc;
}
int MPI_Exscan(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm) {
  enter(R_EXSCAN);
  const int rc = PMPI_Exscan(s, r, count, dt, op, comm);
  const uint64_t b = type_bytes(count, dt);
  coll(OTF2_COLLECTIVE_OP_EXSCAN, comm, -1, b, b);
  leave(R_EXSCAN);
  return rc;
}

/* ---- communicators ----------------------------------------------------- */

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *out) {
  enter(R_COMM_SPLIT);
  const int rc = PMPI_Comm_split(comm, color, key, out);
  if (outer() && rc == MPI_SUCCESS)
    comm_created(*out);
  leave(R_COMM_SPLIT);
  return rc;
}
int MPI_Comm_split_type(MPI_Comm comm, int type, int key, MPI_Info info, MPI_Comm *out) {
  enter(R_COMM_SPLIT_TYPE);
  const int rc = PMPI_Comm_split_type(comm, type, key, info, out);
  if (outer() && rc == MPI_SUCCESS)
    comm_created(*out);
  leave(R_COMM_SPLIT_TYPE);
  return rc;
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *out) {
  enter(R_COMM_DUP);
  const int rc = PMPI_Comm_dup(comm, out);
  if (outer() && rc == MPI_SUCCESS)
    comm_created(*out);
  leave(R_COMM_DUP);
  return rc;
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group grp, MPI_Comm *out) {
  enter(R_COMM_CREATE);
  const int rc = PMPI_Comm_create(comm, grp, out);
  if (outer() && rc == MPI_SUCCESS)
    comm_created(*out);
  leave(R_COMM_CREATE);
  return rc;
}
int MPI_Comm_free(MPI_Comm *comm) {
  comm_def *d = g.on ? comm_find(*comm) : NULL;
  if (d)
    d->h = MPI_COMM_NULL; /* the handle may be reused; the definition stays */
  return PMPI_Comm_free(comm);
}

/* ---- one-sided --------------------------------------------------------- */

static void win_created(MPI_Win w, MPI_Comm comm) {
  const int64_t cid = comm_id(comm);
  const uint32_t id = new_id(comm); /* collective over comm: every rank calls it */
  if (cid < 0 || id == UINT32_MAX)
    return;
  if (g.nwins == g.cwins) {
    g.cwins = g.cwins ? 2 * g.cwins : 8;
    win_def *v = realloc(g.wins, (size_t)g.cwins * sizeof *v);
    if (!v)
      return;
    g.wins = v;
  }
  g.wins[g.nwins++] = (win_def){w, id, (uint32_t)cid};
  OTF2_EvtWriter_RmaWinCreate(g.ev, NULL, now_rec(), id);
}
static const win_def *win_find(MPI_Win w) {
  for (int i = 0; i < g.nwins; i++)
    if (g.wins[i].h == w)
      return &g.wins[i];
  return NULL;
}

int MPI_Win_create(void *base, MPI_Aint size, int du, MPI_Info info, MPI_Comm comm, MPI_Win *w) {
  enter(R_WIN_CREATE);
  const int rc = PMPI_Win_create(base, size, du, info, comm, w);
  if (outer() && rc == MPI_SUCCESS)
    win_created(*w, comm);
  leave(R_WIN_CREATE);
  return rc;
}
int MPI_Win_allocate(MPI_Aint size, int du, MPI_Info info, MPI_Comm comm, void *base, MPI_Win *w) {
  enter(R_WIN_ALLOCATE);
  const int rc = PMPI_Win_allocate(size, du, info, comm, base, w);
  if (outer() && rc == MPI_SUCCESS)
    win_created(*w, comm);
  leave(R_WIN_ALLOCATE);
  return rc;
}
int MPI_Win_free(MPI_Win *w) {
  if (g.on)
    for (int i = 0; i < g.nwins; i++)
      if (g.wins[i].h == *w)
        g.wins[i].h = MPI_WIN_NULL;
  return PMPI_Win_free(w);
}
int MPI_Win_fence(int assert, MPI_Win w) {
  enter(R_WIN_FENCE);
  const int rc = PMPI_Win_fence(assert, w);
  const win_def *d = outer() ? win_find(w) : NULL;
  if (d) {
    OTF2_EvtWriter_RmaCollectiveBegin(g.ev, NULL, now_rec());
    OTF2_EvtWriter_RmaCollectiveEnd(g.ev, NULL, now_rec(), OTF2_COLLECTIVE_OP_BARRIER,
                                    OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, d->id,
                                    OTF2_UNDEFINED_UINT32, 0, 0);
  }
  leave(R_WIN_FENCE);
  return rc;
}
static void rma_event(int put, MPI_Win w, int target, uint64_t bytes) {
  const win_def *d = outer() ? win_find(w) : NULL;
  if (!d || target < 0)
    return;
  const uint64_t id = g.next_req++;
  if (put)
    OTF2_EvtWriter_RmaPut(g.ev, NULL, now_rec(), d->id, (uint32_t)target, bytes, id);
  else
    OTF2_EvtWriter_RmaGet(g.ev, NULL, now_rec(), d->id, (uint32_t)target, bytes, id);
}
int MPI_Put(const void *o, int oc, MPI_Datatype ot, int target, MPI_Aint td, int tc,
            MPI_Datatype tt, MPI_Win w) {
  enter(R_PUT);
  const int rc = PMPI_Put(o, oc, ot, target, td, tc, tt, w);
  if (rc == MPI_SUCCESS)
    rma_event(1, w, target, type_bytes(oc, ot));
  leave(R_PUT);
  return rc;
}
int MPI_Get(void *o, int oc, MPI_Datatype ot, int target, MPI_Aint td, int tc, MPI_Datatype tt,
            MPI_Win w) {
  enter(R_GET);
  const int rc = PMPI_Get(o, oc, ot, target, td, tc, tt, w);
  if (rc == MPI_SUCCESS)
    rma_event(0, w, target, type_bytes(oc, ot));
  leave(R_GET);
  return rc;
}

/* ---- seen, not recorded ------------------------------------------------ */

int MPI_Accumulate(const void *o, int oc, MPI_Datatype ot, int target, MPI_Aint td, int tc,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w) {
  skipped[S_ACCUMULATE] += g.on;
  return PMPI_Accumulate(o, oc, ot, target, td, tc, tt, op, w);
}
int MPI_Win_lock(int type, int rank, int assert, MPI_Win w) {
  skipped[S_WIN_LOCK] += g.on;
  return PMPI_Win_lock(type, rank, assert, w);
}
int MPI_Win_lock_all(int assert, MPI_Win w) {
  skipped[S_WIN_LOCK_ALL] += g.on;
  return PMPI_Win_lock_all(assert, w);
}
int MPI_Win_flush(int rank, MPI_Win w) {
  skipped[S_WIN_FLUSH] += g.on;
  return PMPI_Win_flush(rank, w);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request *rq) {
  skipped[S_IBARRIER] += g.on;
  return PMPI_Ibarrier(comm, rq);
}
int MPI_Iallreduce(const void *s, void *r, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                   MPI_Request *rq) {
  skipped[S_IALLREDUCE] += g.on;
  return PMPI_Iallreduce(s, r, count, dt, op, comm, rq);
}
int MPI_Ialltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc_, MPI_Datatype rt,
                  MPI_Comm comm, MPI_Request *rq) {
  skipped[S_IALLTOALL] += g.on;
  return PMPI_Ialltoall(s, sc, st, r, rc_, rt, comm, rq);
}
