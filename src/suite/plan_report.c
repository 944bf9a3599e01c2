/* The dry-run view of a `network`/`load` run on the trace engine: the
 * node split and, per test, who sends how many bytes to whom in one timed
 * iteration (round 0 of measurement 0), as text and as contend-plan JSON;
 * with --show-rings / --record-rings, the ring of every round of the ring
 * tests.  Canaries are shown from their isolated phase, congestors from
 * their phase alone or, without it, from their load during the first
 * canary. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../run/envelope.h"
#include "../run/ring_log.h"
#include "contend/json.h"
#include "suite.h"

static int cmp_bytes_desc(const void *a, const void *b) {
  const contend_flow *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  if (x->src != y->src)
    return x->src - y->src;
  return x->dst - y->dst;
}

/* Exact and estimated pairs of one result, merged, sorted by (src, dst). */
static contend_flow *pairs_of(const contend_traffic *t, size_t *n, int *estimated) {
  contend_flowmap m = {0};
  const contend_flowmap *src[2] = {&t->flows, &t->estimated};
  for (int k = 0; k < 2; k++) {
    size_t nf;
    contend_flow *f = contend_flows_sorted(src[k], &nf);
    for (size_t i = 0; i < nf; i++)
      contend_flow_add(&m, f[i].src, f[i].dst, f[i].bytes, f[i].msgs);
    free(f);
  }
  *estimated = t->estimated.n > 0;
  for (int k = 0; k < CONTEND_COLL_N; k++)
    *estimated |= t->coll_calls[k] > 0;
  contend_flow *out = contend_flows_sorted(&m, n);
  free(m.slot);
  return out;
}

enum { RING_LINE_RANKS = 32 }; /* ranks per printed ring unless everything is asked for */

/* The rings of one ring test (text): per measurement its digest when all
 * its rounds are recorded, per round the group ranks in ring order with
 * their nodes (rank@node).  max: rounds to print (0: all, whole rings);
 * planned: measurements x rounds of the test. */
static void text_rings(contend_strbuf *o, const contend_ring_log *l, long max, long nm, long nr) {
  char hex[17];
  const double planned = (double)nm * (double)nr;
  contend_sb_printf(o,
                    "    rings: %ld measurements x %ld rounds, group ranks in ring order as "
                    "rank@node (every node-local rank's sub-communicator runs the same ring over "
                    "its ranks)\n",
                    nm, nr);
  size_t at = 0, shown = 0;
  for (long m = 0; m < l->nmeas && (max == 0 || shown < (size_t)max); m++) {
    if (l->rounds[m] == nr) {
      contend_ring_hex(l->hash[m], hex);
      contend_sb_printf(o, "      measurement %ld (digest %s)\n", m, hex);
    } else {
      contend_sb_printf(o, "      measurement %ld\n", m);
    }
    for (long r = 0; r < l->rounds[m] && at < l->norders && (max == 0 || shown < (size_t)max);
         r++, at++, shown++) {
      const int *ord = l->orders + at * (size_t)l->n;
      const int show = max == 0 || l->n <= RING_LINE_RANKS ? l->n : RING_LINE_RANKS;
      contend_sb_printf(o, "        round %ld:", r);
      for (int k = 0; k < show; k++)
        contend_sb_printf(o, " %d@%d", ord[k], l->nodes[ord[k]]);
      if (show < l->n)
        contend_sb_printf(o, " ... (%d more ranks)", l->n - show);
      contend_sb_printf(o, "\n");
    }
  }
  if ((double)shown < planned)
    contend_sb_printf(o,
                      "      ... %.0f more rounds not shown (--show-rings-max N shows N rounds, 0 "
                      "every round)\n",
                      planned - (double)shown);
  else {
    contend_ring_hex(contend_ring_log_digest(l), hex);
    contend_sb_printf(o, "      digest of all measurements: %s\n", hex);
  }
}

void contend_report_plan(const contend_run *run, contend_strbuf *o, contend_strbuf *js) {
  const contend_config *cfg = run->cfg;
  const contend_envelope *env = run->env;
  const int nn = run->plan.nnodes, ppn = env->nodes.ppn_max;
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  contend_json j;
  contend_json_init(&j, js);
  contend_json_obj_begin(&j, NULL);
  contend_json_str(&j, "schema", "contend-plan");
  contend_json_str(&j, "schema_version", CONTEND_SCHEMA_VERSION);
  contend_json_str(&j, "command", load ? "load" : "network");
  contend_json_str(&j, "engine", env->engine->name);
  contend_json_uint(&j, "seed", env->seed);
  contend_json_int(&j, "nodes", nn);
  contend_json_int(&j, "ranks_per_node", ppn);
  contend_json_arr_begin(&j, "node_order");
  for (int i = 0; i < nn; i++)
    contend_json_int(&j, NULL, run->plan.order[i]);
  contend_json_arr_end(&j);

  contend_sb_printf(o, "contend %s --dry-run: plan for %d nodes x %d ranks per node, seed %llu%s\n",
                    load ? "load" : "network", nn, ppn, (unsigned long long)env->seed,
                    env->seed_from_time ? " (no --seed given: a real run draws one from the clock)"
                                        : "");
  contend_sb_printf(o, "  node groups:");
  const int ngroups = load ? 1 + cfg->ncong : 1;
  contend_json_arr_begin(&j, "groups");
  for (int g = 0; g < ngroups; g++) {
    const char *gname = g == 0 ? "canaries" : contend_motifs[cfg->cong[g - 1]]->name;
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", gname);
    contend_json_arr_begin(&j, "nodes");
    contend_sb_printf(o, "%s %s [", g ? ";" : "", gname);
    int first = 1;
    for (int i = 0; i < nn; i++)
      if (run->plan.group_of_node[i] == g) {
        contend_json_int(&j, NULL, i);
        contend_sb_printf(o, "%s%d", first ? "" : ",", i);
        first = 0;
      }
    contend_sb_printf(o, "]");
    contend_json_arr_end(&j);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_sb_printf(o,
                    "\n  traffic of one timed iteration (round 0 of measurement 0), per test:\n");

  contend_json_arr_begin(&j, "tests");
  const int ncan = cong_only ? 0 : cfg->ncanary;
  const int ntests = ncan + (load ? cfg->ncong : 0);
  for (int t = 0; t < ntests; t++) {
    const int is_canary = t < ncan;
    const int mi = is_canary ? cfg->canary[t] : cfg->cong[t - ncan];
    const int g = is_canary ? 0 : 1 + (t - ncan);
    int ri = is_canary ? contend_result_index(run, mi, CONTEND_PHASE_ISOLATED, -1)
                       : contend_result_index(run, mi, CONTEND_PHASE_CONGESTOR_ALONE, -1);
    if (ri < 0)
      ri = contend_result_index(run, mi, CONTEND_PHASE_CONGESTOR_LOADING, 0);
    if (ri < 0)
      contend_fail("dry run: no result recorded for test %s", contend_motifs[mi]->name);
    size_t npairs = 0;
    int estimated = 0;
    contend_flow *f = pairs_of(&run->traffic[ri], &npairs, &estimated);
    const size_t mb = (size_t)run->results[ri].msg_bytes;
    double bytes = 0, msgs = 0, max_in = 0;
    double *in = calloc((size_t)nn + 1, sizeof(double));
    if (!in)
      contend_fail("out of memory");
    for (size_t i = 0; i < npairs; i++) {
      bytes += f[i].bytes;
      msgs += f[i].msgs;
      if (f[i].src != f[i].dst)
        in[f[i].dst] += f[i].bytes;
    }
    int max_node = 0;
    for (int i = 0; i < nn; i++)
      if (in[i] > max_in)
        max_in = in[i], max_node = i;
    free(in);
    const contend_motif *m = contend_motifs[mi];
    contend_sb_printf(o, "\n  %s %s (%s, %zu B): %d nodes x %d ranks\n",
                      is_canary ? "canary" : "congestor", m->name, m->label, mb,
                      run->plan.group_nodes[g], ppn);
    contend_sb_printf(o,
                      "    %.0f messages, %.0f B per iteration; %zu node pairs; most into one "
                      "node: %.0f B (node %d)%s\n",
                      msgs, bytes, npairs, max_in, max_node,
                      estimated ? "; collectives estimated" : "");
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", m->name);
    contend_json_str(&j, "role", is_canary ? "canary" : "congestor");
    contend_json_int(&j, "message_bytes", (int64_t)mb);
    contend_json_double(&j, "messages_per_iteration", msgs);
    contend_json_double(&j, "bytes_per_iteration", bytes);
    contend_json_bool(&j, "collectives_estimated", estimated);
    const contend_ring_log *rl = run->rings ? &run->rings[ri] : NULL;
    if (rl && contend_param_bool(&cfg->common, "record_rings"))
      contend_ring_log_json(&j, "rings", rl, NULL); /* every round of the plan */
    contend_json_arr_begin(&j, "pairs");
    for (size_t i = 0; i < npairs; i++) {
      contend_json_arr_begin(&j, NULL);
      contend_json_int(&j, NULL, f[i].src);
      contend_json_int(&j, NULL, f[i].dst);
      contend_json_double(&j, NULL, f[i].bytes);
      contend_json_double(&j, NULL, f[i].msgs);
      contend_json_arr_end(&j);
    }
    contend_json_arr_end(&j);
    contend_json_obj_end(&j);
    qsort(f, npairs, sizeof *f, cmp_bytes_desc);
    const size_t show = npairs < 12 ? npairs : 12;
    contend_sb_printf(o, "    %8s -> %-8s %14s %10s\n", "src node", "dst node", "B/iteration",
                      "msgs");
    for (size_t i = 0; i < show; i++)
      contend_sb_printf(o, "    %8d -> %-8d %14.0f %10.0f\n", f[i].src, f[i].dst, f[i].bytes,
                        f[i].msgs);
    if (npairs > show)
      contend_sb_printf(o, "    ... %zu more pairs (-o FILE writes them all)\n", npairs - show);
    free(f);
    if (rl && rl->n > 0 && contend_param_bool(&cfg->common, "show_rings"))
      text_rings(o, rl, (long)contend_param_int(&cfg->common, "show_rings_max"),
                 (long)contend_param_int(&cfg->tests[mi], "measurements"),
                 (long)contend_param_int(&cfg->tests[mi], "rings"));
  }
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);
}
