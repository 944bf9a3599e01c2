/* Gathering traffic accumulators (contend/traffic.h) of every rank to rank
 * 0 through the control plane. */
#ifndef CONTEND_TRAFFIC_GATHER_H
#define CONTEND_TRAFFIC_GATHER_H

#include "contend/traffic.h"
#include "contend/world.h"

/* Collective over world.  mine[0..n-1] are this rank's accumulators; at
 * rank 0, into[0..n-1] receives the sum over all ranks (node pairs, exact
 * and estimated, and the scalar counters); into may be mine (it is then
 * replaced by the sum).  into is ignored on other ranks. */
void contend_traffic_gather(contend_group *world, contend_traffic *mine, contend_traffic *into,
                            int n);

#endif
