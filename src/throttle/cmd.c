/* `contend throttle [OPTIONS] -- CMD [ARGS...]`: validates the throttle's
 * options (the rows of ct_param_defs and ct_lib_param_defs), sets the
 * CONTEND_THROTTLE* variables and LD_PRELOAD (libcontend-throttle.so found
 * next to this binary: ../lib), and execs CMD.  Nothing runs on bad input. */
#include "cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/libpath.h"
#include "contend/files.h"
#include "contend/strbuf.h"
#include "libparams.h"
#include "params.h"
#include "sources.h"

#define LIBNAME "libcontend-throttle.so"

static void help(const contend_params *p) {
  contend_strbuf out = {0};
  contend_params_help(p, "", &out);
  printf("usage: contend throttle [OPTIONS] -- CMD [ARGS...]\n\n"
         "Runs CMD with the PMPI throttle (%s) preloaded: every MPI process of CMD\n"
         "paces its sends to a rate R that a DCQCN-like controller (Netscope eq. 13-15)\n"
         "updates every window from the node's NIC injection stall.  Calls on\n"
         "communicators named \"contend-control\" (contend's own control traffic) are\n"
         "never throttled.  Every option becomes an environment variable CONTEND_KEY\n"
         "(upper case), which the library reads at MPI_Init.\n\n"
         "Options:\n%s\n"
         "Examples:\n"
         "  mpirun -n 4 contend throttle --throttle netscope --throttle-ca 4.6 -- ./app\n"
         "  mpirun -n 2 contend throttle --throttle static:10 -- ./app\n"
         "  srun contend throttle --throttle dcqcn --throttle-source ib:mlx5_0:1 -- ./app\n"
         "Wrapping the launcher instead (contend throttle ... -- mpirun ...) needs the\n"
         "launcher to pass the environment on (Open MPI: -x LD_PRELOAD -x CONTEND_THROTTLE...).\n"
         "docs/throttle.md describes the library, its sources and its log.\n",
         LIBNAME, out.s ? out.s : "");
  contend_sb_free(&out);
}

int contend_throttle_library(char *out, size_t len) {
  return contend_library_path(LIBNAME, out, len);
}

int contend_throttle_main(int argc, char **argv, int verbose) {
  contend_param_def *defs = ct_all_param_defs();
  contend_params p;
  char err[PATH_MAX + 256] = ""; /* room for a library path */
  if (!defs || contend_params_init(&p, defs, "", err, sizeof err)) {
    fprintf(stderr, "contend throttle: %s\n", err);
    free(defs);
    return 3;
  }
  int prog = 0;
  int rc = contend_parse_program_argv(&p, argc, argv, "run", &prog, err, sizeof err);
  if (rc == 1) {
    if (verbose)
      help(&p);
    contend_params_free(&p);
    free(defs);
    return 0;
  }
  ct_config cfg;
  double ca;
  /* the line rate is the source's unless given: check the static rate against it later */
  if (rc == 0 && ct_config_from_params(&p, 1e6, &cfg, err, sizeof err))
    rc = -1;
  if (rc == 0 && ct_ca_for(contend_param_str(&p, "throttle_ca"), NULL, &ca, err, sizeof err))
    rc = -1;
  if (rc == 0 && ct_source_spec_check(contend_param_str(&p, "throttle_source"), err, sizeof err))
    rc = -1;
  if (rc == 0 && ct_files_check(&p, 0, CONTEND_FILES_CREATE, err, sizeof err))
    rc = -1;
  if (rc == 0 && contend_param_double(&p, "throttle_window_us") < 1000) {
    snprintf(err, sizeof err,
             "--throttle-window-us %g: the library's control window must be >= 1000 us",
             contend_param_double(&p, "throttle_window_us"));
    rc = -1;
  }
  char lib[PATH_MAX];
  if (rc == 0 && contend_throttle_library(lib, sizeof lib)) {
    snprintf(err, sizeof err, "%s not found (looked for %s): build it (make build)", LIBNAME, lib);
    rc = -1;
  }
  if (rc == 0 && access(lib, R_OK)) {
    snprintf(err, sizeof err, "%s: %s", lib, strerror(errno));
    rc = -1;
  }
  if (rc != 0) {
    if (verbose)
      fprintf(stderr, "contend throttle: error: %s (see contend throttle --help)\n", err);
    contend_params_free(&p);
    free(defs);
    return 2;
  }
  for (size_t i = 0; i < p.n; i++) {
    if (!p.v[i].set)
      continue;
    char name[96], val[1024];
    ct_env_name(p.defs[i].key, name, sizeof name);
    if (p.defs[i].type == CONTEND_P_DOUBLE)
      snprintf(val, sizeof val, "%.17g", p.v[i].d); /* %g of the table would round */
    else
      contend_params_format(&p, (int)i, val, sizeof val);
    setenv(name, val, 1);
  }
  contend_params_free(&p);
  free(defs);
  contend_exec_preloaded(lib, argv + prog);
  if (verbose)
    fprintf(stderr, "contend throttle: error: cannot run %s: %s\n", argv[prog], strerror(errno));
  return 2;
}
