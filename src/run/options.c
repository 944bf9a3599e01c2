/* The run options shared by `network`, `load` and `jobs`: declared once
 * here (key, type, default, unit, help), and their joint validation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coop/fiber.h"
#include "../core/error.h"
#include "../engine_mpi/rma_policy.h"
#include "../engine_sim/netparams.h"
#include "../throttle/params.h"
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
     "a fiber: vm.max_map_count / 2, ulimit -v / 260 KiB), refused up front beyond",
     0, 1e7},
    {"ranks_per_node", CONTEND_P_INT, "1", "count", "in-process engines: ranks per node", 1, 1e5},
    {"topology_conf", CONTEND_P_FILE_IN, "", "path",
     "jobs: a Slurm topology.conf giving each node's leaf and pod, for the tree placements and "
     "the results (real MPI: hosts matched by name; --dry-run and --virtual-nodes: node i is "
     "the file's i-th node)",
     1, 0},
    CONTEND_PARAM_END};

/* The simulated fabric's options, none in a build without the simulator
 * (-DCONTEND_WITH_SIM=OFF). */
#ifdef CONTEND_NO_SIM
static const contend_param_def sim_defs[] = {CONTEND_PARAM_END};
#else
#define sim_defs sim_param_defs
#endif

static size_t count_defs(const contend_param_def *d) {
  size_t n = 0;
  while (d && d[n].key)
    n++;
  return n;
}

/* The run options, the MPI engine's and the simulated fabric's (each used
 * with its engine) and the command's own. */
contend_param_def *contend_run_defs_with(const contend_param_def *extra) {
  const contend_param_def *parts[] = {contend_run_option_defs, contend_mpi_param_defs, sim_defs,
                                      ct_param_defs, extra};
  size_t n = 0;
  for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++)
    n += count_defs(parts[k]);
  contend_param_def *d = malloc(sizeof *d * (n + 1));
  if (!d)
    contend_fail("out of memory");
  n = 0;
  for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
    const size_t c = count_defs(parts[k]);
    if (c)
      memcpy(d + n, parts[k], sizeof *d * c);
    n += c;
  }
  d[n] = (contend_param_def)CONTEND_PARAM_END;
  return d;
}

/* Refuses rows of an engine's own table given to another engine. */
static int engine_rows(const contend_params *opts, const contend_param_def *rows, const char *owner,
                       const char *what, const char *engine, char *err, size_t errlen) {
  for (int i = 0; rows[i].key && strcmp(engine, owner); i++)
    if (contend_param_is_set(opts, rows[i].key)) {
      char opt[64];
      snprintf(opt, sizeof opt, "%s", rows[i].key);
      for (char *p = opt; *p; p++)
        *p = *p == '_' ? '-' : *p;
      snprintf(err, errlen, "--%s %s: it needs --engine %s", opt, what, owner);
      return -1;
    }
  return 0;
}

int contend_run_files_check(const contend_params *opts, const contend_files *extra, int flags,
                            char *err, size_t errlen) {
  contend_files fs;
  contend_files_init(&fs);
  if (extra)
    contend_files_add(&fs, extra);
#ifndef CONTEND_NO_SIM
  if (contend_params_find(opts, "topology") >= 0)
    sim_params_files(opts, &fs);
#endif
  return contend_files_check_params(opts, &fs, flags, err, errlen);
}

const contend_engine *contend_run_engine(const contend_params *opts, const contend_files *files,
                                         char *err, size_t errlen) {
  const char *name = contend_param_str(opts, "engine");
  const int dry = contend_param_bool(opts, "dry_run");
  if (dry) {
    if (contend_param_is_set(opts, "engine") && strcmp(name, "trace")) {
      snprintf(err, errlen, "--dry-run runs on the trace engine: drop --engine %s", name);
      return NULL;
    }
    name = "trace";
  }
  const contend_engine *e = contend_engine_find(name);
#ifdef CONTEND_NO_SIM
  if (!e && !strcmp(name, "sim")) {
    snprintf(err, errlen,
             "--engine sim: the simulator is not built (configured with -DCONTEND_WITH_SIM=OFF)");
    return NULL;
  }
#endif
  if (!e) {
    int n = snprintf(err, errlen, "--engine: unknown engine '%s'; valid:", name);
    for (int i = 0; contend_engines[i] && n > 0 && (size_t)n < errlen; i++)
      n += snprintf(err + n, errlen - (size_t)n, "%s %s", i ? "," : "", contend_engines[i]->name);
    return NULL;
  }
  if (!e->in_process && contend_param_is_set(opts, "nodes")) {
    snprintf(err, errlen,
             "--nodes only applies with --dry-run (a real run takes its nodes from MPI)");
    return NULL;
  }
  if (engine_rows(opts, sim_defs, "sim", "describes the simulated fabric", e->name, err, errlen) ||
      engine_rows(opts, ct_param_defs, "sim",
                  "throttles the simulated NICs (on real MPI: contend throttle -- APP)", e->name,
                  err, errlen) ||
      engine_rows(opts, contend_mpi_param_defs, "mpi", "applies to real MPI", e->name, err, errlen))
    return NULL;
  if (!strcmp(e->name, "sim") && *contend_param_str(opts, "topology_conf")) {
    snprintf(err, errlen,
             "--topology-conf: --engine sim takes the machine from --topology (use --topology "
             "slurm:FILE)");
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
