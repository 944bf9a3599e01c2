/* `contend jobs`: job files (StressBench / SST Ember style), placement of
 * concurrent jobs on disjoint nodes, the decompose / perform / cleanup
 * phases on MPI, dry runs on the trace engine, reports.
 *
 * Ownership: a contend_jobfile owns its jobs, motif parameter tables and
 * node lists (contend_jobfile_free).  A contend_jobs_run owns its result
 * arrays (contend_jobs_run_free) and points to, but does not own, the job
 * file and the options. */
#ifndef CONTEND_JOBS_H
#define CONTEND_JOBS_H

#include <stdint.h>

#include "contend/motif.h"
#include "contend/param.h"
#include "contend/stats.h"
#include "contend/strbuf.h"
#include "contend/traffic.h"
#include "contend/world.h"

#define CONTEND_JOBS_SCHEMA_VERSION                                                                \
  "1.3" /* 1.1: pass_clock; 1.2: slowest_rank_s; 1.3: tree placements, leaves/pods */
#define CONTEND_JOB_NAME_MAX 64 /* src/motifs/io.h's IO_JOB_NAME_MAX bounds {job} as this */
/* Bounds of a job file (docs/jobfile.md): its size, and the text of one
 * directive (its lines joined) after {VAR} substitution; the text of the
 * whole file after substitution is bounded by the size limit too. */
#define CONTEND_JOBFILE_MAX_BYTES (16 << 20)
#define CONTEND_JOBFILE_LINE_MAX (1 << 20)
/* --samples x ranks: iteration times gathered to rank 0 per motif (8 B each). */
#define CONTEND_JOBS_SAMPLES_MAX 10000000

/* ---- the job file ------------------------------------------------------- */

typedef struct contend_job_motif {
  const contend_motif *motif;
  contend_params params; /* from the motif's own table; key=value of the file applied */
  int line;              /* [MOTIF] line */
} contend_job_motif;

typedef enum {
  CONTEND_NODES_LIST,        /* [NID_LIST] */
  CONTEND_NODES_LINEAR,      /* [PLACEMENT] linear */
  CONTEND_NODES_INTERLEAVED, /* [PLACEMENT] interleaved */
  CONTEND_NODES_RANDOM,      /* [PLACEMENT] random */
  /* the tree placements (need the machine's tree, src/fabric/tree.h): */
  CONTEND_NODES_COMPACT,    /* [PLACEMENT] compact: one pod, per_leaf nodes per leaf */
  CONTEND_NODES_SPREAD,     /* [PLACEMENT] spread: pods=K pods, per_leaf nodes per leaf */
  CONTEND_NODES_EVERY_LEAF, /* [PLACEMENT] every_leaf: per_leaf nodes on every leaf */
  CONTEND_NODES_PAIRS,      /* [PLACEMENT] pairs: node pairs on two leaves (or two pods) */
  CONTEND_NODES_INCAST      /* [PLACEMENT] incast: senders on S leaves, receivers on the next */
} contend_nodes_kind;

/* The [PLACEMENT] kind's name ("list" for [NID_LIST]). */
const char *contend_nodes_kind_name(contend_nodes_kind k);

typedef struct contend_job {
  char name[CONTEND_JOB_NAME_MAX];
  int line; /* [JOB_NAME] line */
  contend_nodes_kind kind;
  int nodes_line; /* [NID_LIST] or [PLACEMENT] line; 0: none given */
  int *list;      /* [NID_LIST] in file order */
  int nlist;
  int want; /* [PLACEMENT] nodes= */
  uint64_t seed;
  int seed_set; /* [PLACEMENT] random seed= given */
  /* tree placements' options (0 / -1: not given) */
  int per_leaf;      /* per_leaf= nodes per leaf */
  int pods;          /* pods= how many pods */
  int pod;           /* pod= first pod (-1: searched) */
  int across_pods;   /* pairs across=pod (bisection) instead of across=leaf */
  int sender_leaves; /* incast senders= leaves (default 7) */
  int receivers;     /* incast receivers= nodes on the receiving leaf (default per_leaf) */
  long repeat;       /* [REPEAT], default 1 */
  int repeat_line;
  contend_job_motif *motifs;
  int nmotifs;
  /* set by contend_jobs_place: the job's nodes; job rank i runs on
   * nodes[i / ranks_per_node] (ranks of one node are consecutive) */
  int *nodes;
  int nnodes;
  uint64_t placement_seed; /* random placement: the seed used */
  /* set by contend_jobs_place_tree when the tree is known: leaf and pod of
   * nodes[i] (NULL otherwise) */
  int *node_leaf, *node_pod;
} contend_job;

typedef struct contend_jobfile {
  char *path;
  contend_job *jobs;
  int njobs;
} contend_jobfile;

/* Parses job-file text (path names it in messages).  defines are
 * "NAME=VALUE" strings (-D) that take precedence over the file's [VAR].
 * Returns 0, or -1 with "path:line: message" in err.  Pure: no MPI. */
int contend_jobfile_parse(contend_jobfile *jf, const char *path, const char *text,
                          char *const *defines, int ndefines, char *err, size_t errlen);
/* Reads the file, then parses it. */
int contend_jobfile_load(contend_jobfile *jf, const char *path, char *const *defines, int ndefines,
                         char *err, size_t errlen);
void contend_jobfile_free(contend_jobfile *jf);

/* The options of `contend jobs` (main.c): p initialised from
 * contend_jobs_option_defs().  Sets *file (an argv element) and appends
 * -D strings to *defs (realloc'd, the caller frees the array, not the
 * strings); help or --list text goes to out.  Returns 0 to run, 1 when
 * done (help/list written), -1 on bad input (err).  Runs the engine's
 * check (--engine sim builds the fabric, reading a topology file the
 * options name, and tries the --counters path); runs nothing. */
int contend_jobs_parse_args(int argc, char **argv, contend_params *p, const char **file,
                            char ***defs, int *ndefs, contend_strbuf *out, char *err,
                            size_t errlen);

/* Resolves every job's nodes out of nodes 0..nnodes-1: explicit lists
 * first, then placements in file order (interleaved jobs share their nodes
 * round-robin); random placement draws from its seed= or run_seed.
 * Returns 0, or -1 with "path:line: message" (too many nodes, node out of
 * range).  Deterministic: every rank computes the same. */
int contend_jobs_place(contend_jobfile *jf, int nnodes, uint64_t run_seed, char *err,
                       size_t errlen);

/* The same with the machine's tree: run node i is node tree_node[i] of
 * tree (tree_node NULL: node i).  The tree placements need it (tree NULL:
 * they are refused, naming the line); with it every job's nodes also get
 * their leaf and pod (node_leaf, node_pod).  Order of placement: explicit
 * lists, then the other jobs in file order; each takes free nodes only
 * (jobs are disjoint); a job that cannot fit is refused with
 * "path:line: job 'x' ... does not fit: why". */
struct contend_tree;
int contend_jobs_place_tree(contend_jobfile *jf, int nnodes, const struct contend_tree *tree,
                            const int *tree_node, uint64_t run_seed, char *err, size_t errlen);
/* The line of the first tree placement of the file, or 0 if none. */
int contend_jobfile_tree_line(const contend_jobfile *jf);

/* Checks every motif's parameters against its job's size (ranks[j]).
 * Returns 0, or -1 with "path:line: message". */
int contend_jobs_validate(const contend_jobfile *jf, const int *ranks, char *err, size_t errlen);

/* Writes the motif list with parameters (contend jobs --list). */
void contend_jobs_list(contend_strbuf *out);

/* ---- one invocation of a motif (engine-neutral) ------------------------- */

typedef struct contend_job_exec {
  const contend_group *clock; /* whose clock times iterations; NULL: untimed */
  int verify;                 /* run prepare/check (check always for ALWAYS_CHECK motifs) */
  long verify_inject;
  contend_traffic *traffic; /* attached while iterations run (not prepare/check); may be NULL */
  /* timed iterations: their series (>= 0), the duration of each (s) and
   * how many (1, or a block of iterations timed together:
   * CONTEND_MOTIF_BLOCK_TIMING, the duration is then the block's mean);
   * may be NULL */
  void (*sample)(void *arg, int series, double seconds, long count);
  void *arg;
} contend_job_exec;

/* Loop counts of one invocation: rings x (warmup + iters) iterations from
 * the motif's parameters (rings 1, warmup 0 when it has none), or
 * c->iterations when setup set it. */
void contend_job_loop(const contend_ctx *c, long *rings, long *warmup, long *iters);
/* Runs invocation `rep` of motif m on context c (every group rank calls
 * it).  Returns the motif time: the sum of the timed iterations' durations
 * (0 for a rank with metric_scale 0, or without a clock). */
double contend_job_invoke(contend_ctx *c, const contend_motif *m, long rep,
                          const contend_job_exec *x);

/* ---- results ------------------------------------------------------------ */

typedef struct contend_jstat {
  double n, sum, sumsq, min, max; /* min = +inf, max = -inf when empty */
} contend_jstat;

void contend_jstat_reset(contend_jstat *s);
void contend_jstat_add(contend_jstat *s, double v);
double contend_jstat_mean(const contend_jstat *s);
double contend_jstat_stddev(const contend_jstat *s);

typedef enum { CONTEND_PASS_ISOLATED, CONTEND_PASS_CONCURRENT } contend_pass_kind;

/* One motif instance in one pass. */
typedef struct contend_mres {
  contend_jstat time;    /* s per invocation, over ranks x repeats */
  double *rep_max;       /* [repeat]: slowest rank's invocation time */
  contend_hist iter_us;  /* per timed iteration, usec */
  contend_jstat *series; /* [nseries]: s per timed iteration */
  double verify_errors, verify_checked;
  double io_bytes; /* written + read in the pass, all ranks */
  /* bandwidth motifs (CONTEND_METRIC_BW_MIB_S): per sampling rank and
   * invocation, metric_scale MiB x timed iterations / the invocation's time,
   * in Gb/s (1e9 bit/s) */
  contend_jstat net_gbps;
  double *samples; /* --samples: iteration times (s), gathered at rank 0 */
  long nsamples;
} contend_mres;

/* One job in one pass. */
typedef struct contend_jres {
  contend_jstat time;    /* s per repeat of the chain, over ranks x repeats */
  double *rep_max;       /* [repeat] */
  double start_s, end_s; /* perform phase: first start, last end, s since the pass began */
} contend_jres;

/* A motif instance (job j, position k), pass-independent. */
typedef struct contend_minfo {
  int job, pos;
  long iterations; /* per invocation, warm-up included */
  double msg_bytes;
  double divisor; /* iteration time / divisor = the motif's latency (ping-pong: 2) */
  int nseries;
  double *series_value;
  const char *series_key;
  contend_traffic traffic; /* perform phase of one pass, all ranks */
} contend_minfo;

typedef struct contend_jobs_run {
  const contend_jobfile *jf;
  const contend_params *opts;
  int dry_run;
  int npasses;
  contend_pass_kind pass[2];
  /* rank 0: the engine clock (contend_now; the simulator's clock is the one
   * its counter CSV uses) and the wall clock (Unix seconds, to align with
   * counters sampled by wall time) when each pass's perform phase began */
  double pass_t0_clock_s[2], pass_t0_unix_s[2];
  uint64_t seed;
  int seed_from_time;
  int nnodes, nranks, ppn_min, ppn_max, virtual_nodes;
  int *job_ranks; /* [njobs] */
  int nm;         /* motif instances */
  int *first;     /* [njobs]: first instance of job j */
  contend_minfo *mi;
  contend_mres *m[2];                 /* [pass][nm] */
  contend_jres *j[2];                 /* [pass][njobs] */
  const struct contend_envelope *env; /* seed, library, times, node names (rank 0) */
  char started_utc[32], finished_utc[32];
  double wall_s;
  int argc;
  char **argv;
  char run_id[64];
} contend_jobs_run;

/* Allocates the result arrays for jf (every rank). */
void contend_jobs_run_init(contend_jobs_run *r, const contend_jobfile *jf, int npasses);
void contend_jobs_run_free(contend_jobs_run *r);
/* Allocates the per-series statistics once r->mi[].nseries are known. */
void contend_jobs_run_series(contend_jobs_run *r);
/* Random-stream id of motif instance (job j, position k): the same in real
 * and dry runs. */
static inline uint64_t contend_jobs_stream(int j, int k) {
  return ((uint64_t)(j + 1) << 32) | (uint64_t)k;
}

/* Human table and JSON results (schemas/contend-jobs.schema.json). */
void contend_jobs_report_table(const contend_jobs_run *r, contend_strbuf *out);
void contend_jobs_report_json(const contend_jobs_run *r, contend_strbuf *out);

/* ---- entry points ----------------------------------------------------- */

/* `contend jobs ...` (argv[0] = "jobs").  print: this process prints
 * help and usage errors (the launcher's rank 0).  Parses before the
 * engine starts, then launches the orchestrator on the engine chosen
 * (--engine, --dry-run).  Returns the exit status. */
int contend_jobs_main(int argc, char **argv, int print);

/* What the orchestrator needs (all owned by the caller). */
typedef struct contend_jobs_args {
  contend_jobfile *jf;
  const contend_params *opts; /* the jobs option table (run options + jobs rows) */
  int argc;
  char **argv;
  /* when not NULL: rank 0's results are moved here instead of freed (the
   * caller frees them with contend_jobs_run_free); for tests */
  contend_jobs_run *keep;
  /* the machine's tree (--topology-conf FILE, or --engine sim's --topology)
   * when known, else NULL; owned by the caller */
  const struct contend_tree *tree;
} contend_jobs_args;

/* The orchestrator (collective over world; arg: contend_jobs_args): the one
 * code path of every engine.  Returns the exit status. */
int contend_jobs_body(contend_group *world, void *arg);
/* Validates the engine options and launches the orchestrator. */
int contend_jobs_launch(contend_jobs_args *a, int *argc, char ***argv);

/* The jobs option table (src/jobs/main.c): the run options followed by the
 * jobs rows; malloc'd, the caller frees it after the params that use it. */
contend_param_def *contend_jobs_option_defs(void);

#endif
