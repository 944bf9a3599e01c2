/* The two views of a reduced run: the human table (GPCNeT layout) and the
 * JSON results file (schemas/contend-results.schema.json). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../run/envelope.h"
#include "../run/ring_log.h"
#include "contend/json.h"
#include "suite.h"

double contend_impact(const contend_motif *m, double isolated, double congested) {
  if (!isfinite(isolated) || !isfinite(congested) || isolated <= 0 || congested <= 0)
    return NAN;
  return m->metric == CONTEND_METRIC_LAT_US ? congested / isolated : isolated / congested;
}

static const char *metric_key(const contend_motif *m) {
  return m->metric == CONTEND_METRIC_LAT_US ? "lat_us" : "bw_mib_s";
}

static const char *units(const contend_motif *m) {
  return m->metric == CONTEND_METRIC_LAT_US ? "usec" : "MiB/s/rank";
}

static void label(const contend_result *r, char *buf, size_t len) {
  snprintf(buf, len, "%s (%.0f B)", r->motif->label, r->msg_bytes);
}

static void summary(const contend_result *r, contend_summary *s) {
  contend_summarize(&r->fine, r->motif->metric == CONTEND_METRIC_BW_MIB_S, s);
}

#define BAR "+---------------------------------+--------------+--------------+--------------+\n"

static void fmt_value(char *buf, size_t len, double v) {
  if (!isfinite(v))
    snprintf(buf, len, "n/a");
  else if (fabs(v) >= 10)
    snprintf(buf, len, "%.1f", v);
  else if (fabs(v) >= 1)
    snprintf(buf, len, "%.2f", v);
  else if (fabs(v) >= 0.1 || v == 0)
    snprintf(buf, len, "%.3f", v);
  else { /* three significant digits (a shared-memory get: 0.0362 us), at most 6 decimals */
    const int dec = 2 - (int)floor(log10(fabs(v)));
    snprintf(buf, len, "%.*f", dec < 6 ? dec : 6, v);
  }
}

static void table_head(contend_strbuf *o, const char *title) {
  contend_sb_printf(
      o, "\n+------------------------------------------------------------------------------+\n");
  contend_sb_printf(o, "| %-76s |\n", title);
  contend_sb_printf(o, BAR);
  contend_sb_printf(o, "| %31s | %12s | %12s | %12s |\n", "Name", "Avg", "99%", "Units");
  contend_sb_printf(o, BAR);
}

static void table_row(contend_strbuf *o, const char *name, double avg, double tail,
                      const char *unit) {
  char a[32], t[32];
  fmt_value(a, sizeof a, avg);
  fmt_value(t, sizeof t, tail);
  contend_sb_printf(o, "| %31.31s | %12s | %12s | %12s |\n", name, a, t, unit);
}

static void table_phase(const contend_run *run, contend_strbuf *o, const char *title,
                        contend_phase ph) {
  int any = 0;
  for (int i = 0; i < run->nresults; i++) {
    const contend_result *r = &run->results[i];
    if (r->phase != ph)
      continue;
    if (!any)
      table_head(o, title);
    any = 1;
    contend_summary s;
    char name[96];
    summary(r, &s);
    label(r, name, sizeof name);
    table_row(o, name, s.mean, s.tail_99, units(r->motif));
  }
  if (any)
    contend_sb_printf(o, BAR);
}

/* Congestor throughput while canaries measured: all canary phases merged. */
static void table_loading(const contend_run *run, contend_strbuf *o) {
  const contend_config *cfg = run->cfg;
  int any = 0;
  for (int k = 0; k < cfg->ncong; k++) {
    contend_result merged;
    int first = -1;
    for (int i = 0; i < run->nresults; i++) {
      const contend_result *r = &run->results[i];
      if (r->phase != CONTEND_PHASE_CONGESTOR_LOADING || r->motif != contend_motifs[cfg->cong[k]])
        continue;
      if (first < 0) { /* a copy with buckets of its own: the rows stay as they are */
        merged = *r;
        contend_hist_reset(&merged.fine);
        first = i;
      }
      contend_hist_merge(&merged.fine, &r->fine);
    }
    if (first < 0)
      continue;
    if (!any)
      table_head(o, "Congestor Performance while the Canaries Ran");
    any = 1;
    contend_summary s;
    char name[96];
    summary(&merged, &s);
    label(&merged, name, sizeof name);
    table_row(o, name, s.mean, s.tail_99, units(merged.motif));
    contend_hist_free(&merged.fine);
  }
  if (any)
    contend_sb_printf(o, BAR);
}

void contend_report_table(const contend_run *run, contend_strbuf *o) {
  const contend_config *cfg = run->cfg;
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  contend_sb_printf(o, "contend %s: %s\n", CONTEND_VERSION,
                    load ? "network load test (canaries vs. congestors)" : "network tests");
  if (run->env->nodes.ppn_min == run->env->nodes.ppn_max)
    contend_sb_printf(o, "  %d ranks, %d nodes, %d ranks per node%s\n", run->env->nranks,
                      run->plan.nnodes, run->env->nodes.ppn_min,
                      run->env->virtual_nodes ? " (virtual nodes)" : "");
  else
    contend_sb_printf(o, "  %d ranks, %d nodes, %d-%d ranks per node\n", run->env->nranks,
                      run->plan.nnodes, run->env->nodes.ppn_min, run->env->nodes.ppn_max);
  contend_sb_printf(o, "  seed %llu (%s), %s (MPI %d.%d)\n", (unsigned long long)run->env->seed,
                    run->env->seed_from_time ? "from the clock; rerun with --seed to repeat"
                                             : "given",
                    run->env->library, run->env->lib_version, run->env->lib_subversion);
  if (run->env->engine_note[0])
    contend_sb_printf(o, "  %s\n", run->env->engine_note);
  if (load) {
    contend_sb_printf(o, "  nodes: canaries %d", run->plan.group_nodes[0]);
    for (int k = 0; k < cfg->ncong; k++)
      contend_sb_printf(o, ", %s %d", contend_motifs[cfg->cong[k]]->name,
                        run->plan.group_nodes[1 + k]);
    contend_sb_printf(o, "\n");
  }
  contend_sb_printf(o, "  RR = random ring, Nat = natural ring, Lat = latency, BW = bandwidth, "
                       "BW+Sync = BW then barrier\n");
  table_phase(run, o, "Isolated Network Tests", CONTEND_PHASE_ISOLATED);
  table_phase(run, o, "Isolated Congestion Performance", CONTEND_PHASE_CONGESTOR_ALONE);
  table_phase(run, o, "Network Tests running with Congestion Tests", CONTEND_PHASE_CONGESTED);
  table_loading(run, o);
  if (load) {
    int any = 0;
    for (int t = 0; t < cfg->ncanary; t++) {
      int ii = contend_result_index(run, cfg->canary[t], CONTEND_PHASE_ISOLATED, -1);
      int ic = contend_result_index(run, cfg->canary[t], CONTEND_PHASE_CONGESTED, -1);
      if (ii < 0 || ic < 0)
        continue;
      if (!any)
        table_head(o, "Congestion Impact (latency: congested/isolated; BW: isolated/congested)");
      any = 1;
      contend_summary si, sc;
      summary(&run->results[ii], &si);
      summary(&run->results[ic], &sc);
      char name[96];
      label(&run->results[ii], name, sizeof name);
      const contend_motif *m = run->results[ii].motif;
      char a[32], b[32];
      double ca = contend_impact(m, si.mean, sc.mean),
             cb = contend_impact(m, si.tail_99, sc.tail_99);
      if (isfinite(ca))
        snprintf(a, sizeof a, "%.2f", ca);
      else
        snprintf(a, sizeof a, "n/a");
      if (isfinite(cb))
        snprintf(b, sizeof b, "%.2f", cb);
      else
        snprintf(b, sizeof b, "n/a");
      contend_sb_printf(o, "| %31.31s | %12s | %12s | %12s |\n", name, a, b, "X");
    }
    if (any)
      contend_sb_printf(o, BAR);
  }
  double verr = 0, vchk = 0;
  for (int i = 0; i < run->nresults; i++) {
    verr += run->results[i].verify_errors;
    vchk += run->results[i].verify_checked;
  }
  contend_sb_printf(o, "\n  99%% = the value 99%% of samples are better than (latency: 99th "
                       "percentile; bandwidth: 1st).\n"
                       "  Quantiles from log-bucketed histograms (relative error <= 1%%); "
                       "means exact.\n");
  if (contend_param_bool(&cfg->common, "verify"))
    contend_sb_printf(o, "  --verify: %.0f payloads checked, %.0f corrupted\n", vchk, verr);
  for (int i = 0; i < run->nresults; i++)
    if (run->results[i].timed_out > 0 && run->results[i].phase != CONTEND_PHASE_CONGESTOR_LOADING) {
      contend_sb_printf(o,
                        "  Timeout (%g s) ended:", contend_param_double(&cfg->common, "timeout"));
      for (int j = i; j < run->nresults; j++)
        if (run->results[j].timed_out > 0 &&
            run->results[j].phase != CONTEND_PHASE_CONGESTOR_LOADING)
          contend_sb_printf(o, " %s(%s, %.0f meas.)", run->results[j].motif->name,
                            run->results[j].phase == CONTEND_PHASE_CONGESTED ? "cong" : "iso",
                            run->results[j].measurements);
      contend_sb_printf(o, "\n");
      break;
    }
  contend_sb_printf(o, "  Wall time %.1f s; peak memory per rank %.1f MiB (max), %.1f MiB (mean)\n",
                    run->env->wall_s, run->env->peak_rss_mib_max, run->env->peak_rss_mib_mean);
}

static const char *phase_name(contend_phase ph) {
  switch (ph) {
  case CONTEND_PHASE_ISOLATED:
    return "isolated";
  case CONTEND_PHASE_CONGESTED:
    return "congested";
  case CONTEND_PHASE_CONGESTOR_ALONE:
    return "congestor_alone";
  default:
    return "congestor_loading";
  }
}

static void json_summary(contend_json *j, const char *key, const contend_hist *h, int hib) {
  contend_summary s;
  contend_summarize(h, hib, &s);
  contend_json_obj_begin(j, key);
  contend_json_uint(j, "count", s.count);
  contend_json_double(j, "mean", s.mean);
  contend_json_double(j, "stddev", s.stddev);
  contend_json_double(j, "min", s.min);
  contend_json_double(j, "max", s.max);
  contend_json_double(j, "p0_1", s.p0_1);
  contend_json_double(j, "p1", s.p1);
  contend_json_double(j, "p50", s.p50);
  contend_json_double(j, "p99", s.p99);
  contend_json_double(j, "p99_9", s.p99_9);
  contend_json_double(j, "tail_99", s.tail_99);
  contend_json_double(j, "tail_99_9", s.tail_99_9);
  contend_json_obj_end(j);
}

static void json_hist(contend_json *j, const contend_hist *h) {
  contend_json_obj_begin(j, "histogram");
  contend_json_str(j, "scheme", "log");
  contend_json_double(j, "relative_error", CONTEND_HIST_REL_ERR);
  const char *keys[3] = {"lower", "upper", "count"};
  for (int k = 0; k < 3; k++) {
    contend_json_arr_begin(j, keys[k]);
    for (int b = 0; h->bucket && b < CONTEND_HIST_NBUCKETS; b++) {
      if (!contend_hist_at(h, b))
        continue;
      if (k == 0)
        contend_json_double(j, NULL, contend_hist_lower(b));
      if (k == 1)
        contend_json_double(j, NULL, contend_hist_upper(b));
      if (k == 2)
        contend_json_uint(j, NULL, contend_hist_at(h, b));
    }
    contend_json_arr_end(j);
  }
  contend_json_obj_end(j);
}

static void json_int_list(contend_json *j, const char *key, const int *v, int n) {
  contend_json_arr_begin(j, key);
  for (int i = 0; i < n; i++)
    contend_json_int(j, NULL, v[i]);
  contend_json_arr_end(j);
}

void contend_report_json(const contend_run *run, contend_strbuf *out) {
  const contend_config *cfg = run->cfg;
  contend_json j;
  contend_json_init(&j, out);
  contend_json_obj_begin(&j, NULL);
  contend_envelope_json_head(&j, run->env, "contend-results", CONTEND_SCHEMA_VERSION);

  contend_json_obj_begin(&j, "config");
  contend_params_json(&j, "options", &cfg->common, run->env->seed);
  contend_params_json(&j, cfg->cmd == CONTEND_CMD_LOAD ? "load" : "network", &cfg->load,
                      run->env->seed);
  contend_json_obj_begin(&j, "tests");
  for (int i = 0; i < cfg->nmotifs; i++) {
    int used = 0;
    for (int t = 0; t < cfg->ncanary; t++)
      used |= cfg->canary[t] == i;
    for (int k = 0; k < cfg->ncong; k++)
      used |= cfg->cong[k] == i;
    if (used)
      contend_params_json(&j, contend_motifs[i]->name, &cfg->tests[i], run->env->seed);
  }
  contend_json_obj_end(&j);
  contend_json_obj_end(&j);

  contend_json_obj_begin(&j, "environment");
  contend_envelope_json_environment(&j, run->env);
  contend_json_obj_end(&j);

  contend_json_obj_begin(&j, "placement");
  json_int_list(&j, "node_order", run->plan.order, run->plan.nnodes);
  contend_json_arr_begin(&j, "groups");
  int ngroups = cfg->cmd == CONTEND_CMD_LOAD ? 1 + cfg->ncong : 1;
  for (int g = 0; g < ngroups; g++) {
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "role", g == 0 ? "canary" : "congestor");
    contend_json_str(&j, "name", g == 0 ? "canaries" : contend_motifs[cfg->cong[g - 1]]->name);
    contend_json_arr_begin(&j, "nodes");
    for (int n = 0; n < run->plan.nnodes; n++)
      if (run->plan.group_of_node[n] == g)
        contend_json_int(&j, NULL, n);
    contend_json_arr_end(&j);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_arr_begin(&j, "subcommunicators");
  for (int i = 0; i < run->nsubcomms; i++) {
    const int *sc = run->subcomms[i];
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "group",
                     sc[0] == 0 ? "canaries" : contend_motifs[cfg->cong[sc[0] - 1]]->name);
    contend_json_int(&j, "local_rank", sc[1]);
    contend_json_int(&j, "ranks", sc[2]);
    contend_json_int(&j, "distinct_nodes", sc[3]);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);

  contend_json_arr_begin(&j, "tests");
  for (int i = 0; i < run->nresults; i++) {
    const contend_result *r = &run->results[i];
    const contend_motif *m = r->motif;
    const int hib = m->metric == CONTEND_METRIC_BW_MIB_S;
    char name[96];
    label(r, name, sizeof name);
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", m->name);
    contend_json_str(&j, "label", name);
    contend_json_str(&j, "role", m->role == CONTEND_ROLE_CANARY ? "canary" : "congestor");
    contend_json_str(&j, "phase", phase_name(r->phase));
    if (r->during >= 0)
      contend_json_str(&j, "during", contend_motifs[cfg->canary[r->during]]->name);
    else
      contend_json_null(&j, "during");
    contend_json_str(&j, "metric", metric_key(m));
    contend_json_str(&j, "units", units(m));
    contend_json_bool(&j, "higher_is_better", hib);
    contend_json_count(&j, "message_bytes", r->msg_bytes);
    contend_json_count(&j, "ranks_sampled", r->ranks);
    contend_json_count(&j, "measurements_done", r->measurements);
    contend_json_count(&j, "iters_per_measurement", r->iters);
    contend_json_bool(&j, "timed_out", r->timed_out > 0);
    contend_json_double(&j, "elapsed_s", r->elapsed_s);
    json_summary(&j, metric_key(m), &r->fine, hib);
    char bulk_key[32];
    snprintf(bulk_key, sizeof bulk_key, "bulk_%s", metric_key(m));
    json_summary(&j, bulk_key, &r->bulk, hib);
    json_hist(&j, &r->fine);
    contend_json_obj_begin(&j, "verify");
    contend_json_bool(&j, "enabled", contend_param_bool(&cfg->common, "verify"));
    contend_json_count(&j, "checked", r->verify_checked);
    contend_json_count(&j, "errors", r->verify_errors);
    contend_json_obj_end(&j);
    if (run->rings) /* ring tests: which rings the measurements used */
      contend_ring_log_json(&j, "rings", &run->rings[i], metric_key(m));
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);

  contend_json_arr_begin(&j, "impact");
  for (int t = 0; cfg->cmd == CONTEND_CMD_LOAD && t < cfg->ncanary; t++) {
    int ii = contend_result_index(run, cfg->canary[t], CONTEND_PHASE_ISOLATED, -1);
    int ic = contend_result_index(run, cfg->canary[t], CONTEND_PHASE_CONGESTED, -1);
    if (ii < 0 || ic < 0)
      continue;
    const contend_motif *m = run->results[ii].motif;
    contend_summary si, sc;
    summary(&run->results[ii], &si);
    summary(&run->results[ic], &sc);
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", m->name);
    contend_json_str(&j, "metric", metric_key(m));
    contend_json_double(&j, "ci_mean", contend_impact(m, si.mean, sc.mean));
    contend_json_double(&j, "ci_p50", contend_impact(m, si.p50, sc.p50));
    contend_json_double(&j, "ci_tail_99", contend_impact(m, si.tail_99, sc.tail_99));
    contend_json_double(&j, "ci_tail_99_9", contend_impact(m, si.tail_99_9, sc.tail_99_9));
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);
}
