/* The OTF2 reader in a build without OTF2: every call says so (the replay
 * motif and `contend record` then refuse with exit status 2). */
#include <stdio.h>
#include <string.h>

#include "trace.h"

#ifndef CONTEND_OTF2_WHY
#define CONTEND_OTF2_WHY "contend was built without OTF2"
#endif

int contend_trace_available(const char **why_not) {
  if (why_not)
    *why_not = CONTEND_OTF2_WHY;
  return 0;
}

static int not_built(const char *path, char *err, size_t errlen) {
  snprintf(err, errlen, "%s: cannot read OTF2 traces: %s", path, CONTEND_OTF2_WHY);
  return -1;
}

int contend_trace_read(const char *path, int rank, contend_trace *t, char *err, size_t errlen) {
  (void)rank;
  memset(t, 0, sizeof *t);
  return not_built(path, err, errlen);
}

int contend_trace_check(const char *path, contend_trace_sizes *sz, char *err, size_t errlen) {
  memset(sz, 0, sizeof *sz);
  return not_built(path, err, errlen);
}

void contend_trace_free(contend_trace *t) { (void)t; }
