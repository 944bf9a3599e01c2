/* The MPI engine's control plane (include/contend/world.h) and launch:
 * every group holds two communicators with the same ranks, `ctl` for the
 * control plane (named "contend-control") and `data` for the motif
 * contexts (named "contend-measured"), so control traffic never travels
 * on a measured communicator and a PMPI tool can tell them apart. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../core/proc.h"
#include "contend/files.h"
#include "contend/world.h"
#include "engine_mpi.h"
#include "library.h"
#include "mpi_check.h"
#include "rma_policy.h"

typedef struct mpi_group {
  MPI_Comm ctl, data;
} mpi_group;

struct contend_signal {
  MPI_Request req;
  int done;
};

static const contend_world_ops world_ops;
extern const contend_engine contend_engine_mpi;

static MPI_Comm ctl_of(const contend_group *g) { return ((const mpi_group *)g->impl)->ctl; }

static void name_comms(MPI_Comm ctl, MPI_Comm data) {
  CONTEND_MPI_CHECK(MPI_Comm_set_errhandler(ctl, MPI_ERRORS_RETURN));
  CONTEND_MPI_CHECK(MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN));
  CONTEND_MPI_CHECK(MPI_Comm_set_name(ctl, "contend-control"));
  CONTEND_MPI_CHECK(MPI_Comm_set_name(data, "contend-measured"));
}

static contend_group *group_new(MPI_Comm ctl, MPI_Comm data) {
  contend_group *g = calloc(1, sizeof *g);
  mpi_group *m = calloc(1, sizeof *m);
  if (!g || !m)
    contend_fail("out of memory");
  m->ctl = ctl;
  m->data = data;
  name_comms(ctl, data);
  g->ops = &world_ops;
  g->now = MPI_Wtime; /* called directly by the driver: no wrapper in the timed loop */
  g->impl = m;
  CONTEND_MPI_CHECK(MPI_Comm_rank(ctl, &g->rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(ctl, &g->size));
  return g;
}

static contend_group *w_split(contend_group *g, int color, int key) {
  const mpi_group *m = g->impl;
  MPI_Comm ctl, data;
  const int c = color < 0 ? MPI_UNDEFINED : color;
  CONTEND_MPI_CHECK(MPI_Comm_split(m->ctl, c, key, &ctl));
  CONTEND_MPI_CHECK(MPI_Comm_split(m->data, c, key, &data));
  if (ctl == MPI_COMM_NULL)
    return NULL;
  return group_new(ctl, data);
}

static void w_group_free(contend_group *g) {
  mpi_group *m = g->impl;
  CONTEND_MPI_CHECK(MPI_Comm_free(&m->data));
  CONTEND_MPI_CHECK(MPI_Comm_free(&m->ctl));
  free(m);
  free(g);
}

static void w_barrier(contend_group *g) { CONTEND_MPI_CHECK(MPI_Barrier(ctl_of(g))); }

static void w_allreduce(contend_group *g, void *buf, int count, contend_dtype dt, contend_op op) {
  CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buf, count, contend_mpi_dtype(dt),
                                  contend_mpi_op(op), ctl_of(g)));
}

static void w_reduce(contend_group *g, void *buf, int count, contend_dtype dt, contend_op op) {
  void *in = g->rank == 0 ? MPI_IN_PLACE : buf;
  CONTEND_MPI_CHECK(
      MPI_Reduce(in, buf, count, contend_mpi_dtype(dt), contend_mpi_op(op), 0, ctl_of(g)));
}

static int as_int(size_t bytes) {
  if (bytes > (size_t)0x7fffffff)
    contend_fail("control message of %zu bytes exceeds 2 GiB", bytes);
  return (int)bytes;
}

static void w_bcast(contend_group *g, void *buf, size_t bytes) {
  CONTEND_MPI_CHECK(MPI_Bcast(buf, as_int(bytes), MPI_BYTE, 0, ctl_of(g)));
}

static void w_gather(contend_group *g, const void *mine, size_t bytes, void *all) {
  const int n = as_int(bytes);
  CONTEND_MPI_CHECK(MPI_Gather(mine, n, MPI_BYTE, all, n, MPI_BYTE, 0, ctl_of(g)));
}

static void w_allgather(contend_group *g, const void *mine, size_t bytes, void *all) {
  const int n = as_int(bytes);
  CONTEND_MPI_CHECK(MPI_Allgather(mine, n, MPI_BYTE, all, n, MPI_BYTE, ctl_of(g)));
}

static void *w_gatherv(contend_group *g, const void *mine, size_t bytes, size_t *counts) {
  const int n = as_int(bytes);
  int *cnt = NULL, *displs = NULL;
  char *all = NULL;
  if (g->rank == 0) {
    cnt = malloc(sizeof(int) * (size_t)g->size);
    displs = malloc(sizeof(int) * (size_t)g->size);
    if (!cnt || !displs)
      contend_fail("out of memory");
  }
  CONTEND_MPI_CHECK(MPI_Gather(&n, 1, MPI_INT, cnt, 1, MPI_INT, 0, ctl_of(g)));
  if (g->rank == 0) {
    size_t total = 0;
    for (int q = 0; q < g->size; q++) {
      displs[q] = as_int(total);
      total += (size_t)cnt[q];
      if (counts)
        counts[q] = (size_t)cnt[q];
    }
    as_int(total);
    all = malloc(total ? total : 1);
    if (!all)
      contend_fail("out of memory");
  }
  CONTEND_MPI_CHECK(MPI_Gatherv(mine, n, MPI_BYTE, all, cnt, displs, MPI_BYTE, 0, ctl_of(g)));
  free(cnt);
  free(displs);
  return all;
}

static void *w_alltoallv(contend_group *g, const void *send, const size_t *counts,
                         size_t *rcounts) {
  const int P = g->size;
  int *sc = calloc(4 * (size_t)P, sizeof(int));
  if (!sc)
    contend_fail("out of memory");
  int *sd = sc + P, *rc = sc + 2 * P, *rd = sc + 3 * P;
  size_t off = 0;
  for (int q = 0; q < P; q++) {
    sc[q] = as_int(counts[q]);
    sd[q] = as_int(off);
    off += counts[q];
  }
  CONTEND_MPI_CHECK(MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, ctl_of(g)));
  size_t total = 0;
  for (int q = 0; q < P; q++) {
    rd[q] = as_int(total);
    total += (size_t)rc[q];
    rcounts[q] = (size_t)rc[q];
  }
  as_int(total);
  char *all = malloc(total ? total : 1);
  if (!all)
    contend_fail("out of memory");
  CONTEND_MPI_CHECK(MPI_Alltoallv(send, sc, sd, MPI_BYTE, all, rc, rd, MPI_BYTE, ctl_of(g)));
  free(sc);
  return all;
}

static contend_signal *w_signal_post(contend_group *g) {
  contend_signal *s = calloc(1, sizeof *s);
  if (!s)
    contend_fail("out of memory");
  CONTEND_MPI_CHECK(MPI_Ibarrier(ctl_of(g), &s->req));
  return s;
}

static int w_signal_test(contend_group *g, contend_signal *s) {
  (void)g;
  if (!s->done)
    CONTEND_MPI_CHECK(MPI_Test(&s->req, &s->done, MPI_STATUS_IGNORE));
  return s->done;
}

static void w_signal_wait(contend_group *g, contend_signal *s, int idle) {
  (void)g;
  if (s->done)
    return;
  if (!idle) {
    CONTEND_MPI_CHECK(MPI_Wait(&s->req, MPI_STATUS_IGNORE));
    s->done = 1;
    return;
  }
  while (!s->done) { /* test and sleep: an idle rank leaves the CPU to busy ones */
    CONTEND_MPI_CHECK(MPI_Test(&s->req, &s->done, MPI_STATUS_IGNORE));
    if (!s->done) {
      struct timespec ts = {0, 200000}; /* 0.2 ms */
      nanosleep(&ts, NULL);
    }
  }
}

static void w_signal_free(contend_group *g, contend_signal *s) {
  if (s && !s->done)
    w_signal_wait(g, s, 0);
  free(s);
}

/* This process's node_of_rank (the world group's, freed by launch). */
static int *g_node_of_rank;

/* Node discovery on the control communicators only. */
static int w_nodes(contend_group *world, int k, contend_nodes *out, char *err, size_t errlen) {
  const int rank = world->rank, size = world->size;
  MPI_Comm ctl = ctl_of(world);
  memset(out, 0, sizeof *out);
  free(g_node_of_rank);
  int *node_of_rank = g_node_of_rank = malloc(sizeof(int) * (size_t)size);
  if (!node_of_rank)
    contend_fail("out of memory");
  out->node_of_rank = node_of_rank;
  if (k > 0) {
    if (size % k) {
      snprintf(err, errlen,
               "--virtual-nodes %d: %d ranks do not divide into nodes of %d ranks (use a rank "
               "count that is a multiple of %d)",
               k, size, k, k);
      out->node_of_rank = NULL;
      return -1;
    }
    out->my_node = rank / k;
    out->local_rank = rank % k;
    out->local_size = k;
    out->nnodes = size / k;
    for (int r = 0; r < size; r++)
      node_of_rank[r] = r / k;
    out->ppn_min = out->ppn_max = k;
    return 0;
  }
  MPI_Comm node, leaders;
  CONTEND_MPI_CHECK(MPI_Comm_split_type(ctl, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  CONTEND_MPI_CHECK(MPI_Comm_set_name(node, "contend-control")); /* control, like its parent */
  CONTEND_MPI_CHECK(MPI_Comm_rank(node, &out->local_rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(node, &out->local_size));
  CONTEND_MPI_CHECK(MPI_Comm_split(ctl, out->local_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders));
  int id = 0;
  if (leaders != MPI_COMM_NULL) {
    CONTEND_MPI_CHECK(MPI_Comm_set_name(leaders, "contend-control"));
    CONTEND_MPI_CHECK(MPI_Comm_rank(leaders, &id));
    CONTEND_MPI_CHECK(MPI_Comm_free(&leaders));
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&id, 1, MPI_INT, 0, node));
  CONTEND_MPI_CHECK(MPI_Comm_free(&node));
  out->my_node = id;
  CONTEND_MPI_CHECK(MPI_Allgather(&id, 1, MPI_INT, node_of_rank, 1, MPI_INT, ctl));
  int nn = 0;
  for (int r = 0; r < size; r++)
    if (out->node_of_rank[r] + 1 > nn)
      nn = out->node_of_rank[r] + 1;
  out->nnodes = nn;
  int *count = calloc((size_t)nn, sizeof(int));
  if (!count)
    contend_fail("out of memory");
  for (int r = 0; r < size; r++)
    count[out->node_of_rank[r]]++;
  out->ppn_min = size;
  out->ppn_max = 0;
  for (int i = 0; i < nn; i++) {
    out->ppn_min = count[i] < out->ppn_min ? count[i] : out->ppn_min;
    out->ppn_max = count[i] > out->ppn_max ? count[i] : out->ppn_max;
  }
  free(count);
  return 0;
}

static void w_host_name(contend_group *g, char *buf, size_t len) {
  (void)g;
  char full[MPI_MAX_PROCESSOR_NAME] = "";
  int n = 0;
  CONTEND_MPI_CHECK(MPI_Get_processor_name(full, &n));
  snprintf(buf, len, "%s", full);
}

static void w_library(contend_group *g, char *buf, size_t len, int *version, int *subversion) {
  (void)g;
  static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  CONTEND_MPI_CHECK(MPI_Get_library_version(lib, &n));
  lib[sizeof lib - 1] = 0;
  contend_mpi_library_line(lib);
  snprintf(buf, len, "%s", lib);
  int v = 0, sv = 0;
  CONTEND_MPI_CHECK(MPI_Get_version(&v, &sv));
  if (version)
    *version = v;
  if (subversion)
    *subversion = sv;
}

static int w_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                      contend_group *g, int my_node, uint64_t seed, const contend_ctx *job) {
  const mpi_group *mg = g->impl;
  return contend_mpi_ctx_open(c, m, p, mg->data, mg->ctl, my_node, seed, job);
}

/* ---- watchdog and abort paths ------------------------------------------ */

static char g_watch_msg[512];

static void on_alarm(int sig) {
  (void)sig;
  ssize_t w = write(2, g_watch_msg, strlen(g_watch_msg));
  (void)w;
  contend_mpi_io_remove_tracked();
  contend_out_remove_all();
  MPI_Abort(MPI_COMM_WORLD, CONTEND_EXIT_FAIL);
}

static void disarm(void) {
  const struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
}

static void w_watchdog(contend_group *world, double seconds, const char *msg) {
  (void)world;
  disarm(); /* first, so that the handler never reads a half-written message */
  if (!(seconds > 0))
    return;
  snprintf(g_watch_msg, sizeof g_watch_msg - 1, "%s", msg ? msg : "contend: watchdog: aborting");
  const size_t n = strlen(g_watch_msg);
  if (n == 0 || g_watch_msg[n - 1] != '\n')
    strcpy(g_watch_msg + n, "\n"); /* the snprintf above left room for it */
  signal(SIGALRM, on_alarm);
  if (seconds > 1e8) /* about three years: longer than any run, and fits a time_t */
    seconds = 1e8;
  struct itimerval it = {{0, 0},
                         {(time_t)seconds, (suseconds_t)((seconds - (time_t)seconds) * 1e6)}};
  if (it.it_value.tv_sec == 0 && it.it_value.tv_usec == 0)
    it.it_value.tv_usec = 1; /* a zero value would disarm it */
  setitimer(ITIMER_REAL, &it, NULL);
}

static double w_peak_rss_mib(contend_group *g) {
  (void)g;
  return contend_peak_rss_mib();
}

static void w_results_json(contend_group *g, struct contend_json *j) {
  (void)g;
  contend_mpi_rma_json(j);
}

static void w_describe(contend_group *g, char *buf, size_t len) {
  (void)g;
  contend_mpi_rma_describe(buf, len);
}

static const contend_world_ops world_ops = {
    .engine = &contend_engine_mpi,
    .split = w_split,
    .group_free = w_group_free,
    .barrier = w_barrier,
    .allreduce = w_allreduce,
    .reduce = w_reduce,
    .bcast = w_bcast,
    .gather = w_gather,
    .allgather = w_allgather,
    .gatherv = w_gatherv,
    .alltoallv = w_alltoallv,
    .signal_post = w_signal_post,
    .signal_test = w_signal_test,
    .signal_wait = w_signal_wait,
    .signal_free = w_signal_free,
    .nodes = w_nodes,
    .host_name = w_host_name,
    .library = w_library,
    .ctx_open = w_ctx_open,
    .ctx_close = contend_mpi_ctx_close,
    .watchdog = w_watchdog,
    .peak_rss_mib = w_peak_rss_mib,
    .results_json = w_results_json,
    .describe = w_describe,
};

static int fail_rank(void) {
  int init = 0, fin = 0, r = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static void fail_end(int status) {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Abort(MPI_COMM_WORLD, status);
  exit(status);
}

static int launch(const contend_launch *l, contend_body body, void *arg) {
  if (MPI_Init(l->argc, l->argv) != MPI_SUCCESS) {
    fprintf(stderr, "contend: MPI_Init failed\n");
    return CONTEND_EXIT_FAIL;
  }
  contend_set_fail_handler(fail_rank, fail_end);
  CONTEND_MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  contend_catch_termination(); /* mpirun passes SIGTERM on to the ranks */
  {
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    CONTEND_MPI_CHECK(MPI_Get_library_version(lib, &n));
    contend_mpi_rma_resolve(l->opts, lib);
  }
  MPI_Comm ctl, data;
  CONTEND_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &ctl));
  CONTEND_MPI_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &data));
  contend_group *world = group_new(ctl, data);
  const int status = body(world, arg);
  disarm(); /* a body that returned early may have left it armed */
  w_group_free(world);
  free(g_node_of_rank);
  g_node_of_rank = NULL;
  contend_set_fail_handler(NULL, NULL);
  MPI_Finalize();
  return status;
}

static int check(contend_params *opts, char *err, size_t errlen) {
  return contend_mpi_rma_check(opts, err, errlen);
}

static const contend_engine_options mpi_options[] = {
    {contend_mpi_param_defs, "applies to real MPI"}, {NULL, NULL}};

const contend_engine contend_engine_mpi = {
    .name = "mpi",
    .help = "real MPI: run under mpirun or srun (the default)",
    .options = mpi_options,
    .in_process = 0,
    .more_nodes = "on one host, --virtual-nodes K makes N ranks into N/K nodes",
    .check = check,
    .launch = launch,
};
