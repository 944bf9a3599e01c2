/* bench/throttle_idle_loops: the throttle library's idle cost inside one
 * process, where this VM's latency states (which swamp a 1 % difference
 * between two runs) are shared by both sides.  Run with
 * libcontend-throttle.so preloaded and nothing to throttle: 2 ranks do the
 * 8-byte exchange of GPCNeT's RR latency (Irecv, Irecv, Isend, Isend,
 * Waitall with the other rank) in blocks of ITERS iterations, alternating a
 * block through the MPI_ names (the library's wrappers: one relaxed atomic
 * load and a branch each) with a block through the PMPI_ names (straight
 * to the MPI library), BLOCKS times.  Prints on rank 0 the median over
 * blocks of each side's time per iteration and their ratio:
 *   "wrapped_us=X direct_us=Y ratio=R blocks=N"
 *
 * usage: mpirun -n 2 -x LD_PRELOAD=.../libcontend-throttle.so throttle_idle_loops [BLOCKS] [ITERS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int blocks = argc > 1 ? atoi(argv[1]) : 200;
  const int iters = argc > 2 ? atoi(argv[2]) : 2000;
  if (size != 2 || blocks < 1 || iters < 1) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -n 2 throttle_idle_loops [BLOCKS>0] [ITERS>0]\n");
    MPI_Finalize();
    return 2;
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const int peer = 1 - rank;
  double sbuf[2] = {0, 0}, rbuf[2];
  MPI_Request req[4];
  MPI_Status st[4];
  double *wrapped = malloc(sizeof(double) * (size_t)blocks);
  double *direct = malloc(sizeof(double) * (size_t)blocks);
  for (int b = 0; b < blocks; b++) {
    for (int side = 0; side < 2; side++) {
      MPI_Barrier(comm);
      const double t0 = MPI_Wtime();
      for (int i = 0; i < iters; i++) {
        if (side == 0) {
          MPI_Irecv(&rbuf[0], 1, MPI_DOUBLE, peer, 1, comm, &req[0]);
          MPI_Irecv(&rbuf[1], 1, MPI_DOUBLE, peer, 2, comm, &req[1]);
          MPI_Isend(&sbuf[0], 1, MPI_DOUBLE, peer, 1, comm, &req[2]);
          MPI_Isend(&sbuf[1], 1, MPI_DOUBLE, peer, 2, comm, &req[3]);
          MPI_Waitall(4, req, st);
        } else {
          PMPI_Irecv(&rbuf[0], 1, MPI_DOUBLE, peer, 1, comm, &req[0]);
          PMPI_Irecv(&rbuf[1], 1, MPI_DOUBLE, peer, 2, comm, &req[1]);
          PMPI_Isend(&sbuf[0], 1, MPI_DOUBLE, peer, 1, comm, &req[2]);
          PMPI_Isend(&sbuf[1], 1, MPI_DOUBLE, peer, 2, comm, &req[3]);
          PMPI_Waitall(4, req, st);
        }
      }
      const double us = (MPI_Wtime() - t0) / iters * 1e6 / 2; /* GPCNeT: time / 2 */
      (side == 0 ? wrapped : direct)[b] = us;
    }
  }
  if (rank == 0) {
    const double w = median(wrapped, blocks), d = median(direct, blocks);
    printf("wrapped_us=%.5f direct_us=%.5f ratio=%.4f blocks=%d\n", w, d, w / d, blocks);
  }
  free(wrapped);
  free(direct);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
