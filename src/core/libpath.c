/* Finding a library shipped beside the binary, and preloading it (see
 * libpath.h). */
#define _GNU_SOURCE
#include "libpath.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contend/param.h"

#ifndef CONTEND_INSTALL_LIBDIR
#define CONTEND_INSTALL_LIBDIR "lib"
#endif

int contend_library_path(const char *name, char *out, size_t len) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    snprintf(out, len, "%s", name);
    return -1;
  }
  self[n] = 0;
  const char *dir = dirname(self);
  static const char *const rel[] = {"../lib", "../lib64", "../" CONTEND_INSTALL_LIBDIR,
                                    "../lib/contend"};
  for (size_t i = 0; i < sizeof rel / sizeof *rel; i++) {
    char p[PATH_MAX + 64], real[PATH_MAX];
    snprintf(p, sizeof p, "%s/%s/%s", dir, rel[i], name);
    if (realpath(p, real) && access(real, R_OK) == 0) {
      snprintf(out, len, "%s", real);
      return 0;
    }
  }
  snprintf(out, len, "%s/../lib/%s", dir, name);
  return -1;
}

int contend_exec_preloaded(const char *lib, char **argv) {
  const char *pre = getenv("LD_PRELOAD");
  char *preload = malloc(strlen(lib) + (pre ? strlen(pre) : 0) + 2);
  if (!preload)
    return -1;
  sprintf(preload, "%s%s%s", lib, pre && *pre ? ":" : "", pre ? pre : "");
  const int rc = setenv("LD_PRELOAD", preload, 1);
  free(preload);
  if (rc)
    return -1;
  execvp(argv[0], argv);
  return -1;
}

int contend_parse_program_argv(contend_params *p, int argc, char **argv, const char *what,
                               int *prog, char *err, size_t errlen) {
  int dash = 1;
  while (dash < argc && strcmp(argv[dash], "--"))
    dash++;
  const int rc = contend_params_parse_argv(p, dash, argv, 1, err, errlen);
  if (rc != 0)
    return rc;
  if (dash >= argc) {
    snprintf(err, errlen, "missing '-- CMD [ARGS...]': the program to %s", what);
    return -1;
  }
  if (dash + 1 >= argc) {
    snprintf(err, errlen, "missing the program to %s after '--'", what);
    return -1;
  }
  *prog = dash + 1;
  return 0;
}
