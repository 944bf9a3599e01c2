/* Partitions of a fabric's routers over P processes, for a simulation
 * spread over them (each process simulates its routers and the nodes
 * attached to them): by the fabric's own groups (a dragonfly's groups, a
 * tree's pods) or by a graph partition of the router graph (METIS,
 * weighted by ports, minimising the links cut).  The links between parts
 * are what the processes exchange packets and credits over; the smallest
 * latency among them bounds the lookahead of a conservative simulation.
 *
 * Ownership: sim_partition_make fills *p with arrays it allocates;
 * sim_partition_free releases them. */
#ifndef CONTEND_SIM_PARTITION_H
#define CONTEND_SIM_PARTITION_H

#include <stddef.h>
#include <stdint.h>

#include "topo.h"

#define SIM_PARTITION_METHODS "auto, groups, graph"

typedef struct sim_partition {
  int parts;
  const char *method;  /* "groups" or "graph" (what auto chose), static */
  int *part_of_router; /* nrouters */
  /* per part (parts entries): routers, nodes attached to them, router
   * ports (every port is a channel whose events the part runs) and the
   * ports whose link leads to another part */
  int *routers, *nodes;
  long *ports, *cut_ports;
  long cut_links; /* router-to-router links between parts, each once */
  long links;     /* router-to-router links in all */
  long cut_by_class[SIM_LINK_NCLASS];
} sim_partition;

/* Partitions t's routers into `parts` by method (auto: groups when the
 * fabric has at least `parts` of them, else graph); seed drives the graph
 * partitioner's choices (the same seed, the same partition).  Refuses,
 * -1 with one line in err (exit status 2): parts < 1 or above the
 * routers, an unknown method, groups on a fabric without groups or with
 * fewer than `parts`, and a partition that leaves a part without a
 * router.  Returns 0 otherwise. */
int sim_partition_make(const sim_topo *t, int parts, const char *method, uint64_t seed,
                       sim_partition *p, char *err, size_t errlen);
void sim_partition_free(sim_partition *p);

/* The lookahead of a simulation over the parts: the smallest of latency[]
 * (per link class, any time unit) over the classes the partition cuts,
 * its class in *cls; UINT64_MAX when nothing is cut (one part). */
uint64_t sim_partition_lookahead(const sim_partition *p, const uint64_t latency[SIM_LINK_NCLASS],
                                 int *cls);

#endif
