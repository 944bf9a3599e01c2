/* The MPI engine's RMA policy (see rma_policy.h): option rows, the table of
 * libraries known to be wrong, and the resolution of "auto". */
#include "rma_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contend/json.h"

const contend_param_def contend_mpi_param_defs[] = {
    {"rma_window", CONTEND_P_STRING, "auto", "",
     "MPI engine: how RMA windows are made: allocate (MPI_Win_allocate, as GPCNeT; shared memory "
     "within a node), create (MPI_Win_create over MPI_Alloc_mem), auto (allocate, except on "
     "libraries known to be wrong with it); the choice is recorded in the results",
     1, 0},
    {"rma_flush", CONTEND_P_STRING, "auto", "",
     "MPI engine: how an RMA epoch completes: all (MPI_Win_flush_all, as GPCNeT), target "
     "(MPI_Win_flush to every target used since the last flush), auto (all, except on libraries "
     "whose flush_all returns early); recorded in the results",
     1, 0},
    CONTEND_PARAM_END};

/* Libraries whose fast path gives wrong results, matched on the start of
 * MPI_Get_library_version's string and the version that follows it. */
typedef struct rma_defect {
  const char *prefix;         /* the library string starts with this */
  int major, minor;           /* version major.minor (minor < 0: any) */
  int window_bad;             /* MPI_Win_allocate wrong: use MPI_Win_create */
  int flush_all_bad;          /* MPI_Win_flush_all returns early: flush per target */
  const char *window, *flush; /* what was seen (recorded with the choice) */
} rma_defect;

static const rma_defect defects[] = {
    {"MPICH Version:", 4, 0, 1, 1,
     "MPICH 4.0 (seen on 4.0.2, ch3): MPI_Win_allocate windows on one node serve MPI_Get from "
     "another rank's memory",
     "MPICH 4.0 (seen on 4.0.2, ch3): MPI_Win_flush_all can return before the puts reach the "
     "target (2 MiB in 0.7 us), MPI_Win_flush per target does not"},
};

static contend_mpi_rma g_rma = {0, 0, "default: MPI_Win_allocate", "default: MPI_Win_flush_all"};

/* -1 auto (or no such option: a program without the MPI engine's rows),
 * 0 a, 1 b, -2 anything else. */
static int parse_choice(const contend_params *opts, const char *key, const char *a, const char *b) {
  if (!opts || contend_params_find(opts, key) < 0)
    return -1;
  const char *v = contend_param_str(opts, key);
  if (!strcmp(v, "auto"))
    return -1;
  if (!strcmp(v, a))
    return 0;
  if (!strcmp(v, b))
    return 1;
  return -2;
}

int contend_mpi_rma_check(const contend_params *opts, char *err, size_t errlen) {
  if (parse_choice(opts, "rma_window", "allocate", "create") == -2) {
    snprintf(err, errlen, "--rma-window: expected auto, allocate or create (got '%s')",
             contend_param_str(opts, "rma_window"));
    return -1;
  }
  if (parse_choice(opts, "rma_flush", "all", "target") == -2) {
    snprintf(err, errlen, "--rma-flush: expected auto, all or target (got '%s')",
             contend_param_str(opts, "rma_flush"));
    return -1;
  }
  return 0;
}

/* The defect entry matching the library string, or NULL. */
static const rma_defect *find_defect(const char *library) {
  for (size_t i = 0; i < sizeof defects / sizeof defects[0]; i++) {
    const rma_defect *d = &defects[i];
    const size_t n = strlen(d->prefix);
    if (strncmp(library, d->prefix, n))
      continue;
    const char *p = library + n;
    while (*p == ' ' || *p == '\t')
      p++;
    char *end;
    const long major = strtol(p, &end, 10);
    if (end == p || major != d->major)
      continue;
    long minor = -1;
    if (*end == '.')
      minor = strtol(end + 1, NULL, 10);
    if (d->minor < 0 || minor == d->minor)
      return d;
  }
  return NULL;
}

/* One choice: forced (>= 0) by option opt, else the workaround when the
 * library's defect (seen != NULL) calls for it, else the fast path (0). */
static int choose(int forced, const char *opt, const char *seen, char *why, size_t len) {
  if (forced >= 0) {
    snprintf(why, len, "forced by --%s", opt);
    return forced;
  }
  snprintf(why, len, "auto: %s", seen ? seen : "no known defect");
  return seen != NULL;
}

void contend_mpi_rma_resolve(const contend_params *opts, const char *library) {
  const rma_defect *d = find_defect(library ? library : "");
  contend_mpi_rma r;
  memset(&r, 0, sizeof r);
  r.win_create = choose(parse_choice(opts, "rma_window", "allocate", "create"), "rma-window",
                        d && d->window_bad ? d->window : NULL, r.window_why, sizeof r.window_why);
  r.flush_per_target =
      choose(parse_choice(opts, "rma_flush", "all", "target"), "rma-flush",
             d && d->flush_all_bad ? d->flush : NULL, r.flush_why, sizeof r.flush_why);
  g_rma = r;
}

const contend_mpi_rma *contend_mpi_rma_policy(void) { return &g_rma; }

void contend_mpi_rma_describe(char *buf, size_t len) {
  const int forced =
      !strncmp(g_rma.window_why, "forced", 6) || !strncmp(g_rma.flush_why, "forced", 6);
  const int workaround = !forced && (g_rma.win_create || g_rma.flush_per_target);
  snprintf(buf, len, "RMA: %s windows, %s%s",
           g_rma.win_create ? "MPI_Win_create" : "MPI_Win_allocate",
           g_rma.flush_per_target ? "MPI_Win_flush per target" : "MPI_Win_flush_all",
           forced       ? " (as forced by --rma-window/--rma-flush)"
           : workaround ? " (a known defect of this MPI library avoided; see environment.rma)"
                        : "");
}

void contend_mpi_rma_json(contend_json *j) {
  contend_json_obj_begin(j, "rma");
  contend_json_str(j, "window", g_rma.win_create ? "MPI_Win_create" : "MPI_Win_allocate");
  contend_json_str(j, "window_choice", g_rma.window_why);
  contend_json_str(j, "flush", g_rma.flush_per_target ? "MPI_Win_flush" : "MPI_Win_flush_all");
  contend_json_str(j, "flush_choice", g_rma.flush_why);
  contend_json_obj_end(j);
}
