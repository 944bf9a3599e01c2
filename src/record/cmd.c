/* `contend record -o DIR [--compute-scale F] [--compute-cpu] -- CMD [ARGS...]`:
 * checks the options (the rows of record_params), sets CONTEND_RECORD_DIR,
 * CONTEND_RECORD_COMPUTE_SCALE, CONTEND_RECORD_COMPUTE_CLOCK and LD_PRELOAD (libcontend-record.so
 * beside this binary) and execs CMD, whose MPI ranks then write one OTF2 archive
 * (src/record/pmpi.c).  Nothing runs on bad input; an existing DIR is
 * never overwritten. */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/libpath.h"
#include "contend/files.h"
#include "contend/param.h"
#include "contend/strbuf.h"

#define LIBNAME "libcontend-record.so"

static const contend_param_def record_params[] = {
    {"output", CONTEND_P_STRING, "", "",
     "the OTF2 archive to write: a directory that does not exist yet (-o)", 1, 0},
    {"compute_scale", CONTEND_P_DOUBLE, "1", "factor",
     "the time between two MPI calls is recorded times this", 0, 1000},
    {"compute_cpu", CONTEND_P_BOOL, "0", "",
     "record the time between two MPI calls as the thread's CPU time, not the wall time "
     "(the replay on MPI then runs each gap until its thread has had that much CPU time): "
     "for CPU-bound programs on a shared or oversubscribed host (not for sleeps, I/O or "
     "waits on a device, which take no CPU)",
     1, 0},
    CONTEND_PARAM_END};

static void help(const contend_params *p) {
  contend_strbuf out = {0};
  contend_params_help(p, "", &out);
  printf("usage: contend record -o DIR [--compute-scale F] [--compute-cpu] -- CMD [ARGS...]\n\n"
         "Runs the MPI program CMD with the PMPI recorder (%s) preloaded: every rank\n"
         "records its point-to-point, collective and one-sided calls, the communicators\n"
         "they use and the time between calls (compute), into one OTF2 archive DIR\n"
         "(DIR/traces.otf2; read it with otf2-print, replay it with the replay motif);\n"
         "its properties CONTEND::COMPUTE_CLOCK and CONTEND::RUNTIME_NS (otf2-print -I)\n"
         "give the clock of the gaps and the program's real runtime.\n"
         "Put it inside the launcher.  What is and is not recorded: docs/trace.md.\n\n"
         "Options:\n%s\n"
         "Examples:\n"
         "  mpirun -n 4 contend record -o app.trace -- ./app\n"
         "  otf2-print app.trace/traces.otf2 | head\n"
         "  contend jobs replay.job --dry-run --nodes 4   # [MOTIF] replay trace=app.trace\n",
         LIBNAME, out.s ? out.s : "");
  contend_sb_free(&out);
}

/* The archive path: given, not too long, not existing yet (checked by the
 * first rank only: the others may start after it created it), in an
 * existing, writable directory; made absolute into abs (the program may
 * change its directory before MPI_Init). */
static int check_output(const char *dir, int first, char *abs, size_t abslen, char *err,
                        size_t errlen) {
  char show[200];
  struct stat st;
  if (!*dir) {
    snprintf(err, errlen, "-o DIR is required: the OTF2 archive to write");
    return -1;
  }
  if (strlen(dir) > CONTEND_PATH_LEN_MAX) {
    snprintf(err, errlen, "-o %s: the path has more than %d characters",
             contend_path_show(dir, show, sizeof show), CONTEND_PATH_LEN_MAX);
    return -1;
  }
  if (first && !lstat(dir, &st)) {
    snprintf(err, errlen,
             "-o %s: exists already: the recorder writes a new archive and never overwrites "
             "(remove it or choose another)",
             contend_path_show(dir, show, sizeof show));
    return -1;
  }
  char *copy = strdup(dir);
  if (!copy)
    return -1;
  char *slash = strrchr(copy, '/');
  const char *base = slash ? slash + 1 : copy;
  const char *parent = slash ? (slash == copy ? "/" : (*slash = 0, copy)) : ".";
  char real[PATH_MAX];
  int rc = 0;
  if (stat(parent, &st) || !S_ISDIR(st.st_mode)) {
    snprintf(err, errlen, "-o %s: the directory %s does not exist",
             contend_path_show(dir, show, sizeof show), parent);
    rc = -1;
  } else if (access(parent, W_OK | X_OK)) {
    snprintf(err, errlen, "-o %s: cannot create it in %s: %s",
             contend_path_show(dir, show, sizeof show), parent, strerror(errno));
    rc = -1;
  } else if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
    snprintf(err, errlen, "-o %s: name a new directory", contend_path_show(dir, show, sizeof show));
    rc = -1;
  } else if (!realpath(parent, real) ||
             (size_t)snprintf(abs, abslen, "%s/%s", strcmp(real, "/") ? real : "", base) >=
                 abslen) {
    snprintf(err, errlen, "-o %s: the path is too long", contend_path_show(dir, show, sizeof show));
    rc = -1;
  }
  free(copy);
  return rc;
}

int contend_record_main(int argc, char **argv, int first) {
  contend_params p;
  char err[PATH_MAX + 256] = ""; /* room for a library path */
  if (contend_params_init(&p, record_params, "", err, sizeof err)) {
    fprintf(stderr, "contend record: %s\n", err);
    return 3;
  }
  int prog = 0;
  int rc = contend_parse_program_argv(&p, argc, argv, "record", &prog, err, sizeof err);
  if (rc == 1) {
    if (first)
      help(&p);
    contend_params_free(&p);
    return 0;
  }
  char out[PATH_MAX + 256];
  if (rc == 0 &&
      check_output(contend_param_str(&p, "output"), first, out, sizeof out, err, sizeof err))
    rc = -1;
  char lib[PATH_MAX];
  if (rc == 0 && contend_library_path(LIBNAME, lib, sizeof lib)) {
    snprintf(err, sizeof err, "%s not found (looked for %s): build it (make build)", LIBNAME, lib);
    rc = -1;
  }
  if (rc != 0) {
    if (first)
      fprintf(stderr, "contend record: error: %s (see contend record --help)\n", err);
    contend_params_free(&p);
    return 2;
  }
  char scale[64];
  snprintf(scale, sizeof scale, "%.17g", contend_param_double(&p, "compute_scale"));
  setenv("CONTEND_RECORD_DIR", out, 1);
  setenv("CONTEND_RECORD_COMPUTE_SCALE", scale, 1);
  setenv("CONTEND_RECORD_COMPUTE_CLOCK", contend_param_bool(&p, "compute_cpu") ? "cpu" : "wall", 1);
  contend_params_free(&p);
  contend_exec_preloaded(lib, argv + prog);
  if (first)
    fprintf(stderr, "contend record: error: cannot run %s: %s\n", argv[prog], strerror(errno));
  return 2;
}
