/* `contend topology partition`: how a simulated fabric splits over P
 * processes (src/fabric/partition.h): routers, nodes and ports per part,
 * the links the parts share, and the lookahead those links give a
 * conservative parallel simulation (the smallest latency of a cut link:
 * no event of one part can touch another sooner).  A table, and JSON
 * (schema contend-partition 1.0) with -o. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../fabric/partition.h"
#include "contend/files.h"
#include "contend/json.h"
#include "contend/strbuf.h"
#include "netparams.h"
#include "topo_cmd.h"

#define PARTS_MAX 1000000

static const contend_param_def part_defs[] = {
    {"parts", CONTEND_P_INT, "2", "processes", "the processes the fabric is split over", 1,
     PARTS_MAX},
    {"partition", CONTEND_P_STRING, "auto", "",
     "auto (groups when the fabric has at least --parts of them, else graph), groups (a "
     "dragonfly's groups, a tree's pods, in contiguous blocks) or graph (METIS on the router "
     "graph, weighted by ports)",
     1, 0},
    {"seed", CONTEND_P_SEED, "1", "", "seed of the graph partitioner", 1, 0},
    {"output", CONTEND_P_FILE_OUT, "", "path", "write the JSON here (-o)", 1, 0},
    {"quiet", CONTEND_P_BOOL, "0", "", "no table on stdout (-q)", 1, 0},
    CONTEND_PARAM_END};

static const char *const class_name[SIM_LINK_NCLASS] = {"node", "local", "global"};

static void help(const contend_params *p) {
  contend_strbuf o = {0};
  contend_sb_printf(
      &o, "usage: contend topology partition --topology SPEC --parts P [--partition METHOD] "
          "[-o FILE]\n\n"
          "How the fabric splits over P processes of a simulation spread over them: each\n"
          "process would simulate a part's routers and the nodes attached to them, and the\n"
          "links between parts carry packets and credits from one process to another.  Prints\n"
          "per part its routers, nodes and router ports (the work: every port is a channel\n"
          "whose events the part runs) and its cut ports; the links cut, by class; and the\n"
          "lookahead, the smallest latency of a cut link (a conservative parallel simulation\n"
          "advances every part in windows of that much simulated time).  The partition is\n"
          "refused (exit 2) when a part would have no router, when P exceeds the routers, and\n"
          "when a cut link has no latency (no lookahead).\n\n"
          "Examples:\n"
          "  contend topology partition --topology dragonfly:a=16,p=8,h=8 --parts 16\n"
          "  contend topology partition --topology xgft:h=2,down=8,8,up=4,8 --parts 4 "
          "--partition graph -o part.json\n\n"
          "Options:\n");
  contend_params_help(p, "", &o);
  fputs(o.s ? o.s : "", stdout);
  contend_sb_free(&o);
}

static void table(const sim_setup *su, const sim_partition *pt, long long look, int cls,
                  contend_strbuf *o) {
  const sim_topo *t = &su->topo;
  contend_sb_printf(
      o, "contend topology partition: %s (%d nodes, %d routers) into %d part%s by %s\n", t->spec,
      t->nnodes, t->nrouters, pt->parts, pt->parts == 1 ? "" : "s", pt->method);
  contend_sb_printf(o, "  %5s %8s %8s %9s %10s\n", "part", "routers", "nodes", "ports",
                    "cut ports");
  long most = 0, all = 0;
  for (int k = 0; k < pt->parts; k++) {
    contend_sb_printf(o, "  %5d %8d %8d %9ld %10ld\n", k, pt->routers[k], pt->nodes[k],
                      pt->ports[k], pt->cut_ports[k]);
    most = pt->ports[k] > most ? pt->ports[k] : most;
    all += pt->ports[k];
  }
  contend_sb_printf(o, "  cut links: %ld of %ld router-to-router links (%.1f %%)", pt->cut_links,
                    pt->links, pt->links ? 100.0 * (double)pt->cut_links / (double)pt->links : 0.0);
  const char *sep = ": ";
  for (int c = 0; c < SIM_LINK_NCLASS; c++)
    if (pt->cut_by_class[c]) {
      contend_sb_printf(o, "%s%ld %s", sep, pt->cut_by_class[c], class_name[c]);
      sep = ", ";
    }
  contend_sb_printf(o, "\n  balance: the largest part has %.3fx the mean ports\n",
                    all ? (double)most * pt->parts / (double)all : 1.0);
  if (look < 0)
    contend_sb_printf(o, "  lookahead: none needed (one part)\n");
  else
    contend_sb_printf(o, "  lookahead: %.3f ns (the latency of a cut %s link)\n",
                      (double)look / 1e3, class_name[cls]);
}

static void json(const sim_setup *su, const sim_partition *pt, long long look, int cls,
                 uint64_t seed, contend_strbuf *js) {
  const sim_topo *t = &su->topo;
  contend_json j;
  contend_json_init(&j, js);
  contend_json_obj_begin(&j, NULL);
  contend_json_str(&j, "schema", "contend-partition");
  contend_json_str(&j, "schema_version", "1.0");
  contend_json_str(&j, "topology", t->spec);
  contend_json_int(&j, "nodes", t->nnodes);
  contend_json_int(&j, "routers", t->nrouters);
  contend_json_int(&j, "parts", pt->parts);
  contend_json_str(&j, "method", pt->method);
  contend_json_uint(&j, "seed", seed);
  contend_json_int(&j, "links", pt->links);
  contend_json_int(&j, "cut_links", pt->cut_links);
  contend_json_obj_begin(&j, "cut_links_by_class");
  for (int c = 0; c < SIM_LINK_NCLASS; c++)
    contend_json_int(&j, class_name[c], pt->cut_by_class[c]);
  contend_json_obj_end(&j);
  if (look < 0) {
    contend_json_null(&j, "lookahead_ns");
    contend_json_null(&j, "lookahead_class");
  } else {
    contend_json_double(&j, "lookahead_ns", (double)look / 1e3);
    contend_json_str(&j, "lookahead_class", class_name[cls]);
  }
  contend_json_arr_begin(&j, "per_part");
  for (int k = 0; k < pt->parts; k++) {
    contend_json_obj_begin(&j, NULL);
    contend_json_int(&j, "routers", pt->routers[k]);
    contend_json_int(&j, "nodes", pt->nodes[k]);
    contend_json_int(&j, "ports", pt->ports[k]);
    contend_json_int(&j, "cut_ports", pt->cut_ports[k]);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_arr_begin(&j, "part_of_router");
  for (int r = 0; r < t->nrouters; r++)
    contend_json_int(&j, NULL, pt->part_of_router[r]);
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);
  contend_sb_printf(js, "\n");
}

int contend_topology_partition_main(int argc, char **argv) {
  sim_topology_cmd cmd;
  int rc = sim_topology_cmd_open(&cmd, "partition", part_defs, help, argc, argv);
  if (rc >= 0)
    return rc;
  const contend_params *p = &cmd.p;
  const sim_setup *su = &cmd.su;
  char err[1024];
  contend_strbuf js = {0}, tab = {0};
  const uint64_t seed = (uint64_t)contend_param_int(p, "seed");
  const char *output = contend_param_str(p, "output");
  sim_partition pt;
  if (sim_partition_make(&su->topo, (int)contend_param_int(p, "parts"),
                         contend_param_str(p, "partition"), seed, &pt, err, sizeof err)) {
    rc = sim_topology_cmd_usage(&cmd, err);
    goto out;
  }
  int cls = 0;
  const uint64_t ps = sim_partition_lookahead(&pt, su->net.latency, &cls);
  const long long look = ps == UINT64_MAX ? -1 : (long long)ps; /* -1: one part */
  if (look == 0) {
    snprintf(err, sizeof err,
             "the partition cuts %s links, whose latency is 0 ns: no lookahead for a parallel "
             "simulation (give --%s-latency-ns above 0, or a partition that does not cut them)",
             class_name[cls], class_name[cls]);
    rc = sim_topology_cmd_usage(&cmd, err);
  } else {
    json(su, &pt, look, cls, seed, &js);
    rc = 0;
    if (output[0] && contend_write_file_atomic(output, js.s, js.len, err, sizeof err)) {
      fprintf(stderr, "contend topology partition: %s\n", err);
      rc = CONTEND_EXIT_FAIL;
    } else if (!contend_param_bool(p, "quiet")) {
      table(su, &pt, look, cls, &tab);
      if (output[0])
        contend_sb_printf(&tab, "  written to %s\n", output);
      fputs(tab.s, stdout);
    }
  }
  sim_partition_free(&pt);
out:
  contend_sb_free(&js);
  contend_sb_free(&tab);
  sim_topology_cmd_close(&cmd);
  return rc;
}
