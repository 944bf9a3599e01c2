/* contend: the in-process control plane, the run layer's side meant for
 * engines (implemented in src/run/world_inproc.c).
 *
 * Every rank of nodes x ranks_per_node is a fiber of this process
 * (src/coop/), rank r on node r / ranks_per_node; control collectives are
 * rendezvous in memory.  An engine plugs in its clock, its motif contexts
 * (data plane), its watchdog and what an idle scheduler does: the trace
 * engine (no time, dry runs) and the simulated fabric (simulated time).
 *
 * Direction of dependencies: engines (src/engine_*) include this header
 * and the other public ones (world.h, engine.h), never a header of
 * src/run; src/run, src/suite and src/jobs include no engine header and
 * reach engines only through the registry (world.h: contend_engines). */
#ifndef CONTEND_INPROC_H
#define CONTEND_INPROC_H

#include "contend/world.h"

/* The members of a group that opened a motif context together: shared
 * by their contexts; the last to close releases it
 * (contend_inproc_comm_release). */
typedef struct contend_inproc_comm {
  int refs, size;           /* refs: the members in this process that have not released it */
  unsigned long long id;    /* the same in every process of a simulation over processes */
  int *node;                /* node of each group rank */
  int *wrank;               /* world rank (fiber) of each group rank */
  struct contend_ctx **ctx; /* each group rank's context (NULL: in another process) */
  void *close;              /* the close barrier's group (contend_inproc_comm_close_wait) */
} contend_inproc_comm;

void contend_inproc_comm_release(void *comm);

/* A barrier of the comm's members (group rank `rank` calls it), for an
 * engine's close: returns the control latency after the last member
 * arrives, over processes as in one.  Every member calls it once. */
void contend_inproc_comm_close_wait(contend_inproc_comm *comm, int rank);

/* Over processes: the context group here named id (contend_inproc_comm
 * .id), or NULL when none of its members is here (or it was released).
 * A message from another process names its group so. */
contend_inproc_comm *contend_inproc_comm_find(unsigned long long id);

typedef struct contend_inproc_backend {
  const struct contend_engine *engine; /* the registered engine (world ops engine) */
  const char *library;                 /* what `library` reports */
  double (*now)(void);
  /* Opens c as group rank `rank` of comm (every member's node, wrank and
   * ctx are filled) and runs the motif's setup; returns its status.  The
   * backend releases comm (contend_inproc_comm_release) when c closes. */
  int (*ctx_open)(contend_ctx *c, const contend_motif *m, const contend_params *p, int rank,
                  contend_inproc_comm *comm, uint64_t seed, const contend_ctx *job);
  void (*ctx_close)(contend_ctx *c);
  /* arms (seconds > 0) or disarms the run's watchdog; NULL: no time passes */
  void (*watchdog)(double seconds, const char *msg);
  /* signal_test found its signal incomplete: let the others progress
   * (trace: yield; sim: sleep a polling interval of simulated time) */
  void (*poll)(void);
  /* The control plane's latency, for an engine with a clock (NULL: none,
   * as the trace engine).  control_delay() is D in the backend's ticks (the
   * simulator's picoseconds; fixed for the run): a collective completes D
   * after its last member arrives (every member returns then, the last one
   * too) and a signal is seen D after its last post.  D = 0: at once.  The
   * delay lets a simulation spread over processes agree on control without
   * rolling back: no control outcome is seen sooner than D after it is
   * decided, so a process a window of at most D ahead has not missed it.
   * ticks() is the current time; wake_at(wrank, t) wakes that rank's fiber
   * at t (once; it may be parked for another reason meanwhile). */
  unsigned long long (*control_delay)(void);
  unsigned long long (*ticks)(void);
  void (*wake_at)(int wrank, unsigned long long t);
  /* the scheduler's idle hook (coop_set_idle), or NULL */
  int (*idle)(void);
  /* world ops seed and results_json (NULL: none) */
  void (*seed)(contend_group *world, uint64_t seed);
  void (*results_json)(contend_group *g, struct contend_json *j);
} contend_inproc_backend;

/* Runs body on nodes x ranks_per_node fibers with backend b; returns rank
 * 0's status, or exit status 2 (with a message) for bad sizes. */
int contend_inproc_launch(const contend_inproc_backend *b, int nodes, int ranks_per_node,
                          contend_body body, void *arg);

/* One simulation over processes: each process runs the fibers of the ranks
 * on its nodes and keeps a replica of every group with a member here.  A
 * member's control call (a collective's arrival, a signal's post) is
 * applied here at once and recorded with its time and what the others
 * need of its data; the backend swaps the records at the end of every
 * window of its conservative synchronisation and hands in the others'.
 * A collective completes in every replica when its last arrival is in, at
 * that arrival's time + control_delay(), whatever order the arrivals came
 * in, so ranks return at the same simulated times at any process count;
 * a window must therefore be at most control_delay() long, and its
 * records swapped before the next window runs.  Groups are named by
 * (parent, collective number, color), alike in every process. */
typedef struct contend_inproc_procs {
  int count, me;           /* the processes, this one (0 .. count-1) */
  const int *proc_of_node; /* the process that runs each node's ranks (nodes entries) */
  /* Called once this process's ranks have all returned: takes part in the
   * windows until every process's ranks have (the backend's idle hook runs
   * them while ranks here are parked).  status: rank 0's if it ran here,
   * else -1.  Returns rank 0's status, the same in every process. */
  int (*finish)(int status);
} contend_inproc_procs;

/* contend_inproc_launch over processes (procs NULL or count 1: this
 * process alone, as contend_inproc_launch).  Collective over the
 * backend's processes. */
int contend_inproc_launch_procs(const contend_inproc_backend *b, int nodes, int ranks_per_node,
                                const contend_inproc_procs *procs, contend_body body, void *arg);

/* The swap, at a window's end (over processes; nothing in one process):
 * the records made here for process q since the last clear (len bytes;
 * NULL when none), their clearing once every q's are sent, and the
 * applying of what one process sent this one (call it for each process,
 * in process order).  Completions may wake ranks here (the backend's
 * wake_at, at least control_delay() after the records' times). */
const void *contend_inproc_outbox(int q, size_t *len);
void contend_inproc_outbox_clear(void);
void contend_inproc_inbox(const void *buf, size_t len);

#endif
