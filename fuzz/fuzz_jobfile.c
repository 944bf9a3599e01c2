/* Fuzz harness: the job-file parser of `contend jobs` (src/jobs/jobfile.c)
 * with [VAR] expansion and -D defines, then node placement and motif
 * validation as a run would do them.  Input: the job file's text; leading
 * lines "-DNAME=VALUE" are taken as -D defines.  Findings: a crash, a
 * sanitizer report, a leak, or a failure without a one-line message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/fabric/tree.h"
#include "../src/jobs/jobs.h"
#include "fuzz_util.h"

#define MAX_DEFINES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16 || memchr(data, 0, size)) /* the loader refuses NUL bytes first */
    return -1;
  char *text = fuzz_strndup(data, size);
  char *defs[MAX_DEFINES];
  int ndefs = 0;
  char *body = text;
  while (ndefs < MAX_DEFINES && !strncmp(body, "-D", 2)) {
    char *nl = strchr(body, '\n');
    if (!nl)
      break;
    *nl = 0;
    defs[ndefs++] = body + 2;
    body = nl + 1;
  }
  char err[2048] = "";
  contend_jobfile jf;
  if (contend_jobfile_parse(&jf, "fuzz.job", body, defs, ndefs, err, sizeof err)) {
    fuzz_check_message("contend_jobfile_parse", err);
  } else {
    /* as `contend jobs --dry-run --nodes N` would place it, for two sizes,
     * then with a tree (--topology-conf): 4 pods of 4 leaves of 4 nodes,
     * all 64 nodes or the first 40 */
    static contend_tree tree;
    static int have_tree;
    if (!have_tree)
      have_tree = !contend_tree_load("fattree:pods=4,leaves=4,nodes=4,uplinks=2,pod_uplinks=2",
                                     &tree, err, sizeof err);
    static const int sizes[] = {4, 64, 64, 40};
    for (int k = 0; k < 4; k++) {
      err[0] = 0;
      const contend_tree *t = k >= 2 && have_tree ? &tree : NULL;
      if (contend_jobs_place_tree(&jf, sizes[k], t, NULL, 42, err, sizeof err)) {
        fuzz_check_message("contend_jobs_place", err);
        continue;
      }
      int ranks[256];
      const int nj = jf.njobs < 256 ? jf.njobs : 256;
      for (int j = 0; j < nj; j++)
        ranks[j] = jf.jobs[j].nnodes;
      if (nj == jf.njobs && contend_jobs_validate(&jf, ranks, err, sizeof err))
        fuzz_check_message("contend_jobs_validate", err);
    }
  }
  contend_jobfile_free(&jf);
  free(text);
  return 0;
}
