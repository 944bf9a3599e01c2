/* contend: the engine interface.
 *
 * A motif never calls MPI (or any transport) itself: it emits the steps of
 * its own rank through these calls, and the engine behind the context
 * executes them.  The MPI engine runs them as real MPI calls (collectives
 * stay MPI collectives); the trace engine records who sends how many bytes
 * to whom without communicating; a simulated engine can move them as
 * packets.  Ranks are ranks of the motif's group (contend_ctx.rank/size).
 *
 * Contracts shared by every engine:
 * - isend/irecv/put/get are non-blocking; waitall completes every pending
 *   isend/irecv of this context, flush/flush_all every pending put/get.
 *   An iteration must complete everything it started before returning.
 * - alloc/win_alloc memory is owned by the engine and freed when the
 *   context is finished; motifs free nothing.  win_alloc is collective over
 *   the group and gives at most one window per context, open for passive
 *   target access (lock_all) until the context is finished.
 * - barrier/allreduce/alltoall are collective over the group.
 * - Errors inside an engine abort the run with file, line, rank and call;
 *   engine calls do not return error codes, except file_open (below).
 * - File I/O (the I/O motifs): file_open is collective over the group and
 *   returns a handle >= 0, or -1 on every rank if any rank failed (the
 *   failing rank's reason is in c->error).  With spec->shared every group
 *   rank opens the same file (N-1), otherwise each rank its own (N-N).
 *   write_at/read_at move bytes at a byte offset of the file (for HDF5: of
 *   the dataset); with spec->collective they are collective over the group
 *   (every rank calls them the same number of times).  sync makes written
 *   data durable and visible to other ranks' later reads (after a
 *   barrier); close and remove are collective; remove deletes the file(s)
 *   of the spec (shared: once).  Files the engine created and has not yet
 *   removed are also removed when the run aborts (best effort).
 * - count(c, t) attaches a traffic accumulator: every later step of this
 *   context is added to *t (bytes and messages per node pair, collective
 *   calls, I/O volume, compute time); count(c, NULL) detaches it.  The
 *   accumulator is the caller's (see contend/traffic.h).
 */
#ifndef CONTEND_ENGINE_H
#define CONTEND_ENGINE_H

#include <stddef.h>

struct contend_ctx;

typedef enum { CONTEND_DT_BYTE, CONTEND_DT_INT64, CONTEND_DT_DOUBLE } contend_dtype;
typedef enum { CONTEND_OP_SUM, CONTEND_OP_MIN, CONTEND_OP_MAX } contend_op;

/* File I/O back ends (engine-neutral names; see the I/O motifs). */
typedef enum { CONTEND_IO_POSIX, CONTEND_IO_MPIIO, CONTEND_IO_HDF5 } contend_io_api;

typedef struct contend_io_spec {
  contend_io_api api;
  const char *path;    /* this rank's file (shared: the same on every rank) */
  const char *dataset; /* HDF5: dataset name (e.g. the job name); else ignored */
  int shared;          /* 1: one file for the group (N-1); 0: a file per rank (N-N) */
  int collective;      /* MPI-IO/HDF5: collective transfers (write_at_all / read_at_all) */
  int create;          /* 1: create or truncate for writing; 0: open an existing file */
  unsigned long long file_bytes; /* HDF5: dataset extent in bytes (shared: all ranks) */
} contend_io_spec;

struct contend_traffic;

/* One point-to-point transfer of an exchange (see exchange below). */
typedef struct contend_xfer {
  void *buf;
  size_t bytes;
  int peer, tag;
  int send; /* 1: isend from buf; 0: irecv into buf */
} contend_xfer;

/* One one-sided transfer of an RMA epoch (see rma_epoch below). */
typedef struct contend_rma {
  void *buf; /* put: the origin data; get: where the data goes */
  size_t bytes;
  int peer;
  size_t offset; /* in the peer's window */
  int put;       /* 1: put from buf; 0: get into buf */
} contend_rma;

typedef struct contend_engine_ops {
  const char *name;
  void *(*alloc)(struct contend_ctx *c, size_t bytes);
  void *(*win_alloc)(struct contend_ctx *c, size_t bytes);
  void (*isend)(struct contend_ctx *c, const void *buf, size_t bytes, int peer, int tag);
  void (*irecv)(struct contend_ctx *c, void *buf, size_t bytes, int peer, int tag);
  void (*waitall)(struct contend_ctx *c);
  /* exchange: posts the n transfers of x in order (isend or irecv each),
   * then completes them with everything pending, as waitall does: a whole
   * neighbour exchange in one engine call, which keeps the dispatch cost
   * out of small-message latencies.  x stays the caller's. */
  void (*exchange)(struct contend_ctx *c, const contend_xfer *x, int n);
  /* repeat: `times` rounds of a fixed schedule of nsteps exchanges, step k
   * being the next len[k] (>= 1) transfers of x; the same as calling
   * exchange for each step of each round, counted as such, but with no
   * dispatch between rounds: the tight loop of a latency kernel
   * (ping-pong), as a hand-written one.  Nothing may be pending before the
   * call.  x and len stay the caller's. */
  void (*repeat)(struct contend_ctx *c, const contend_xfer *x, const int *len, int nsteps,
                 long times);
  void (*put)(struct contend_ctx *c, const void *buf, size_t bytes, int peer, size_t offset);
  void (*get)(struct contend_ctx *c, void *buf, size_t bytes, int peer, size_t offset);
  void (*flush_all)(struct contend_ctx *c);
  /* Optional (NULL: contend_rma_epoch issues put/get then flush_all):
   * issues the n transfers of x in order, then completes them with
   * everything pending, as flush_all does: an RMA iteration in one engine
   * call, which keeps the dispatch cost out of small-message get
   * latencies.  x stays the caller's. */
  void (*rma_epoch)(struct contend_ctx *c, const contend_rma *x, int n);
  void (*barrier)(struct contend_ctx *c);
  void (*allreduce)(struct contend_ctx *c, const void *sbuf, void *rbuf, int count,
                    contend_dtype dt, contend_op op);
  void (*alltoall)(struct contend_ctx *c, const void *sbuf, void *rbuf, size_t bytes_per_peer);
  void (*compute)(struct contend_ctx *c, double seconds);
  /* Optional (NULL: compute): a compute gap of a recorded program (the
   * replay motif), one of a sequence.  cpu = 0: `seconds` of wall time,
   * the sequence keeping its total: the time an earlier gap of the
   * context ran past its end (the rank was descheduled) is taken off the
   * next ones (src/core/pace.h); cpu = 1: until the calling thread has
   * run `seconds` on a core (CPU time, as `contend record --compute-cpu`
   * measured it), so that being descheduled lengthens it as it lengthened
   * the program.  compute itself never lasts less than asked.  Counted as
   * compute (`seconds`) like it. */
  void (*compute_replayed)(struct contend_ctx *c, double seconds, int cpu);
  /* File I/O (see the contract above).  Handles are per context. */
  int (*file_open)(struct contend_ctx *c, const contend_io_spec *spec);
  void (*file_write_at)(struct contend_ctx *c, int fh, const void *buf, size_t bytes,
                        unsigned long long offset);
  void (*file_read_at)(struct contend_ctx *c, int fh, void *buf, size_t bytes,
                       unsigned long long offset);
  void (*file_sync)(struct contend_ctx *c, int fh);
  void (*file_close)(struct contend_ctx *c, int fh);
  void (*file_remove)(struct contend_ctx *c, const contend_io_spec *spec);
  /* Traffic accounting (see above); NULL detaches. */
  void (*count)(struct contend_ctx *c, struct contend_traffic *t);
  /* 1: what file_write_at writes, file_read_at reads back (real files);
   * 0: file I/O is volume only, so file contents cannot be verified */
  int files_hold_data;
  /* 1: allreduce and alltoall compute their results (MPI); 0: they move
   * their volume only, the receive buffers keep what they held */
  int colls_compute;
} contend_engine_ops;

/* Whether this build has the HDF5 back end (1/0), and if not, why (for
 * `contend list` and job-file errors); why_not may be NULL.  Decided at
 * configure time (CMake: CONTEND_HAVE_HDF5). */
int contend_io_hdf5_available(const char **why_not);

#endif
