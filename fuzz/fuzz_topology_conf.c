/* Fuzz harness: the Slurm topology.conf reader (src/fabric/
 * topo_slurm.c: SwitchName/Nodes/Switches lines, hostlist expressions,
 * the tree's shape checks), then the tree's routing tables as --engine
 * sim builds them.  Input: the file's text.  Findings: a crash, a
 * sanitizer report, a leak, a failure without a one-line message, or a
 * tree that parses but does not validate. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/fabric/topo.h"
#include "fuzz_topo.h"
#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_scale_conf_limits();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16 || memchr(data, 0, size))
    return -1;
  char *conf = fuzz_strndup(data, size);
  sim_topo t;
  memset(&t, 0, sizeof t);
  char err[1024] = "";
  const int rc = sim_topo_parse_slurm_text("slurm:fuzz.conf", conf, &t, err, sizeof err);
  fuzz_check_topology("sim_topo_parse_slurm_text", rc, &t, err, sizeof err);
  sim_topo_free(&t);
  free(conf);
  return 0;
}
