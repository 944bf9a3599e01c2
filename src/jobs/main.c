/* `contend jobs FILE [options]`: options, help, --list, then the dry run
 * (trace engine, no MPI) or the real run (MPI).  Everything the user
 * typed, the job file included, is checked before MPI starts; errors are
 * printed once (by the launcher's rank 0) with exit status 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../suite/suite.h"
#include "contend/json.h"
#include "jobs.h"

static const contend_param_def opt_defs[] = {
    {"mode", CONTEND_P_STRING, "concurrent", "",
     "concurrent: all jobs at once; isolated: each job alone, in turn; both: isolated, then "
     "concurrent, and the Congestion Impact CI = t_concurrent / t_isolated",
     1, 0},
    {"seed", CONTEND_P_SEED, "time", "",
     "seed of every random choice (placement, compute noise, graphs, rings); printed, recorded", 1,
     0},
    {"output", CONTEND_P_STRING, "", "path",
     "write the JSON results here (-o; written to a temporary name, then renamed)", 1, 0},
    {"verify", CONTEND_P_BOOL, "0", "", "check the payload of every message (untimed)", 1, 0},
    {"verify_inject", CONTEND_P_INT, "0", "count",
     "testing aid: corrupt one received byte every N checks (shows verification catches it)", 0,
     1e12},
    {"virtual_nodes", CONTEND_P_INT, "0", "ranks",
     "group K consecutive ranks as one node (0: one node per host)", 0, 1e6},
    {"samples", CONTEND_P_INT, "0", "count",
     "record up to N iteration times per rank and motif in the JSON (samples_s)", 0, 1e7},
    {"watchdog", CONTEND_P_DOUBLE, "3600", "s",
     "abort a run that takes longer than this, removing its files (0: never)", 0, 1e9},
    {"quiet", CONTEND_P_BOOL, "0", "", "no progress lines on stderr (-q)", 1, 0},
    {"list", CONTEND_P_BOOL, "0", "", "list the motifs and their parameters, then exit", 1, 0},
    {"dry_run", CONTEND_P_BOOL, "0", "",
     "run the jobs on the trace engine in this process (no MPI): traffic and I/O volume", 1, 0},
    {"nodes", CONTEND_P_INT, "0", "count", "with --dry-run: number of nodes to plan for", 0, 1e7},
    {"ranks_per_node", CONTEND_P_INT, "1", "count", "with --dry-run: ranks per node", 1, 1e5},
    CONTEND_PARAM_END};

static void help(const contend_params *p, contend_strbuf *o) {
  contend_sb_printf(
      o, "usage: mpirun -n N contend jobs FILE [options]\n"
         "       contend jobs FILE --dry-run --nodes N [--ranks-per-node P]\n"
         "       contend jobs --list\n\n"
         "Runs the jobs of a job file (StressBench-style workloads) concurrently on disjoint\n"
         "nodes: each job is a chain of motifs (communication, compute and file I/O kernels)\n"
         "run in order, [REPEAT] times.  Phases decompose / perform / cleanup are separated by\n"
         "global barriers.  The report gives per job and motif the min/avg/max time over ranks\n"
         "and repeats, I/O bandwidth, traffic per node pair, and with --mode both the\n"
         "Congestion Impact CI = t_concurrent / t_isolated.\n\n"
         "Job file (docs/jobfile.md):\n"
         "  [VAR] N=4000                     variables, used as {N}\n"
         "  [JOB_NAME] tealeaf               starts a job\n"
         "  [NID_LIST] 0-7,12                its nodes, or:\n"
         "  [PLACEMENT] linear|interleaved|random nodes=8 [seed=S]\n"
         "  [REPEAT] 5                       runs of the motif chain\n"
         "  [MOTIF] halo2d nx={N} ny={N} \\   motif and key=value parameters; a trailing\n"
         "          depth=2                  backslash or an indented line continues\n"
         "  # comment\n\n"
         "Options:\n"
         "  -h, --help                         this text\n"
         "  -D NAME=VALUE                      set a job-file variable (overrides [VAR])\n");
  contend_params_help(p, "", o);
  contend_sb_printf(o, "\nExit status: 0 success, 1 verification found corrupted data, 2 bad input "
                       "(message\nnames file:line), 3 runtime failure.\n"
                       "Examples:\n"
                       "  contend jobs --list\n"
                       "  contend jobs examples/jobs/tealeaf_cg.job --dry-run --nodes 16\n"
                       "  mpirun -n 16 --oversubscribe contend jobs examples/jobs/tealeaf_cg.job "
                       "--virtual-nodes 1 --mode both -o jobs.json\n");
}

/* Returns 0 to run, 1 when done (help/list printed), -1 on bad input. */
static int parse_args(int argc, char **argv, contend_params *p, const char **file, char ***defs,
                      int *ndefs, contend_strbuf *out, char *err, size_t errlen) {
  *file = NULL;
  int want_help = 0;
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      want_help = 1;
      continue;
    }
    if (!strncmp(arg, "-D", 2)) {
      const char *d = arg[2] ? arg + 2 : (a + 1 < argc ? argv[++a] : NULL);
      if (!d) {
        snprintf(err, errlen, "-D: missing NAME=VALUE");
        return -1;
      }
      *defs = realloc(*defs, sizeof(char *) * (size_t)(*ndefs + 1));
      if (!*defs)
        abort();
      (*defs)[(*ndefs)++] = (char *)d;
      continue;
    }
    char name[256];
    const char *val = NULL;
    if (contend_option_split(arg, name, sizeof name, &val)) {
      contend_key_normalize(name);
    } else if (arg[0] == '-' && arg[1]) {
      snprintf(err, errlen, "unknown option '%s' (see 'contend jobs --help')", arg);
      return -1;
    } else {
      if (*file) {
        snprintf(err, errlen, "one job file only: '%s' and '%s'", *file, arg);
        return -1;
      }
      *file = arg;
      continue;
    }
    int idx = contend_params_find(p, name);
    if (idx < 0) {
      snprintf(err, errlen, "unknown option '%s' (see 'contend jobs --help')", arg);
      return -1;
    }
    if (contend_params_set_arg(p, idx, arg, val, argc, argv, &a, err, errlen))
      return -1;
  }
  if (want_help) {
    help(p, out);
    return 1;
  }
  if (contend_param_bool(p, "list")) {
    contend_jobs_list(out);
    return 1;
  }
  const char *mode = contend_param_str(p, "mode");
  if (strcmp(mode, "concurrent") && strcmp(mode, "isolated") && strcmp(mode, "both")) {
    snprintf(err, errlen, "--mode: '%s' is not valid: expected concurrent, isolated or both", mode);
    return -1;
  }
  if (!*file) {
    snprintf(err, errlen, "missing the job file (contend jobs FILE; see --help)");
    return -1;
  }
  const int dry = contend_param_bool(p, "dry_run");
  if (!dry && contend_param_is_set(p, "nodes")) {
    snprintf(err, errlen,
             "--nodes only applies with --dry-run (a real run takes its nodes from "
             "MPI)");
    return -1;
  }
  if (dry && contend_param_int(p, "nodes") < 1) {
    snprintf(err, errlen, "--dry-run needs --nodes N (and optionally --ranks-per-node P)");
    return -1;
  }
  if (contend_param_is_set(p, "output") && !*contend_param_str(p, "output")) {
    snprintf(err, errlen, "-o/--output: empty path");
    return -1;
  }
  return 0;
}

static int dry_run(contend_jobfile *jf, const contend_params *p, int argc, char **argv, char *err,
                   size_t errlen) {
  const int nn = (int)contend_param_int(p, "nodes");
  const int ppn = (int)contend_param_int(p, "ranks_per_node");
  const contend_param_value *sv = &p->v[contend_params_find(p, "seed")];
  const uint64_t seed = sv->is_time ? 0 : (uint64_t)sv->i;
  const char *output = contend_param_str(p, "output");
  if (*output && contend_check_writable(output, err, errlen))
    return CONTEND_EXIT_USAGE;
  if (contend_jobs_place(jf, nn, seed, err, errlen))
    return CONTEND_EXIT_USAGE;
  contend_jobs_run r;
  contend_jobs_run_init(&r, jf, 0);
  r.dry_run = 1;
  r.opts = p;
  r.seed = seed;
  r.seed_from_time = sv->is_time;
  r.nnodes = nn;
  r.nranks = nn * ppn;
  r.ppn_min = r.ppn_max = ppn;
  r.argc = argc;
  r.argv = argv;
  snprintf(r.run_id, sizeof r.run_id, "dry");
  for (int j = 0; j < jf->njobs; j++)
    r.job_ranks[j] = jf->jobs[j].nnodes * ppn;
  int rc = contend_jobs_validate(jf, r.job_ranks, err, errlen) ? CONTEND_EXIT_USAGE : 0;
  if (!rc)
    rc = contend_jobs_dry(&r, ppn, err, errlen);
  if (!rc) {
    contend_strbuf text = {0}, json = {0};
    contend_jobs_report_table(&r, &text);
    fputs(text.s, stdout);
    fflush(stdout);
    if (*output) {
      contend_jobs_report_json(&r, &json);
      if (contend_write_file_atomic(output, json.s, json.len, err, errlen))
        rc = CONTEND_EXIT_FAIL;
      else
        printf("\n  plan written to %s\n", output);
    }
    contend_sb_free(&text);
    contend_sb_free(&json);
  }
  contend_jobs_run_free(&r);
  return rc;
}

int contend_jobs_main(int argc, char **argv, int print) {
  contend_params p;
  contend_strbuf out = {0};
  char err[2048] = "";
  char **defs = NULL;
  int ndefs = 0;
  const char *file = NULL;
  if (contend_params_init(&p, opt_defs, "", err, sizeof err)) {
    fprintf(stderr, "contend jobs: %s\n", err);
    return CONTEND_EXIT_FAIL;
  }
  int rc = parse_args(argc, argv, &p, &file, &defs, &ndefs, &out, err, sizeof err);
  if (rc != 0) {
    if (print) {
      if (rc > 0)
        fputs(out.s ? out.s : "", stdout);
      else
        fprintf(stderr, "contend jobs: error: %s\nTry 'contend jobs --help'.\n", err);
    }
    contend_sb_free(&out);
    contend_params_free(&p);
    free(defs);
    return rc > 0 ? CONTEND_EXIT_OK : CONTEND_EXIT_USAGE;
  }
  contend_jobfile jf;
  if (contend_jobfile_load(&jf, file, defs, ndefs, err, sizeof err)) {
    if (print)
      fprintf(stderr, "contend jobs: error: %s\n", err);
    contend_jobfile_free(&jf);
    contend_params_free(&p);
    free(defs);
    return CONTEND_EXIT_USAGE;
  }
  int status;
  if (contend_param_bool(&p, "dry_run")) {
    status = dry_run(&jf, &p, argc, argv, err, sizeof err);
    if (status)
      fprintf(stderr, "contend jobs: error: %s\n", err);
  } else {
    MPI_Init(&argc, &argv);
    status = contend_jobs_mpi(&jf, &p, argc, argv);
    MPI_Finalize();
  }
  contend_jobfile_free(&jf);
  contend_params_free(&p);
  free(defs);
  return status;
}
