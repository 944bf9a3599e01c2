/* A test program for the PMPI throttle: rank 0 sends messages of BYTES to
 * rank 1 for SECONDS (MPI_Send, or MPI_Isend with 8 in flight), then a
 * stop message; rank 1 answers one byte when it has everything.  Rank 0
 * prints "sent=N bytes=B seconds=S gbps=R" (payload rate, Gbit/s).  With
 * `control` the messages travel on a communicator named
 * "contend-control", which the throttle never paces.
 *   throttle_sender BYTES SECONDS [send|isend] [measured|control] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 3 || size < 2) {
    if (rank == 0)
      fprintf(stderr, "usage: throttle_sender BYTES SECONDS [send|isend] [measured|control] "
                      "(2 ranks or more)\n");
    MPI_Finalize();
    return 2;
  }
  const int bytes = atoi(argv[1]);
  const double seconds = atof(argv[2]);
  const int use_isend = argc > 3 && !strcmp(argv[3], "isend");
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_set_name(comm, argc > 4 && !strcmp(argv[4], "control") ? "contend-control"
                                                                  : "contend-measured");
  char *buf = calloc((size_t)bytes + 1, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Request req[8];
    MPI_Status sts[8]; /* not MPI_STATUSES_IGNORE: gcc 12 reads MPICH's constant as a buffer */
    long n = 0;
    const double t0 = MPI_Wtime();
    while (MPI_Wtime() - t0 < seconds) {
      if (use_isend) {
        MPI_Isend(buf, bytes, MPI_BYTE, 1, 1, comm, &req[n % 8]);
        if (n % 8 == 7)
          MPI_Waitall(8, req, sts);
      } else {
        MPI_Send(buf, bytes, MPI_BYTE, 1, 1, comm);
      }
      n++;
    }
    if (use_isend && n % 8)
      MPI_Waitall((int)(n % 8), req, sts);
    MPI_Send(buf, 0, MPI_BYTE, 1, 2, comm);
    char ack;
    MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, comm, MPI_STATUS_IGNORE);
    const double dt = MPI_Wtime() - t0;
    printf("sent=%ld bytes=%d seconds=%.6f gbps=%.6f\n", n, bytes, dt,
           8.0 * (double)bytes * (double)n / dt / 1e9);
  } else if (rank == 1) {
    MPI_Status st;
    do
      MPI_Recv(buf, bytes, MPI_BYTE, 0, MPI_ANY_TAG, comm, &st);
    while (st.MPI_TAG == 1);
    char ack = 1;
    MPI_Send(&ack, 1, MPI_BYTE, 0, 3, comm);
  }
  MPI_Comm_free(&comm);
  free(buf);
  MPI_Finalize();
  return 0;
}
