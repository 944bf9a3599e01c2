/* A small MPI program with known traffic, recorded by the trace tests
 * (tests/python/test_trace_record.py) on exactly 4 ranks.  Each phase is
 * separated by BUSY seconds of compute.  Byte counts are in the tests:
 *   1. MPI_Send/MPI_Recv: 1000 B from rank 0 to rank 1 (tag 1);
 *   2. a ring with MPI_Irecv/MPI_Isend (2048 B to rank + 1), completed by
 *      two MPI_Waitany; the reverse ring (1024 B to rank - 1) completed by
 *      MPI_Waitall; 64 B between partners r and r ^ 1 completed by polling
 *      MPI_Testall; MPI_Sendrecv of 32 B between the same partners;
 *   3. a persistent send/receive pair, rank 2 to 3 (512 B, 3 MPI_Starts);
 *   4. MPI_Comm_split by rank parity ({0, 2}, {1, 3}): MPI_Allreduce of 16
 *      doubles and MPI_Alltoallv where rank r sends 100 (r + 1) B to its
 *      partner (8 B to itself);
 *   5. MPI_Allreduce of 8 doubles and MPI_Barrier on MPI_COMM_WORLD;
 *      MPI_Gatherv to rank 0 of 10 (r + 1) B from rank r; MPI_Issend of
 *      256 B from rank 3 to rank 0 (MPI_Wait), received with MPI_Recv;
 *   6. a window over 4096 B, one fence epoch: rank r puts 256 B into
 *      rank r + 1 and gets 128 B from rank r - 1 (mod 4).
 * With the argument `sleep`, the phases are separated by BUSY seconds of
 * sleep instead (time without CPU: --compute-cpu records almost none).
 * With the argument `unrecorded`, also what the recorder cannot represent
 * (it warns): an MPI_Accumulate of 8 B into rank r + 1 in the epoch, and
 * an MPI_Sendrecv of 16 B around a ring on a Cartesian communicator (not a
 * communicator the recorder defines). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define BUSY 0.02

static int sleeping; /* the argument `sleep` */

static void busy(void) {
  if (sleeping) {
    const struct timespec ts = {0, (long)(BUSY * 1e9)};
    nanosleep(&ts, NULL);
    return;
  }
  const double end = MPI_Wtime() + BUSY;
  while (MPI_Wtime() < end) {
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n != 4) {
    if (r == 0)
      fprintf(stderr, "trace_program: needs exactly 4 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  static char sbuf[4096], rbuf[4096], wbuf[4096];
  sleeping = argc > 1 && !strcmp(argv[1], "sleep");
  busy();
  if (r == 0)
    MPI_Send(sbuf, 1000, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
  else if (r == 1)
    MPI_Recv(rbuf, 1000, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  busy();
  MPI_Request q[2];
  MPI_Status sts[2]; /* not MPI_STATUSES_IGNORE: gcc 12 reads MPICH's constant as a buffer */
  MPI_Irecv(rbuf, 2048, MPI_BYTE, (r + n - 1) % n, 2, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(sbuf, 2048, MPI_BYTE, (r + 1) % n, 2, MPI_COMM_WORLD, &q[1]);
  for (int k = 0; k < 2; k++) {
    int idx;
    MPI_Waitany(2, q, &idx, MPI_STATUS_IGNORE);
  }
  MPI_Irecv(rbuf, 1024, MPI_BYTE, (r + 1) % n, 4, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(sbuf, 1024, MPI_BYTE, (r + n - 1) % n, 4, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, sts);
  MPI_Irecv(rbuf, 64, MPI_BYTE, r ^ 1, 5, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(sbuf, 64, MPI_BYTE, r ^ 1, 5, MPI_COMM_WORLD, &q[1]);
  for (int done = 0; !done;)
    MPI_Testall(2, q, &done, sts);
  MPI_Sendrecv(sbuf, 32, MPI_BYTE, r ^ 1, 6, rbuf, 32, MPI_BYTE, r ^ 1, 6, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  busy();
  if (r == 2 || r == 3) {
    MPI_Request p;
    if (r == 2)
      MPI_Send_init(sbuf, 512, MPI_BYTE, 3, 3, MPI_COMM_WORLD, &p);
    else
      MPI_Recv_init(rbuf, 512, MPI_BYTE, 2, 3, MPI_COMM_WORLD, &p);
    for (int k = 0; k < 3; k++) {
      MPI_Start(&p);
      MPI_Wait(&p, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&p);
  }
  busy();
  MPI_Comm sub;
  MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &sub);
  double v[16] = {0}, w[16];
  MPI_Allreduce(v, w, 16, MPI_DOUBLE, MPI_SUM, sub);
  int sc[2], sd[2] = {0, 0}, rc[2], rd[2] = {0, 0}, me;
  MPI_Comm_rank(sub, &me);
  const int partner = r % 2 + 2 * (1 - me); /* world rank of the other member */
  for (int i = 0; i < 2; i++) {
    sc[i] = i == me ? 8 : 100 * (r + 1);
    rc[i] = i == me ? 8 : 100 * (partner + 1);
  }
  MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, sub);
  MPI_Comm_free(&sub);
  busy();
  MPI_Allreduce(v, w, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  int gc[4], gd[4];
  for (int i = 0; i < n; i++)
    gc[i] = 10 * (i + 1), gd[i] = 100 * i;
  MPI_Gatherv(sbuf, gc[r], MPI_BYTE, rbuf, gc, gd, MPI_BYTE, 0, MPI_COMM_WORLD);
  if (r == 3) {
    MPI_Request q3;
    MPI_Issend(sbuf, 256, MPI_BYTE, 0, 8, MPI_COMM_WORLD, &q3);
    MPI_Wait(&q3, MPI_STATUS_IGNORE);
  } else if (r == 0) {
    MPI_Recv(rbuf, 256, MPI_BYTE, 3, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  busy();
  MPI_Win win;
  MPI_Win_create(wbuf, sizeof wbuf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Put(sbuf, 256, MPI_BYTE, (r + 1) % n, 0, 256, MPI_BYTE, win);
  MPI_Get(rbuf, 128, MPI_BYTE, (r + n - 1) % n, 1024, 128, MPI_BYTE, win);
  const int unrecorded = argc > 1 && !strcmp(argv[1], "unrecorded");
  if (unrecorded)
    MPI_Accumulate(sbuf, 8, MPI_BYTE, (r + 1) % n, 2048, 8, MPI_BYTE, MPI_BOR, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  if (unrecorded) {
    MPI_Comm ring;
    int dims = n, periods = 1, left, right;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &dims, &periods, 0, &ring);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    MPI_Sendrecv(sbuf, 16, MPI_BYTE, right, 7, rbuf, 16, MPI_BYTE, left, 7, ring,
                 MPI_STATUS_IGNORE);
    MPI_Comm_free(&ring);
  }
  busy();
  MPI_Finalize();
  return 0;
}
