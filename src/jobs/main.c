/* `contend jobs FILE [options]`: options, help, --list, then the dry run
 * (trace engine, no MPI) or the real run (MPI).  Everything the user
 * typed, the job file included, is checked before MPI starts; errors are
 * printed once (by the launcher's rank 0) with exit status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../fabric/tree.h"
#include "../run/envelope.h"
#include "../suite/suite.h"
#include "contend/json.h"
#include "contend/world.h"
#include "jobs.h"

/* The rows of `jobs` only; the run options shared with `network` and
 * `load` come first (src/run/options.c). */
static const contend_param_def jobs_defs[] = {
    {"mode", CONTEND_P_STRING, "concurrent", "",
     "concurrent: all jobs at once; isolated: each job alone, in turn; both: isolated, then "
     "concurrent, and the Congestion Impact CI = t_concurrent / t_isolated",
     1, 0},
    {"samples", CONTEND_P_INT, "0", "count",
     "record up to N iteration times per rank and motif in the JSON (samples_s); N x ranks is at "
     "most 10^7 (rank 0 holds them: 80 MB per motif)",
     0, 1e7},
    {"list", CONTEND_P_BOOL, "0", "", "list the motifs and their parameters, then exit", 1, 0},
    CONTEND_PARAM_END};

contend_param_def *contend_jobs_option_defs(void) { return contend_run_defs_with(jobs_defs); }

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
         "  [PLACEMENT] compact nodes=N [per_leaf=M] | spread nodes=N pods=K [per_leaf=M] |\n"
         "              every_leaf per_leaf=M | pairs pairs=P [across=leaf|pod] |\n"
         "              incast per_leaf=M [senders=7] [receivers=R]   (need the tree:\n"
         "              --topology-conf FILE or --engine sim)\n"
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

int contend_jobs_parse_args(int argc, char **argv, contend_params *p, const char **file,
                            char ***defs, int *ndefs, contend_strbuf *out, char *err,
                            size_t errlen) {
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
  contend_files jobfile;
  contend_files_init(&jobfile);
  contend_files_input(&jobfile, "the job file", *file, 0);
  if (!contend_run_engine(p, &jobfile, err, errlen))
    return -1;
  return 0;
}

#define DATA_FILES_MAX 24 /* I/O motif data files checked against the run's files */

/* The data files the job file's I/O motifs write (literal paths, {job}
 * filled in; a template with {rank}, {nranks} or {run} names other files
 * per rank or run, and the default path has {run}) against the job file
 * and the run's other files: contend_run_files_check. */
static int check_data_files(const contend_params *p, const contend_jobfile *jf, char *err,
                            size_t errlen) {
  static char paths[DATA_FILES_MAX][1024];
  contend_files fs;
  contend_files_init(&fs);
  contend_files_input(&fs, "the job file", jf->path, 0);
  /* only an engine that runs on the real ranks opens the I/O motifs' data
   * files; dry runs and in-process engines count their bytes */
  const contend_engine *eng = contend_run_engine_selected(p);
  const int planned = !eng || eng->in_process;
  int np = 0;
  for (int j = 0; j < jf->njobs; j++)
    for (int k = 0; k < jf->jobs[j].nmotifs && np < DATA_FILES_MAX; k++) {
      const contend_job_motif *jm = &jf->jobs[j].motifs[k];
      if (!(jm->motif->flags & CONTEND_MOTIF_FILE_DATA) ||
          contend_params_find(&jm->params, "path") < 0)
        continue;
      char *out = paths[np];
      size_t o = 0;
      for (const char *t = contend_param_str(&jm->params, "path"); *t && o + 1 < sizeof paths[0];)
        if (!strncmp(t, "{job}", 5)) {
          o += (size_t)snprintf(out + o, sizeof paths[0] - o, "%s", jf->jobs[j].name);
          t += 5;
        } else {
          out[o++] = *t++;
        }
      out[o < sizeof paths[0] ? o : sizeof paths[0] - 1] = 0;
      if (!*out || strchr(out, '{'))
        continue;
      char role[256], show[96];
      snprintf(role, sizeof role, "%s:%d: motif '%s' of job '%s' path=",
               contend_path_show(jf->path, show, sizeof show), jm->line, jm->motif->name,
               jf->jobs[j].name);
      contend_files_data(&fs, role, paths[np++], planned);
    }
  return contend_run_files_check(p, &fs, 0, err, errlen);
}

/* The machine's tree: --topology-conf FILE, else the engine's machine
 * option (--engine sim's --topology).  Returns 1 (loaded into *t), 0
 * (none), or -1 with err (a bad file, or a tree placement without a
 * tree). */
static int load_tree(const contend_params *p, const contend_jobfile *jf, contend_tree *t, char *err,
                     size_t errlen) {
  const char *conf = contend_param_str(p, "topology_conf");
  const contend_engine *eng = contend_run_engine_selected(p);
  const char *machine = eng ? eng->machine_option : NULL;
  const char *spec = NULL;
  if (*conf)
    spec = conf;
  else if (machine && contend_params_find(p, machine) >= 0)
    spec = contend_param_str(p, machine);
  if (!spec) {
    const int line = contend_jobfile_tree_line(jf);
    if (!line)
      return 0;
    snprintf(err, errlen,
             "%s:%d: this placement needs the machine's tree: give --topology-conf FILE (a Slurm "
             "topology.conf; the emulated cluster writes one in its state directory), or run "
             "with --engine sim (its --topology)",
             jf->path, line);
    return -1;
  }
  char why[1024];
  if (contend_tree_load(spec, t, why, sizeof why)) {
    char opt[64];
    contend_option_name(*conf ? "topology_conf" : machine, opt, sizeof opt);
    snprintf(err, errlen, "%s: %s", opt, why);
    return -1;
  }
  return 1;
}

int contend_jobs_main(int argc, char **argv, int print) {
  contend_params p;
  contend_strbuf out = {0};
  char err[2048] = "";
  char **defs = NULL;
  int ndefs = 0;
  const char *file = NULL;
  contend_param_def *optdefs = contend_jobs_option_defs();
  if (contend_params_init(&p, optdefs, "", err, sizeof err)) {
    fprintf(stderr, "contend jobs: %s\n", err);
    return CONTEND_EXIT_FAIL;
  }
  int rc = contend_jobs_parse_args(argc, argv, &p, &file, &defs, &ndefs, &out, err, sizeof err);
  if (rc != 0) {
    if (print) {
      if (rc > 0)
        fputs(out.s ? out.s : "", stdout);
      else
        fprintf(stderr, "contend jobs: error: %s (see contend jobs --help)\n", err);
    }
    contend_sb_free(&out);
    contend_params_free(&p);
    free(optdefs);
    free(defs);
    return rc > 0 ? CONTEND_EXIT_OK : CONTEND_EXIT_USAGE;
  }
  contend_jobfile jf;
  contend_tree tree;
  int have_tree = -1;
  if (contend_jobfile_load(&jf, file, defs, ndefs, err, sizeof err) ||
      check_data_files(&p, &jf, err, sizeof err) ||
      (have_tree = load_tree(&p, &jf, &tree, err, sizeof err)) < 0) {
    if (print)
      fprintf(stderr, "contend jobs: error: %s\n", err);
    contend_jobfile_free(&jf);
    contend_params_free(&p);
    free(optdefs);
    free(defs);
    return CONTEND_EXIT_USAGE;
  }
  contend_jobs_args args = {
      .jf = &jf, .opts = &p, .argc = argc, .argv = argv, .tree = have_tree ? &tree : NULL};
  int status = contend_jobs_launch(&args, &argc, &argv);
  if (have_tree)
    contend_tree_free(&tree);
  contend_jobfile_free(&jf);
  contend_params_free(&p);
  free(optdefs);
  free(defs);
  return status;
}
