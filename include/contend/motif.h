/* contend: the motif interface.
 *
 * A motif is one communication pattern (a GPCNeT canary or congestor, a
 * workload kernel).  It is written once, as a const contend_motif with
 * designated initializers in its own file under src/motifs/, listed in the
 * registry (src/motifs/registry.c), and runs on every engine.
 *
 * Life cycle, driven by a runner (the runner owns all timing policy):
 *   setup(c)            once; collective over the group; allocates through
 *                       the engine, sets c->msg_bytes and c->metric_scale
 *                       (0: this rank takes no samples).  Returns 0, or -1
 *                       with the reason in c->error.
 *   round(c, rng)       optional; before each round (e.g. a new random ring);
 *                       untimed; rng is the same stream on every group rank.
 *                       A motif whose rounds are rings also has ring_of,
 *                       which names the round's ring for the records.
 *   prepare(c)          optional, only with --verify; untimed; fills send
 *                       buffers for iteration c->iter.
 *   iterate(c)          one timed iteration: emits this rank's steps and
 *                       completes them before returning.  Never prints,
 *                       never reads a clock.
 *   check(c)            optional, with --verify (always for motifs flagged
 *                       CONTEND_MOTIF_ALWAYS_CHECK); untimed; verifies what
 *                       iteration c->iter received and counts failures in
 *                       c->verify_errors / c->verify_checked; may use
 *                       engine collectives (all group ranks call it).
 *   cleanup(c)          optional; once when the context ends (after the
 *                       last iteration, also after an error that stops the
 *                       run early); collective over the group; removes what
 *                       setup created outside engine memory (files).
 * Motifs free nothing: engine memory is released when the context ends.
 *
 * Phases (`contend jobs`, StressBench): setup is the decompose phase,
 * iterations the perform phase, cleanup the cleanup phase; the runner
 * separates them with global barriers and sets c->job_phase.
 *
 * validate(p, nranks, err, len) is optional and pure (no engine, no MPI):
 * it checks parameter combinations before anything runs, once with
 * nranks = 0 (size unknown: check what does not depend on it) and again
 * with the group size.  Returns 0, or -1 with one line in err.
 */
#ifndef CONTEND_MOTIF_H
#define CONTEND_MOTIF_H

#include <stddef.h>
#include <stdint.h>

#include "contend/engine.h"
#include "contend/param.h"
#include "contend/rng.h"

typedef enum {
  CONTEND_ROLE_CANARY,
  CONTEND_ROLE_CONGESTOR,
  CONTEND_ROLE_WORKLOAD /* job-file motifs (contend_workload_motifs) */
} contend_role;

/* Phase of a job (StressBench): decompose (setup), perform (iterations),
 * cleanup.  0 outside `contend jobs`. */
typedef enum {
  CONTEND_JOB_DECOMPOSE = 1,
  CONTEND_JOB_PERFORM,
  CONTEND_JOB_CLEANUP
} contend_job_phase;

/* contend_motif.flags */
enum {
  /* run check after every iteration even without --verify (untimed):
   * motifs whose result is a verification, e.g. io_read */
  CONTEND_MOTIF_ALWAYS_CHECK = 1,
  /* time consecutive iterations of one series as a block (one clock read
   * per block, as a hand-written latency loop does) instead of each
   * iteration: for sub-microsecond iterations where reading the clock
   * would be part of what is measured (ping-pong).  Iteration statistics
   * are then block means.  Not applied with --verify. */
  CONTEND_MOTIF_BLOCK_TIMING = 2,
  /* the motif's data is file contents (io_write, io_read): its prepare and
   * check are skipped on engines whose files hold no data
   * (contend_engine_ops.files_hold_data == 0) */
  CONTEND_MOTIF_FILE_DATA = 4,
  /* the motif's check reads a collective's result (allreduce, alltoall):
   * skipped on engines that time collectives without computing them
   * (contend_engine_ops.colls_compute == 0) */
  CONTEND_MOTIF_COLL_DATA = 8,
  /* time the round whole, from before its warm-up to the end of its last
   * iteration, and give every timed iteration the round's mean (warm-up
   * included): for a rank that samples data its peers send without
   * waiting for it (an incast's root).  Eager data can arrive before the
   * receive that takes it is posted, or during the warm-up; per-iteration
   * times then count it in the wrong (too short) span, and their rates,
   * and their mean, exceed what the link delivered.  Over a round that
   * starts together on every rank (the suite's congestors synchronise
   * before each), all of the round's data arrives inside the span, so the
   * rate is at most the receiver's link rate.  Applied with --verify too
   * (prepare and check are then inside the span). */
  CONTEND_MOTIF_ROUND_TIMING = 16
};

/* How a per-iteration time t (seconds) becomes the reported value:
 * LAT_US: t * 1e6 / metric_scale (microseconds);
 * BW_MIB_S: metric_scale / t, metric_scale being the MiB this rank sends
 * per iteration (MiB/s per rank). */
typedef enum { CONTEND_METRIC_LAT_US, CONTEND_METRIC_BW_MIB_S } contend_metric;

typedef struct contend_ctx {
  /* set by the runner before setup */
  int rank, size;     /* in the motif's group */
  const int *node_of; /* node id of every group rank (size entries) */
  const contend_params *params;
  const contend_engine_ops *ops;
  void *impl;  /* engine-private */
  void *state; /* motif-private, state_size bytes, zeroed; owned by the runner */
  uint64_t seed;
  long iter; /* current iteration (negative during warm-up) */
  long round;
  /* set by setup */
  size_t msg_bytes;    /* shown in the label, e.g. "(8 B)" */
  double metric_scale; /* see contend_metric */
  /* verification counters (check hook) */
  uint64_t verify_errors, verify_checked;
  long verify_inject; /* testing aid: corrupt one received byte every N checks (0 = off) */
  /* set by the jobs runner before setup (zero/NULL outside `contend jobs`) */
  const char *job_name; /* [JOB_NAME]: [A-Za-z0-9_.-]+ */
  int job_index;
  const char *run_id; /* distinguishes concurrent runs (file names) */
  uint64_t stream;    /* random-stream id of this motif instance (same on every rank) */
  int job_phase;      /* contend_job_phase */
  /* optional, set by setup (jobs): iterations of one invocation when the
   * motif derives them itself (0: rings x (warmup + iters) of its params) */
  long iterations;
  /* optional series (e.g. one per message size): setup sets nseries and
   * series_value (nseries values of the motif's series_key, engine
   * memory); the motif's series_of hook names the series of an iteration.
   * The runner keeps times per series and sets c->series before iterate. */
  int nseries, series;
  const double *series_value;
  /* setup/file_open failure reason (one line), shown with the job-file line */
  char error[256];
} contend_ctx;

typedef struct contend_motif {
  const char *name;  /* registry key and option scope, snake_case */
  const char *label; /* table label without size, e.g. "RR Two-sided Lat" */
  const char *help;  /* one line */
  contend_role role;
  contend_metric metric;
  const contend_param_def *params; /* CONTEND_PARAM_END-terminated */
  size_t state_size;
  int (*setup)(contend_ctx *c);
  void (*round)(contend_ctx *c, contend_rng *rng);
  void (*prepare)(contend_ctx *c);
  void (*iterate)(contend_ctx *c);
  void (*check)(contend_ctx *c);
  /* added for `contend jobs` (all optional) */
  void (*cleanup)(contend_ctx *c);
  int (*validate)(const contend_params *p, int nranks, char *err, size_t errlen);
  unsigned flags; /* CONTEND_MOTIF_* */
  /* congestors: when its iters is neither given nor set by --iters and its
   * group has more ranks than this, each measurement runs iters x this /
   * ranks iterations (at least 1), as GPCNeT's code scales its all-to-all
   * and incasts (network_load_test.c: 512 x 32 / ranks); 0: never */
  int iters_base_ranks;
  const char *series_key; /* what the values of c->series_value are, e.g. "message_bytes" */
  /* the series of iteration c->iter (0 .. nseries-1), or -1 for an untimed
   * warm-up iteration, and in *same how many iterations from c->iter on
   * (>= 1) share it; pure; the runner calls it at the start of each such
   * run of iterations and sets c->series before every iterate */
  int (*series_of)(const contend_ctx *c, long *same);
  /* optional, with CONTEND_MOTIF_BLOCK_TIMING: runs iterations c->iter ..
   * c->iter + n - 1, all of series c->series, doing exactly what n calls of
   * iterate would; the runner calls it for a timed block (never with
   * prepare or check) so that the motif can hand the whole block to the
   * engine (contend_repeat) */
  void (*iterate_block)(contend_ctx *c, long n);
  /* optional, with round (ring motifs): the ring of the round whose random
   * stream is rng, exactly as round draws it (rng is a fresh copy of the
   * stream round gets): fills order[0 .. c->size) with the group ranks in
   * ring order (order[i + 1] is the right neighbour of order[i],
   * cyclically) and returns 1; returns 0 when the round has no ring.  Pure:
   * no engine calls, reads c->size and the state setup left.  The runner
   * calls it outside the timed iterations, on the ranks that record which
   * rings ran (results: a digest per measurement, optionally the rings
   * whole; dry runs: every round).  Motifs without rings leave it NULL. */
  int (*ring_of)(const contend_ctx *c, contend_rng *rng, int *order);
  /* optional: when an iteration of the current round is exactly one RMA
   * epoch (contend_rma_epoch of these transfers, nothing else), the
   * transfers (*n of them; the motif's, valid until the next round hook),
   * so that the runner can hand them to the engine itself in the timed
   * loop; else NULL.  Pure, like ring_of. */
  const contend_rma *(*epoch_of)(const contend_ctx *c, int *n);
} contend_motif;

/* Every motif declares its loop counts as parameters with these keys
 * (GPCNeT's nM, nR, nI and warm-up), with its own defaults. */
#define CONTEND_LOOP_PARAMS(nm, nr, ni, wu)                                                        \
  {"measurements",                                                                                 \
   CONTEND_P_INT,                                                                                  \
   #nm,                                                                                            \
   "count",                                                                                        \
   "measurements (nM); the timeout is checked collectively before every round",                    \
   1,                                                                                              \
   1e12},                                                                                          \
      {"rings",                                                                                    \
       CONTEND_P_INT,                                                                              \
       #nr,                                                                                        \
       "count",                                                                                    \
       "rounds per measurement (nR): fresh random ring each for ring tests",                       \
       1,                                                                                          \
       1e9},                                                                                       \
      {"iters", CONTEND_P_INT, #ni, "count", "timed iterations per round (nI)", 1, 1e9}, {         \
    "warmup", CONTEND_P_INT, #wu, "count", "untimed iterations before each round", 0, 1e9          \
  }

/* Registry (src/motifs/registry.c).  contend_motifs: the GPCNeT canaries
 * and congestors (`network`, `load`); contend_workload_motifs: the
 * job-file motifs.  contend_motif_find searches the first list only;
 * contend_job_motif_find both (job files may use any motif), with the
 * name in any case and '-' for '_' (as users spell it). */
extern const contend_motif *const contend_motifs[];
extern const contend_motif *const contend_workload_motifs[];
const contend_motif *contend_motif_find(const char *name);
const contend_motif *contend_job_motif_find(const char *name);

/* Engine call wrappers: what motifs use. */
static inline void *contend_alloc(contend_ctx *c, size_t n) { return c->ops->alloc(c, n); }
static inline void *contend_win_alloc(contend_ctx *c, size_t n) { return c->ops->win_alloc(c, n); }
static inline void contend_isend(contend_ctx *c, const void *b, size_t n, int peer, int tag) {
  c->ops->isend(c, b, n, peer, tag);
}
static inline void contend_irecv(contend_ctx *c, void *b, size_t n, int peer, int tag) {
  c->ops->irecv(c, b, n, peer, tag);
}
static inline void contend_waitall(contend_ctx *c) { c->ops->waitall(c); }
static inline void contend_exchange(contend_ctx *c, const contend_xfer *x, int n) {
  c->ops->exchange(c, x, n);
}
static inline void contend_repeat(contend_ctx *c, const contend_xfer *x, const int *len, int nsteps,
                                  long times) {
  c->ops->repeat(c, x, len, nsteps, times);
}
static inline void contend_put(contend_ctx *c, const void *b, size_t n, int peer, size_t off) {
  c->ops->put(c, b, n, peer, off);
}
static inline void contend_get(contend_ctx *c, void *b, size_t n, int peer, size_t off) {
  c->ops->get(c, b, n, peer, off);
}
static inline void contend_flush_all(contend_ctx *c) { c->ops->flush_all(c); }
static inline void contend_rma_epoch(contend_ctx *c, const contend_rma *x, int n) {
  if (c->ops->rma_epoch) {
    c->ops->rma_epoch(c, x, n);
    return;
  }
  for (int i = 0; i < n; i++) {
    if (x[i].put)
      c->ops->put(c, x[i].buf, x[i].bytes, x[i].peer, x[i].offset);
    else
      c->ops->get(c, x[i].buf, x[i].bytes, x[i].peer, x[i].offset);
  }
  c->ops->flush_all(c);
}
static inline void contend_barrier(contend_ctx *c) { c->ops->barrier(c); }
static inline void contend_allreduce(contend_ctx *c, const void *s, void *r, int count,
                                     contend_dtype dt, contend_op op) {
  c->ops->allreduce(c, s, r, count, dt, op);
}

static inline void contend_alltoall(contend_ctx *c, const void *s, void *r, size_t per_peer) {
  c->ops->alltoall(c, s, r, per_peer);
}
static inline void contend_compute(contend_ctx *c, double seconds) { c->ops->compute(c, seconds); }
static inline void contend_compute_replayed(contend_ctx *c, double seconds, int cpu) {
  if (c->ops->compute_replayed)
    c->ops->compute_replayed(c, seconds, cpu);
  else
    c->ops->compute(c, seconds);
}
static inline int contend_file_open(contend_ctx *c, const contend_io_spec *spec) {
  return c->ops->file_open(c, spec);
}
static inline void contend_file_write_at(contend_ctx *c, int fh, const void *b, size_t n,
                                         unsigned long long off) {
  c->ops->file_write_at(c, fh, b, n, off);
}
static inline void contend_file_read_at(contend_ctx *c, int fh, void *b, size_t n,
                                        unsigned long long off) {
  c->ops->file_read_at(c, fh, b, n, off);
}
static inline void contend_file_sync(contend_ctx *c, int fh) { c->ops->file_sync(c, fh); }
static inline void contend_file_close(contend_ctx *c, int fh) { c->ops->file_close(c, fh); }
static inline void contend_file_remove(contend_ctx *c, const contend_io_spec *spec) {
  c->ops->file_remove(c, spec);
}

/* For engines (src/motifs/common.c): the engine-neutral part of opening a
 * context: zeroes *c, copies the job fields from *job when not NULL
 * (phase: decompose), sets rank, size, node_of, params and seed and
 * allocates the motif's zeroed state (freed with contend_ctx_free_state).
 * The engine then sets ops and impl and calls setup. */
void contend_ctx_init(contend_ctx *c, const contend_motif *m, const contend_params *p, int rank,
                      int size, const int *node_of, uint64_t seed, const contend_ctx *job);
void contend_ctx_free_state(contend_ctx *c);

/* Helpers shared by motifs (src/motifs/common.c). */
/* Left and right neighbours of c->rank in a ring over the group: shuffled
 * with rng when rng != NULL, the natural (group rank) order otherwise. */
void contend_ring_neighbours(contend_ctx *c, contend_rng *rng, int *left, int *right);
/* Verification pattern: deterministic word for (sender, iteration, index). */
uint64_t contend_pattern(int sender, long iter, size_t index);
/* Fills buf with the pattern words first, first+1, ... (a partial last
 * word takes the leading bytes of its pattern word). */
void contend_pattern_fill(void *buf, size_t bytes, int sender, long iter, size_t first);
/* Checks buf against the pattern; adds 1 to c->verify_checked and, if any
 * byte differs, 1 to c->verify_errors.  With c->verify_inject, corrupts
 * one byte of buf first every verify_inject-th call (testing aid). */
void contend_pattern_check(contend_ctx *c, void *buf, size_t bytes, int sender, long iter,
                           size_t first);

#endif
