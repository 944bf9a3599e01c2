/* Command-line configuration: the option tables of `network` and `load`
 * and their parsing.  Every option is one row below or in a motif's own
 * table (--TEST.KEY). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../run/envelope.h"
#include "suite.h"

/* The suite's own rows; the run options shared with `jobs` come first
 * (src/run/options.c). */
static const contend_param_def suite_defs[] = {
    {"timeout", CONTEND_P_DOUBLE, "10", "s",
     "a test stops taking new measurements after this time (decided collectively)", 1e-6, 1e7},
    {"measurements", CONTEND_P_INT, "-1", "count",
     "set nM of every test (-1: each test's own default, see --TEST.measurements)", -1, 1e12},
    {"rings", CONTEND_P_INT, "-1", "count", "set nR of every test (-1: each test's default)", -1,
     1e9},
    {"iters", CONTEND_P_INT, "-1", "count", "set nI of every test (-1: each test's default)", -1,
     1e9},
    {"warmup", CONTEND_P_INT, "-1", "count",
     "set the warm-up iterations of every test (-1: each test's default)", -1, 1e9},
    {"record_rings", CONTEND_P_BOOL, "0", "",
     "record the ring tests' rings whole in the results (-o): per test, phase, measurement and "
     "round the group ranks in ring order and, in measuring runs, every rank's value of that "
     "round (what contend locate reads); large (measurements x rings x ranks numbers per test "
     "and phase, at most 16777216 in total: give --measurements); a digest per measurement is "
     "always recorded",
     1, 0},
    {"show_rings", CONTEND_P_BOOL, "0", "",
     "with --dry-run: print the ring of every round of every ring test (ranks and their nodes) "
     "and its digests, not only the traffic of the first round",
     1, 0},
    {"show_rings_max", CONTEND_P_INT, "64", "rounds",
     "--show-rings prints at most this many rounds per test, rings of at most 32 ranks, and "
     "says what it left out (0: every round, whole rings: can be long)",
     0, 1e12},
    CONTEND_PARAM_END};

static const contend_param_def network_defs[] = {
    {"canaries", CONTEND_P_STRING,
     "rr_lat,rr_get_lat,rr_bw,rr_put_bw,rr_bw_sync,nat_bw,allreduce,alltoall", "list",
     "tests to run, comma-separated ('all' for every canary)", 1, 0},
    CONTEND_PARAM_END};

static const contend_param_def load_defs[] = {
    {"canaries", CONTEND_P_STRING, "rr_lat,rr_bw_sync,allreduce", "list",
     "canary tests, comma-separated ('all' for every canary)", 1, 0},
    {"congestors", CONTEND_P_STRING, "pairwise_a2a,p2p_incast,rma_put_incast,rma_get_bcast", "list",
     "congestors, comma-separated ('all' adds dl_allreduce and p2p_bcast)", 1, 0},
    {"canary_fraction", CONTEND_P_DOUBLE, "0.2", "fraction",
     "share of the nodes that run the canaries; the rest is split evenly over the congestors", 0.01,
     0.99},
    {"congestor_only", CONTEND_P_BOOL, "0", "",
     "run only the congestors, on all nodes (background load for other jobs)", 1, 0},
    {"congestor_baseline", CONTEND_P_BOOL, "1", "",
     "measure the congestors alone before the congested phase", 1, 0},
    {"congestor_warmup", CONTEND_P_INT, "1", "count",
     "congestor measurements run before the canaries are released", 0, 1e6},
    CONTEND_PARAM_END};

static int parse_list(const char *text, contend_role role, int *out, int *n, const char *opt,
                      char *err, size_t errlen) {
  char *copy = strdup(text), *save = NULL;
  *n = 0;
  if (!copy)
    return -1;
  int rc = 0;
  for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ')
      tok++;
    contend_key_normalize(tok);
    if (!strcmp(tok, "all")) {
      for (int i = 0; contend_motifs[i]; i++)
        if (contend_motifs[i]->role == role) {
          int dup = 0;
          for (int j = 0; j < *n; j++)
            dup |= out[j] == i;
          if (!dup && *n < CONTEND_MAX_LIST)
            out[(*n)++] = i;
        }
      continue;
    }
    const contend_motif *m = contend_motif_find(tok);
    int idx = -1;
    for (int i = 0; m && contend_motifs[i]; i++)
      if (contend_motifs[i] == m)
        idx = i;
    if (idx < 0 || m->role != role) {
      contend_strbuf valid = {0};
      for (int i = 0; contend_motifs[i]; i++)
        if (contend_motifs[i]->role == role)
          contend_sb_printf(&valid, "%s%s", valid.len ? ", " : "", contend_motifs[i]->name);
      snprintf(err, errlen, "%s: unknown %s '%s'; valid: %s, all", opt,
               role == CONTEND_ROLE_CANARY ? "canary" : "congestor", tok, valid.s);
      contend_sb_free(&valid);
      rc = -1;
      break;
    }
    for (int j = 0; j < *n; j++)
      if (out[j] == idx) {
        snprintf(err, errlen, "%s: '%s' is listed twice", opt, tok);
        rc = -1;
      }
    if (!rc && *n < CONTEND_MAX_LIST)
      out[(*n)++] = idx;
  }
  free(copy);
  if (!rc && *n == 0) {
    snprintf(err, errlen, "%s: the list is empty", opt);
    rc = -1;
  }
  return rc;
}

void contend_config_free(contend_config *cfg) {
  contend_params_free(&cfg->common);
  contend_params_free(&cfg->load);
  if (cfg->tests)
    for (int i = 0; i < cfg->nmotifs; i++)
      contend_params_free(&cfg->tests[i]);
  free(cfg->tests);
  cfg->tests = NULL;
  free(cfg->common_defs);
  cfg->common_defs = NULL;
}

void contend_config_help(const contend_config *cfg, contend_strbuf *out) {
  if (cfg->cmd == CONTEND_CMD_NETWORK)
    contend_sb_printf(out, "usage: mpirun -n N contend network [options]\n\n"
                           "Runs the canary tests over all nodes, without congestors (GPCNeT's "
                           "network_test):\n"
                           "random-ring latency and bandwidth, natural ring, allreduce and "
                           "alltoall,\n"
                           "each on PPort sub-communicators (the i-th rank of every node), so "
                           "all traffic\nleaves the node.\n\n");
  else
    contend_sb_printf(out, "usage: mpirun -n N contend load [options]\n\n"
                           "Network load test (GPCNeT's network_load_test): the nodes are "
                           "shuffled with the\n"
                           "seed; a fraction runs the canaries, the rest is split over the "
                           "congestors.\n"
                           "Canaries measure alone, then while the congestors load the network; "
                           "the report\n"
                           "gives the Congestion Impact at the mean and at the 99th percentile "
                           "(latency:\ncongested/isolated; bandwidth: isolated/congested).\n\n");
  contend_sb_printf(out, "Options:\n  -h, --help                         this text\n");
  contend_params_help(&cfg->common, "", out);
  contend_params_help(&cfg->load, "", out);
  contend_sb_printf(out, "\nTests (--TEST.KEY VALUE sets one parameter of one test; "
                         "'--' or '_' both work):\n");
  for (int i = 0; i < cfg->nmotifs; i++) {
    const contend_motif *m = contend_motifs[i];
    if (cfg->cmd == CONTEND_CMD_NETWORK && m->role != CONTEND_ROLE_CANARY)
      continue;
    contend_sb_printf(out, "\n %s %s: %s\n",
                      m->role == CONTEND_ROLE_CANARY ? "canary" : "congestor", m->name, m->help);
    contend_params_help(&cfg->tests[i], "", out);
    if (m->iters_base_ranks > 0)
      contend_sb_printf(out,
                        "  (iters left at its default: each measurement runs iters x %d / N "
                        "iterations in a group of N > %d ranks, as GPCNeT's code does; the "
                        "results give iters_per_measurement)\n",
                        m->iters_base_ranks, m->iters_base_ranks);
  }
  contend_sb_printf(
      out,
      "\nUnits: latency in microseconds (usec), bandwidth in MiB/s per rank.\n"
      "Exit status: 0 success, 1 --verify found corrupted data, 2 bad input, 3 runtime "
      "failure.\n"
      "Examples:\n"
      "  mpirun -n 640 --map-by ppr:32:node contend %s -o results.json\n"
      "  mpirun -n 12 --oversubscribe contend %s --virtual-nodes 1 --timeout 2 "
      "--measurements 20\n"
      "  contend %s --dry-run --nodes 64 --ranks-per-node 8\n",
      cfg->cmd == CONTEND_CMD_NETWORK ? "network" : "load",
      cfg->cmd == CONTEND_CMD_NETWORK ? "network" : "load",
      cfg->cmd == CONTEND_CMD_NETWORK ? "network" : "load");
}

int contend_config_parse(contend_config *cfg, contend_command cmd, int argc, char **argv,
                         contend_strbuf *out, char *err, size_t errlen) {
  memset(cfg, 0, sizeof *cfg);
  cfg->cmd = cmd;
  cfg->argc = argc;
  cfg->argv = argv;
  while (contend_motifs[cfg->nmotifs])
    cfg->nmotifs++;
  cfg->common_defs = contend_run_defs_with(suite_defs);
  if (contend_params_init(&cfg->common, cfg->common_defs, "", err, errlen) ||
      contend_params_init(&cfg->load, cmd == CONTEND_CMD_LOAD ? load_defs : network_defs, "", err,
                          errlen))
    return -1;
  cfg->tests = calloc((size_t)cfg->nmotifs, sizeof *cfg->tests);
  for (int i = 0; i < cfg->nmotifs; i++)
    if (contend_params_init(&cfg->tests[i], contend_motifs[i]->params, contend_motifs[i]->name, err,
                            errlen))
      return -1;
  int help = 0;
  for (int a = 1; a < argc; a++) {
    const char *arg = argv[a];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      help = 1;
      continue;
    }
    char name[256];
    const char *val = NULL;
    if (!contend_option_split(arg, name, sizeof name, &val)) {
      snprintf(err, errlen, "unexpected argument '%s' (options start with --)", arg);
      return -1;
    }
    contend_params *p = NULL;
    int idx = -1;
    char *dot = strchr(name, '.');
    if (dot) {
      *dot = 0;
      contend_key_normalize(name);
      const contend_motif *m = contend_motif_find(name);
      int mi = -1;
      for (int i = 0; m && i < cfg->nmotifs; i++)
        if (contend_motifs[i] == m)
          mi = i;
      if (mi < 0 || (cmd == CONTEND_CMD_NETWORK && m->role != CONTEND_ROLE_CANARY)) {
        snprintf(err, errlen, "%s: no test named '%s' in 'contend %s' (see --help)", arg, name,
                 cmd == CONTEND_CMD_LOAD ? "load" : "network");
        return -1;
      }
      p = &cfg->tests[mi];
      idx = contend_params_find(p, dot + 1);
      if (idx < 0) {
        snprintf(err, errlen, "%s: test '%s' has no parameter '%s' (see --help)", arg, name,
                 dot + 1);
        return -1;
      }
    } else {
      p = &cfg->common;
      idx = contend_params_find(p, name);
      if (idx < 0) {
        p = &cfg->load;
        idx = contend_params_find(p, name);
      }
      if (idx < 0) {
        snprintf(err, errlen, "unknown option '%s' (see 'contend %s --help')", arg,
                 cmd == CONTEND_CMD_LOAD ? "load" : "network");
        return -1;
      }
    }
    if (contend_params_set_arg(p, idx, arg, val, argc, argv, &a, err, errlen))
      return -1;
  }
  if (help) {
    contend_config_help(cfg, out);
    return 1;
  }
  /* global loop overrides apply where a test's own option was not given */
  static const char *const loops[] = {"measurements", "rings", "iters", "warmup"};
  for (int k = 0; k < 4; k++) {
    int64_t v = contend_param_int(&cfg->common, loops[k]);
    if (v < 0)
      continue;
    if (v == 0 && k < 3) {
      snprintf(err, errlen, "--%s: '0' is not valid: expected a whole number >= 1", loops[k]);
      return -1;
    }
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)v);
    for (int i = 0; i < cfg->nmotifs; i++) {
      int idx = contend_params_find(&cfg->tests[i], loops[k]);
      if (idx >= 0 && !cfg->tests[i].v[idx].set) {
        if (contend_params_set(&cfg->tests[i], idx, text, err, errlen))
          return -1;
        cfg->tests[i].v[idx].set = 0;
      }
    }
  }
  if (parse_list(contend_param_str(&cfg->load, "canaries"), CONTEND_ROLE_CANARY, cfg->canary,
                 &cfg->ncanary, "--canaries", err, errlen))
    return -1;
  if (cmd == CONTEND_CMD_LOAD &&
      parse_list(contend_param_str(&cfg->load, "congestors"), CONTEND_ROLE_CONGESTOR, cfg->cong,
                 &cfg->ncong, "--congestors", err, errlen))
    return -1;
  /* combinations a single row cannot check (e.g. sizes of whole elements),
   * for every test the command has, run or not, like the rows' ranges */
  for (int i = 0; i < cfg->nmotifs; i++) {
    const contend_motif *m = contend_motifs[i];
    char why[512];
    if (cmd == CONTEND_CMD_NETWORK && m->role != CONTEND_ROLE_CANARY)
      continue;
    if (m->validate && m->validate(&cfg->tests[i], 0, why, sizeof why)) {
      snprintf(err, errlen, "test '%s': %s", m->name, why);
      return -1;
    }
  }
  cfg->engine = contend_run_engine(&cfg->common, NULL, err, errlen);
  if (!cfg->engine)
    return -1;
  if (contend_param_bool(&cfg->common, "show_rings") && !cfg->engine->dry_run) {
    snprintf(err, errlen,
             "--show-rings prints the rings of a dry run (--dry-run); a real run "
             "records a digest per measurement, and the rings whole with "
             "--record-rings");
    return -1;
  }
  return 0;
}
