/* The topology size limits under fuzzing: scaled down from the defaults
 * (src/engine_sim/topo.h), so that the largest fabric an input may
 * describe is handled in well under the fuzzer's 1 s per input with the
 * sanitizers on (10-20x slower than a plain build).  The code paths are
 * the same; only the numbers in the limit checks change.  Parsing and
 * building the graph (topology harnesses) is linear in its size; the
 * fabric an option set describes is also routed and checked for
 * deadlock (the channel dependency graph, superlinear: 2 s for a 6,384-
 * node dragonfly in a plain build), hence the smaller "fabric" scale. */
#ifndef CONTEND_FUZZ_LIMITS_H
#define CONTEND_FUZZ_LIMITS_H

#include "../src/engine_sim/topo.h"

static inline void fuzz_scale_topology_limits(void) {
  sim_topo_max.nodes = 1 << 16;
  sim_topo_max.routers = 1 << 16;
  sim_topo_max.ports = 1 << 18;
}

static inline void fuzz_scale_fabric_limits(void) {
  sim_topo_max.nodes = 512;
  sim_topo_max.routers = 256;
  sim_topo_max.ports = 4096;
}

#endif
