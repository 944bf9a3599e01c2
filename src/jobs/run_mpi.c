/* A jobs run on MPI: node discovery, placement, one communicator per job,
 * then the StressBench phases separated by global barriers:
 *   decompose  every motif's setup (jobs one after another: RMA windows
 *              created at the same moment on sub-communicators of one
 *              split collide in Open MPI 4.1, see contend_mpi_ctx_open_serial)
 *   perform    isolated pass (each job alone, in turn) and/or concurrent
 *              pass (all jobs at once); each job runs its motif chain
 *              [REPEAT] times; every invocation and iteration is timed
 *   cleanup    every motif's cleanup (files removed), contexts closed
 * then rank 0 gathers the results and reports. */
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/nodes.h"
#include "../engine_mpi/engine_mpi.h"
#include "../suite/suite.h"
#include "contend/json.h"
#include "jobs.h"

/* ---- abort paths: remove the I/O motifs' files ------------------------ */

static double g_watchdog_s;

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "contend jobs: watchdog: the run took longer than --watchdog; "
                            "removing its files and aborting\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  contend_mpi_io_remove_tracked();
  MPI_Abort(MPI_COMM_WORLD, CONTEND_EXIT_FAIL);
}

static void on_term(int sig) {
  contend_mpi_io_remove_tracked();
  signal(sig, SIG_DFL);
  raise(sig);
}

static void arm_watchdog(void) {
  if (g_watchdog_s <= 0)
    return;
  struct itimerval it = {{0, 0}, {(time_t)g_watchdog_s, (suseconds_t)0}};
  setitimer(ITIMER_REAL, &it, NULL);
}

static void disarm_watchdog(void) {
  struct itimerval it = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &it, NULL);
}

static double wtime(void) { return MPI_Wtime(); }

/* A global barrier for ranks that may wait long (a job waiting for the
 * others in a pass): they test and sleep instead of polling, so on a
 * shared host (virtual nodes) an idle job does not take the CPU of a
 * running one.  A plain barrier after it aligns the next start. */
static void idle_barrier(MPI_Comm world) {
  MPI_Request rq;
  int done = 0;
  CONTEND_MPI_CHECK(MPI_Ibarrier(world, &rq));
  while (!done) {
    CONTEND_MPI_CHECK(MPI_Test(&rq, &done, MPI_STATUS_IGNORE));
    if (!done) {
      struct timespec ts = {0, 200000}; /* 0.2 ms */
      nanosleep(&ts, NULL);
    }
  }
  CONTEND_MPI_CHECK(MPI_Barrier(world));
}

static void utc_now(char *buf, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- per-iteration samples ------------------------------------------- */

typedef struct sink {
  contend_mres *m;
  int nseries;
  double *samples;
  long n, cap;
} sink;

static void on_sample(void *arg, int series, double s, long count) {
  sink *k = arg;
  for (long q = 0; q < count; q++) { /* a block: its mean, count times */
    contend_hist_add(&k->m->iter_us, s * 1e6);
    if (k->m->series && series < k->nseries)
      contend_jstat_add(&k->m->series[series], s);
    if (k->n < k->cap)
      k->samples[k->n++] = s;
  }
}

/* ---- the run ------------------------------------------------------------ */

typedef struct mpi_run {
  contend_jobs_run *r;
  const contend_jobfile *jf;
  MPI_Comm world, jcomm;
  int rank, size, my_job, progress;
  contend_ctx *ctx; /* my job's motif contexts */
  int *opened;
  contend_traffic *tr; /* [nm]: this rank's traffic in the current pass */
  sink *sinks;         /* [nm] */
  int verify;
  long verify_inject;
  long max_samples;
} mpi_run;

static void progress(const mpi_run *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const mpi_run *x, const char *fmt, ...) {
  if (x->rank != 0 || !x->progress)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[contend] ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

/* The chain of my job, [REPEAT] times, in pass p. */
static void run_chain(mpi_run *x, int p, double t_ref) {
  contend_jobs_run *r = x->r;
  const contend_job *job = &x->jf->jobs[x->my_job];
  const int g0 = r->first[x->my_job];
  contend_jres *jr = &r->j[p][x->my_job];
  const double start = MPI_Wtime();
  for (long rep = 0; rep < job->repeat; rep++) {
    const double tj0 = MPI_Wtime();
    for (int k = 0; k < job->nmotifs; k++) {
      const int g = g0 + k;
      contend_mres *m = &r->m[p][g];
      x->sinks[g].m = m;
      contend_job_exec ex = {
          .clock = wtime,
          .verify = x->verify,
          .verify_inject = x->verify_inject,
          .traffic = &x->tr[g],
          .sample = on_sample,
          .arg = &x->sinks[g],
      };
      double t = contend_job_invoke(&x->ctx[k], job->motifs[k].motif, rep, &ex);
      if (x->ctx[k].metric_scale > 0) {
        contend_jstat_add(&m->time, t);
        if (t > m->rep_max[rep])
          m->rep_max[rep] = t;
      }
    }
    const double tj = MPI_Wtime() - tj0;
    contend_jstat_add(&jr->time, tj);
    if (tj > jr->rep_max[rep])
      jr->rep_max[rep] = tj;
  }
  const double end = MPI_Wtime();
  jr->start_s = start - t_ref;
  jr->end_s = end - t_ref;
  for (int k = 0; k < job->nmotifs; k++) {
    const int g = g0 + k;
    r->m[p][g].io_bytes = x->tr[g].io_write_bytes + x->tr[g].io_read_bytes;
    r->m[p][g].verify_errors = (double)x->ctx[k].verify_errors;
    r->m[p][g].verify_checked = (double)x->ctx[k].verify_checked;
    x->ctx[k].verify_errors = x->ctx[k].verify_checked = 0;
  }
}

/* Reduces one pass's statistics to rank 0 (collective over world). */
static void reduce_pass(mpi_run *x, int p) {
  contend_jobs_run *r = x->r;
  const contend_jobfile *jf = x->jf;
  size_t ns = 0, nn = 0, nx = 0;
  /* count */
  for (int g = 0; g < r->nm; g++) {
    const long R = jf->jobs[r->mi[g].job].repeat;
    ns += 8 + 3 * (size_t)r->mi[g].nseries; /* time, hist, verify, io; series */
    nn += 2 + (size_t)r->mi[g].nseries;
    nx += 1 + 1 + (size_t)R + (size_t)r->mi[g].nseries;
  }
  for (int j = 0; j < jf->njobs; j++) {
    ns += 3;
    nn += 2;
    nx += 2 + (size_t)jf->jobs[j].repeat;
  }
  double *S = calloc(ns + 1, sizeof(double)), *N = calloc(nn + 1, sizeof(double)),
         *X = calloc(nx + 1, sizeof(double));
  if (!S || !N || !X)
    contend_fail("out of memory");
  for (int dir = 0; dir < 2; dir++) { /* 0: pack, 1: unpack */
    size_t a = 0, b = 0, c = 0;
#define SUMV(v)                                                                                    \
  do {                                                                                             \
    if (dir)                                                                                       \
      (v) = S[a++];                                                                                \
    else                                                                                           \
      S[a++] = (v);                                                                                \
  } while (0)
#define MINV(v)                                                                                    \
  do {                                                                                             \
    if (dir)                                                                                       \
      (v) = N[b++];                                                                                \
    else                                                                                           \
      N[b++] = (v);                                                                                \
  } while (0)
#define MAXV(v)                                                                                    \
  do {                                                                                             \
    if (dir)                                                                                       \
      (v) = X[c++];                                                                                \
    else                                                                                           \
      X[c++] = (v);                                                                                \
  } while (0)
    for (int g = 0; g < r->nm; g++) {
      contend_mres *m = &r->m[p][g];
      const long R = jf->jobs[r->mi[g].job].repeat;
      SUMV(m->time.n);
      SUMV(m->time.sum);
      SUMV(m->time.sumsq);
      MINV(m->time.min);
      MAXV(m->time.max);
      SUMV(m->iter_us.sum);
      SUMV(m->iter_us.sumsq);
      MINV(m->iter_us.min);
      MAXV(m->iter_us.max);
      SUMV(m->verify_errors);
      SUMV(m->verify_checked);
      SUMV(m->io_bytes);
      for (long q = 0; q < R; q++)
        MAXV(m->rep_max[q]);
      for (int s = 0; s < r->mi[g].nseries; s++) {
        SUMV(m->series[s].n);
        SUMV(m->series[s].sum);
        SUMV(m->series[s].sumsq);
        MINV(m->series[s].min);
        MAXV(m->series[s].max);
      }
    }
    for (int j = 0; j < jf->njobs; j++) {
      contend_jres *jr = &r->j[p][j];
      SUMV(jr->time.n);
      SUMV(jr->time.sum);
      SUMV(jr->time.sumsq);
      MINV(jr->time.min);
      MINV(jr->start_s);
      MAXV(jr->time.max);
      MAXV(jr->end_s);
      for (long q = 0; q < jf->jobs[j].repeat; q++)
        MAXV(jr->rep_max[q]);
    }
#undef SUMV
#undef MINV
#undef MAXV
    if (dir == 0) {
      void *ip = MPI_IN_PLACE;
      CONTEND_MPI_CHECK(MPI_Reduce(x->rank ? S : ip, S, (int)a, MPI_DOUBLE, MPI_SUM, 0, x->world));
      CONTEND_MPI_CHECK(MPI_Reduce(x->rank ? N : ip, N, (int)b, MPI_DOUBLE, MPI_MIN, 0, x->world));
      CONTEND_MPI_CHECK(MPI_Reduce(x->rank ? X : ip, X, (int)c, MPI_DOUBLE, MPI_MAX, 0, x->world));
      if (x->rank != 0)
        break;
    }
  }
  free(S);
  free(N);
  free(X);
  /* histogram buckets and counts */
  for (int g = 0; g < r->nm; g++) {
    contend_hist *h = &r->m[p][g].iter_us;
    void *ip = MPI_IN_PLACE;
    CONTEND_MPI_CHECK(MPI_Reduce(x->rank ? (void *)h->bucket : ip, h->bucket, CONTEND_HIST_NBUCKETS,
                                 MPI_UINT64_T, MPI_SUM, 0, x->world));
    CONTEND_MPI_CHECK(MPI_Reduce(x->rank ? (void *)&h->count : ip, &h->count, 1, MPI_UINT64_T,
                                 MPI_SUM, 0, x->world));
  }
  /* samples: gathered to rank 0 */
  if (x->max_samples > 0)
    for (int g = 0; g < r->nm; g++) {
      int mine = (int)x->sinks[g].n, *counts = NULL, *displs = NULL, total = 0;
      if (x->rank == 0) {
        counts = calloc((size_t)x->size, sizeof(int));
        displs = calloc((size_t)x->size, sizeof(int));
        if (!counts || !displs)
          contend_fail("out of memory");
      }
      CONTEND_MPI_CHECK(MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, x->world));
      if (x->rank == 0)
        for (int q = 0; q < x->size; q++) {
          displs[q] = total;
          total += counts[q];
        }
      double *all = x->rank == 0 ? malloc(sizeof(double) * (size_t)(total ? total : 1)) : NULL;
      CONTEND_MPI_CHECK(MPI_Gatherv(x->sinks[g].samples, mine, MPI_DOUBLE, all, counts, displs,
                                    MPI_DOUBLE, 0, x->world));
      if (x->rank == 0) {
        r->m[p][g].samples = all;
        r->m[p][g].nsamples = total;
      }
      free(counts);
      free(displs);
      x->sinks[g].n = 0;
    }
}

/* Gathers every rank's traffic of the last pass into r->mi[].traffic at
 * rank 0 (collective over world). */
static void gather_traffic(mpi_run *x) {
  contend_jobs_run *r = x->r;
  /* flows: (g, src, dst, bytes, msgs) */
  size_t nf = 0;
  for (int g = 0; g < r->nm; g++)
    nf += x->tr[g].flows.n;
  double *mine = malloc(sizeof(double) * 5 * (nf ? nf : 1));
  if (!mine)
    contend_fail("out of memory");
  size_t o = 0;
  for (int g = 0; g < r->nm; g++) {
    size_t n;
    contend_flow *f = contend_flows_sorted(&x->tr[g].flows, &n);
    for (size_t i = 0; i < n; i++) {
      mine[o++] = g;
      mine[o++] = f[i].src;
      mine[o++] = f[i].dst;
      mine[o++] = f[i].bytes;
      mine[o++] = f[i].msgs;
    }
    free(f);
  }
  int cnt = (int)o, *counts = NULL, *displs = NULL, total = 0;
  if (x->rank == 0) {
    counts = calloc((size_t)x->size, sizeof(int));
    displs = calloc((size_t)x->size, sizeof(int));
    if (!counts || !displs)
      contend_fail("out of memory");
  }
  CONTEND_MPI_CHECK(MPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, x->world));
  if (x->rank == 0)
    for (int q = 0; q < x->size; q++) {
      displs[q] = total;
      total += counts[q];
    }
  double *all = x->rank == 0 ? malloc(sizeof(double) * (size_t)(total ? total : 1)) : NULL;
  CONTEND_MPI_CHECK(
      MPI_Gatherv(mine, cnt, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, x->world));
  if (x->rank == 0)
    for (int i = 0; i + 4 < total; i += 5)
      contend_flow_add(&r->mi[(int)all[i]].traffic.flows, (int)all[i + 1], (int)all[i + 2],
                       all[i + 3], all[i + 4]);
  free(all);
  free(mine);
  free(counts);
  free(displs);
  /* scalars */
  const int K = CONTEND_TRAFFIC_NSCALARS;
  double *sc = calloc((size_t)r->nm * K + 1, sizeof(double));
  if (!sc)
    contend_fail("out of memory");
  for (int g = 0; g < r->nm; g++)
    contend_traffic_scalars(&x->tr[g], sc + (size_t)g * K);
  void *ip = MPI_IN_PLACE;
  CONTEND_MPI_CHECK(MPI_Reduce(x->rank ? sc : ip, sc, r->nm * K, MPI_DOUBLE, MPI_SUM, 0, x->world));
  if (x->rank == 0)
    for (int g = 0; g < r->nm; g++)
      contend_traffic_add_scalars(&r->mi[g].traffic, sc + (size_t)g * K);
  free(sc);
}

/* Motif facts known after setup (same on every rank afterwards). */
static void share_minfo(mpi_run *x) {
  contend_jobs_run *r = x->r;
  const int n = r->nm;
  double *v = calloc((size_t)n * 4 + 1, sizeof(double));
  if (!v)
    contend_fail("out of memory");
  if (x->my_job >= 0)
    for (int k = 0; k < x->jf->jobs[x->my_job].nmotifs; k++) {
      const contend_ctx *c = &x->ctx[k];
      const int g = r->first[x->my_job] + k;
      long rings, warmup, iters;
      contend_job_loop(c, &rings, &warmup, &iters);
      v[4 * g] = (double)(rings * (warmup + iters));
      v[4 * g + 1] = (double)c->msg_bytes;
      v[4 * g + 2] = c->metric_scale;
      v[4 * g + 3] = c->nseries;
    }
  CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, n * 4, MPI_DOUBLE, MPI_MAX, x->world));
  int total = 0;
  for (int g = 0; g < n; g++) {
    r->mi[g].iterations = (long)v[4 * g];
    r->mi[g].msg_bytes = v[4 * g + 1];
    r->mi[g].divisor = v[4 * g + 2] > 0 ? v[4 * g + 2] : 1;
    r->mi[g].nseries = (int)v[4 * g + 3];
    total += r->mi[g].nseries;
  }
  free(v);
  double *sv = calloc((size_t)total + 1, sizeof(double));
  if (!sv)
    contend_fail("out of memory");
  for (int g = 0, o = 0; g < n; o += r->mi[g].nseries, g++)
    if (x->my_job == r->mi[g].job) {
      const contend_ctx *c = &x->ctx[r->mi[g].pos];
      for (int s = 0; s < c->nseries; s++)
        sv[o + s] = c->series_value[s];
    }
  CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, sv, total, MPI_DOUBLE, MPI_MAX, x->world));
  for (int g = 0, o = 0; g < n; o += r->mi[g].nseries, g++) {
    if (!r->mi[g].nseries)
      continue;
    r->mi[g].series_value = malloc(sizeof(double) * (size_t)r->mi[g].nseries);
    if (!r->mi[g].series_value)
      contend_fail("out of memory");
    memcpy(r->mi[g].series_value, sv + o, sizeof(double) * (size_t)r->mi[g].nseries);
    r->mi[g].series_key = x->jf->jobs[r->mi[g].job].motifs[r->mi[g].pos].motif->series_key;
  }
  free(sv);
  contend_jobs_run_series(r);
  for (int g = 0; g < n; g++)
    x->sinks[g].nseries = r->mi[g].nseries;
}

/* After a failed decompose: the first failure's message at rank 0
 * (collective over world).  Returns 1 if any motif failed. */
static int setup_failure(mpi_run *x, int fail_job, int fail_pos, const char *msg, char *out,
                         size_t outlen) {
  /* severity 2: this rank has the reason; 1: failed without one */
  int mine[3] = {fail_job >= 0 ? (msg && *msg ? 2 : 1) : 0, fail_job, fail_pos};
  int *all = x->rank == 0 ? malloc(sizeof(int) * 3 * (size_t)x->size) : NULL;
  CONTEND_MPI_CHECK(MPI_Gather(mine, 3, MPI_INT, all, 3, MPI_INT, 0, x->world));
  int who = -1;
  if (x->rank == 0) {
    for (int q = 0; q < x->size; q++) {
      if (!all[3 * q])
        continue;
      if (who < 0 || all[3 * q] > all[3 * who] ||
          (all[3 * q] == all[3 * who] &&
           (all[3 * q + 1] < all[3 * who + 1] ||
            (all[3 * q + 1] == all[3 * who + 1] && all[3 * q + 2] < all[3 * who + 2]))))
        who = q;
    }
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&who, 1, MPI_INT, 0, x->world));
  if (who < 0) {
    free(all);
    return 0;
  }
  char text[256] = "";
  if (who == x->rank && msg)
    snprintf(text, sizeof text, "%s", msg);
  if (who != 0) {
    if (x->rank == who)
      CONTEND_MPI_CHECK(MPI_Send(text, sizeof text, MPI_CHAR, 0, 77, x->world));
    else if (x->rank == 0)
      CONTEND_MPI_CHECK(
          MPI_Recv(text, sizeof text, MPI_CHAR, who, 77, x->world, MPI_STATUS_IGNORE));
  }
  if (x->rank == 0) {
    const int j = all[3 * who + 1], k = all[3 * who + 2];
    const contend_job *job = &x->jf->jobs[j];
    snprintf(out, outlen, "%s:%d: motif '%s' of job '%s' failed in the decompose phase: %s",
             x->jf->path, job->motifs[k].line, job->motifs[k].motif->name, job->name,
             *text ? text : "setup failed");
  }
  free(all);
  return 1;
}

static void gather_node_names(contend_jobs_run *r, const contend_nodes *nodes, mpi_run *x) {
  enum { W = 64 };
  char mine[W] = "", full[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  CONTEND_MPI_CHECK(MPI_Get_processor_name(full, &len));
  snprintf(mine, W, "%.63s", full);
  char *all = x->rank == 0 ? malloc((size_t)x->size * W) : NULL;
  CONTEND_MPI_CHECK(MPI_Gather(mine, W, MPI_CHAR, all, W, MPI_CHAR, 0, x->world));
  if (x->rank == 0) {
    r->node_names = calloc((size_t)nodes->nnodes, sizeof(char *));
    for (int q = x->size - 1; q >= 0; q--) {
      int nd = nodes->node_of_rank[q];
      free(r->node_names[nd]);
      r->node_names[nd] = strndup(all + (size_t)q * W, W);
    }
  }
  free(all);
}

static int usage_error(mpi_run *x, const char *err) {
  if (x->rank == 0)
    fprintf(stderr, "contend jobs: error: %s\n", err);
  return CONTEND_EXIT_USAGE;
}

int contend_jobs_mpi(contend_jobfile *jf, const contend_params *opts, int argc, char **argv) {
  mpi_run x = {.jf = jf, .world = MPI_COMM_WORLD, .my_job = -1, .jcomm = MPI_COMM_NULL};
  char err[2048] = "";
  CONTEND_MPI_CHECK(MPI_Comm_set_errhandler(x.world, MPI_ERRORS_RETURN));
  CONTEND_MPI_CHECK(MPI_Comm_rank(x.world, &x.rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(x.world, &x.size));
  const double t_start = MPI_Wtime();
  x.progress = !contend_param_bool(opts, "quiet");
  x.verify = contend_param_bool(opts, "verify");
  x.verify_inject = (long)contend_param_int(opts, "verify_inject");
  x.max_samples = (long)contend_param_int(opts, "samples");
  const char *output = contend_param_str(opts, "output");

  int bad = 0;
  if (x.rank == 0 && *output && contend_check_writable(output, err, sizeof err))
    bad = 1;
  CONTEND_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, x.world));
  if (bad)
    return usage_error(&x, err);

  contend_nodes nodes;
  if (contend_nodes_discover(x.world, (int)contend_param_int(opts, "virtual_nodes"), &nodes, err,
                             sizeof err))
    return usage_error(&x, err);

  const contend_param_value *sv = &opts->v[contend_params_find(opts, "seed")];
  uint64_t seed = (uint64_t)sv->i;
  if (sv->is_time) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    seed = ((uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec) % 1000000000000ULL;
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, x.world));

  /* placement and validation: the same answer on every rank, reported once */
  if (contend_jobs_place(jf, nodes.nnodes, seed, err, sizeof err)) {
    contend_nodes_free(&nodes);
    return usage_error(&x, err);
  }
  int *job_of_node = malloc(sizeof(int) * (size_t)nodes.nnodes);
  int *pos_of_node = malloc(sizeof(int) * (size_t)nodes.nnodes);
  if (!job_of_node || !pos_of_node)
    contend_fail("out of memory");
  for (int i = 0; i < nodes.nnodes; i++)
    job_of_node[i] = pos_of_node[i] = -1;
  for (int j = 0; j < jf->njobs; j++)
    for (int i = 0; i < jf->jobs[j].nnodes; i++) {
      job_of_node[jf->jobs[j].nodes[i]] = j;
      pos_of_node[jf->jobs[j].nodes[i]] = i;
    }
  contend_jobs_run run;
  const char *mode = contend_param_str(opts, "mode");
  const int both = !strcmp(mode, "both");
  contend_jobs_run_init(&run, jf, both ? 2 : 1);
  x.r = &run;
  run.pass[0] = !strcmp(mode, "concurrent") ? CONTEND_PASS_CONCURRENT : CONTEND_PASS_ISOLATED;
  run.pass[1] = CONTEND_PASS_CONCURRENT;
  run.opts = opts;
  run.seed = seed;
  run.seed_from_time = sv->is_time;
  run.nnodes = nodes.nnodes;
  run.nranks = x.size;
  run.ppn_min = nodes.ppn_min;
  run.ppn_max = nodes.ppn_max;
  run.virtual_nodes = (int)contend_param_int(opts, "virtual_nodes");
  run.argc = argc;
  run.argv = argv;
  for (int q = 0; q < x.size; q++)
    if (job_of_node[nodes.node_of_rank[q]] >= 0)
      run.job_ranks[job_of_node[nodes.node_of_rank[q]]]++;
  if (contend_jobs_validate(jf, run.job_ranks, err, sizeof err)) {
    contend_jobs_run_free(&run);
    free(job_of_node);
    free(pos_of_node);
    contend_nodes_free(&nodes);
    return usage_error(&x, err);
  }
  {
    int pid = (int)getpid();
    CONTEND_MPI_CHECK(MPI_Bcast(&pid, 1, MPI_INT, 0, x.world));
    snprintf(run.run_id, sizeof run.run_id, "%d-%llu", pid,
             (unsigned long long)(seed % 1000000ULL));
  }
  {
    /* MPICH's string is up to MPI_MAX_LIBRARY_VERSION_STRING (8 KiB): first line only */
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n,")] = 0;
    snprintf(run.mpi_library, sizeof run.mpi_library, "%.255s", lib);
  }
  MPI_Get_version(&run.mpi_version, &run.mpi_subversion);
  if (x.rank == 0)
    utc_now(run.started_utc, sizeof run.started_utc);
  gather_node_names(&run, &nodes, &x);

  x.my_job = job_of_node[nodes.my_node];
  /* job ranks: node by node in the job's list order, a node's ranks consecutive */
  const int key =
      (x.my_job >= 0 ? pos_of_node[nodes.my_node] : 0) * nodes.ppn_max + nodes.local_rank;
  CONTEND_MPI_CHECK(
      MPI_Comm_split(x.world, x.my_job >= 0 ? x.my_job : MPI_UNDEFINED, key, &x.jcomm));
  if (x.jcomm != MPI_COMM_NULL)
    CONTEND_MPI_CHECK(MPI_Comm_set_errhandler(x.jcomm, MPI_ERRORS_RETURN));
  free(job_of_node);
  free(pos_of_node);

  x.tr = calloc((size_t)run.nm + 1, sizeof(contend_traffic));
  x.sinks = calloc((size_t)run.nm + 1, sizeof(sink));
  const int my_n = x.my_job >= 0 ? jf->jobs[x.my_job].nmotifs : 0;
  x.ctx = calloc((size_t)my_n + 1, sizeof(contend_ctx));
  x.opened = calloc((size_t)my_n + 1, sizeof(int));
  if (!x.tr || !x.sinks || !x.ctx || !x.opened)
    contend_fail("out of memory");
  for (int g = 0; g < run.nm; g++) {
    contend_traffic_init(&x.tr[g]);
    x.sinks[g].cap = x.max_samples;
    if (x.max_samples > 0 && run.mi[g].job == x.my_job) {
      x.sinks[g].samples = malloc(sizeof(double) * (size_t)x.max_samples);
      if (!x.sinks[g].samples)
        contend_fail("out of memory");
    } else {
      x.sinks[g].cap = 0;
    }
  }

  g_watchdog_s = contend_param_double(opts, "watchdog");
  signal(SIGALRM, on_alarm);
  signal(SIGTERM, on_term);
  signal(SIGINT, on_term);
  arm_watchdog();
  int used = 0;
  for (int j = 0; j < jf->njobs; j++)
    used += jf->jobs[j].nnodes;
  progress(&x, "jobs: %d job%s on %d of %d nodes (%d ranks), mode %s, seed %llu", jf->njobs,
           jf->njobs == 1 ? "" : "s", used, nodes.nnodes, x.size, mode, (unsigned long long)seed);

  /* ---- decompose ---- */
  progress(&x, "decompose");
  int maxm = 0;
  for (int j = 0; j < jf->njobs; j++)
    maxm = jf->jobs[j].nmotifs > maxm ? jf->jobs[j].nmotifs : maxm;
  int fail_job = -1, fail_pos = -1;
  const char *fail_msg = NULL;
  CONTEND_MPI_CHECK(MPI_Barrier(x.world));
  for (int k = 0; k < maxm; k++)
    for (int j = 0; j < jf->njobs; j++) {
      if (x.my_job == j && k < my_n) {
        const contend_job *job = &jf->jobs[j];
        contend_ctx tmpl = {.job_name = job->name,
                            .job_index = j,
                            .run_id = run.run_id,
                            .stream = contend_jobs_stream(j, k)};
        int rc = contend_mpi_ctx_open_job(&x.ctx[k], job->motifs[k].motif, &job->motifs[k].params,
                                          x.jcomm, nodes.my_node, seed, &tmpl);
        x.opened[k] = 1;
        if (rc && fail_job < 0) {
          fail_job = j;
          fail_pos = k;
          fail_msg = x.ctx[k].error;
        }
      }
      CONTEND_MPI_CHECK(MPI_Barrier(x.world)); /* one job at a time (windows) */
    }
  char ferr[2048] = "";
  int status = CONTEND_EXIT_OK;
  if (setup_failure(&x, fail_job, fail_pos, fail_msg, ferr, sizeof ferr)) {
    status = CONTEND_EXIT_USAGE;
    if (x.rank == 0)
      fprintf(stderr, "contend jobs: error: %s\n", ferr);
  } else {
    share_minfo(&x);
    /* ---- perform ---- */
    for (int p = 0; p < run.npasses; p++) {
      for (int g = 0; g < run.nm; g++)
        contend_traffic_reset(&x.tr[g]);
      CONTEND_MPI_CHECK(MPI_Barrier(x.world));
      const double t_ref = MPI_Wtime();
      if (run.pass[p] == CONTEND_PASS_ISOLATED) {
        for (int j = 0; j < jf->njobs; j++) {
          progress(&x, "perform, isolated: job %d/%d %s", j + 1, jf->njobs, jf->jobs[j].name);
          CONTEND_MPI_CHECK(MPI_Barrier(x.world));
          if (x.my_job == j)
            run_chain(&x, p, t_ref);
          idle_barrier(x.world);
        }
      } else {
        progress(&x, "perform, concurrent: %d job%s", jf->njobs, jf->njobs == 1 ? "" : "s");
        if (x.my_job >= 0)
          run_chain(&x, p, t_ref);
        idle_barrier(x.world);
      }
      reduce_pass(&x, p);
    }
  }
  /* ---- cleanup (also after a failed decompose) ---- */
  progress(&x, "cleanup");
  CONTEND_MPI_CHECK(MPI_Barrier(x.world));
  for (int k = 0; k < my_n; k++)
    if (x.opened[k]) {
      x.ctx[k].job_phase = CONTEND_JOB_CLEANUP;
      x.ctx[k].ops->count(&x.ctx[k], NULL);
      if (jf->jobs[x.my_job].motifs[k].motif->cleanup)
        jf->jobs[x.my_job].motifs[k].motif->cleanup(&x.ctx[k]);
      contend_mpi_ctx_close(&x.ctx[k]);
    }
  CONTEND_MPI_CHECK(MPI_Barrier(x.world));
  disarm_watchdog();
  signal(SIGTERM, SIG_DFL);
  signal(SIGINT, SIG_DFL);

  if (status == CONTEND_EXIT_OK) {
    gather_traffic(&x);
    run.wall_s = MPI_Wtime() - t_start;
    if (x.rank == 0) {
      utc_now(run.finished_utc, sizeof run.finished_utc);
      contend_strbuf table = {0}, json = {0};
      contend_jobs_report_table(&run, &table);
      fputs(table.s, stdout);
      fflush(stdout);
      double verr = 0;
      for (int p = 0; p < run.npasses; p++)
        for (int g = 0; g < run.nm; g++)
          verr += run.m[p][g].verify_errors;
      if (verr > 0) {
        fprintf(stderr, "contend jobs: error: verification found %.0f corrupted block(s)\n", verr);
        status = CONTEND_EXIT_VERIFY;
      }
      if (*output) {
        contend_jobs_report_json(&run, &json);
        if (contend_write_file_atomic(output, json.s, json.len, err, sizeof err)) {
          fprintf(stderr, "contend jobs: error: %s\n", err);
          status = CONTEND_EXIT_FAIL;
        } else if (x.progress) {
          fprintf(stderr, "[contend] results written to %s\n", output);
        }
      }
      contend_sb_free(&table);
      contend_sb_free(&json);
    }
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, x.world));
  if (x.jcomm != MPI_COMM_NULL)
    MPI_Comm_free(&x.jcomm);
  for (int g = 0; g < run.nm; g++) {
    contend_traffic_free(&x.tr[g]);
    free(x.sinks[g].samples);
  }
  free(x.tr);
  free(x.sinks);
  free(x.ctx);
  free(x.opened);
  contend_jobs_run_free(&run);
  contend_nodes_free(&nodes);
  return status;
}
