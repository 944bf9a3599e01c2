/* Fuzz harness: the simulated fabric's topology specs (src/engine_sim/
 * topo*.c: switch, xgft, fattree, dragonfly; slurm:FILE is fuzzed by
 * fuzz_topology_conf), the graph check every builder ends with, and the
 * routing tables the engine builds next (src/engine_sim/route.c).
 * Input: the spec, one line.  Findings: a crash, a sanitizer report, a
 * leak, a failure without a one-line message, or a graph that parses but
 * does not validate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/engine_sim/route.h"
#include "../src/engine_sim/topo.h"
#include "fuzz_limits.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_scale_topology_limits();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 512 || memchr(data, 0, size) || memchr(data, '\n', size) ||
      (size >= 6 && !memcmp(data, "slurm:", 6)))
    return -1;
  char *spec = fuzz_strndup(data, size);
  sim_topo t;
  memset(&t, 0, sizeof t);
  char err[1024] = "";
  if (sim_topo_parse(spec, &t, err, sizeof err)) {
    fuzz_check_message("sim_topo_parse", err);
  } else if (sim_topo_validate(&t, err, sizeof err)) {
    fuzz_check_message("sim_topo_validate", err);
    abort(); /* a builder's output must pass its own check */
  } else if (t.nnodes <= 4096) {
    /* the topology's default routing, as `contend sim` builds it next
     * (tables grow with nodes x routers: bounded to keep inputs fast) */
    sim_routing *R = NULL;
    if (sim_routing_new(&t, NULL, 0, 0, &R, err, sizeof err))
      fuzz_check_message("sim_routing_new", err);
    else
      sim_routing_free(R);
  }
  sim_topo_free(&t);
  free(spec);
  return 0;
}
