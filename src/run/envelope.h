/* The run envelope shared by `network`, `load` and `jobs` on every engine:
 * checks before measuring (output writable, node discovery), the seed
 * (from the clock unless given, broadcast so every rank uses rank 0's),
 * UTC start/finish, node names and library gathered to rank 0, the
 * watchdog, peak memory, writing the results (table on stdout, JSON to a
 * temporary name then renamed), and the JSON header and environment
 * written the same way for every command. */
#ifndef CONTEND_ENVELOPE_H
#define CONTEND_ENVELOPE_H

#include <stdint.h>

#include "contend/files.h"
#include "contend/json.h"
#include "contend/param.h"
#include "contend/strbuf.h"
#include "contend/world.h"

#define CONTEND_ENVELOPE_TEXT 256

typedef struct contend_envelope {
  const char *command;          /* "network", "load", "jobs" */
  const contend_engine *engine; /* the run's (world->ops->engine) */
  int dry_run;                  /* engine->dry_run: a plan, not measurements */
  uint64_t seed;
  int seed_from_time;
  contend_nodes nodes;
  int nranks, virtual_nodes;
  /* rank 0: owned, CONTEND_ENVELOPE_TEXT bytes each; other ranks: "" (not
   * owned; thousands of in-process ranks would each hold a copy) */
  char *library; /* the communication library (first line) */
  int lib_version, lib_subversion;
  char *engine_note; /* contend_world_ops.describe's line, or "" */
  char **node_names; /* [nodes.nnodes], rank 0 only */
  char started_utc[32], finished_utc[32];
  double t_start, wall_s;
  double peak_rss_mib_max, peak_rss_mib_mean;
  int argc;
  char **argv;
  int progress;         /* progress lines on stderr (rank 0) */
  contend_group *world; /* the run's (valid during the body) */
} contend_envelope;

/* Collective over world.  Reads the run options (seed, output,
 * virtual_nodes, quiet, dry_run) from opts; checks the output path,
 * discovers the nodes, fixes the seed, gathers names.  Returns 0, or
 * CONTEND_EXIT_USAGE after rank 0 printed one message (every rank returns
 * the same).  On success the caller ends with contend_envelope_end. */
int contend_envelope_begin(contend_envelope *e, contend_group *world, const contend_params *opts,
                           const char *command, int argc, char **argv);

/* Collective over world: peak memory, wall time, finish time. */
void contend_envelope_finish(contend_envelope *e, contend_group *world);

/* Rank 0: prints table, reports verify errors (status 1) and writes json
 * to the -o path of opts (status 3 if that fails).  Then, collective:
 * every rank returns rank 0's status. */
int contend_envelope_output(contend_envelope *e, contend_group *world, const contend_params *opts,
                            const contend_strbuf *table, const contend_strbuf *json,
                            double verify_errors, const char *what_corrupted);

void contend_envelope_free(contend_envelope *e);

/* Prints "contend COMMAND: error: msg" at rank 0 of world. */
void contend_envelope_error(const contend_envelope *e, contend_group *world, const char *msg);

/* "[contend] ..." progress line on stderr (rank 0 of world, unless quiet). */
void contend_progress(const contend_envelope *e, contend_group *world, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The watchdog limit for a phase: --watchdog, or when 0 the default given. */
double contend_envelope_watchdog(const contend_params *opts, double automatic_s);

/* JSON: the header keys every results file starts with (schema,
 * schema_version, tool, command, argv, engine, started/finished_utc,
 * wall_s (null in dry runs), seed, seed_source) ... */
void contend_envelope_json_head(contend_json *j, const contend_envelope *e, const char *schema,
                                const char *schema_version);
/* ... and the members of the "environment" object (the caller opens and
 * closes it): library, ranks, nodes, ranks per node, memory, node
 * discovery, virtual nodes, node names. */
void contend_envelope_json_environment(contend_json *j, const contend_envelope *e);

/* The shared run options (src/run/options.c): one row each, for every
 * measuring command.  contend_run_defs_with returns them, then every
 * registered engine's own (contend_engine.options, in the registry's
 * order), then the command's own rows, malloc'd (the caller frees it after
 * the params that use it).  NULL extra: the run options alone. */
contend_param_def *contend_run_defs_with(const contend_param_def *extra);

/* The engine that --engine and --dry-run select, or NULL when they select
 * none (contend_run_engine says why); nothing else is checked. */
const contend_engine *contend_run_engine_selected(const contend_params *opts);

/* "--key-name" of a parameter key (underscores as dashes), for messages. */
void contend_option_name(const char *key, char *buf, size_t len);

/* Validates --engine/--dry-run/--nodes/--ranks-per-node together, checks
 * every file of the run (contend_run_files_check: conflicts everywhere,
 * outputs created once with an in-process engine) and the engine's own
 * options, and returns the engine to launch, or NULL with a message.
 * files: the command's own files beyond its option rows (the job file),
 * or NULL. */
const contend_engine *contend_run_engine(const contend_params *opts, const contend_files *files,
                                         char *err, size_t errlen);

/* contend_files_check (flags) of the files of a run: those in extra (or
 * NULL), every CONTEND_P_FILE_* row of opts, and those the engines' own
 * options name (contend_engine.files: the simulated fabric's --topology
 * slurm:FILE).  0, or -1 with one line. */
int contend_run_files_check(const contend_params *opts, const contend_files *extra, int flags,
                            char *err, size_t errlen);

#endif
