/* Fuzz harness: the simulated fabric's topology specs (src/fabric/
 * topo*.c: switch, xgft, fattree, dragonfly; slurm:FILE is fuzzed by
 * fuzz_topology_conf), the graph check every builder ends with, and the
 * routing tables the engine builds next (src/fabric/route.c).
 * Input: the spec, one line.  Findings: a crash, a sanitizer report, a
 * leak, a failure without a one-line message, or a graph that parses but
 * does not validate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/fabric/topo.h"
#include "fuzz_topo.h"
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
  const int rc = sim_topo_parse(spec, &t, err, sizeof err);
  fuzz_check_topology("sim_topo_parse", rc, &t, err, sizeof err);
  sim_topo_free(&t);
  free(spec);
  return 0;
}
