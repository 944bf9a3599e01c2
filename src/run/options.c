/* The run options shared by `network`, `load` and `jobs`: declared once
 * here (key, type, default, unit, help), followed by each registered
 * engine's own (contend_engine.options), and their joint validation:
 * which engine runs, which options it refuses, the files of the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coop/fiber.h"
#include "../core/error.h"
#include "../core/proc.h"
#include "envelope.h"

static const contend_param_def contend_run_option_defs[] = {
    {"engine", CONTEND_P_STRING, "mpi", "",
     "the engine that runs the ranks, by name ('contend help' lists them): mpi is real MPI "
     "under mpirun or srun; --dry-run selects trace",
     1, 0},
    {"virtual_nodes", CONTEND_P_INT, "0", "ranks",
     "group K consecutive ranks as one node (0: one node per host, via "
     "MPI_Comm_split_type)",
     0, 1e6},
    {"seed", CONTEND_P_SEED, "time", "",
     "seed of every random choice (node split, placement, rings, compute noise); printed and "
     "recorded",
     1, 0},
    {"output", CONTEND_P_FILE_OUT, "", "path",
     "write the JSON results here (-o; written to a temporary name, then renamed)", 1, 0},
    {"verify", CONTEND_P_BOOL, "0", "", "check the payload of every received message (untimed)", 1,
     0},
    {"verify_inject", CONTEND_P_INT, "0", "count",
     "testing aid: corrupt one received byte every N checks (shows --verify catches it)", 0, 1e12},
    {"watchdog", CONTEND_P_DOUBLE, "0", "s",
     "abort a phase that runs longer than this, removing the files the run created; also how "
     "long a rank that stops (SIGSTOP, a hang) goes unnoticed (0: automatic: 2 x timeout + 60 s "
     "per phase for network and load, 80 s at the default timeout; 3600 s for a jobs run)",
     0, 1e9},
    {"quiet", CONTEND_P_BOOL, "0", "", "no progress lines on stderr (-q)", 1, 0},
    {"dry_run", CONTEND_P_BOOL, "0", "",
     "plan the run: the trace engine plays every rank in this process (no MPI) and reports who "
     "talks to whom (same as --engine trace)",
     1, 0},
    {"nodes", CONTEND_P_INT, "0", "count",
     "in-process engines: nodes to play (--dry-run: required; --engine sim: default all nodes "
     "of the topology); nodes x ranks per node is at most what one process holds (every rank "
     "a fiber: ulimit -v / 260 KiB, 2^20 at most), refused up front beyond",
     0, 1e7},
    {"ranks_per_node", CONTEND_P_INT, "1", "count", "in-process engines: ranks per node", 1, 1e5},
    {"topology_conf", CONTEND_P_FILE_IN, "", "path",
     "jobs: a Slurm topology.conf giving each node's leaf and pod, for the tree placements and "
     "the results (real MPI: hosts matched by name; --dry-run and --virtual-nodes: node i is "
     "the file's i-th node)",
     1, 0},
    CONTEND_PARAM_END};

static size_t count_defs(const contend_param_def *d) {
  size_t n = 0;
  while (d && d[n].key)
    n++;
  return n;
}

/* Copies the rows of d to out + n (out NULL: counts only); returns the new n. */
static size_t put_defs(contend_param_def *out, size_t n, const contend_param_def *d) {
  const size_t c = count_defs(d);
  if (out && c)
    memcpy(out + n, d, sizeof *d * c);
  return n + c;
}

/* The run options, each registered engine's own (in the registry's order)
 * and the command's: counted (out NULL), or copied into out. */
static size_t run_defs(contend_param_def *out, const contend_param_def *extra) {
  size_t n = put_defs(out, 0, contend_run_option_defs);
  for (int i = 0; contend_engines[i]; i++)
    for (const contend_engine_options *o = contend_engines[i]->options; o && o->rows; o++)
      n = put_defs(out, n, o->rows);
  return put_defs(out, n, extra);
}

contend_param_def *contend_run_defs_with(const contend_param_def *extra) {
  const size_t n = run_defs(NULL, extra);
  contend_param_def *d = malloc(sizeof *d * (n + 1));
  if (!d)
    contend_fail("out of memory");
  run_defs(d, extra);
  d[n] = (contend_param_def)CONTEND_PARAM_END;
  return d;
}

void contend_option_name(const char *key, char *buf, size_t len) {
  snprintf(buf, len, "--%s", key);
  for (char *p = buf + 2; *p; p++)
    *p = *p == '_' ? '-' : *p;
}

/* Refuses the options of every engine but e that were given. */
static int other_engines_options(const contend_params *opts, const contend_engine *e, char *err,
                                 size_t errlen) {
  for (int i = 0; contend_engines[i]; i++) {
    const contend_engine *owner = contend_engines[i];
    if (owner == e)
      continue;
    for (const contend_engine_options *o = owner->options; o && o->rows; o++)
      for (int r = 0; o->rows[r].key; r++)
        if (contend_param_is_set(opts, o->rows[r].key)) {
          char opt[64];
          contend_option_name(o->rows[r].key, opt, sizeof opt);
          snprintf(err, errlen, "%s %s: it needs --engine %s", opt, o->what, owner->name);
          return -1;
        }
  }
  return 0;
}

int contend_run_files_check(const contend_params *opts, const contend_files *extra, int flags,
                            char *err, size_t errlen) {
  contend_files fs;
  contend_files_init(&fs);
  if (extra)
    contend_files_add(&fs, extra);
  for (int i = 0; contend_engines[i]; i++)
    if (contend_engines[i]->files)
      contend_engines[i]->files(opts, &fs);
  return contend_files_check_params(opts, &fs, flags, err, errlen);
}

/* The engine --engine and --dry-run select (the one parse of --engine),
 * or NULL with one line in err (unknown, not built, or both given and
 * different). */
static const contend_engine *selected_engine(const contend_params *opts, char *err, size_t errlen) {
  const char *name = contend_param_str(opts, "engine");
  if (contend_param_bool(opts, "dry_run")) {
    const contend_engine *dry = contend_engine_for_dry_run();
    if (contend_param_is_set(opts, "engine") && contend_engine_find(name) != dry) {
      snprintf(err, errlen, "--dry-run runs on the %s engine: drop --engine %s", dry->name, name);
      return NULL;
    }
    return dry;
  }
  const contend_engine *e = contend_engine_registered(name);
  if (e && e->not_built) {
    snprintf(err, errlen, "--engine %s: %s", name, e->not_built);
    return NULL;
  }
  if (!e) {
    int n = snprintf(err, errlen, "--engine: unknown engine '%s'; valid:", name);
    for (int i = 0, k = 0; contend_engines[i] && n > 0 && (size_t)n < errlen; i++)
      if (!contend_engines[i]->not_built)
        n += snprintf(err + n, errlen - (size_t)n, "%s %s", k++ ? "," : "",
                      contend_engines[i]->name);
  }
  return e;
}

const contend_engine *contend_run_engine_selected(const contend_params *opts) {
  char err[256];
  return selected_engine(opts, err, sizeof err);
}

const contend_engine *contend_run_engine(const contend_params *opts, const contend_files *files,
                                         char *err, size_t errlen) {
  const contend_engine *e = selected_engine(opts, err, errlen);
  if (!e)
    return NULL;
  const int launched = contend_launcher_size();
  if (e->in_process && !e->over_processes && launched > 1) {
    if (e->dry_run)
      snprintf(err, errlen,
               "--dry-run plays every rank in one process, and the launcher started %d: each "
               "would plan the whole run and write the same outputs. Run it without mpirun/srun",
               launched);
    else
      snprintf(err, errlen,
               "--engine %s plays every rank in one process, and the launcher started %d: each "
               "would run the whole simulation and write the same outputs. Run it without "
               "mpirun/srun (one simulation over processes: mpirun -n P contend sim; independent "
               "runs side by side: contend sweep, or a job array)",
               e->name, launched);
    return NULL;
  }
  if (!e->in_process && contend_param_is_set(opts, "nodes")) {
    snprintf(err, errlen,
             "--nodes only applies with --dry-run (a real run takes its nodes from MPI)");
    return NULL;
  }
  if (other_engines_options(opts, e, err, errlen))
    return NULL;
  if (e->machine_option && *contend_param_str(opts, "topology_conf")) {
    char opt[64];
    contend_option_name(e->machine_option, opt, sizeof opt);
    snprintf(err, errlen,
             "--topology-conf: --engine %s takes the machine from %s (use %s slurm:FILE)", e->name,
             opt, opt);
    return NULL;
  }
  if (contend_param_is_set(opts, "output") && !*contend_param_str(opts, "output")) {
    snprintf(err, errlen, "-o/--output: empty path");
    return NULL;
  }
  /* every file before any work: an in-process engine (one process plays
   * every rank) also creates each output's temporary once; under MPI rank
   * 0 does that in contend_envelope_begin */
  if (contend_run_files_check(opts, files, e->in_process ? CONTEND_FILES_CREATE : 0, err, errlen))
    return NULL;
  if (e->check && e->check((contend_params *)opts, err, errlen))
    return NULL;
  /* every rank a fiber of this process: as many as it can hold (the
   * simulator checks its topology's node count when --nodes is not given) */
  const long long nodes = contend_param_int(opts, "nodes");
  if (e->in_process && nodes > 0 &&
      coop_ranks_check(e->name, "--nodes", nodes, contend_param_int(opts, "ranks_per_node"), err,
                       errlen))
    return NULL;
  return e;
}
