/* One simulation over several processes (sim_par.c): each process
 * simulates a part of the fabric (net.h, "a part of the fabric"; the
 * partition of src/fabric/partition.h), and the parts advance together
 * in windows of the lookahead, the smallest latency of a link between
 * parts (conservative synchronisation, YAWNS-style: no part can affect
 * another sooner, so no event ever arrives in a part's past).  Between
 * windows the parts agree on the earliest pending event (an allreduce)
 * and swap what crossed (an all-to-all).  The order of events in a part
 * is that of the whole fabric (des.h), so results do not depend on the
 * number of processes.
 *
 * Besides the fabric's packets and credits, a swap carries the records of
 * other layers (channels): the simulated engine's control plane and MPI
 * messages; each is handed in, process by process, after the fabric's. */
#ifndef CONTEND_SIM_PAR_H
#define CONTEND_SIM_PAR_H

#include <stdint.h>

#include "contend/world.h"
#include "des.h"
#include "net.h"

/* A layer's records: those for process q since the last clear (len bytes),
 * their clearing once all are taken, and one process's records for this
 * one (called for each process in order). */
typedef struct sim_par_channel {
  const void *(*outbox)(int q, size_t *len);
  void (*clear)(void);
  void (*inbox)(const void *buf, size_t len);
} sim_par_channel;

#define SIM_PAR_CHANNELS_MAX 4

typedef struct sim_par {
  contend_group *world; /* the processes (an MPI world: alltoallv) */
  const int *part_of_router;
  int parts, me;                                        /* parts = world->size, me = world->rank */
  sim_time lookahead;                                   /* ps, > 0 */
  const sim_par_channel *channel[SIM_PAR_CHANNELS_MAX]; /* the other layers' (NULL: none) */
  uint64_t windows;                                     /* windows run so far */
  sim_time bound; /* the earliest event of a record sent in this window: its end + 1 (0 at first) */
  double wait_s;  /* wall time in the window agreements and swaps */
} sim_par;

/* Collective over par->world: runs n (a part, sim_net_partition) and the
 * other parts until no event at or before `until` is left anywhere
 * (SIM_NEVER: until nothing is left).  Returns 1 when events remain in
 * some part. */
int sim_par_run(sim_net *n, sim_par *par, sim_time until);

/* The steps of a window loop driven from outside (the simulated engine's
 * idle hook).  sim_par_window_end: the end of the window that starts at
 * next (at most until), counted.  sim_par_swap (collective): what the
 * parts sent each other in it (the fabric's records and the channels'),
 * swapped and handed in, with the agreement on the next window folded in
 * (one collective a window): returns the next window's start, the
 * earliest of every part's `mine` (its next event before the swap;
 * SIM_NEVER: none) and of the events of what was sent (at least a window
 * on), the same in every part, in *any_busy whether any part passed
 * busy != 0, and in *any_live (may be NULL) whether any part held or sent
 * something that may wake a rank (sim_net_pending_active; 0 with every
 * rank parked: a deadlock).  sim_par_agree (collective): that agreement alone, for a
 * start (nothing sent yet). */
sim_time sim_par_window_end(sim_par *par, sim_time next, sim_time until);
sim_time sim_par_swap(sim_net *n, sim_par *par, sim_time mine, int busy, int *any_busy,
                      int *any_live);
sim_time sim_par_agree(sim_par *par, sim_time mine, int busy, int *any_busy);

#endif
