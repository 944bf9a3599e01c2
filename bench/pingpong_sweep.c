/* pingpong_sweep bench: the pingpong_sweep motif, run through the jobs
 * runner's invocation loop on the MPI engine (traffic counting on, as in
 * `contend jobs`), against a hand-written MPI ping-pong with the same
 * calls (Irecv, Isend, Waitall), measured in A B B A order in the same run.
 * Prints the latency per message size and the ratio motif / hand-written
 * (best round of each side: noise only adds time); PASS when every size <=
 * --limit-bytes is within
 * --tolerance.  Two ranks. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/engine_mpi/engine_mpi.h"
#include "../src/jobs/jobs.h"

enum { MAXS = 40 };

typedef struct acc {
  double sum[MAXS];
  double n[MAXS];
} acc;

static void on_sample(void *arg, int series, double s, long count) {
  acc *a = arg;
  if (series >= 0 && series < MAXS) {
    a->sum[series] += s * (double)count;
    a->n[series] += (double)count;
  }
}

static double wtime(void) { return MPI_Wtime(); }

/* Hand-written ping-pong of n bytes: skip untimed + reps timed round
 * trips; returns the one-way latency (s) on rank 0. */
static double hand(int rank, unsigned char *sb, unsigned char *rb, size_t n, long skip, long reps) {
  MPI_Request rq[2];
  double t0 = 0;
  for (long i = -skip; i < reps; i++) {
    if (i == 0)
      t0 = MPI_Wtime();
    if (rank == 0) {
      MPI_Irecv(rb, (int)n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &rq[0]);
      MPI_Isend(sb, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &rq[1]);
#pragma GCC diagnostic push /* MPICH's MPI_STATUSES_IGNORE, see e_waitall (engine_mpi.c) */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
      MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    } else {
      MPI_Irecv(rb, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &rq[0]);
      MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
      MPI_Isend(sb, (int)n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &rq[0]);
      MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    }
  }
  return (MPI_Wtime() - t0) / (double)reps / 2.0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static const char *arg_value(int argc, char **argv, const char *key, const char *def) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], key))
      return argv[i + 1];
  return def;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0)
      fprintf(stderr, "pingpong_sweep: run on exactly 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  const int rounds = atoi(arg_value(argc, argv, "--rounds", "15"));
  const char *max_bytes = arg_value(argc, argv, "--max-bytes", "4194304");
  const char *reps = arg_value(argc, argv, "--reps", "1000");
  const char *reps_large = arg_value(argc, argv, "--reps-large", "100");
  const char *skip = arg_value(argc, argv, "--skip", "20");
  const double limit = atof(arg_value(argc, argv, "--limit-bytes", "65536"));
  const double tol = atof(arg_value(argc, argv, "--tolerance", "0.05"));

  const contend_motif *m = contend_job_motif_find("pingpong_sweep");
  contend_params p;
  char err[512];
  if (!m || contend_params_init(&p, m->params, m->name, err, sizeof err) ||
      contend_params_set(&p, contend_params_find(&p, "max_bytes"), max_bytes, err, sizeof err) ||
      contend_params_set(&p, contend_params_find(&p, "reps"), reps, err, sizeof err) ||
      contend_params_set(&p, contend_params_find(&p, "reps_large"), reps_large, err, sizeof err) ||
      contend_params_set(&p, contend_params_find(&p, "skip"), skip, err, sizeof err)) {
    if (rank == 0)
      fprintf(stderr, "pingpong_sweep: %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  contend_ctx tmpl = {.job_name = "bench", .run_id = "bench", .stream = contend_jobs_stream(0, 0)};
  contend_ctx c;
  if (contend_mpi_ctx_open_job(&c, m, &p, MPI_COMM_WORLD, rank, 1, &tmpl))
    MPI_Abort(MPI_COMM_WORLD, 3);
  const int ns = c.nseries;
  const long nskip = atol(skip), nreps = atol(reps), nlarge = atol(reps_large);
  const long large = (long)contend_param_int(&p, "large_bytes");
  const size_t maxb = (size_t)c.series_value[ns - 1];
  unsigned char *sb = calloc(maxb ? maxb : 1, 1), *rb = calloc(maxb ? maxb : 1, 1);
  double *hand_lat = calloc((size_t)ns * (size_t)rounds, sizeof(double));
  double *motif_lat = calloc((size_t)ns * (size_t)rounds, sizeof(double));
  contend_traffic tr;
  contend_traffic_init(&tr);
  /* Each round measures A B B A (hand, motif, motif, hand; the next round
   * B A A B) and averages the two measurements of each: drift and any
   * first/second-position effect cancel within the round. */
  for (int r = 0; r < rounds; r++) {
    for (int step = 0; step < 4; step++) {
      const int do_motif = (step == 1 || step == 2) == (r % 2 == 0);
      MPI_Barrier(MPI_COMM_WORLD);
      if (do_motif) {
        acc a;
        memset(&a, 0, sizeof a);
        contend_job_exec ex = {.clock = wtime, .traffic = &tr, .sample = on_sample, .arg = &a};
        contend_job_invoke(&c, m, r, &ex);
        for (int s = 0; s < ns; s++)
          motif_lat[s * rounds + r] += 0.5 * (a.n[s] > 0 ? a.sum[s] / a.n[s] / c.metric_scale : 0);
      } else {
        for (int s = 0; s < ns; s++) {
          const size_t n = (size_t)c.series_value[s];
          hand_lat[s * rounds + r] +=
              0.5 * hand(rank, sb, rb, n, nskip, (long)n > large ? nlarge : nreps);
        }
      }
    }
  }
  int fail = 0;
  if (rank == 0) {
    printf("pingpong_sweep: the pingpong_sweep motif (contend jobs runner, MPI engine) vs a\n"
           "hand-written Irecv/Isend/Waitall ping-pong, %d rounds of A B B A; latency =\n"
           "round trip / 2.  Noise only adds time, so each side is its best round:\n"
           "ratio = best motif / best hand-written.\n",
           rounds);
    printf("%12s %14s %14s %10s %8s\n", "size (B)", "hand (usec)", "motif (usec)", "ratio",
           "check");
    for (int s = 0; s < ns; s++) {
      median(&hand_lat[s * rounds], rounds); /* sorts: element 0 is the best round */
      median(&motif_lat[s * rounds], rounds);
      const double h = hand_lat[s * rounds] * 1e6, mo = motif_lat[s * rounds] * 1e6;
      const double q = mo / h;
      const int checked = c.series_value[s] <= limit;
      /* the target bounds the motif's overhead; a motif "faster" than the
       * hand-written loop is noise (an A/A run scatters by 2-3 %) */
      const int ok = !checked || q <= 1.0 + tol;
      fail |= !ok;
      printf("%12.0f %14.3f %14.3f %10.4f %8s\n", c.series_value[s], h, mo, q,
             checked ? (ok ? "ok" : "FAIL") : "-");
    }
    printf("%s: motif latency at most %.0f %% above the hand-written ping-pong for sizes <= %.0f "
           "B\n",
           fail ? "FAIL" : "PASS", tol * 100, limit);
  }
  MPI_Bcast(&fail, 1, MPI_INT, 0, MPI_COMM_WORLD);
  contend_traffic_free(&tr);
  contend_mpi_ctx_close(&c);
  contend_params_free(&p);
  free(sb);
  free(rb);
  free(hand_lat);
  free(motif_lat);
  MPI_Finalize();
  return fail;
}
