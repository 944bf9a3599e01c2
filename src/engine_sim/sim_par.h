/* One simulation over several processes (sim_par.c): each process
 * simulates a part of the fabric (net.h, "a part of the fabric"; the
 * partition of src/fabric/partition.h), and the parts advance together
 * in windows of the lookahead, the smallest latency of a link between
 * parts (conservative synchronisation, YAWNS-style: no part can affect
 * another sooner, so no event ever arrives in a part's past).  Between
 * windows the parts agree on the earliest pending event (an allreduce)
 * and swap what crossed (an all-to-all).  The order of events in a part
 * is that of the whole fabric (des.h), so results do not depend on the
 * number of processes. */
#ifndef CONTEND_SIM_PAR_H
#define CONTEND_SIM_PAR_H

#include <stdint.h>

#include "contend/world.h"
#include "des.h"
#include "net.h"

typedef struct sim_par {
  contend_group *world; /* the processes (an MPI world: alltoallv) */
  const int *part_of_router;
  int parts, me;      /* parts = world->size, me = world->rank */
  sim_time lookahead; /* ps, > 0 */
  uint64_t windows;   /* windows run so far */
  double wait_s;      /* wall time in the window agreements and swaps */
} sim_par;

/* Collective over par->world: runs n (a part, sim_net_partition) and the
 * other parts until no event at or before `until` is left anywhere
 * (SIM_NEVER: until nothing is left).  Returns 1 when events remain in
 * some part. */
int sim_par_run(sim_net *n, sim_par *par, sim_time until);

#endif
