/* contend: the control plane.
 *
 * Everything above the motifs (the GPCNeT schedule, the jobs orchestrator,
 * the measurement driver, the run envelope) talks to the machine only
 * through this interface: the engine's clock, groups of ranks, control
 * collectives, a non-blocking signal, node discovery, and the motif
 * contexts.  The same schedule therefore runs on real MPI (one process per
 * rank), on the trace engine (every rank a user-level context in one
 * process, dry runs) and on the simulated fabric.
 *
 * A contend_group is one rank's handle on a set of ranks.  It has two
 * channels: a control channel, used by every call below, and a measured
 * channel on which motif contexts run (ctx_open).  Engines keep them apart
 * (MPI: two communicators), so control traffic never mixes with measured
 * traffic and a PMPI throttle can tell them apart.
 *
 * Contracts:
 * - Calls marked collective must be made by every rank of the group, in
 *   the same order.  Blocking calls park the calling rank until complete.
 * - Groups, signals and gathered buffers are owned by the caller once
 *   returned: group_free (collective), signal_free, free().
 * - Errors inside the engine abort the run (contend_fail); the calls do
 *   not return error codes except where stated.
 * - The world group handed to a body is the engine's: the body never frees
 *   it.  Reductions of CONTEND_DT_BYTE are on unsigned 8-bit integers.
 *
 * Engines are registered by name (contend_engines, src/run/engines.c), as
 * IOR registers its back ends.  Each carries its own run options and the
 * capabilities the engine-neutral layers (src/run, src/suite, src/jobs)
 * ask about instead of comparing engine names; those layers include no
 * engine header (see contend/inproc.h for the direction of dependencies).
 */
#ifndef CONTEND_WORLD_H
#define CONTEND_WORLD_H

#include <stddef.h>
#include <stdint.h>

struct contend_json;
struct contend_files;
struct contend_engine;

#include "contend/engine.h"
#include "contend/motif.h"

struct contend_world_ops;

typedef struct contend_group {
  const struct contend_world_ops *ops;
  int rank, size; /* this rank in the group; the group's size */
  /* this rank's clock in seconds (engine time: wall clock on MPI,
   * simulated time on the simulator); a plain function so the driver's
   * per-iteration reads cost what MPI_Wtime costs */
  double (*now)(void);
  void *impl; /* engine-private */
} contend_group;

typedef struct contend_signal contend_signal; /* engine-private */

/* Which ranks share a node.  Nodes are numbered by the lowest world rank
 * they hold.  node_of_rank (world-size entries) is the engine's, valid
 * while the world group lives: in-process engines share one array among
 * all their ranks. */
typedef struct contend_nodes {
  int nnodes;
  int my_node;
  int local_rank, local_size;
  int ppn_min, ppn_max;
  const int *node_of_rank;
} contend_nodes;

typedef struct contend_world_ops {
  const struct contend_engine *engine; /* the registered engine these ops belong to */
  /* collective over g: the ranks with the same color >= 0 form a group,
   * ordered by key then by rank in g; color < 0 returns NULL */
  contend_group *(*split)(contend_group *g, int color, int key);
  void (*group_free)(contend_group *g); /* collective over g; NULL is fine */
  void (*barrier)(contend_group *g);
  /* in place; every rank gets the result */
  void (*allreduce)(contend_group *g, void *buf, int count, contend_dtype dt, contend_op op);
  /* in place; the result at rank 0 (buf unchanged elsewhere) */
  void (*reduce)(contend_group *g, void *buf, int count, contend_dtype dt, contend_op op);
  void (*bcast)(contend_group *g, void *buf, size_t bytes); /* from rank 0 */
  /* bytes from every rank, in rank order: into all (size x bytes) at rank
   * 0 only (all may be NULL elsewhere) / at every rank */
  void (*gather)(contend_group *g, const void *mine, size_t bytes, void *all);
  void (*allgather)(contend_group *g, const void *mine, size_t bytes, void *all);
  /* variable sizes: rank 0 gets a malloc'd concatenation in rank order
   * (the caller frees it; never NULL at rank 0, even when empty) and, if
   * counts != NULL, each rank's byte count (size entries); other ranks
   * get NULL */
  void *(*gatherv)(contend_group *g, const void *mine, size_t bytes, size_t *counts);
  /* variable sizes, every rank to every rank: send holds counts[q] bytes
   * for each rank q, in rank order; returns a malloc'd concatenation of
   * what every rank sent this one, in rank order (the caller frees it;
   * never NULL), each sender's byte count in rcounts (size entries).
   * NULL on the in-process engines (they are one process). */
  void *(*alltoallv)(contend_group *g, const void *send, const size_t *counts, size_t *rcounts);
  /* Non-blocking barrier: post is collective (every rank posts once);
   * test returns 1 once every rank has posted, without blocking (on
   * in-process engines it lets other ranks run); wait blocks until then
   * (idle != 0: give the CPU away between polls, for a rank that may wait
   * long on a shared host).  free after completion; g is the group the
   * signal was posted on. */
  contend_signal *(*signal_post)(contend_group *g);
  int (*signal_test)(contend_group *g, contend_signal *s);
  void (*signal_wait)(contend_group *g, contend_signal *s, int idle);
  void (*signal_free)(contend_group *g, contend_signal *s);
  /* Node discovery, collective over the world group.  virtual_nodes K > 0:
   * K consecutive ranks form a node (engines that define their own nodes
   * may ignore it).  Returns 0, or -1 with a message (the same on every
   * rank) for bad input. */
  int (*nodes)(contend_group *world, int virtual_nodes, contend_nodes *out, char *err,
               size_t errlen);
  /* this rank's host name and the communication library (first line) */
  void (*host_name)(contend_group *g, char *buf, size_t len);
  void (*library)(contend_group *g, char *buf, size_t len, int *version, int *subversion);
  /* Opens a motif context on g's measured channel (collective over g):
   * fills rank/size/node_of (my_node of every rank, gathered on the
   * control channel), ops, params, seed, the job fields from *job when not
   * NULL, allocates the motif state and calls setup.  Returns 0, or -1 on
   * every rank of g if setup failed on any (the reason in the failing
   * rank's c->error).  The context must be closed even then. */
  int (*ctx_open)(contend_ctx *c, const contend_motif *m, const contend_params *p, contend_group *g,
                  int my_node, uint64_t seed, const contend_ctx *job);
  /* Frees the motif's engine memory, window (collective over the
   * context's group) and state. */
  void (*ctx_close)(contend_ctx *c);
  /* Watchdog: seconds > 0 arms (or re-arms) a limit on this rank's
   * clock; when it expires the run prints msg, removes the files the I/O
   * motifs created and aborts with exit status 3.  0 disarms. */
  void (*watchdog)(contend_group *world, double seconds, const char *msg);
  /* Peak resident memory of this process in MiB (the trace and simulated
   * engines report the process's, shared by all their ranks). */
  double (*peak_rss_mib)(contend_group *g);
  /* Optional (NULL: nothing): the run's seed as the run envelope resolved
   * it (given, or drawn from the clock; recorded in the results), called
   * by every rank before any motif context opens.  An engine that makes
   * random choices of its own (the simulator's routing) draws them from
   * it, so that the recorded seed replays the run. */
  void (*seed)(contend_group *world, uint64_t seed);
  /* Optional (NULL: nothing): writes the engine's own members into the
   * results object being written at rank 0 (the simulator: its fabric,
   * counters summary). */
  void (*results_json)(contend_group *g, struct contend_json *j);
  /* Optional (NULL: nothing): one line on how the engine runs the motifs,
   * for the text reports' header (the MPI engine: its RMA policy). */
  void (*describe)(contend_group *g, char *buf, size_t len);
} contend_world_ops;

/* What a launch needs from the command line. */
typedef struct contend_launch {
  int *argc;
  char ***argv;
  int nodes, ranks_per_node; /* engines that play every rank in one process */
  contend_params *opts;      /* the run options (engines read their own) */
} contend_launch;

/* The body of a run: called once per rank with its world group; returns
 * the rank's exit status (the run's status is rank 0's). */
typedef int (*contend_body)(contend_group *world, void *arg);

/* A group of an engine's own run options: rows (each declared once, by
 * the engine or the module it drives) that apply with that engine only.
 * Every measuring command lists them; another engine refuses them with
 * "--KEY WHAT: it needs --engine NAME". */
typedef struct contend_engine_options {
  const contend_param_def *rows; /* CONTEND_PARAM_END-terminated; NULL ends the list */
  const char *what;              /* what the rows do, completing the refusal above */
} contend_engine_options;

/* An engine, registered by name (src/run/engines.c). */
typedef struct contend_engine {
  const char *name;
  const char *help; /* one line, for --help */
  /* NULL: built.  Else why this build has no such engine (one line, for
   * --engine NAME); a registered engine that is not built keeps its
   * options (they are listed and refused as with the built one) and
   * nothing else. */
  const char *not_built;
  /* Its own run options, groups ended by a NULL rows (NULL: none). */
  const contend_engine_options *options;

  /* Capabilities (1/0), asked instead of the engine's name: */
  /* plays every rank in this process (fibers): --nodes/--ranks-per-node
   * apply, outputs are created once before the launch, and the I/O
   * motifs' data files are counted, not opened; 0: real ranks on real
   * hosts, started by a launcher (mpirun, srun), whose host names match
   * a topology.conf */
  int in_process;
  /* in_process, and under a launcher of P > 1 processes runs one run
   * spread over them (the simulator: mpirun -n P contend load --engine sim) */
  int over_processes;
  /* records a plan and measures nothing (--dry-run selects it): no clock
   * seed (seed 0 unless given), no wall time, no progress lines */
  int dry_run;
  /* its clock is simulated time: a default timeout is long to simulate */
  int simulated_time;

  /* Words of its own (NULL: none): */
  /* environment.node_discovery in the results; NULL: the nodes are
   * discovered ("virtual" with --virtual-nodes, else "shared_memory") */
  const char *node_discovery;
  /* how to give a run more nodes, for a refusal that lacks them */
  const char *more_nodes;
  /* the run option (key) that describes the machine, topology included:
   * the job-file tree placements read the tree from it, and
   * --topology-conf is refused in its favour */
  const char *machine_option;
  /* a note for the reports of a run that did file I/O (lines joined by
   * '\n') */
  const char *file_io_note;

  /* Hooks.  Optional (NULL: nothing): adds the files its run options name
   * beyond their CONTEND_P_FILE_* rows to fs, for the run's file checks
   * (the simulator: --topology slurm:FILE). */
  void (*files)(const contend_params *opts, struct contend_files *fs);
  /* Optional: validates the engine's own run options before anything
   * runs; returns 0, or -1 with one line in err (exit status 2). */
  int (*check)(contend_params *opts, char *err, size_t errlen);
  /* Runs body on every rank and returns the run's exit status.  MPI:
   * initializes MPI, runs body in this process, finalizes.  In-process
   * engines: every rank of nodes x ranks_per_node. */
  int (*launch)(const contend_launch *l, contend_body body, void *arg);
} contend_engine;

/* Every registered engine, built or not, NULL-terminated. */
extern const contend_engine *const contend_engines[];
/* The built engine of that name, or NULL (unknown, or not built). */
const contend_engine *contend_engine_find(const char *name);
/* The registered engine of that name, built or not, or NULL. */
const contend_engine *contend_engine_registered(const char *name);
/* The engine --dry-run runs on (the built one that is a dry run). */
const contend_engine *contend_engine_for_dry_run(void);

/* Wrappers: what the run layer uses. */
static inline double contend_now(const contend_group *g) { return g->now(); }
static inline contend_group *contend_split(contend_group *g, int color, int key) {
  return g->ops->split(g, color, key);
}
static inline void contend_group_free(contend_group *g) {
  if (g)
    g->ops->group_free(g);
}
static inline void contend_gbarrier(contend_group *g) { g->ops->barrier(g); }
static inline void contend_gallreduce(contend_group *g, void *buf, int count, contend_dtype dt,
                                      contend_op op) {
  g->ops->allreduce(g, buf, count, dt, op);
}
static inline void contend_greduce(contend_group *g, void *buf, int count, contend_dtype dt,
                                   contend_op op) {
  g->ops->reduce(g, buf, count, dt, op);
}
static inline void contend_gbcast(contend_group *g, void *buf, size_t bytes) {
  g->ops->bcast(g, buf, bytes);
}
static inline void contend_ggather(contend_group *g, const void *mine, size_t bytes, void *all) {
  g->ops->gather(g, mine, bytes, all);
}
static inline void contend_gallgather(contend_group *g, const void *mine, size_t bytes, void *all) {
  g->ops->allgather(g, mine, bytes, all);
}
static inline void *contend_ggatherv(contend_group *g, const void *mine, size_t bytes,
                                     size_t *counts) {
  return g->ops->gatherv(g, mine, bytes, counts);
}
static inline contend_signal *contend_signal_post(contend_group *g) {
  return g->ops->signal_post(g);
}
static inline int contend_signal_test(contend_group *g, contend_signal *s) {
  return g->ops->signal_test(g, s);
}
static inline void contend_signal_wait(contend_group *g, contend_signal *s, int idle) {
  g->ops->signal_wait(g, s, idle);
}
static inline void contend_signal_free(contend_group *g, contend_signal *s) {
  g->ops->signal_free(g, s);
}

#endif
