/* `contend topology`: `paths`, the links of every path the routing can
 * give between chosen node pairs, as JSON (schema contend-paths/1.0), named
 * the way the simulator's counter CSV names ports (options: the fabric's
 * own, netparams.c, plus the pair selection below); `show`, the machine as
 * the tree the job-file placements see (src/fabric/tree.h). */
#include "topo_cmd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../fabric/paths.h"
#include "../fabric/tree.h"
#include "contend/files.h"
#include "contend/intlist.h"
#include "contend/json.h"
#include "contend/strbuf.h"
#include "netparams.h"

#define DEFAULT_ALL_PAIRS_MAX 100000L /* ordered pairs written without a selection */
#define PAIRS_MAX 10000000L           /* ordered pairs a run may select at all */
#define HOPS_MAX 40000000L            /* links over every path written (memory: ~0.5 GB) */

static const contend_param_def path_defs[] = {
    {"pairs", CONTEND_P_STRING, "", "list",
     "node pairs SRC:DST joined by commas (e.g. 0:5,3:17); each pair is written in both "
     "directions",
     1, 0},
    {"nodes", CONTEND_P_STRING, "", "list", "every ordered pair among these nodes (e.g. 0-15,40)",
     1, 0},
    {"random_pairs", CONTEND_P_INT, "0", "count", "this many distinct random pairs (seeded)", 0,
     1e7},
    {"all_pairs", CONTEND_P_BOOL, "0", "",
     "every ordered pair of the topology (the default up to 100000 pairs)", 1, 0},
    {"max_paths", CONTEND_P_INT, "64", "count",
     "paths written per pair at most: a seeded uniform sample beyond it (paths_total tells)", 1,
     100000},
    {"seed", CONTEND_P_SEED, "1", "", "seed of the random pairs and of path sampling", 1, 0},
    {"output", CONTEND_P_FILE_OUT, "", "path", "write the JSON here (-o; default stdout)", 1, 0},
    {"quiet", CONTEND_P_BOOL, "0", "", "no summary line on stderr (-q)", 1, 0},
    CONTEND_PARAM_END};

static void help(const contend_params *p) {
  contend_strbuf o = {0};
  contend_sb_printf(
      &o,
      "usage: contend topology paths --topology SPEC [--routing R] "
      "[--pairs S:D,.. | --nodes LIST |\n"
      "                              --random-pairs N | --all-pairs] [--max-paths N] [-o FILE]\n\n"
      "Writes, for each node pair, every path the routing can give a packet (dmodk: one;\n"
      "random, adaptive, dmodk-adaptive: one per up-port choice; valiant: one per\n"
      "intermediate group; ugal, ugal-g: minimal and non-minimal; par: those and its\n"
      "turns at the second router) as the list of output ports it crosses, from the\n"
      "source NIC to the port that delivers to the destination.  Ports are named as in the\n"
      "simulator's counter CSV (component, port) with their tier, so per-link stall\n"
      "counters can be summed along paths (contend model fit-latency, docs/netscope.md).\n\n"
      "JSON: {schema: contend-paths, topology, routing, nodes, links: [{component, port,\n"
      "class}], pairs: [{src, dst, paths: [[link ids]], vcs: [[the VC of each hop]],\n"
      "paths_total}]}.  Per-VC counters (the CSV's vc column) pair with vcs.  The JSON is\n"
      "built in memory: at most 10^7 ordered pairs and 4 x 10^7 links over all paths.\n\n"
      "Examples:\n"
      "  contend topology paths --topology dragonfly:a=4,p=2,h=2 -o paths.json\n"
      "  contend topology paths --topology fattree:leaves=8,nodes=8,uplinks=4 "
      "--routing random --pairs 0:63\n"
      "  contend topology paths --topology slurm:topology.conf --nodes 0-31 -o job.paths.json\n\n"
      "Options:\n");
  contend_params_help(p, "", &o);
  contend_sb_printf(&o, "\nRoutings (--routing), per topology:\n");
  sim_routing_help(&o);
  fputs(o.s ? o.s : "", stdout);
  contend_sb_free(&o);
}

int sim_topology_cmd_usage(const sim_topology_cmd *c, const char *msg) {
  fprintf(stderr, "contend topology %s: error: %s (see contend topology %s --help)\n", c->name, msg,
          c->name);
  return CONTEND_EXIT_USAGE;
}

int sim_topology_cmd_open(sim_topology_cmd *c, const char *name, const contend_param_def *rows,
                          void (*help)(const contend_params *), int argc, char **argv) {
  c->name = name;
  c->defs = contend_param_defs_join(rows, sim_param_defs);
  char err[1024];
  if (contend_params_init(&c->p, c->defs, "", err, sizeof err)) {
    fprintf(stderr, "contend topology %s: internal error: %s\n", name, err);
    free(c->defs);
    return CONTEND_EXIT_FAIL;
  }
  int rc = CONTEND_EXIT_USAGE;
  const int parsed = contend_params_parse_argv(&c->p, argc, argv, 1, err, sizeof err);
  if (parsed == 1) {
    help(&c->p);
    rc = 0;
  } else if (parsed < 0) {
    rc = sim_topology_cmd_usage(c, err);
  } else {
    contend_files files; /* -o against the topology.conf, created once */
    contend_files_init(&files);
    sim_params_files(&c->p, &files);
    if (contend_files_check_params(&c->p, &files, CONTEND_FILES_CREATE, err, sizeof err) ||
        sim_setup_from_params(&c->p, (uint64_t)contend_param_int(&c->p, "seed"), &c->su, err,
                              sizeof err))
      rc = sim_topology_cmd_usage(c, err);
    else
      return -1;
  }
  contend_params_free(&c->p);
  free(c->defs);
  return rc;
}

void sim_topology_cmd_close(sim_topology_cmd *c) {
  sim_setup_free(&c->su);
  contend_params_free(&c->p);
  free(c->defs);
}

/* Ordered pairs (2 ints each) into *out; returns the count or -1 (err). */
static long select_pairs(const contend_params *p, int nn, uint64_t seed, int **out, char *err,
                         size_t errlen) {
  const char *pairs = contend_param_str(p, "pairs"), *nodes = contend_param_str(p, "nodes");
  const long rnd = (long)contend_param_int(p, "random_pairs");
  const int all = contend_param_bool(p, "all_pairs");
  const int given = (pairs[0] != 0) + (nodes[0] != 0) + (rnd > 0) + all;
  if (given > 1) {
    snprintf(err, errlen, "give one of --pairs, --nodes, --random-pairs and --all-pairs");
    return -1;
  }
  int *v = NULL;
  long n = 0;
  if (pairs[0]) {
    char *copy = strdup(pairs), *save = NULL;
    if (!copy)
      contend_fail("out of memory");
    long cap = 0;
    for (char *e = strtok_r(copy, ",", &save); e; e = strtok_r(NULL, ",", &save)) {
      int a, b, used = 0;
      if (sscanf(e, "%d:%d%n", &a, &b, &used) != 2 || e[used] || a < 0 || b < 0 || a >= nn ||
          b >= nn || a == b) {
        snprintf(err, errlen, "--pairs: '%s' is not SRC:DST with two different nodes in 0..%d", e,
                 nn - 1);
        free(copy);
        free(v);
        return -1;
      }
      if (n + 2 > cap && !(v = realloc(v, sizeof *v * (size_t)(cap = 2 * cap + 4) * 2)))
        contend_fail("out of memory");
      v[2 * n] = a, v[2 * n + 1] = b, n++;
      v[2 * n] = b, v[2 * n + 1] = a, n++;
    }
    free(copy);
    if (!n) {
      snprintf(err, errlen, "--pairs is empty (expected e.g. 0:5,3:17)");
      return -1;
    }
  } else if (rnd > 0) {
    if ((double)rnd > (double)nn * (nn - 1)) {
      snprintf(err, errlen, "--random-pairs %ld: the topology has only %ld ordered pairs", rnd,
               (long)nn * (nn - 1));
      return -1;
    }
    contend_rng r;
    contend_rng_init(&r, seed, 0x70617468, 1, 0, 0);
    /* distinct pairs through an open-addressing set of keys a * nn + b + 1 */
    size_t cap = 16;
    while (cap < 2 * (size_t)rnd)
      cap *= 2;
    uint64_t *seen = calloc(cap, sizeof *seen);
    v = malloc(sizeof *v * (size_t)rnd * 2);
    if (!v || !seen)
      contend_fail("out of memory");
    while (n < rnd) {
      const int a = (int)contend_rng_below(&r, (uint64_t)nn),
                b = (int)contend_rng_below(&r, (uint64_t)nn);
      if (a == b)
        continue;
      const uint64_t key = (uint64_t)a * (uint64_t)nn + (uint64_t)b + 1;
      size_t h = (size_t)(key * 0x9E3779B97F4A7C15ull) & (cap - 1);
      while (seen[h] && seen[h] != key)
        h = (h + 1) & (cap - 1);
      if (!seen[h]) {
        seen[h] = key;
        v[2 * n] = a, v[2 * n + 1] = b, n++;
      }
    }
    free(seen);
  } else {
    int *list = NULL, nl = nn;
    if (nodes[0]) {
      if (contend_parse_int_list(nodes, ",", nn, &list, &nl, err, errlen))
        return -1;
    }
    if ((double)nl * (nl - 1) > (double)PAIRS_MAX) {
      snprintf(err, errlen,
               "%d nodes make %.0f ordered pairs, more than the limit of %ld: choose fewer with "
               "--nodes, --pairs or --random-pairs",
               nl, (double)nl * (nl - 1), PAIRS_MAX);
      free(list);
      return -1;
    }
    if (!nodes[0] && !all && (long)nn * (nn - 1) > DEFAULT_ALL_PAIRS_MAX) {
      snprintf(err, errlen,
               "%d nodes make %ld ordered pairs: choose with --nodes, --pairs or --random-pairs "
               "(or --all-pairs)",
               nn, (long)nn * (nn - 1));
      return -1;
    }
    v = malloc(sizeof *v * (size_t)nl * (size_t)(nl > 1 ? nl - 1 : 1) * 2 + sizeof *v);
    if (!v)
      contend_fail("out of memory");
    for (int i = 0; i < nl; i++)
      for (int k = 0; k < nl; k++) {
        const int a = list ? list[i] : i, b = list ? list[k] : k;
        if (a != b)
          v[2 * n] = a, v[2 * n + 1] = b, n++;
      }
    free(list);
    if (!n) {
      snprintf(err, errlen, "--nodes %s: fewer than two different nodes", nodes);
      free(v);
      return -1;
    }
  }
  *out = v;
  return n;
}

/* The JSON of every pair's paths into js.  Returns 0; -2 when the paths
 * cross more than HOPS_MAX links in all (bad input: nothing written); or
 * -1 (a routing error), with err. */
static int write_paths(sim_setup *su, const int *pairs, long npairs, int max_paths, uint64_t seed,
                       contend_strbuf *js, long *links_out, long *paths_out, char *err,
                       size_t errlen) {
  const sim_topo *t = &su->topo;
  const long nchan = (long)t->nports + t->nnodes;
  long *id = malloc(sizeof *id * (size_t)nchan), nlinks = 0, npaths = 0, hops = 0;
  long *chan_of = malloc(sizeof *chan_of * (size_t)nchan);
  sim_path_set *sets = calloc((size_t)npairs, sizeof *sets);
  if (!id || !chan_of || !sets)
    contend_fail("out of memory (paths)");
  for (long c = 0; c < nchan; c++)
    id[c] = -1;
  contend_rng rng;
  contend_rng_init(&rng, seed, 0x70617468, 2, 0, 0);
  int rc = 0;
  for (long i = 0; i < npairs && !rc; i++) {
    rc = sim_paths_enumerate(su->routing, pairs[2 * i], pairs[2 * i + 1], max_paths, &rng, &sets[i],
                             err, errlen);
    for (int k = 0; !rc && k < sets[i].start[sets[i].npaths]; k++) {
      const long c = sets[i].links[k];
      if (id[c] < 0)
        chan_of[nlinks] = c, id[c] = nlinks++;
    }
    if (!rc) {
      npaths += sets[i].npaths;
      hops += sets[i].start[sets[i].npaths];
    }
    if (!rc && hops > HOPS_MAX) {
      snprintf(err, errlen,
               "the paths of the first %ld of %ld pairs already cross %ld links, more than the "
               "limit of %ld (the JSON is held in memory): fewer pairs or a smaller --max-paths",
               i + 1, npairs, hops, HOPS_MAX);
      rc = -2;
    }
  }
  if (!rc) {
    contend_json j;
    contend_json_init(&j, js);
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "schema", "contend-paths");
    contend_json_str(&j, "schema_version", "1.1");
    contend_json_str(&j, "topology", t->spec);
    contend_json_str(&j, "routing", sim_routing_name(su->routing));
    contend_json_int(&j, "nodes", t->nnodes);
    contend_json_uint(&j, "seed", seed);
    contend_json_arr_begin(&j, "links");
    char name[64], tier[64];
    for (long l = 0; l < nlinks; l++) {
      char port[16];
      snprintf(port, sizeof port, "%d", sim_channel_port(t, chan_of[l]));
      contend_json_obj_begin(&j, NULL);
      contend_json_str(&j, "component", sim_channel_component(t, chan_of[l], name, sizeof name));
      contend_json_str(&j, "port", port);
      contend_json_str(&j, "class", sim_channel_tier(t, chan_of[l], tier, sizeof tier));
      const long back = sim_channel_reverse(t, chan_of[l]);
      if (back >= 0) { /* the same link's other direction, named the same way */
        char peer[96];
        snprintf(peer, sizeof peer, "%s:%d", sim_channel_component(t, back, name, sizeof name),
                 sim_channel_port(t, back));
        contend_json_str(&j, "peer", peer);
      }
      contend_json_obj_end(&j);
    }
    contend_json_arr_end(&j);
    contend_json_arr_begin(&j, "pairs");
    for (long i = 0; i < npairs; i++) {
      const sim_path_set *s = &sets[i];
      contend_json_obj_begin(&j, NULL);
      contend_json_int(&j, "src", pairs[2 * i]);
      contend_json_int(&j, "dst", pairs[2 * i + 1]);
      contend_json_arr_begin(&j, "paths");
      for (int k = 0; k < s->npaths; k++) {
        contend_json_arr_begin(&j, NULL);
        for (int x = s->start[k]; x < s->start[k + 1]; x++)
          contend_json_int(&j, NULL, id[s->links[x]]);
        contend_json_arr_end(&j);
      }
      contend_json_arr_end(&j);
      contend_json_arr_begin(&j, "vcs");
      for (int k = 0; k < s->npaths; k++) {
        contend_json_arr_begin(&j, NULL);
        for (int x = s->start[k]; x < s->start[k + 1]; x++)
          contend_json_int(&j, NULL, s->vcs[x]);
        contend_json_arr_end(&j);
      }
      contend_json_arr_end(&j);
      contend_json_int(&j, "paths_total", s->total);
      contend_json_obj_end(&j);
    }
    contend_json_arr_end(&j);
    contend_json_obj_end(&j);
    contend_sb_printf(js, "\n");
  }
  for (long i = 0; i < npairs; i++)
    sim_path_set_free(&sets[i]);
  free(sets);
  free(id);
  free(chan_of);
  *links_out = nlinks;
  *paths_out = npaths;
  return rc;
}

static int paths_main(int argc, char **argv) {
  sim_topology_cmd cmd;
  int rc = sim_topology_cmd_open(&cmd, "paths", path_defs, help, argc, argv), *pairs = NULL;
  if (rc >= 0)
    return rc;
  const contend_params *p = &cmd.p;
  sim_setup *su = &cmd.su;
  char err[1024];
  contend_strbuf js = {0};
  const uint64_t seed = (uint64_t)contend_param_int(p, "seed");
  const char *output = contend_param_str(p, "output");
  const long npairs = select_pairs(p, su->topo.nnodes, seed, &pairs, err, sizeof err);
  if (npairs < 0) {
    rc = sim_topology_cmd_usage(&cmd, err);
    goto out;
  }
  long nlinks = 0, npaths = 0;
  const int wrc = write_paths(su, pairs, npairs, (int)contend_param_int(p, "max_paths"), seed, &js,
                              &nlinks, &npaths, err, sizeof err);
  if (wrc == -2) { /* too large: bad input, nothing written */
    rc = sim_topology_cmd_usage(&cmd, err);
    goto out;
  }
  if (wrc) {
    fprintf(stderr, "contend topology paths: %s\n", err);
    rc = CONTEND_EXIT_FAIL;
    goto out;
  }
  if (output[0]) {
    if (contend_write_file_atomic(output, js.s, js.len, err, sizeof err)) {
      fprintf(stderr, "contend topology paths: %s\n", err);
      rc = CONTEND_EXIT_FAIL;
      goto out;
    }
  } else {
    fwrite(js.s, 1, js.len, stdout);
  }
  if (!contend_param_bool(p, "quiet"))
    fprintf(stderr,
            "contend topology paths: %s, routing %s: %ld pairs, %ld paths over %ld links%s%s\n",
            su->topo.spec, sim_routing_name(su->routing), npairs, npaths, nlinks,
            output[0] ? " -> " : "", output);
  rc = 0;
out:
  contend_sb_free(&js);
  free(pairs);
  sim_topology_cmd_close(&cmd);
  return rc;
}

/* ---- contend topology show ---------------------------------------------- */

static void show_help(FILE *f) {
  fprintf(f, "usage: contend topology show FILE|SPEC [--json] [-o FILE]\n\n"
             "Summarises a machine as the tree the job-file placements see (docs/topology.md):\n"
             "switch levels, switches per level, nodes per leaf, leaves per pod, and the taper of\n"
             "each level (links down / links up; unknown for a topology.conf, which does not say\n"
             "how many cables a Switches= entry stands for).  FILE is a Slurm topology.conf\n"
             "(the emulated cluster writes one in its state directory); SPEC a simulator\n"
             "topology (fattree:..., xgft:..., switch:..., dragonfly:..., slurm:FILE).\n\n"
             "  --json      JSON on stdout (schema contend-topology 1.0), with every leaf\n"
             "  -o FILE     write the output there instead of stdout\n\n"
             "Examples:\n"
             "  contend topology show /etc/slurm/topology.conf\n"
             "  contend topology show fattree:pods=4,leaves=8,nodes=32,uplinks=16,pod_uplinks=8 "
             "--json\n\n"
             "Exit status: 0, or 2 for a bad file or spec (the message names the line).\n");
}

/* A dragonfly's global links between each pair of its groups (every pair
 * has the same number: topo_dragonfly.c). */
static int links_per_pair(const contend_tree *t) {
  const int pairs = t->npods * (t->npods - 1);
  return pairs ? t->global_wired / pairs : 0;
}

static void show_text(const contend_tree *t, contend_strbuf *o) {
  int npl0, npl1, lpp0, lpp1;
  contend_tree_ranges(t, &npl0, &npl1, &lpp0, &lpp1);
  contend_sb_printf(o, "topology %s (%s)\n", t->source,
                    !strcmp(t->kind, "slurm") ? "Slurm topology.conf" : t->kind);
  contend_sb_printf(o, "  %d nodes, %d leaf switches, %d pod%s, %d switch level%s\n", t->nnodes,
                    t->nleaves, t->npods, t->npods == 1 ? "" : "s", t->levels,
                    t->levels == 1 ? "" : "s");
  contend_sb_printf(o, "  nodes per leaf: %d", npl0);
  if (npl0 != npl1)
    contend_sb_printf(o, "-%d (min-max)", npl1);
  contend_sb_printf(o, "; leaves per pod: %d", lpp0);
  if (lpp0 != lpp1)
    contend_sb_printf(o, "-%d (min-max)", lpp1);
  contend_sb_printf(o, "\n");
  contend_sb_printf(o, "  %-7s %-9s %-11s %-9s %s\n", "level", "switches", "links down", "links up",
                    "taper (down:up links)");
  for (int l = 0; l < t->levels; l++) {
    char down[32] = "unknown", up[32] = "unknown", taper[48] = "unknown";
    const int top = l == t->levels - 1;
    if (t->links_known) {
      snprintf(down, sizeof down, "%d", t->node_links[l]);
      snprintf(up, sizeof up, "%d", t->up_links[l]);
      if (top)
        snprintf(taper, sizeof taper, "- (top)");
      else
        snprintf(taper, sizeof taper, "%.3g:1", t->taper[l]);
    } else if (top) {
      snprintf(up, sizeof up, "0");
      snprintf(taper, sizeof taper, "- (top)");
    }
    char name[24];
    snprintf(name, sizeof name, "%d%s", l + 1, l == 0 ? " leaf" : top ? " top" : "");
    contend_sb_printf(o, "  %-7s %-9d %-11s %-9s %s\n", name, t->switches[l], down, up, taper);
  }
  if (!t->links_known)
    contend_sb_printf(o, "  (a topology.conf lists which switches connect, not how many links "
                         "each connection has: taper unknown)\n");
  if (t->global_ports) {
    const int per_group = t->global_ports / t->npods, links = links_per_pair(t);
    if (t->global_wired < t->global_ports)
      contend_sb_printf(
          o,
          "  global ports: %d of %d wired: %d link%s per pair of the %d groups, %d of "
          "each group's %d unconnected (a*h = %d ports per group over g-1 = %d other "
          "groups, or links= lowered; docs/simulator.md)\n",
          t->global_wired, t->global_ports, links, links == 1 ? "" : "s", t->npods,
          per_group - t->global_wired / t->npods, per_group, per_group, t->npods - 1);
    else
      contend_sb_printf(o, "  global ports: %d, all wired (%d link%s per pair of the %d groups)\n",
                        t->global_ports, links, links == 1 ? "" : "s", t->npods);
  }
}

static void show_json(const contend_tree *t, contend_strbuf *o) {
  int npl0, npl1, lpp0, lpp1;
  contend_tree_ranges(t, &npl0, &npl1, &lpp0, &lpp1);
  contend_json j;
  contend_json_init(&j, o);
  contend_json_obj_begin(&j, NULL);
  contend_json_str(&j, "schema", "contend-topology");
  contend_json_str(&j, "schema_version", "1.0");
  contend_json_str(&j, "topology", t->source);
  contend_json_str(&j, "kind", t->kind);
  contend_json_int(&j, "nodes", t->nnodes);
  contend_json_int(&j, "leaves", t->nleaves);
  contend_json_int(&j, "pods", t->npods);
  contend_json_int(&j, "switch_levels", t->levels);
  contend_json_obj_begin(&j, "nodes_per_leaf");
  contend_json_int(&j, "min", npl0);
  contend_json_int(&j, "max", npl1);
  contend_json_obj_end(&j);
  contend_json_obj_begin(&j, "leaves_per_pod");
  contend_json_int(&j, "min", lpp0);
  contend_json_int(&j, "max", lpp1);
  contend_json_obj_end(&j);
  contend_json_bool(&j, "links_known", t->links_known);
  if (t->global_ports) {
    contend_json_int(&j, "global_ports", t->global_ports);
    contend_json_int(&j, "global_ports_wired", t->global_wired);
    contend_json_int(&j, "global_links_per_group_pair", links_per_pair(t));
  } else {
    contend_json_null(&j, "global_ports");
    contend_json_null(&j, "global_ports_wired");
    contend_json_null(&j, "global_links_per_group_pair");
  }
  contend_json_arr_begin(&j, "levels");
  for (int l = 0; l < t->levels; l++) {
    contend_json_obj_begin(&j, NULL);
    contend_json_int(&j, "level", l + 1);
    contend_json_int(&j, "switches", t->switches[l]);
    if (t->links_known) {
      contend_json_int(&j, "links_down", t->node_links[l]);
      contend_json_int(&j, "links_up", t->up_links[l]);
    } else {
      contend_json_null(&j, "links_down");
      contend_json_null(&j, "links_up");
    }
    if (t->links_known && l < t->levels - 1)
      contend_json_double(&j, "taper", t->taper[l]);
    else
      contend_json_null(&j, "taper");
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_arr_begin(&j, "leaf_list");
  for (int l = 0; l < t->nleaves; l++) {
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", t->leaf_name[l]);
    contend_json_int(&j, "pod", t->leaf_pod[l]);
    contend_json_int(&j, "nodes", t->leaf_first[l + 1] - t->leaf_first[l]);
    contend_json_int(&j, "first_node", t->leaf_node[t->leaf_first[l]]);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);
  contend_sb_printf(o, "\n");
}

static int show_main(int argc, char **argv) {
  const char *spec = NULL, *output = NULL;
  int json = 0;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
      show_help(stdout);
      return 0;
    } else if (!strcmp(argv[a], "--json")) {
      json = 1;
    } else if (!strcmp(argv[a], "-o") || !strcmp(argv[a], "--output")) {
      if (a + 1 >= argc) {
        fprintf(stderr, "contend topology show: error: %s needs a path\n", argv[a]);
        return CONTEND_EXIT_USAGE;
      }
      output = argv[++a];
    } else if (!strncmp(argv[a], "--output=", 9)) {
      output = argv[a] + 9;
    } else if (!strcmp(argv[a], "--topology") && a + 1 < argc && !spec) {
      spec = argv[++a];
    } else if (argv[a][0] == '-' && argv[a][1]) {
      fprintf(stderr,
              "contend topology show: error: unknown option '%s' (see contend topology show "
              "--help)\n",
              argv[a]);
      return CONTEND_EXIT_USAGE;
    } else if (spec) {
      fprintf(stderr, "contend topology show: error: one topology only: '%s' and '%s'\n", spec,
              argv[a]);
      return CONTEND_EXIT_USAGE;
    } else {
      spec = argv[a];
    }
  }
  if (!spec) {
    fprintf(stderr, "contend topology show: error: missing FILE|SPEC (see contend topology "
                    "show --help)\n");
    return CONTEND_EXIT_USAGE;
  }
  char err[1024];
  contend_files files; /* -o against the topology.conf shown, created once */
  contend_files_init(&files);
  contend_files_input(&files, "the topology file", contend_tree_file(spec), 0);
  contend_files_output(&files, "-o/--output", output);
  if (output && !*output) {
    fprintf(stderr, "contend topology show: error: -o/--output: empty path\n");
    return CONTEND_EXIT_USAGE;
  }
  if (contend_files_check(&files, CONTEND_FILES_CREATE, err, sizeof err)) {
    fprintf(stderr, "contend topology show: error: %s\n", err);
    return CONTEND_EXIT_USAGE;
  }
  contend_tree t;
  if (contend_tree_load(spec, &t, err, sizeof err)) {
    fprintf(stderr, "contend topology show: error: %s\n", err);
    return CONTEND_EXIT_USAGE;
  }
  contend_strbuf o = {0};
  if (json)
    show_json(&t, &o);
  else
    show_text(&t, &o);
  contend_tree_free(&t);
  int rc = 0;
  if (output) {
    if (contend_write_file_atomic(output, o.s, o.len, err, sizeof err)) {
      fprintf(stderr, "contend topology show: %s\n", err);
      rc = CONTEND_EXIT_FAIL;
    }
  } else {
    fwrite(o.s, 1, o.len, stdout);
  }
  contend_sb_free(&o);
  return rc;
}

int contend_topology_main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    FILE *f = argc < 2 ? stderr : stdout;
    fprintf(f,
            "usage: contend topology paths|show|partition [options]   (contend topology CMD "
            "--help)\n\n"
            "  paths      the links of every path the routing gives between node pairs (JSON)\n"
            "  show       the machine as a tree: levels, switches, nodes per leaf, leaves per "
            "pod, taper\n"
            "  partition  how the fabric splits over P processes: parts, links cut, lookahead\n");
    return argc < 2 ? CONTEND_EXIT_USAGE : 0;
  }
  if (!strcmp(argv[1], "paths"))
    return paths_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "show"))
    return show_main(argc - 1, argv + 1);
  if (!strcmp(argv[1], "partition"))
    return contend_topology_partition_main(argc - 1, argv + 1);
  fprintf(stderr, "contend topology: unknown subcommand '%s' (known: paths, show, partition)\n",
          argv[1]);
  return CONTEND_EXIT_USAGE;
}
