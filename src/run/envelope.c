/* The run envelope (see envelope.h). */
#include "envelope.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "../core/error.h"
#include "../core/proc.h"
#include "contend/files.h"
#include "contend/version.h"

static char no_text[1]; /* the library and note of ranks other than 0 */

static void utc_now(char *buf, size_t len) {
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void contend_envelope_error(const contend_envelope *e, contend_group *world, const char *msg) {
  if (world->rank == 0)
    fprintf(stderr, "contend %s: error: %s\n", e->command, msg);
}

void contend_progress(const contend_envelope *e, contend_group *world, const char *fmt, ...) {
  if (world->rank != 0 || !e->progress)
    return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[contend] ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
}

/* Gathers one host name per node to rank 0 (the lowest rank of each node
 * names it). */
static void gather_node_names(contend_envelope *e, contend_group *world) {
  enum { W = 64 };
  char mine[W] = "";
  world->ops->host_name(world, mine, W);
  mine[W - 1] = 0;
  char *all = world->rank == 0 ? malloc((size_t)world->size * W) : NULL;
  if (world->rank == 0 && !all)
    contend_fail("out of memory");
  contend_ggather(world, mine, W, all);
  if (world->rank == 0) {
    e->node_names = calloc((size_t)e->nodes.nnodes, sizeof(char *));
    if (!e->node_names)
      contend_fail("out of memory");
    for (int r = world->size - 1; r >= 0; r--) {
      const int nd = e->nodes.node_of_rank[r];
      free(e->node_names[nd]);
      e->node_names[nd] = strndup(all + (size_t)r * W, W);
    }
  }
  free(all);
}

#define ERR_LEN 1024

/* contend_envelope_begin with a message buffer (err, errlen). */
static int begin(contend_envelope *e, contend_group *world, const contend_params *opts, char *err,
                 size_t errlen) {
  /* bad input found on rank 0 is reported once and ends every rank: every
   * output of the run is created (and removed) where rank 0 writes it */
  int bad =
      world->rank == 0 && contend_run_files_check(opts, NULL, CONTEND_FILES_CREATE, err, errlen);
  contend_gbcast(world, &bad, sizeof bad);
  if (bad) {
    contend_envelope_error(e, world, err);
    return CONTEND_EXIT_USAGE;
  }
  e->virtual_nodes = (int)contend_param_int(opts, "virtual_nodes");
  if (world->ops->nodes(world, e->virtual_nodes, &e->nodes, err, errlen)) {
    contend_envelope_error(e, world, err);
    return CONTEND_EXIT_USAGE;
  }
  if (e->dry_run)
    e->virtual_nodes = e->nodes.ppn_max;
  const contend_param_value *sv = &opts->v[contend_params_find(opts, "seed")];
  e->seed_from_time = sv->is_time;
  uint64_t seed = (uint64_t)sv->i;
  if (sv->is_time) {
    seed = 0; /* a dry run plans with seed 0 */
    if (!e->dry_run) {
      struct timeval tv;
      gettimeofday(&tv, NULL);
      seed = ((uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec) % 1000000000000ULL;
    }
  }
  contend_gbcast(world, &seed, sizeof seed);
  e->seed = seed;
  if (world->ops->seed)
    world->ops->seed(world, seed);
  if (world->rank == 0) { /* the library and the note go only into rank 0's report */
    e->library = calloc(2, CONTEND_ENVELOPE_TEXT);
    if (!e->library)
      contend_fail("out of memory");
    e->engine_note = e->library + CONTEND_ENVELOPE_TEXT;
    world->ops->library(world, e->library, CONTEND_ENVELOPE_TEXT, &e->lib_version,
                        &e->lib_subversion);
    if (world->ops->describe)
      world->ops->describe(world, e->engine_note, CONTEND_ENVELOPE_TEXT);
  }
  if (world->rank == 0)
    utc_now(e->started_utc, sizeof e->started_utc);
  gather_node_names(e, world);
  return 0;
}

int contend_envelope_begin(contend_envelope *e, contend_group *world, const contend_params *opts,
                           const char *command, int argc, char **argv) {
  memset(e, 0, sizeof *e);
  e->library = e->engine_note = no_text;
  e->command = command;
  e->engine = world->ops->engine;
  e->world = world;
  e->dry_run = e->engine->dry_run;
  e->argc = argc;
  e->argv = argv;
  /* a dry run prints its plan, nothing else */
  e->progress = !contend_param_bool(opts, "quiet") && !e->dry_run;
  e->t_start = contend_monotonic_s(); /* wall time, whatever the engine's clock */
  e->nranks = world->size;
  /* messages on the heap, not the stack: every in-process rank's stack
   * costs the pages its deepest moment touched (the collectives below) */
  char *err = calloc(1, ERR_LEN);
  if (!err)
    contend_fail("out of memory");
  const int rc = begin(e, world, opts, err, ERR_LEN);
  free(err);
  return rc;
}

void contend_envelope_finish(contend_envelope *e, contend_group *world) {
  double rss[2] = {world->ops->peak_rss_mib(world), 0};
  rss[1] = rss[0];
  contend_greduce(world, &rss[0], 1, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  contend_greduce(world, &rss[1], 1, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  e->peak_rss_mib_max = rss[0];
  e->peak_rss_mib_mean = rss[1] / world->size;
  e->wall_s = contend_monotonic_s() - e->t_start;
  if (world->rank == 0)
    utc_now(e->finished_utc, sizeof e->finished_utc);
}

int contend_envelope_output(contend_envelope *e, contend_group *world, const contend_params *opts,
                            const contend_strbuf *table, const contend_strbuf *json,
                            double verify_errors, const char *what_corrupted) {
  int status = CONTEND_EXIT_OK;
  if (world->rank == 0) {
    char *err = calloc(1, ERR_LEN); /* not on the stack, as in contend_envelope_begin */
    if (!err)
      contend_fail("out of memory");
    const char *output = contend_param_str(opts, "output");
    if (table && table->s)
      fputs(table->s, stdout);
    fflush(stdout);
    if (verify_errors > 0) {
      fprintf(stderr, "contend %s: error: %s found %.0f corrupted %s\n", e->command,
              !strcmp(e->command, "jobs") ? "verification" : "--verify", verify_errors,
              what_corrupted);
      status = CONTEND_EXIT_VERIFY;
    }
    if (*output && json) {
      if (contend_write_file_atomic(output, json->s, json->len, err, ERR_LEN)) {
        fprintf(stderr, "contend %s: error: %s\n", e->command, err);
        status = CONTEND_EXIT_FAIL;
      } else if (e->dry_run) {
        printf("\n  plan written to %s\n", output);
      } else if (e->progress) {
        fprintf(stderr, "[contend] results written to %s\n", output);
      }
    }
    free(err);
  }
  contend_gbcast(world, &status, sizeof status);
  return status;
}

void contend_envelope_free(contend_envelope *e) {
  if (e->library != no_text)
    free(e->library);
  e->library = e->engine_note = no_text;
  if (e->node_names)
    for (int i = 0; i < e->nodes.nnodes; i++)
      free(e->node_names[i]);
  free(e->node_names);
  e->node_names = NULL;
}

double contend_envelope_watchdog(const contend_params *opts, double automatic_s) {
  const double w = contend_param_double(opts, "watchdog");
  return w > 0 ? w : automatic_s;
}

void contend_envelope_json_head(contend_json *j, const contend_envelope *e, const char *schema,
                                const char *schema_version) {
  contend_json_str(j, "schema", schema);
  contend_json_str(j, "schema_version", schema_version);
  contend_json_tool(j);
  contend_json_str(j, "command", e->command);
  contend_json_arr_begin(j, "argv");
  for (int i = 0; i < e->argc; i++)
    contend_json_str(j, NULL, e->argv[i]);
  contend_json_arr_end(j);
  contend_json_str(j, "engine", e->engine->name);
  if (e->dry_run) {
    contend_json_null(j, "started_utc");
    contend_json_null(j, "finished_utc");
    contend_json_null(j, "wall_s");
  } else {
    contend_json_str(j, "started_utc", e->started_utc);
    contend_json_str(j, "finished_utc", e->finished_utc);
    contend_json_double(j, "wall_s", e->wall_s);
  }
  contend_json_uint(j, "seed", e->seed);
  contend_json_str(j, "seed_source", e->seed_from_time ? "time" : "user");
}

void contend_envelope_json_environment(contend_json *j, const contend_envelope *e) {
  if (e->dry_run) {
    contend_json_null(j, "mpi_library");
    contend_json_null(j, "mpi_standard");
  } else {
    char std[16];
    snprintf(std, sizeof std, "%d.%d", e->lib_version, e->lib_subversion);
    contend_json_str(j, "mpi_library", e->library);
    contend_json_str(j, "mpi_standard", std);
  }
  contend_json_int(j, "ranks", e->nranks);
  contend_json_int(j, "nodes", e->nodes.nnodes);
  contend_json_int(j, "ranks_per_node_min", e->nodes.ppn_min);
  contend_json_int(j, "ranks_per_node_max", e->nodes.ppn_max);
  if (!e->dry_run) {
    contend_json_double(j, "peak_rss_mib_max", e->peak_rss_mib_max);
    contend_json_double(j, "peak_rss_mib_mean", e->peak_rss_mib_mean);
  }
  contend_json_str(j, "node_discovery",
                   e->engine->node_discovery ? e->engine->node_discovery
                   : e->virtual_nodes        ? "virtual"
                                             : "shared_memory");
  if (e->virtual_nodes && !e->dry_run)
    contend_json_int(j, "virtual_nodes", e->virtual_nodes);
  else
    contend_json_null(j, "virtual_nodes");
  contend_json_arr_begin(j, "node_names");
  for (int i = 0; e->node_names && !e->dry_run && i < e->nodes.nnodes; i++)
    contend_json_str(j, NULL, e->node_names[i]);
  contend_json_arr_end(j);
  if (e->world && e->world->ops->results_json)
    e->world->ops->results_json(e->world, j);
}
