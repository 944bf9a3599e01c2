/* contend: one binary, subcommands.  `network` and `load` are built in;
 * any other COMMAND runs the program contend-COMMAND found next to this
 * binary or on PATH (git style), e.g. `contend cluster` or `contend report`. */
#include <errno.h>
#include <glob.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/engine_sim/sim_cmd.h"
#include "../src/engine_sim/topo_cmd.h"
#include "../src/jobs/jobs.h"
#include "../src/pairs/pairs.h"
#include "../src/record/cmd.h"
#include "../src/suite/suite.h"
#include "../src/throttle/cmd.h"
#include "version.h"

/* The built-in commands; part: the optional part a command needs (NULL:
 * always built), marked [not built] by help when it is off. */
static const struct {
  const char *name, *help, *part;
} builtin_commands[] = {
    {"network", "canary tests over all nodes, no congestion (as GPCNeT network_test)", NULL},
    {"load", "canaries alone, then with congestors: Congestion Impact at mean and p99", NULL},
    {"jobs", "run a job file: concurrent workloads (motifs, I/O), their CI", NULL},
    {"pairs", "every ordered pair's bandwidth and latency (mpiGraph's shifts), for locate", NULL},
    {"sim", "synthetic traffic on the simulated fabric (packets, credits, counters)", "sim"},
    {"topology", "a machine as a tree (show) and the routing's paths between nodes (paths)", "sim"},
    {"throttle", "run a program with the PMPI throttle (rate control of its sends)", "throttle"},
    {"record", "run an MPI program with the PMPI recorder: an OTF2 trace to replay", "otf2"},
    {"list", "tests (motifs) and their parameters", NULL},
    {"version", "the version, git commit, MPI library and optional parts built", NULL},
    {"help CMD", "help of one command (same as contend CMD --help)", NULL},
};

/* The Python layer's commands (programs contend-COMMAND). */
static const struct {
  const char *name, *help;
} python_commands[] = {
    {"report", "tables of a results file (network, load, jobs): CI, percentiles"},
    {"compare", "results files side by side (systems, libraries, runs)"},
    {"significance", "is one run's impact different from another's (tests, CIs)"},
    {"plot", "figures of results files (histograms, impact, jobs box plots)"},
    {"html", "one self-contained HTML page of results files"},
    {"sweep", "scenario sweeps (e.g. routing x load on the simulator)"},
    {"cluster", "the emulated cluster (network namespaces, shaped links)"},
    {"counters", "fabric counters: sample, replay, percent time stalled"},
    {"pingpong-train", "RTTs under congestion, counters sampled (latency model data)"},
    {"sensitivity-train", "an application's runs under congestion (sensitivity data)"},
    {"model", "Netscope models: fit-latency, sensitivity, show"},
    {"mitigate", "rate control compared (off, static, dcqcn, netscope) on job mixes"},
    {"study", "control + conditions x repetitions, randomized, resumable; Welch tests"},
    {"locate", "rank the slow links from contend pairs results and the routing's paths"},
};

/* A prefix install puts the Python layer (pip install --prefix P) in
 * P/lib/pythonX.Y/site-packages, which the interpreter named in the first
 * line of P/bin/contend-NAME need not search.  For a program found next to
 * this binary, that directory goes first on PYTHONPATH when it holds the
 * contend package, so that `P/bin/contend report` works without setting
 * anything (and from a copied prefix). */
static void python_path_of_prefix(const char *bindir) {
  static const char *const pats[] = {"%s/../lib*/python3*/site-packages/contend/__init__.py",
                                     "%s/../lib*/python3*/dist-packages/contend/__init__.py",
                                     "%s/../local/lib*/python3*/dist-packages/contend/__init__.py"};
  for (size_t i = 0; i < sizeof pats / sizeof *pats; i++) {
    char pat[PATH_MAX + 96], dir[PATH_MAX];
    glob_t g;
    snprintf(pat, sizeof pat, pats[i], bindir);
    const int found = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0;
    if (found && strlen(g.gl_pathv[0]) < sizeof pat) {
      strcpy(pat, g.gl_pathv[0]);
      *strrchr(pat, '/') = 0; /* .../site-packages/contend */
      *strrchr(pat, '/') = 0; /* .../site-packages */
    }
    if (found)
      globfree(&g);
    if (!found || !realpath(pat, dir))
      continue;
    const char *old = getenv("PYTHONPATH");
    char *value = malloc(strlen(dir) + (old ? strlen(old) : 0) + 2);
    if (!value)
      return;
    sprintf(value, old && *old ? "%s:%s" : "%s", dir, old);
    setenv("PYTHONPATH", value, 1);
    free(value);
    return;
  }
}

/* Where contend-NAME would run from: next to this binary, else PATH.
 * Returns 1 and the path in out if found. */
static int find_command(const char *name, char *out, size_t len) {
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    snprintf(out, len, "%s/contend-%s", dirname(self), name);
    if (access(out, X_OK) == 0)
      return 1;
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    const size_t k = strcspn(p, ":");
    snprintf(out, len, "%.*s/contend-%s", (int)k, p, name);
    if (k && access(out, X_OK) == 0)
      return 1;
    p += k + (p[k] == ':');
  }
  return 0;
}

static void usage(FILE *f) {
  fprintf(f, "usage: contend COMMAND [options]\n\n"
             "Measures, reproduces and mitigates network congestion on HPC systems.\n\n"
             "Commands:\n");
  for (size_t i = 0; i < sizeof builtin_commands / sizeof builtin_commands[0]; i++)
    fprintf(f, "  %-18s %s%s\n", builtin_commands[i].name, builtin_commands[i].help,
            !builtin_commands[i].part || contend_part_built(builtin_commands[i].part)
                ? ""
                : " [not built]");
  int missing = 0;
  char where[PATH_MAX + 64];
  for (size_t i = 0; i < sizeof python_commands / sizeof python_commands[0]; i++) {
    const int found = find_command(python_commands[i].name, where, sizeof where);
    missing += !found;
    fprintf(f, "  %-18s %s%s\n", python_commands[i].name, python_commands[i].help,
            found ? "" : " [not installed]");
  }
  fprintf(f,
          "\nThe last %zu are Python programs contend-COMMAND, found next to this binary or on "
          "PATH;\n`make build` (or `make demo`) links them into build/bin, `pip install .` "
          "installs them.\n",
          sizeof python_commands / sizeof python_commands[0]);
  if (missing)
    fprintf(f, "[not installed]: run `make build` in the source tree (it sets up .venv), or\n"
               "`pip install .` with this binary on PATH.\n");
  fprintf(f, "\nRun measuring commands under MPI, e.g.:\n"
             "  mpirun -n 64 contend load -o results.json\n"
             "  mpirun -n 12 --oversubscribe contend load --virtual-nodes 1 --timeout 2\n");
  fprintf(f, "\nEngines (--engine NAME on network, load and jobs):\n");
  for (int i = 0; contend_engines[i]; i++)
    if (!contend_engines[i]->not_built)
      fprintf(f, "  %-9s %s\n", contend_engines[i]->name, contend_engines[i]->help);
}

/* Rank in the job before MPI_Init, from the launcher's environment, so
 * that help and usage errors print once rather than once per rank. */
static int launcher_rank(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                     "SLURM_PROCID", "MV2_COMM_WORLD_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v && *v)
      return atoi(v);
  }
  return 0;
}

/* A usage error found before MPI starts: every rank finds it and rank 0
 * says it.  The other ranks wait before exiting, so that a launcher that
 * ends the job at the first non-zero exit (mpirun) cannot end rank 0
 * before its message is out (rank 0's own exit ends the wait). */
static int usage_exit(int status) {
  if (status == 2 && launcher_rank() != 0)
    sleep(2);
  return status;
}

/* `contend list [TEST...]`: every test with its parameters, or the tests
 * named (an unknown name: exit status 2); the job-file motifs follow the
 * whole list. */
static int list_tests(int argc, char **argv, int print) {
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
      if (print)
        printf("usage: contend list [TEST...]\n\n"
               "Lists the tests of `contend network` and `contend load` (canaries and\n"
               "congestors) with their parameters (--TEST.KEY VALUE), then the job-file motifs\n"
               "(their parameters: contend jobs --list); with TEST names, only those tests.\n"
               "An unknown name is an error (exit status 2).\n");
      return 0;
    }
    char name[128];
    snprintf(name, sizeof name, "%s", argv[a]);
    contend_key_normalize(name);
    if (argv[a][0] == '-' || strlen(argv[a]) >= sizeof name || !contend_motif_find(name)) {
      if (print) {
        fprintf(stderr, "contend list: error: %s '%.100s' (tests:",
                argv[a][0] == '-' ? "unknown option" : "unknown test", argv[a]);
        for (int i = 0; contend_motifs[i]; i++)
          fprintf(stderr, "%s %s", i ? "," : "", contend_motifs[i]->name);
        fprintf(stderr, "; job-file motifs: contend jobs --list)\n");
      }
      return 2;
    }
  }
  if (!print)
    return 0;
  contend_config cfg;
  contend_strbuf out = {0};
  char err[512];
  char *help_argv[] = {"load", "--help", NULL};
  if (contend_config_parse(&cfg, CONTEND_CMD_LOAD, 2, help_argv, &out, err, sizeof err) < 0) {
    fprintf(stderr, "contend: %s\n", err);
    return 3;
  }
  contend_sb_free(&out);
  printf("Tests (canaries measure, congestors load the network).  Set a parameter with\n"
         "--TEST.KEY VALUE on `contend network` or `contend load`.\n");
  for (int i = 0; i < cfg.nmotifs; i++) {
    const contend_motif *m = contend_motifs[i];
    int wanted = argc < 2;
    for (int a = 1; a < argc && !wanted; a++) {
      char name[128];
      snprintf(name, sizeof name, "%s", argv[a]);
      contend_key_normalize(name);
      wanted = contend_motif_find(name) == m;
    }
    if (!wanted)
      continue;
    printf("\n%-9s %-15s %s [%s]\n", m->role == CONTEND_ROLE_CANARY ? "canary" : "congestor",
           m->name, m->help, m->metric == CONTEND_METRIC_LAT_US ? "usec" : "MiB/s/rank");
    contend_params_help(&cfg.tests[i], "", &out);
    fputs(out.s ? out.s : "", stdout);
    out.len = 0;
  }
  const char *why = "";
  if (argc > 1) { /* the tests asked for only */
    contend_sb_free(&out);
    contend_config_free(&cfg);
    return 0;
  }
  printf("\nJob-file motifs (contend jobs; parameters: contend jobs --list):\n");
  for (int i = 0; contend_workload_motifs[i]; i++)
    printf("  %-20s %s\n", contend_workload_motifs[i]->name, contend_workload_motifs[i]->help);
  if (contend_io_hdf5_available(&why))
    printf("I/O back ends: posix, mpiio, hdf5 (parallel HDF5)\n");
  else
    printf("I/O back ends: posix, mpiio (no hdf5: %s)\n", why);
  contend_sb_free(&out);
  contend_config_free(&cfg);
  return 0;
}

static int dispatch(char **argv) {
  char prog[PATH_MAX], path[PATH_MAX + 64];
  snprintf(prog, sizeof prog, "contend-%s", argv[1]);
  if (find_command(argv[1], path, sizeof path)) {
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
      self[n] = 0;
      const char *bindir = dirname(self);
      const size_t k = strlen(bindir);
      if (!strncmp(path, bindir, k) && path[k] == '/')
        python_path_of_prefix(bindir);
    }
    argv[1] = path;
    execv(path, argv + 1);
  }
  argv[1] = prog;
  execvp(prog, argv + 1);
  if (errno == ENOENT)
    fprintf(stderr,
            "contend: unknown command '%s' (no built-in command and no program %s; see contend "
            "help)\n",
            prog + 8, prog);
  else
    fprintf(stderr, "contend: cannot run %s: %s\n", prog, strerror(errno));
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || (!strcmp(cmd, "help") && argc == 2)) {
    if (launcher_rank() == 0)
      usage(stdout);
    return 0;
  }
  if (!strcmp(cmd, "help")) { /* help CMD */
    char *args[] = {argv[0], argv[2], "--help", NULL};
    return main(3, args);
  }
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version"))
    return usage_exit(contend_version_main(argc - 1, argv + 1, launcher_rank() == 0));
  if (!strcmp(cmd, "list"))
    return usage_exit(list_tests(argc - 1, argv + 1, launcher_rank() == 0));
  if (!strcmp(cmd, "sim"))
    return contend_sim_main(argc - 1, argv + 1);
  if (!strcmp(cmd, "topology"))
    return contend_topology_main(argc - 1, argv + 1);
  if (!strcmp(cmd, "throttle"))
    return usage_exit(contend_throttle_main(argc - 1, argv + 1, launcher_rank() == 0));
  if (!strcmp(cmd, "record"))
    return usage_exit(contend_record_main(argc - 1, argv + 1, launcher_rank() == 0));
  if (!strcmp(cmd, "jobs"))
    return usage_exit(contend_jobs_main(argc - 1, argv + 1, launcher_rank() == 0));
  if (!strcmp(cmd, "pairs"))
    return usage_exit(contend_pairs_main(argc - 1, argv + 1, launcher_rank() == 0));
  contend_command c;
  if (!strcmp(cmd, "network"))
    c = CONTEND_CMD_NETWORK;
  else if (!strcmp(cmd, "load"))
    c = CONTEND_CMD_LOAD;
  else
    return dispatch(argv);

  contend_config cfg;
  contend_strbuf out = {0};
  char err[2048] = "";
  int rc = contend_config_parse(&cfg, c, argc - 1, argv + 1, &out, err, sizeof err);
  if (rc != 0) {
    if (launcher_rank() == 0) {
      if (rc > 0)
        fputs(out.s, stdout);
      else
        fprintf(stderr, "contend %s: error: %s (see contend %s --help)\n", cmd, err, cmd);
    }
    contend_sb_free(&out);
    contend_config_free(&cfg);
    return rc > 0 ? 0 : usage_exit(2);
  }
  int status = contend_suite_main(&cfg, &argc, &argv);
  contend_sb_free(&out);
  contend_config_free(&cfg);
  return status;
}
