/* bench/dispatch_overhead: the cost of contend's motif/engine layer alone,
 * in one process: the rr_lat or rr_get_lat motif through the MPI engine and
 * the canary measurement loop (as `contend network` runs them) against a
 * hand-written loop timed the same way (Irecv/Irecv/Isend/Isend/Waitall, or
 * two MPI_Get on an MPI_Win_allocate window then MPI_Win_flush_all),
 * interleaved in one run on 2 ranks (2 nodes of 1 rank), so both see the
 * same process state.  bench/gpcnet_floor compares the command itself.
 * Prints the ratio of the medians of the trials; target <= 1.05.
 * usage: mpirun -n 2 dispatch_overhead [TRIALS] [rr_lat|rr_get_lat] */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/error.h"
#include "../src/suite/measure.h"
#include "contend/world.h"

extern const contend_engine contend_engine_mpi;

enum { ITERS = 200, WARMUP = 200, ROUNDS = 40 };

/* The reference: one round = warm-up + ITERS timed iterations, each timed
 * alone and halved like GPCNeT's P2P Lat, added to h. */
static MPI_Win g_win = MPI_WIN_NULL; /* rr_get_lat's reference window */

static void hand_round(MPI_Comm comm, contend_hist *h) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int left = (rank - 1 + size) % size, right = (rank + 1) % size;
  char sbuf[8] = {0}, rl[8], rr[8];
  MPI_Request req[4];
  for (int i = -WARMUP; i < ITERS; i++) {
    double t0 = MPI_Wtime();
    if (g_win != MPI_WIN_NULL) {
      MPI_Get(rl, 8, MPI_BYTE, left, 0, 8, MPI_BYTE, g_win);
      MPI_Get(rr, 8, MPI_BYTE, right, 0, 8, MPI_BYTE, g_win);
      MPI_Win_flush_all(g_win);
      double t1 = MPI_Wtime();
      if (i >= 0)
        contend_hist_add(h, (t1 - t0) * 1e6 / 2);
      continue;
    }
    MPI_Irecv(rl, 8, MPI_BYTE, left, 0, comm, &req[0]);
    MPI_Irecv(rr, 8, MPI_BYTE, right, 1, comm, &req[1]);
    MPI_Isend(sbuf, 8, MPI_BYTE, left, 1, comm, &req[2]);
    MPI_Isend(sbuf, 8, MPI_BYTE, right, 0, comm, &req[3]);
#pragma GCC diagnostic push /* see e_waitall in src/engine_mpi/engine_mpi.c */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    double t1 = MPI_Wtime();
    if (i >= 0)
      contend_hist_add(h, (t1 - t0) * 1e6 / 2);
  }
}

/* One trial: ROUNDS alternations of a hand-written round and a contend
 * round (one measurement of one ring through the canary runner), so both
 * see the same machine conditions.  Returns the two means and medians. */
static void trial(MPI_Comm comm, contend_group *world, contend_ctx *c, const contend_motif *m,
                  int flip, double out[4]) {
  contend_hist hand;
  contend_result r;
  contend_hist_reset(&hand);
  contend_result_init(&r, m, CONTEND_PHASE_ISOLATED, -1);
  contend_measure_opts o = {.timeout_s = 1e9, .test_id = 0, .phase = "bench"};
  for (int k = 0; k < ROUNDS; k++) {
    if ((k + flip) % 2) {
      hand_round(comm, &hand);
      contend_measure_canary(c, m, world, &o, &r);
    } else {
      contend_measure_canary(c, m, world, &o, &r);
      hand_round(comm, &hand);
    }
  }
  out[0] = contend_hist_mean(&hand);
  out[1] = contend_hist_mean(&r.fine);
  out[2] = contend_hist_quantile(&hand, 0.5);
  out[3] = contend_hist_quantile(&r.fine, 0.5);
  contend_hist_free(&hand);
  contend_hist_free(&r.fine);
  contend_hist_free(&r.bulk);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct args {
  int trials;
  const char *test;
} args;

static int bench(contend_group *world, void *arg) {
  const args *a = arg;
  const int trials = a->trials, rank = world->rank, size = world->size;
  const contend_motif *m = contend_motif_find(a->test);
  if (size != 2 || trials < 1 || !m ||
      (strcmp(a->test, "rr_lat") && strcmp(a->test, "rr_get_lat"))) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -n 2 dispatch_overhead [TRIALS>=1] [rr_lat|rr_get_lat]\n");
    return 2;
  }
  void *base = NULL;
  if (!strcmp(a->test, "rr_get_lat")) {
    MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &g_win);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, g_win);
  }
  contend_params p;
  char err[256], text[32];
  contend_params_init(&p, m->params, m->name, err, sizeof err);
  const struct {
    const char *k;
    int v;
  } set[] = {{"measurements", 1}, {"rings", 1}, {"iters", ITERS}, {"warmup", WARMUP}};
  for (int i = 0; i < 4; i++) {
    snprintf(text, sizeof text, "%d", set[i].v);
    contend_params_set(&p, contend_params_find(&p, set[i].k), text, err, sizeof err);
  }
  contend_ctx c;
  if (world->ops->ctx_open(&c, m, &p, world, rank, 12345, NULL))
    contend_fail("setup failed");
  double *mean_ratio = malloc(sizeof(double) * (size_t)trials);
  double *p50_ratio = malloc(sizeof(double) * (size_t)trials);
  double v[4];
  trial(MPI_COMM_WORLD, world, &c, m, 0, v); /* warm-up of both paths */
  if (rank == 0)
    printf("%s: 8-byte random-ring latency, 2 nodes x 1 rank; %d trials, each %d alternating "
           "rounds of %d timed iterations per side\n%6s %12s %12s %12s %12s %8s %8s\n",
           a->test, trials, ROUNDS, ITERS, "trial", "hand_mean_us", "ours_mean_us", "hand_p50_us",
           "ours_p50_us", "mean_x", "p50_x");
  for (int t = 0; t < trials; t++) {
    trial(MPI_COMM_WORLD, world, &c, m, t % 2, v);
    mean_ratio[t] = v[1] / v[0];
    p50_ratio[t] = v[3] / v[2];
    if (rank == 0)
      printf("%6d %12.4f %12.4f %12.4f %12.4f %8.4f %8.4f\n", t, v[0], v[1], v[2], v[3],
             mean_ratio[t], p50_ratio[t]);
  }
  world->ops->ctx_close(&c);
  if (rank == 0) {
    double mr = median(mean_ratio, trials), pr = median(p50_ratio, trials);
    printf("ratio contend/hand-written, median over trials: mean latency %.4f, median latency "
           "%.4f\n",
           mr, pr);
    printf("target <= 1.05 on the mean: %s\n", mr <= 1.05 ? "PASS" : "FAIL");
  }
  free(mean_ratio);
  free(p50_ratio);
  contend_params_free(&p);
  if (g_win != MPI_WIN_NULL) {
    MPI_Win_unlock_all(g_win);
    MPI_Win_free(&g_win);
  }
  return 0;
}

int main(int argc, char **argv) {
  args a = {argc > 1 ? atoi(argv[1]) : 15, argc > 2 ? argv[2] : "rr_lat"};
  contend_launch l = {.argc = &argc, .argv = &argv};
  return contend_engine_mpi.launch(&l, bench, &a);
}
