/* The paths a routing can give a packet between two nodes of the
 * simulated fabric (paths.c): every sequence of channels (router output
 * ports, numbered as in topo.h: c < nports a router port, nports + n node
 * n's NIC) from the source NIC to the router port that delivers to the
 * destination, following sim_route_alternatives hop by hop (dmodk: one
 * path; random, adaptive, dmodk-adaptive: every up port; valiant: one
 * path per intermediate group; ugal, ugal-g: minimal and non-minimal;
 * par: those and the turns at the second router).  The Netscope latency
 * model sums link delays over these paths. */
#ifndef CONTEND_SIM_PATHS_H
#define CONTEND_SIM_PATHS_H

#include <stddef.h>

#include "contend/rng.h"
#include "route.h"

/* Paths of one pair: path i is links[start[i] .. start[i+1]-1], crossed
 * on VCs vcs[start[i] .. start[i+1]-1] (the NIC injects on VC 0).
 * Owned by the caller: sim_path_set_free. */
typedef struct sim_path_set {
  long *links;
  int *vcs;
  int *start; /* npaths + 1 */
  int npaths;
  long total; /* paths the routing has; > npaths when sampled */
} sim_path_set;

/* Enumerates the paths from src to dst (src != dst).  When there are
 * more than max_paths, a uniform sample of max_paths (drawn with rng,
 * kept in enumeration order) is returned and total says how many exist.
 * Returns 0, or -1 with err (a routing that loops or delivers to the
 * wrong node, or more than 10^6 paths). */
int sim_paths_enumerate(const sim_routing *R, int src, int dst, int max_paths, contend_rng *rng,
                        sim_path_set *out, char *err, size_t errlen);
void sim_path_set_free(sim_path_set *p);

#endif
