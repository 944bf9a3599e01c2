/* Fuzz harness: the option parsers of `contend network`, `load`, `jobs`
 * and `sim` (src/suite/config.c, src/jobs/main.c, src/engine_sim/
 * sim_cmd.c, over src/core/param.c), with the checks they run before any
 * measurement (engine rows, motif validation, the simulated fabric of
 * --engine sim).  Input: one argument per line, the first the command.
 * Inputs containing '/' are refused: the parsers try --output paths for
 * writability (a temporary made and removed beside the path), which must
 * stay in the working directory.  Findings: a crash, a sanitizer report,
 * a leak, or a failure without a one-line message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../src/engine_sim/sim_cmd.h"
#include "../src/jobs/jobs.h"
#include "../src/suite/suite.h"
#include "fuzz_topo.h"
#include "fuzz_util.h"

#define MAX_ARGS 64

static void fuzz_suite(contend_command cmd, int argc, char **argv) {
  contend_config cfg;
  contend_strbuf out = {0};
  char err[2048] = "";
  if (contend_config_parse(&cfg, cmd, argc, argv, &out, err, sizeof err) < 0)
    fuzz_check_message(cmd == CONTEND_CMD_LOAD ? "contend load" : "contend network", err);
  contend_sb_free(&out);
  contend_config_free(&cfg);
}

static void fuzz_jobs(int argc, char **argv) {
  contend_param_def *defs = contend_jobs_option_defs();
  contend_params p;
  contend_strbuf out = {0};
  char err[2048] = "", **d = NULL;
  int nd = 0;
  const char *file = NULL;
  if (contend_params_init(&p, defs, "", err, sizeof err))
    abort();
  if (contend_jobs_parse_args(argc, argv, &p, &file, &d, &nd, &out, err, sizeof err) < 0)
    fuzz_check_message("contend jobs", err);
  free(d);
  contend_sb_free(&out);
  contend_params_free(&p);
  free(defs);
}

static void fuzz_sim(int argc, char **argv) {
  sim_cmd_args a;
  char err[1024] = "";
  const int rc = sim_cmd_parse(&a, argc, argv, err, sizeof err);
  if (rc == -2)
    abort(); /* the parameter table itself is broken */
  if (rc < 0)
    fuzz_check_message("contend sim", err);
  sim_cmd_args_free(&a);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  fuzz_scale_fabric_limits();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096 || memchr(data, '/', size) || memchr(data, 0, size))
    return -1;
  char *text = fuzz_strndup(data, size);
  char *argv[MAX_ARGS + 1];
  const int argc = fuzz_split_lines(text, argv, MAX_ARGS);
  argv[argc] = NULL;
  if (!strcmp(argv[0], "network"))
    fuzz_suite(CONTEND_CMD_NETWORK, argc, argv);
  else if (!strcmp(argv[0], "load"))
    fuzz_suite(CONTEND_CMD_LOAD, argc, argv);
  else if (!strcmp(argv[0], "jobs"))
    fuzz_jobs(argc, argv);
  else if (!strcmp(argv[0], "sim"))
    fuzz_sim(argc, argv);
  free(text);
  return 0;
}
