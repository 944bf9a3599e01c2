/* Helpers shared by the fuzz harnesses (contract in fuzz_util.h). */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char scratch[4096];

static void remove_scratch(void) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", scratch);
  if (system(cmd)) {
    /* best effort: a leftover directory under $TMPDIR is harmless */
  }
}

const char *fuzz_scratch(void) {
  if (scratch[0])
    return scratch;
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp)
    tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp"; /* memory: files written per input */
  snprintf(scratch, sizeof scratch, "%s/contend-fuzz-XXXXXX", tmp);
  if (!mkdtemp(scratch)) {
    perror("contend fuzz: cannot make a scratch directory");
    abort();
  }
  atexit(remove_scratch);
  return scratch;
}

char *fuzz_strndup(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s)
    abort();
  memcpy(s, data, size);
  s[size] = 0;
  return s;
}

int fuzz_split_lines(char *text, char **out, int max) {
  int n = 0;
  char *p = text;
  while (n < max) {
    out[n++] = p;
    char *nl = strchr(p, '\n');
    if (!nl)
      break;
    *nl = 0;
    p = nl + 1;
  }
  return n;
}

void fuzz_check_message(const char *what, const char *err) {
  static int verbose = -1;
  if (verbose < 0)
    verbose = getenv("CONTEND_FUZZ_VERBOSE") != NULL;
  if (verbose)
    fprintf(stderr, "%s: %s\n", what, err);
  if (!err[0] || strchr(err, '\n')) {
    fprintf(stderr, "contend fuzz: %s failed with %s message: '%s'\n", what,
            err[0] ? "a multi-line" : "an empty", err);
    abort();
  }
}
