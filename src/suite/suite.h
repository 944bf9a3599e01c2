/* The GPCNeT-style suite: configuration, node split, schedule, reports. */
#ifndef CONTEND_SUITE_H
#define CONTEND_SUITE_H

#include <stdint.h>

#include "contend/motif.h"
#include "contend/param.h"
#include "contend/result.h"
#include "contend/strbuf.h"
#include "contend/traffic.h"
#include "contend/world.h"

#include "contend/version.h"
#define CONTEND_SCHEMA_VERSION "1.1"
#define CONTEND_MAX_LIST 16

typedef enum { CONTEND_CMD_NETWORK, CONTEND_CMD_LOAD } contend_command;

/* Everything a run needs that comes from the command line. */
typedef struct contend_config {
  contend_command cmd;
  contend_params common;          /* run options (src/run/options.c) + the suite's own */
  contend_param_def *common_defs; /* the joined table behind common (owned) */
  const contend_engine *engine;   /* chosen by --engine / --dry-run */
  contend_params load;            /* options of `load` only */
  contend_params *tests;          /* one table per registered motif, registry order */
  int nmotifs;
  int ncanary, canary[CONTEND_MAX_LIST]; /* registry indices */
  int ncong, cong[CONTEND_MAX_LIST];
  int argc;
  char **argv;
} contend_config;

/* Parses argv (argv[0] = subcommand name).  Returns 0; 1 for --help (text
 * in out); -1 with a message in err for bad input.  Never exits. */
int contend_config_parse(contend_config *cfg, contend_command cmd, int argc, char **argv,
                         contend_strbuf *out, char *err, size_t errlen);
void contend_config_free(contend_config *cfg);
void contend_config_help(const contend_config *cfg, contend_strbuf *out);

/* The node split (pure; used by real runs and dry runs alike). */
typedef struct contend_plan {
  int nnodes;
  int *order;         /* nodes shuffled with the seed */
  int *group_of_node; /* 0 = canaries, 1 + k = congestor k (cfg->cong[k]), -1 idle */
  int group_nodes[CONTEND_MAX_LIST + 1];
} contend_plan;

int contend_plan_make(const contend_config *cfg, int nnodes, uint64_t seed, contend_plan *plan,
                      char *err, size_t errlen);
void contend_plan_free(contend_plan *plan);

/* The results list, in a fixed order derived from the configuration. */
typedef struct contend_run {
  const contend_config *cfg;
  const struct contend_envelope *env; /* seed, nodes, library, times, memory */
  contend_plan plan;
  contend_result *results;
  int nresults;
  /* dry runs (trace engine): per result, the steps of the first timed
   * iteration of every rank (gathered at rank 0); NULL otherwise */
  contend_traffic *traffic;
  /* one row per sub-communicator (rank 0 only): group, local rank, ranks,
   * distinct nodes among them (must equal ranks: one rank per node) */
  int (*subcomms)[4];
  int nsubcomms;
  /* per result, which rings its measurements used (src/run/ring_log.h;
   * empty for tests without rings); at rank 0 after the reduction.  Held
   * (contend_run_rings) by rank 0 and the ranks that record, NULL on the
   * others: thousands of in-process ranks would each hold nresults logs */
  struct contend_ring_log *rings;
  int want_rings;  /* the run records rings (every rank takes part in the gather) */
  int rings_whole; /* ... whole (--record-rings, --show-rings) */
} contend_run;

/* run->rings, allocated (empty logs, `whole` as the run asks) on first use. */
struct contend_ring_log *contend_run_rings(contend_run *run);

/* Builds run->results for the configuration (same list on every rank). */
void contend_run_layout(contend_run *run);
int contend_result_index(const contend_run *run, int motif_index, contend_phase ph, int during);

/* Human table (stdout) and JSON results: two views of the reduced run. */
void contend_report_table(const contend_run *run, contend_strbuf *out);
void contend_report_json(const contend_run *run, contend_strbuf *out);

/* Impact of one canary (eq. 1-2 of the GPCNeT paper), from unrounded values:
 * latency congested/isolated, bandwidth isolated/congested. */
double contend_impact(const contend_motif *m, double isolated, double congested);

/* Dry-run view of a run on the trace engine: the node split and, per
 * test, the traffic of one timed iteration (text and contend-plan JSON). */
void contend_report_plan(const contend_run *run, contend_strbuf *text, contend_strbuf *json);

/* Reduces every rank's results into rank 0's (collective over world);
 * with run->traffic, gathers the recorded steps too. */
void contend_run_reduce(contend_run *run, contend_group *world);

/* The schedule of `network` and `load` (collective over world; arg is the
 * contend_config): the one code path of every engine.  Returns the exit
 * status. */
int contend_suite_body(contend_group *world, void *cfg);

/* Validates the engine options and launches the schedule on the chosen
 * engine.  Returns the exit status. */
int contend_suite_main(const contend_config *cfg, int *argc, char ***argv);

#endif
