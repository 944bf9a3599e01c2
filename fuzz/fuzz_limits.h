/* The topology size limits under fuzzing: scaled down from the defaults
 * (src/engine_sim/topo.h), so that the largest fabric an input may
 * describe is built in well under the fuzzer's 1 s per input with the
 * sanitizers on (about 20x slower than a plain build).  The code paths
 * are the same; only the numbers in the limit checks change. */
#ifndef CONTEND_FUZZ_LIMITS_H
#define CONTEND_FUZZ_LIMITS_H

#include "../src/engine_sim/topo.h"

static inline void fuzz_scale_topology_limits(void) {
  sim_topo_max.nodes = 1 << 16;
  sim_topo_max.routers = 1 << 16;
  sim_topo_max.ports = 1 << 18;
}

#endif
