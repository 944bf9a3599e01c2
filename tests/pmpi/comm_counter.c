/* A PMPI interposer for tests: counts point-to-point, one-sided and
 * collective calls per communicator *name* (MPI_Comm_get_name; windows map
 * to the communicator they were created on) and writes, at MPI_Finalize,
 * one file per rank into $CONTEND_PMPI_COUNT_DIR with lines
 * "COMMUNICATOR<TAB>CALL<TAB>COUNT".  Load it with LD_PRELOAD. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXROWS = 256, MAXWIN = 64 };

static struct row {
  char comm[MPI_MAX_OBJECT_NAME];
  const char *call;
  long count;
} rows[MAXROWS];
static int nrows;

static struct win {
  MPI_Win win;
  char comm[MPI_MAX_OBJECT_NAME];
} wins[MAXWIN];
static int nwins;

static void comm_name(MPI_Comm comm, char *out) {
  int len = 0;
  out[0] = 0;
  if (comm == MPI_COMM_WORLD) {
    strcpy(out, "MPI_COMM_WORLD");
    return;
  }
  PMPI_Comm_get_name(comm, out, &len);
  if (!out[0])
    strcpy(out, "(unnamed)");
}

static void count_name(const char *name, const char *call) {
  for (int i = 0; i < nrows; i++)
    if (rows[i].call == call && !strcmp(rows[i].comm, name)) {
      rows[i].count++;
      return;
    }
  if (nrows < MAXROWS) {
    snprintf(rows[nrows].comm, sizeof rows[nrows].comm, "%s", name);
    rows[nrows].call = call;
    rows[nrows].count = 1;
    nrows++;
  }
}

static void count(MPI_Comm comm, const char *call) {
  char name[MPI_MAX_OBJECT_NAME];
  comm_name(comm, name);
  count_name(name, call);
}

static void count_win(MPI_Win win, const char *call) {
  for (int i = 0; i < nwins; i++)
    if (wins[i].win == win) {
      count_name(wins[i].comm, call);
      return;
    }
  count_name("(unknown window)", call);
}

/* A freed window's handle may come back for a new window on another
 * communicator: Win_free drops the entry, and a known handle is renamed. */
static void add_win(MPI_Win win, MPI_Comm comm) {
  int i = 0;
  while (i < nwins && wins[i].win != win)
    i++;
  if (i == MAXWIN)
    return;
  if (i == nwins)
    nwins++;
  wins[i].win = win;
  comm_name(comm, wins[i].comm);
}

static void drop_win(MPI_Win win) {
  for (int i = 0; i < nwins; i++)
    if (wins[i].win == win) {
      wins[i] = wins[--nwins];
      return;
    }
}

int MPI_Send(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c) {
  count(c, "Send");
  return PMPI_Send(b, n, t, d, tag, c);
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r) {
  count(c, "Isend");
  return PMPI_Isend(b, n, t, d, tag, c, r);
}
int MPI_Recv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st) {
  count(c, "Recv");
  return PMPI_Recv(b, n, t, s, tag, c, st);
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r) {
  count(c, "Irecv");
  return PMPI_Irecv(b, n, t, s, tag, c, r);
}
int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int d, int stag, void *rb, int rn,
                 MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *status) {
  count(c, "Sendrecv");
  return PMPI_Sendrecv(sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, status);
}
int MPI_Barrier(MPI_Comm c) {
  count(c, "Barrier");
  return PMPI_Barrier(c);
}
int MPI_Ibarrier(MPI_Comm c, MPI_Request *r) {
  count(c, "Ibarrier");
  return PMPI_Ibarrier(c, r);
}
int MPI_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, MPI_Comm c) {
  count(c, "Allreduce");
  return PMPI_Allreduce(s, r, n, t, o, c);
}
int MPI_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op o, int root, MPI_Comm c) {
  count(c, "Reduce");
  return PMPI_Reduce(s, r, n, t, o, root, c);
}
int MPI_Bcast(void *b, int n, MPI_Datatype t, int root, MPI_Comm c) {
  count(c, "Bcast");
  return PMPI_Bcast(b, n, t, root, c);
}
int MPI_Gather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, int root,
               MPI_Comm c) {
  count(c, "Gather");
  return PMPI_Gather(s, sn, st, r, rn, rt, root, c);
}
int MPI_Gatherv(const void *s, int sn, MPI_Datatype st, void *r, const int *rn, const int *d,
                MPI_Datatype rt, int root, MPI_Comm c) {
  count(c, "Gatherv");
  return PMPI_Gatherv(s, sn, st, r, rn, d, rt, root, c);
}
int MPI_Allgather(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                  MPI_Comm c) {
  count(c, "Allgather");
  return PMPI_Allgather(s, sn, st, r, rn, rt, c);
}
int MPI_Alltoall(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt,
                 MPI_Comm c) {
  count(c, "Alltoall");
  return PMPI_Alltoall(s, sn, st, r, rn, rt, c);
}
int MPI_Win_create(void *b, MPI_Aint n, int u, MPI_Info i, MPI_Comm c, MPI_Win *w) {
  int rc = PMPI_Win_create(b, n, u, i, c, w);
  add_win(*w, c);
  return rc;
}
int MPI_Win_allocate(MPI_Aint n, int u, MPI_Info i, MPI_Comm c, void *b, MPI_Win *w) {
  int rc = PMPI_Win_allocate(n, u, i, c, b, w);
  add_win(*w, c);
  return rc;
}
int MPI_Win_free(MPI_Win *w) {
  drop_win(*w);
  return PMPI_Win_free(w);
}
int MPI_Put(const void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn, MPI_Datatype tt,
            MPI_Win w) {
  count_win(w, "Put");
  return PMPI_Put(o, on, ot, r, d, tn, tt, w);
}
int MPI_Get(void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn, MPI_Datatype tt,
            MPI_Win w) {
  count_win(w, "Get");
  return PMPI_Get(o, on, ot, r, d, tn, tt, w);
}
int MPI_Accumulate(const void *o, int on, MPI_Datatype ot, int r, MPI_Aint d, int tn,
                   MPI_Datatype tt, MPI_Op op, MPI_Win w) {
  count_win(w, "Accumulate");
  return PMPI_Accumulate(o, on, ot, r, d, tn, tt, op, w);
}

int MPI_Finalize(void) {
  const char *dir = getenv("CONTEND_PMPI_COUNT_DIR");
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (dir && *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.txt", dir, rank);
    FILE *f = fopen(path, "w");
    if (f) {
      for (int i = 0; i < nrows; i++)
        fprintf(f, "%s\t%s\t%ld\n", rows[i].comm, rows[i].call, rows[i].count);
      fclose(f);
    }
  }
  return PMPI_Finalize();
}
