/* bench/gpcnet_loops: the reference side of bench/gpcnet_floor.  Hand-written
 * MPI loops for three GPCNeT canaries, timed GPCNeT's way (one clock read
 * before and one after every iteration), on MPI_Win_allocate windows:
 *   rr_lat      Irecv+Irecv+Isend+Isend to the two ring neighbours, Waitall; us = time / 2
 *   rr_get_lat  MPI_Get 8 B from each neighbour, MPI_Win_flush_all;       us = time / 2
 *   rr_put_bw   8 x MPI_Put 128 KiB to each neighbour, MPI_Win_flush_all; MiB/s = 2 MiB / time
 * with contend's default loop counts (rings per measurement, warm-up and
 * timed iterations per ring, a fresh random ring per round) and the same
 * time budget rule: stop taking measurements once TIMEOUT seconds have
 * passed, decided by all ranks before every round.  Prints one line per
 * test on rank 0: "TEST mean=X p50=Y samples=N unit=U".
 *
 * usage: mpirun -n N gpcnet_loops TEST[,TEST..] [TIMEOUT_S] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct loop {
  const char *name, *unit;
  int rings, iters, warmup;
} loop;

static const loop loops[] = {
    {"rr_lat", "us", 30, 200, 200},
    {"rr_get_lat", "us", 30, 200, 200},
    {"rr_put_bw", "MiB/s", 30, 8, 1},
};

enum { PUT_MSGS = 8, PUT_BYTES = 131072, MAX_SAMPLES = 1 << 23 };

/* A random ring: the same permutation on every rank (shared seed). */
static void ring(int size, int rank, uint64_t *state, int *left, int *right) {
  int *perm = malloc(sizeof(int) * (size_t)size), me = 0;
  for (int i = 0; i < size; i++)
    perm[i] = i;
  for (int i = size - 1; i > 0; i--) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    const int j = (int)((*state >> 33) % (uint64_t)(i + 1));
    const int t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < size; i++)
    if (perm[i] == rank)
      me = i;
  *left = perm[(me - 1 + size) % size];
  *right = perm[(me + 1) % size];
  free(perm);
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void run(const loop *t, double timeout) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int lat = strcmp(t->unit, "us") == 0, get = !strcmp(t->name, "rr_get_lat");
  const int put = !strcmp(t->name, "rr_put_bw");
  const size_t win_bytes = put ? 2 * PUT_MSGS * (size_t)PUT_BYTES : 8;
  unsigned char *base = NULL, *buf = calloc(1, PUT_BYTES), rl[8], rr[8];
  MPI_Win win = MPI_WIN_NULL;
  if (get || put) {
    MPI_Win_allocate((MPI_Aint)win_bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, rank, win_bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  }
  double *v = malloc(sizeof(double) * MAX_SAMPLES), sum = 0;
  long n = 0;
  uint64_t state = 2019;
  const double start = MPI_Wtime();
  for (int r = 0; n + t->iters <= MAX_SAMPLES; r++) {
    double el = MPI_Wtime() - start;
    MPI_Allreduce(MPI_IN_PLACE, &el, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (r > 0 && el > timeout)
      break;
    int left, right;
    ring(size, rank, &state, &left, &right);
    for (int i = -t->warmup; i < t->iters; i++) {
      const double t0 = MPI_Wtime();
      if (get) {
        MPI_Get(rl, 8, MPI_BYTE, left, 0, 8, MPI_BYTE, win);
        MPI_Get(rr, 8, MPI_BYTE, right, 0, 8, MPI_BYTE, win);
        MPI_Win_flush_all(win);
      } else if (put) {
        for (int k = 0; k < PUT_MSGS; k++) {
          MPI_Put(buf, PUT_BYTES, MPI_BYTE, right, (MPI_Aint)k * PUT_BYTES, PUT_BYTES, MPI_BYTE,
                  win);
          MPI_Put(buf, PUT_BYTES, MPI_BYTE, left, (MPI_Aint)(PUT_MSGS + k) * PUT_BYTES, PUT_BYTES,
                  MPI_BYTE, win);
        }
        MPI_Win_flush_all(win);
      } else {
        MPI_Request req[4];
        MPI_Irecv(rl, 8, MPI_BYTE, left, 0, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(rr, 8, MPI_BYTE, right, 1, MPI_COMM_WORLD, &req[1]);
        MPI_Isend(buf, 8, MPI_BYTE, left, 1, MPI_COMM_WORLD, &req[2]);
        MPI_Isend(buf, 8, MPI_BYTE, right, 0, MPI_COMM_WORLD, &req[3]);
#pragma GCC diagnostic push /* MPICH's annotation of MPI_STATUSES_IGNORE, see engine_mpi.c */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
        MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
      }
      const double dt = MPI_Wtime() - t0;
      if (i >= 0) {
        const double x = lat ? dt * 1e6 / 2 : 2.0 * PUT_MSGS * PUT_BYTES / 1048576.0 / dt;
        v[n++] = x;
        sum += x;
      }
    }
  }
  if (win != MPI_WIN_NULL) {
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
  }
  /* rank 0's samples, as contend's table shows every rank's: gather the
   * means and medians of all ranks and report rank 0's view of the whole */
  qsort(v, (size_t)n, sizeof *v, cmp);
  double mine[3] = {sum, (double)n, n ? v[n / 2] : 0}, all[3];
  const double p99 = n ? v[(long)(0.99 * (double)(n - 1))] : 0,
               p999 = n ? v[(long)(0.999 * (double)(n - 1))] : 0, vmax = n ? v[n - 1] : 0;
  MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  double p50 = 0;
  MPI_Reduce(&mine[2], &p50, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s mean=%.6g p50=%.6g samples=%.0f unit=%s rank0_p99=%.6g rank0_p99_9=%.6g "
           "rank0_max=%.6g\n",
           t->name, all[0] / all[1], p50 / size, all[1], t->unit, p99, p999, vmax);
  fflush(stdout);
  free(v);
  free(buf);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -n N gpcnet_loops TEST[,TEST..] [TIMEOUT_S]\n");
    MPI_Finalize();
    return 2;
  }
  const double timeout = argc > 2 ? atof(argv[2]) : 10;
  char *list = strdup(argv[1]), *save = NULL;
  int status = 0;
  for (char *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    const loop *t = NULL;
    for (size_t i = 0; i < sizeof loops / sizeof loops[0]; i++)
      if (!strcmp(loops[i].name, name))
        t = &loops[i];
    if (!t) {
      if (rank == 0)
        fprintf(stderr, "gpcnet_loops: unknown test '%s' (rr_lat, rr_get_lat, rr_put_bw)\n", name);
      status = 2;
      break;
    }
    run(t, timeout);
  }
  free(list);
  MPI_Finalize();
  return status;
}
