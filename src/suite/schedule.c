/* The schedule of a real run on MPI: node discovery, split, phases,
 * reduction of the results to rank 0, output. */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "../core/error.h"
#include "../core/nodes.h"
#include "../engine_mpi/runner.h"
#include "contend/json.h"
#include "suite.h"

static volatile sig_atomic_t g_watch_phase;
static double g_watch_seconds;

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] =
      "contend: watchdog: a phase ran past --watchdog (the MPI library or the network stopped "
      "making progress); aborting\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
  MPI_Abort(MPI_COMM_WORLD, CONTEND_EXIT_FAIL);
}

static void watchdog_arm(void) {
  if (g_watch_seconds <= 0)
    return;
  struct itimerval it = {{0, 0}, {(time_t)g_watch_seconds, 0}};
  setitimer(ITIMER_REAL, &it, NULL);
}

static void watchdog_disarm(void) {
  struct itimerval it = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &it, NULL);
}

static void utc_now(char *buf, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void contend_run_layout(contend_run *run) {
  const contend_config *cfg = run->cfg;
  int n = 0, cap = 2 * cfg->ncanary + cfg->ncong * (1 + cfg->ncanary) + 1;
  run->results = calloc((size_t)cap, sizeof *run->results);
  if (!run->results)
    contend_fail("out of memory");
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const int cong_base = load && (cong_only || contend_param_bool(&cfg->load, "congestor_baseline"));
  if (!cong_only)
    for (int t = 0; t < cfg->ncanary; t++)
      contend_result_init(&run->results[n++], contend_motifs[cfg->canary[t]],
                          CONTEND_PHASE_ISOLATED, -1);
  if (cong_base)
    for (int k = 0; k < cfg->ncong; k++)
      contend_result_init(&run->results[n++], contend_motifs[cfg->cong[k]],
                          CONTEND_PHASE_CONGESTOR_ALONE, -1);
  if (load && !cong_only) {
    for (int t = 0; t < cfg->ncanary; t++)
      contend_result_init(&run->results[n++], contend_motifs[cfg->canary[t]],
                          CONTEND_PHASE_CONGESTED, -1);
    for (int t = 0; t < cfg->ncanary; t++)
      for (int k = 0; k < cfg->ncong; k++)
        contend_result_init(&run->results[n++], contend_motifs[cfg->cong[k]],
                            CONTEND_PHASE_CONGESTOR_LOADING, t);
  }
  run->nresults = n;
}

int contend_result_index(const contend_run *run, int motif_index, contend_phase ph, int during) {
  for (int i = 0; i < run->nresults; i++)
    if (run->results[i].motif == contend_motifs[motif_index] && run->results[i].phase == ph &&
        run->results[i].during == during)
      return i;
  return -1;
}

/* Merges every rank's results into rank 0's (collective over world). */
static void reduce_results(contend_run *run, MPI_Comm world, int rank) {
  const int n = run->nresults, NB = CONTEND_HIST_NBUCKETS;
  const size_t nu = (size_t)n * 2 * (NB + 1);
  uint64_t *u = malloc(sizeof(uint64_t) * nu);
  double *sum = malloc(sizeof(double) * (size_t)n * 7);
  double *mn = malloc(sizeof(double) * (size_t)n * 2);
  double *mx = malloc(sizeof(double) * (size_t)n * 6);
  if (!u || !sum || !mn || !mx)
    contend_fail("out of memory");
  for (int i = 0; i < n; i++) {
    contend_result *r = &run->results[i];
    const contend_hist *h[2] = {&r->fine, &r->bulk};
    for (int k = 0; k < 2; k++) {
      uint64_t *d = u + ((size_t)i * 2 + k) * (NB + 1);
      memcpy(d, h[k]->bucket, sizeof(uint64_t) * NB);
      d[NB] = h[k]->count;
      sum[i * 7 + 2 * k] = h[k]->sum;
      sum[i * 7 + 2 * k + 1] = h[k]->sumsq;
      mn[i * 2 + k] = h[k]->min;
      mx[i * 6 + k] = h[k]->max;
    }
    sum[i * 7 + 4] = r->ranks;
    sum[i * 7 + 5] = r->verify_errors;
    sum[i * 7 + 6] = r->verify_checked;
    mx[i * 6 + 2] = r->measurements;
    mx[i * 6 + 3] = r->timed_out;
    mx[i * 6 + 4] = r->msg_bytes;
    mx[i * 6 + 5] = r->elapsed_s;
  }
  void *ip = MPI_IN_PLACE;
  CONTEND_MPI_CHECK(MPI_Reduce(rank ? u : ip, u, (int)nu, MPI_UINT64_T, MPI_SUM, 0, world));
  CONTEND_MPI_CHECK(MPI_Reduce(rank ? sum : ip, sum, n * 7, MPI_DOUBLE, MPI_SUM, 0, world));
  CONTEND_MPI_CHECK(MPI_Reduce(rank ? mn : ip, mn, n * 2, MPI_DOUBLE, MPI_MIN, 0, world));
  CONTEND_MPI_CHECK(MPI_Reduce(rank ? mx : ip, mx, n * 6, MPI_DOUBLE, MPI_MAX, 0, world));
  if (rank == 0)
    for (int i = 0; i < n; i++) {
      contend_result *r = &run->results[i];
      contend_hist *h[2] = {&r->fine, &r->bulk};
      for (int k = 0; k < 2; k++) {
        uint64_t *d = u + ((size_t)i * 2 + k) * (NB + 1);
        memcpy(h[k]->bucket, d, sizeof(uint64_t) * NB);
        h[k]->count = d[NB];
        h[k]->sum = sum[i * 7 + 2 * k];
        h[k]->sumsq = sum[i * 7 + 2 * k + 1];
        h[k]->min = mn[i * 2 + k];
        h[k]->max = mx[i * 6 + k];
      }
      r->ranks = sum[i * 7 + 4];
      r->verify_errors = sum[i * 7 + 5];
      r->verify_checked = sum[i * 7 + 6];
      r->measurements = mx[i * 6 + 2];
      r->timed_out = mx[i * 6 + 3];
      r->msg_bytes = mx[i * 6 + 4];
      r->elapsed_s = mx[i * 6 + 5];
    }
  free(u);
  free(sum);
  free(mn);
  free(mx);
}

/* Gathers one processor name per node to rank 0 (node order). */
static void gather_node_names(contend_run *run, const contend_nodes *nodes, MPI_Comm world,
                              int rank, int size) {
  enum { W = 64 };
  char mine[W] = "";
  char full[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  CONTEND_MPI_CHECK(MPI_Get_processor_name(full, &len));
  snprintf(mine, W, "%.63s", full);
  char *all = rank == 0 ? malloc((size_t)size * W) : NULL;
  if (rank == 0 && !all)
    contend_fail("out of memory");
  CONTEND_MPI_CHECK(MPI_Gather(mine, W, MPI_CHAR, all, W, MPI_CHAR, 0, world));
  if (rank == 0) {
    run->node_names = calloc((size_t)nodes->nnodes, sizeof(char *));
    for (int r = size - 1; r >= 0; r--) { /* lowest rank of each node wins */
      int nd = nodes->node_of_rank[r];
      free(run->node_names[nd]);
      run->node_names[nd] = strndup(all + (size_t)r * W, W);
    }
  }
  free(all);
}

/* Records, at rank 0, the size and the number of distinct nodes of every
 * sub-communicator: the check that all measured traffic leaves the node. */
static void survey_subcomms(contend_run *run, MPI_Comm world, MPI_Comm sub, int group,
                            int local_rank, int my_node, int rank, int size) {
  int row[5] = {0, group, local_rank, 0, 0}; /* is_root, group, local rank, ranks, nodes */
  if (sub != MPI_COMM_NULL) {
    int srank, ssize;
    CONTEND_MPI_CHECK(MPI_Comm_rank(sub, &srank));
    CONTEND_MPI_CHECK(MPI_Comm_size(sub, &ssize));
    int *nodes = malloc(sizeof(int) * (size_t)ssize);
    if (!nodes)
      contend_fail("out of memory");
    CONTEND_MPI_CHECK(MPI_Allgather(&my_node, 1, MPI_INT, nodes, 1, MPI_INT, sub));
    int distinct = 0;
    for (int i = 0; i < ssize; i++) {
      int seen = 0;
      for (int j = 0; j < i; j++)
        seen |= nodes[j] == nodes[i];
      distinct += !seen;
    }
    free(nodes);
    row[0] = srank == 0;
    row[3] = ssize;
    row[4] = distinct;
  }
  int *all = rank == 0 ? malloc(sizeof(int) * 5 * (size_t)size) : NULL;
  CONTEND_MPI_CHECK(MPI_Gather(row, 5, MPI_INT, all, 5, MPI_INT, 0, world));
  if (rank != 0)
    return;
  run->subcomms = malloc(sizeof *run->subcomms * (size_t)size);
  if (!all || !run->subcomms)
    contend_fail("out of memory");
  for (int r = 0; r < size; r++)
    if (all[5 * r]) {
      for (int k = 0; k < 4; k++)
        run->subcomms[run->nsubcomms][k] = all[5 * r + 1 + k];
      run->nsubcomms++;
    }
  free(all);
}

typedef struct phase_ctx {
  const contend_config *cfg;
  contend_run *run;
  MPI_Comm world, group_comm, sub_comm;
  MPI_Comm cong_comm; /* every congestor rank (serial window creation) */
  int rank, group, my_node, local_rank, ppn_max;
  int progress;
  int nphases, phase_no;
} phase_ctx;

static void phase_banner(phase_ctx *p, const char *what, const contend_motif *m) {
  p->phase_no++;
  if (p->rank == 0 && p->progress)
    fprintf(stderr, "[contend] %d/%d %s%s%s\n", p->phase_no, p->nphases, what, m ? " " : "",
            m ? m->name : "");
}

static contend_run_opts run_opts(const phase_ctx *p, int test_id, const char *phase) {
  contend_run_opts o = {
      .timeout_s = contend_param_double(&p->cfg->common, "timeout"),
      .verify = contend_param_bool(&p->cfg->common, "verify"),
      .verify_inject = (long)contend_param_int(&p->cfg->common, "verify_inject"),
      .test_id = test_id,
      .progress = p->progress,
      .phase = phase,
  };
  return o;
}

/* Canaries open one sub-communicator at a time over the canary group;
 * congestors over all congestor groups (see contend_mpi_ctx_open_serial). */
static void open_ctx(phase_ctx *p, contend_ctx *c, int mi) {
  const int canary = p->group == 0;
  MPI_Comm over = canary ? p->group_comm : p->cong_comm;
  int slot = (canary ? 0 : p->group - 1) * p->ppn_max + p->local_rank;
  int nslots = (canary ? 1 : p->cfg->ncong) * p->ppn_max;
  if (contend_mpi_ctx_open_serial(c, contend_motifs[mi], &p->cfg->tests[mi], p->sub_comm,
                                  p->my_node, p->run->seed, over, slot, nslots))
    contend_fail("setup of test '%s' failed", contend_motifs[mi]->name);
}

static void run_canary_phase(phase_ctx *p, int t, contend_phase ph) {
  const int mi = p->cfg->canary[t];
  contend_ctx c;
  contend_run_opts o = run_opts(p, mi, ph == CONTEND_PHASE_ISOLATED ? "isolated " : "congested");
  contend_result *r = &p->run->results[contend_result_index(p->run, mi, ph, -1)];
  open_ctx(p, &c, mi);
  if (ph == CONTEND_PHASE_CONGESTED) { /* released once the congestors are warm */
    MPI_Request rel;
    CONTEND_MPI_CHECK(MPI_Ibarrier(p->world, &rel));
    CONTEND_MPI_CHECK(MPI_Wait(&rel, MPI_STATUS_IGNORE));
  }
  contend_run_canary(&c, contend_motifs[mi], p->group_comm, &o, r);
  contend_mpi_ctx_close(&c);
  if (ph == CONTEND_PHASE_CONGESTED) { /* tell the congestors we are done */
    MPI_Request done;
    CONTEND_MPI_CHECK(MPI_Ibarrier(p->world, &done));
    CONTEND_MPI_CHECK(MPI_Wait(&done, MPI_STATUS_IGNORE));
  }
}

int contend_mpi_main(const contend_config *cfg) {
  MPI_Comm world = MPI_COMM_WORLD;
  int rank = 0, size = 1;
  char err[1024] = "";
  CONTEND_MPI_CHECK(MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN));
  CONTEND_MPI_CHECK(MPI_Comm_rank(world, &rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(world, &size));
  const double t_start = MPI_Wtime();
  const char *output = contend_param_str(&cfg->common, "output");
  const char *cmdname = cfg->cmd == CONTEND_CMD_LOAD ? "load" : "network";

  /* bad input detected on one rank is reported once and ends every rank */
  int bad = 0;
  if (rank == 0 && *output && contend_check_writable(output, err, sizeof err))
    bad = 1;
  CONTEND_MPI_CHECK(MPI_Bcast(&bad, 1, MPI_INT, 0, world));
  if (bad) {
    if (rank == 0)
      fprintf(stderr, "contend %s: error: %s\n", cmdname, err);
    return CONTEND_EXIT_USAGE;
  }

  contend_nodes nodes;
  if (contend_nodes_discover(world, (int)contend_param_int(&cfg->common, "virtual_nodes"), &nodes,
                             err, sizeof err)) {
    if (rank == 0)
      fprintf(stderr, "contend %s: error: %s\n", cmdname, err);
    return CONTEND_EXIT_USAGE;
  }

  contend_run run;
  memset(&run, 0, sizeof run);
  run.cfg = cfg;
  const contend_param_value *sv = &cfg->common.v[contend_params_find(&cfg->common, "seed")];
  run.seed_from_time = sv->is_time;
  uint64_t seed = (uint64_t)sv->i;
  if (sv->is_time) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    seed = ((uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec) % 1000000000000ULL;
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, world));
  run.seed = seed;
  if (contend_plan_make(cfg, nodes.nnodes, seed, &run.plan, err, sizeof err)) {
    if (rank == 0)
      fprintf(stderr, "contend %s: error: %s\n", cmdname, err);
    contend_nodes_free(&nodes);
    return CONTEND_EXIT_USAGE;
  }
  run.nranks = size;
  run.ppn_min = nodes.ppn_min;
  run.ppn_max = nodes.ppn_max;
  run.virtual_nodes = (int)contend_param_int(&cfg->common, "virtual_nodes");
  /* MPICH's version string runs to several KiB: keep its first line */
  static char libver[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(libver, &len);
  libver[strcspn(libver, "\n,")] = 0;
  snprintf(run.mpi_library, sizeof run.mpi_library, "%.255s", libver);
  MPI_Get_version(&run.mpi_version, &run.mpi_subversion);
  if (rank == 0)
    utc_now(run.started_utc, sizeof run.started_utc);
  gather_node_names(&run, &nodes, world, rank, size);
  contend_run_layout(&run);

  phase_ctx p = {.cfg = cfg, .run = &run, .world = world, .rank = rank};
  p.my_node = nodes.my_node;
  p.local_rank = nodes.local_rank;
  p.ppn_max = nodes.ppn_max;
  p.group = run.plan.group_of_node[nodes.my_node];
  p.progress = !contend_param_bool(&cfg->common, "quiet");
  CONTEND_MPI_CHECK(
      MPI_Comm_split(world, p.group < 0 ? MPI_UNDEFINED : p.group, rank, &p.group_comm));
  if (p.group_comm != MPI_COMM_NULL)
    CONTEND_MPI_CHECK(MPI_Comm_split(p.group_comm, nodes.local_rank, nodes.my_node, &p.sub_comm));
  else
    p.sub_comm = MPI_COMM_NULL;
  CONTEND_MPI_CHECK(MPI_Comm_split(world, p.group >= 1 ? 1 : MPI_UNDEFINED, rank, &p.cong_comm));
  survey_subcomms(&run, world, p.sub_comm, p.group, nodes.local_rank, nodes.my_node, rank, size);

  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const int cong_base = load && !cong_only && contend_param_bool(&cfg->load, "congestor_baseline");
  p.nphases = cong_only ? 1 : cfg->ncanary * (load ? 2 : 1) + cong_base;
  const double timeout = contend_param_double(&cfg->common, "timeout");
  g_watch_seconds = contend_param_double(&cfg->common, "watchdog");
  if (g_watch_seconds <= 0)
    g_watch_seconds = 10 * timeout + 120;
  signal(SIGALRM, on_alarm);

  if (rank == 0 && p.progress)
    fprintf(stderr, "[contend] %s: %d ranks, %d nodes, seed %llu\n", cmdname, size, nodes.nnodes,
            (unsigned long long)seed);

  /* congestor k of this rank (its group is 1 + k) */
  const int my_cong = p.group >= 1 ? cfg->cong[p.group - 1] : -1;
  if (!cong_only) /* 1. canaries alone */
    for (int t = 0; t < cfg->ncanary; t++) {
      phase_banner(&p, "isolated", contend_motifs[cfg->canary[t]]);
      watchdog_arm();
      CONTEND_MPI_CHECK(MPI_Barrier(world));
      if (p.group == 0)
        run_canary_phase(&p, t, CONTEND_PHASE_ISOLATED);
      CONTEND_MPI_CHECK(MPI_Barrier(world));
    }
  if (load) {
    contend_ctx cc;
    int cc_open = 0;
    if (cong_only || cong_base) { /* 2. congestors alone */
      phase_banner(&p, "congestors alone", NULL);
      watchdog_arm();
      if (my_cong >= 0) {
        open_ctx(&p, &cc, my_cong);
        cc_open = 1;
        contend_run_opts o = run_opts(&p, my_cong, "congestor");
        contend_result *r =
            &run.results[contend_result_index(&run, my_cong, CONTEND_PHASE_CONGESTOR_ALONE, -1)];
        contend_run_congestor(&cc, contend_motifs[my_cong],
                              (long)contend_param_int(&cfg->tests[my_cong], "measurements"), NULL,
                              NULL, &o, r);
      }
      CONTEND_MPI_CHECK(MPI_Barrier(world));
    }
    if (!cong_only && !cc_open && my_cong >= 0) { /* before any canary window exists */
      open_ctx(&p, &cc, my_cong);
      cc_open = 1;
    }
    if (!cong_only) /* 3. canaries while the congestors load the network */
      for (int t = 0; t < cfg->ncanary; t++) {
        phase_banner(&p, "congested", contend_motifs[cfg->canary[t]]);
        watchdog_arm();
        CONTEND_MPI_CHECK(MPI_Barrier(world));
        if (p.group == 0) {
          run_canary_phase(&p, t, CONTEND_PHASE_CONGESTED);
        } else if (my_cong >= 0) {
          contend_run_opts o = run_opts(&p, my_cong, "congestor");
          contend_run_congestor(&cc, contend_motifs[my_cong],
                                (long)contend_param_int(&cfg->load, "congestor_warmup"), NULL, NULL,
                                &o, NULL);
          MPI_Request rel, done;
          CONTEND_MPI_CHECK(MPI_Ibarrier(world, &rel));
          CONTEND_MPI_CHECK(MPI_Ibarrier(world, &done));
          contend_result *r =
              &run.results[contend_result_index(&run, my_cong, CONTEND_PHASE_CONGESTOR_LOADING, t)];
          contend_run_congestor(&cc, contend_motifs[my_cong], 0, &done, &rel, &o, r);
          CONTEND_MPI_CHECK(MPI_Wait(&rel, MPI_STATUS_IGNORE));
          CONTEND_MPI_CHECK(MPI_Wait(&done, MPI_STATUS_IGNORE));
        } else { /* idle node: still takes part in the handshake */
          MPI_Request rq[2];
          CONTEND_MPI_CHECK(MPI_Ibarrier(world, &rq[0]));
          CONTEND_MPI_CHECK(MPI_Ibarrier(world, &rq[1]));
          CONTEND_MPI_CHECK(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
          CONTEND_MPI_CHECK(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
        }
        CONTEND_MPI_CHECK(MPI_Barrier(world));
      }
    if (cc_open)
      contend_mpi_ctx_close(&cc);
  }
  watchdog_disarm();

  reduce_results(&run, world, rank);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  double rss = (double)ru.ru_maxrss / 1024.0, rss_max = 0, rss_sum = 0; /* KiB -> MiB */
  CONTEND_MPI_CHECK(MPI_Reduce(&rss, &rss_max, 1, MPI_DOUBLE, MPI_MAX, 0, world));
  CONTEND_MPI_CHECK(MPI_Reduce(&rss, &rss_sum, 1, MPI_DOUBLE, MPI_SUM, 0, world));
  run.peak_rss_mib_max = rss_max;
  run.peak_rss_mib_mean = rss_sum / size;
  run.wall_s = MPI_Wtime() - t_start;
  int status = CONTEND_EXIT_OK;
  if (rank == 0) {
    utc_now(run.finished_utc, sizeof run.finished_utc);
    contend_strbuf table = {0}, json = {0};
    contend_report_table(&run, &table);
    fputs(table.s, stdout);
    fflush(stdout);
    double verr = 0;
    for (int i = 0; i < run.nresults; i++)
      verr += run.results[i].verify_errors;
    if (verr > 0) {
      fprintf(stderr, "contend %s: error: --verify found %.0f corrupted message(s)\n", cmdname,
              verr);
      status = CONTEND_EXIT_VERIFY;
    }
    if (*output) {
      contend_report_json(&run, &json);
      if (contend_write_file_atomic(output, json.s, json.len, err, sizeof err)) {
        fprintf(stderr, "contend %s: error: %s\n", cmdname, err);
        status = CONTEND_EXIT_FAIL;
      } else if (p.progress) {
        fprintf(stderr, "[contend] results written to %s\n", output);
      }
    }
    contend_sb_free(&table);
    contend_sb_free(&json);
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&status, 1, MPI_INT, 0, world));
  if (p.sub_comm != MPI_COMM_NULL)
    MPI_Comm_free(&p.sub_comm);
  if (p.group_comm != MPI_COMM_NULL)
    MPI_Comm_free(&p.group_comm);
  if (run.node_names)
    for (int i = 0; i < nodes.nnodes; i++)
      free(run.node_names[i]);
  free(run.node_names);
  free(run.subcomms);
  free(run.results);
  contend_plan_free(&run.plan);
  contend_nodes_free(&nodes);
  return status;
}
