/* Topology helpers of the fuzz harnesses.  The size limits under fuzzing: scaled down from the
 * defaults (src/fabric/topo.h), so that the largest fabric an input may describe is handled in
 * well under the fuzzer's 1 s per input with the sanitizers on (10-20x slower than a plain build).
 * The code paths are the same; only the numbers in the limit checks change.  Parsing and building
 * the graph (topology harnesses) is linear in its size; the fabric an option set describes is also
 * routed and checked for deadlock (the channel dependency graph, superlinear: 2 s for a 6,384- node
 * dragonfly in a plain build), hence the smaller "fabric" scale. */
#ifndef CONTEND_FUZZ_TOPO_H
#define CONTEND_FUZZ_TOPO_H

#include <stdlib.h>

#include "../src/fabric/route.h"
#include "../src/fabric/topo.h"
#include "fuzz_util.h"

static inline void fuzz_scale_topology_limits(void) {
  sim_topo_max.nodes = 1 << 16;
  sim_topo_max.routers = 1 << 16;
  sim_topo_max.ports = 1 << 18;
}

/* topology.conf: names are expanded from hostlists character by character
 * (up to 255 per name) and hashed, so the time per node is larger. */
static inline void fuzz_scale_conf_limits(void) {
  sim_topo_max.nodes = 1 << 13;
  sim_topo_max.routers = 1 << 13;
  sim_topo_max.ports = 1 << 16;
}

static inline void fuzz_scale_fabric_limits(void) {
  sim_topo_max.nodes = 512;
  sim_topo_max.routers = 256;
  sim_topo_max.ports = 4096;
}

/* What the topology harnesses check of a parse (rc, err from the parser
 * named what; *t freed by the caller): a failure has a one-line message;
 * a graph the parser returns passes its own check; then the default
 * routing is built, as `contend sim` does next (tables grow with nodes x
 * routers: only up to 4096 nodes, to keep inputs fast). */
static inline void fuzz_check_topology(const char *what, int rc, const sim_topo *t, char *err,
                                       size_t errlen) {
  if (rc) {
    fuzz_check_message(what, err);
    return;
  }
  if (sim_topo_validate(t, err, errlen)) {
    fuzz_check_message("sim_topo_validate", err);
    abort();
  }
  if (t->nnodes > 4096)
    return;
  sim_routing *R = NULL;
  if (sim_routing_new(t, NULL, NULL, &R, err, errlen))
    fuzz_check_message("sim_routing_new", err);
  else
    sim_routing_free(R);
}

#endif
