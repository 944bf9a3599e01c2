/* The views of a jobs run: human tables (stdout) and the JSON results
 * (schemas/contend-jobs.schema.json).  Times in tables are milliseconds,
 * in JSON seconds (keys end in _s) or microseconds (_us). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../run/envelope.h"
#include "../suite/suite.h"
#include "contend/json.h"
#include "jobs.h"

static const char *pass_name(contend_pass_kind k) {
  return k == CONTEND_PASS_ISOLATED ? "isolated" : "concurrent";
}

static int pass_index(const contend_jobs_run *r, contend_pass_kind k) {
  for (int p = 0; p < r->npasses; p++)
    if (r->pass[p] == k)
      return p;
  return -1;
}

static double ratio(double a, double b) {
  return isfinite(a) && isfinite(b) && a > 0 && b > 0 ? a / b : NAN;
}

/* Per repeat, the slowest rank's time (null for a repeat no rank timed):
 * the per-repetition run times behind slowest_rank_mean_s. */
static void json_repeats(contend_json *j, const double *rep_max, long repeat) {
  contend_json_arr_begin(j, "slowest_rank_s");
  for (long q = 0; q < repeat; q++)
    contend_json_double(j, NULL, rep_max[q] > 0 ? rep_max[q] : NAN);
  contend_json_arr_end(j);
}

/* Mean over repeats of the slowest rank's time. */
static double slowest_mean(const double *rep_max, long repeat) {
  double s = 0;
  for (long q = 0; q < repeat; q++)
    s += rep_max[q];
  return repeat > 0 && s > 0 ? s / (double)repeat : NAN;
}

static double io_bw_mib_s(const contend_mres *m, long repeat) {
  double t = 0;
  for (long q = 0; q < repeat; q++)
    t += m->rep_max[q];
  return m->io_bytes > 0 && t > 0 ? m->io_bytes / t / 1048576.0 : NAN;
}

/* Whether motif instance g reports an achieved network bandwidth
 * (CONTEND_METRIC_BW_MIB_S: the bully motifs). */
static int is_bw_motif(const contend_jobs_run *r, int g) {
  return r->jf->jobs[r->mi[g].job].motifs[r->mi[g].pos].motif->metric == CONTEND_METRIC_BW_MIB_S;
}

static void fmt(char *buf, size_t len, double v) {
  if (!isfinite(v))
    snprintf(buf, len, "-");
  else if (fabs(v) >= 1000)
    snprintf(buf, len, "%.0f", v);
  else if (fabs(v) >= 100)
    snprintf(buf, len, "%.1f", v);
  else if (fabs(v) >= 10)
    snprintf(buf, len, "%.2f", v);
  else
    snprintf(buf, len, "%.3f", v);
}

static void node_ranges(contend_strbuf *o, const int *v, int n) {
  for (int i = 0; i < n;) {
    int k = i;
    while (k + 1 < n && v[k + 1] == v[k] + 1)
      k++;
    if (k > i)
      contend_sb_printf(o, "%s%d-%d", i ? "," : "", v[i], v[k]);
    else
      contend_sb_printf(o, "%s%d", i ? "," : "", v[i]);
    i = k + 1;
  }
}

static void motif_label(const contend_jobs_run *r, int g, char *buf, size_t len) {
  const contend_job *job = &r->jf->jobs[r->mi[g].job];
  const contend_motif *m = job->motifs[r->mi[g].pos].motif;
  if (r->mi[g].msg_bytes > 0)
    snprintf(buf, len, "  %d %s (%.0f B)", r->mi[g].pos + 1, m->name, r->mi[g].msg_bytes);
  else
    snprintf(buf, len, "  %d %s", r->mi[g].pos + 1, m->name);
}

/* A table rule: "+" then, per column of width w[i], w[i] + 2 dashes and "+";
 * a newline. */
static void rule(contend_strbuf *o, const int *w, int n) {
  contend_sb_printf(o, "+");
  for (int i = 0; i < n; i++)
    contend_sb_printf(o, "%.*s+", w[i] + 2,
                      "--------------------------------------------------------------------"
                      "--------------------------------------------------------------------");
  contend_sb_printf(o, "\n");
}

/* Width of the "Job / motif" column: the longest job name or motif label
 * (labels are never cut), at least 30. */
static int name_width(const contend_jobs_run *r) {
  int w = 30;
  for (int j = 0; j < r->jf->njobs; j++) {
    const int n = (int)strlen(r->jf->jobs[j].name);
    w = n > w ? n : w;
    for (int k = 0; k < r->jf->jobs[j].nmotifs; k++) {
      char name[160];
      motif_label(r, r->first[j] + k, name, sizeof name);
      const int m = (int)strlen(name);
      w = m > w ? m : w;
    }
  }
  return w > 130 ? 130 : w; /* the rule's dashes; labels are far shorter */
}

static void row(contend_strbuf *o, int name_w, const char *name, const char *pass,
                const contend_jstat *t, double bw, double ci) {
  char a[32], b[32], c[32], d[32], e[32];
  fmt(a, sizeof a, t->n > 0 ? t->min * 1e3 : NAN);
  fmt(b, sizeof b, contend_jstat_mean(t) * 1e3);
  fmt(c, sizeof c, t->n > 0 ? t->max * 1e3 : NAN);
  fmt(d, sizeof d, bw);
  if (isfinite(ci))
    snprintf(e, sizeof e, ci < 10 ? "%.3f" : ci < 100 ? "%.2f" : "%.1f", ci);
  else
    e[0] = 0;
  contend_sb_printf(o, "| %-*s | %-10s | %10s | %10s | %10s | %11s | %6s |\n", name_w, name, pass,
                    a, b, c, isfinite(bw) ? d : "", e);
}

static void header(const contend_jobs_run *r, contend_strbuf *o) {
  const contend_jobfile *jf = r->jf;
  const char *mode = contend_param_str(r->opts, "mode");
  contend_sb_printf(o, "contend %s: jobs from %s (%s%s)\n", CONTEND_VERSION, jf->path,
                    r->dry_run ? "dry run" : "mode ", r->dry_run ? "" : mode);
  if (r->dry_run)
    contend_sb_printf(o, "  %d nodes x %d ranks per node planned, seed %llu%s\n", r->nnodes,
                      r->ppn_max, (unsigned long long)r->seed,
                      r->seed_from_time ? " (no --seed given: a real run draws one from the clock)"
                                        : "");
  else {
    if (r->ppn_min == r->ppn_max)
      contend_sb_printf(o, "  %d ranks, %d nodes, %d rank%s per node%s\n", r->nranks, r->nnodes,
                        r->ppn_min, r->ppn_min == 1 ? "" : "s",
                        r->virtual_nodes ? " (virtual nodes)" : "");
    else
      contend_sb_printf(o, "  %d ranks, %d nodes, %d-%d ranks per node\n", r->nranks, r->nnodes,
                        r->ppn_min, r->ppn_max);
    contend_sb_printf(o, "  seed %llu (%s), %s (MPI %d.%d)\n", (unsigned long long)r->seed,
                      r->seed_from_time ? "from the clock; rerun with --seed to repeat" : "given",
                      r->env->library, r->env->lib_version, r->env->lib_subversion);
    if (r->env->engine_note[0])
      contend_sb_printf(o, "  %s\n", r->env->engine_note);
  }
  for (int j = 0; j < jf->njobs; j++) {
    const contend_job *job = &jf->jobs[j];
    contend_sb_printf(o, "  job %-16s nodes ", job->name);
    node_ranges(o, job->nodes, job->nnodes);
    char where[96] = "";
    if (job->node_leaf) { /* distinct leaves and pods */
      int nl = 0, np = 0, top = 0;
      for (int i = 0; i < job->nnodes; i++)
        top = job->node_leaf[i] > top ? job->node_leaf[i] : top;
      char *seen_l = calloc((size_t)top + 1, 1), *seen_p = calloc((size_t)top + 1, 1);
      if (!seen_l || !seen_p)
        abort();
      for (int i = 0; i < job->nnodes; i++) { /* pods are numbered below leaves */
        nl += !seen_l[job->node_leaf[i]];
        np += !seen_p[job->node_pod[i]];
        seen_l[job->node_leaf[i]] = seen_p[job->node_pod[i]] = 1;
      }
      free(seen_l);
      free(seen_p);
      snprintf(where, sizeof where, " on %d lea%s in %d pod%s", nl, nl == 1 ? "f" : "ves", np,
               np == 1 ? "" : "s");
    }
    contend_sb_printf(o, " (%d ranks; %s%s), repeat %ld, %d motif%s\n", r->job_ranks[j],
                      contend_nodes_kind_name(job->kind), where, job->repeat, job->nmotifs,
                      job->nmotifs == 1 ? "" : "s");
  }
}

static void table_traffic(const contend_jobs_run *r, contend_strbuf *o) {
  const contend_jobfile *jf = r->jf;
  contend_sb_printf(o, "\nTraffic of the perform phase (one pass; point-to-point and one-sided "
                       "bytes between nodes, collectives counted as calls)\n");
  const int nw = name_width(r), w[7] = {nw, 10, 10, 10, 10, 10, 10};
  rule(o, w, 7);
  contend_sb_printf(o, "| %-*s | %10s | %10s | %10s | %10s | %10s | %10s |\n", nw, "Job / motif",
                    "Messages", "Sent (MiB)", "Node pairs", "Coll calls", "Write(MiB)",
                    "Read (MiB)");
  rule(o, w, 7);
  for (int j = 0; j < jf->njobs; j++) {
    contend_traffic sum;
    contend_traffic_init(&sum);
    for (int k = 0; k < jf->jobs[j].nmotifs; k++)
      contend_traffic_merge(&sum, &r->mi[r->first[j] + k].traffic);
    for (int k = -1; k < jf->jobs[j].nmotifs; k++) {
      const contend_traffic *t = k < 0 ? &sum : &r->mi[r->first[j] + k].traffic;
      char name[160];
      if (k < 0)
        snprintf(name, sizeof name, "%s", jf->jobs[j].name);
      else
        motif_label(r, r->first[j] + k, name, sizeof name);
      double bytes, msgs, coll = 0;
      contend_flows_total(&t->flows, &bytes, &msgs);
      for (int q = 0; q < CONTEND_COLL_N; q++)
        coll += t->coll_calls[q];
      char a[32], b[32], c[32], d[32];
      fmt(a, sizeof a, bytes / 1048576.0);
      fmt(b, sizeof b, t->io_write_bytes / 1048576.0);
      fmt(c, sizeof c, t->io_read_bytes / 1048576.0);
      snprintf(d, sizeof d, "%zu", t->flows.n);
      contend_sb_printf(o, "| %-*s | %10.0f | %10s | %10s | %10.0f | %10s | %10s |\n", nw, name,
                        msgs, a, d, coll, b, c);
    }
    contend_traffic_free(&sum);
  }
  rule(o, w, 7);
}

static int cmp_bytes_desc(const void *a, const void *b) {
  const contend_flow *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  if (x->src != y->src)
    return x->src < y->src ? -1 : 1;
  return x->dst < y->dst ? -1 : x->dst > y->dst;
}

/* Dry runs: the busiest node pairs of every job (all motifs merged). */
static void table_pairs(const contend_jobs_run *r, contend_strbuf *o) {
  const contend_jobfile *jf = r->jf;
  for (int j = 0; j < jf->njobs; j++) {
    contend_traffic sum;
    contend_traffic_init(&sum);
    for (int k = 0; k < jf->jobs[j].nmotifs; k++)
      contend_traffic_merge(&sum, &r->mi[r->first[j] + k].traffic);
    size_t n;
    contend_flow *f = contend_flows_sorted(&sum.flows, &n);
    qsort(f, n, sizeof *f, cmp_bytes_desc);
    contend_sb_printf(o, "\n  job %s: bytes per node pair (point-to-point and one-sided)%s\n",
                      jf->jobs[j].name, n ? "" : ": none");
    const size_t show = n < 12 ? n : 12;
    if (n)
      contend_sb_printf(o, "    %8s -> %-8s %16s %12s\n", "src node", "dst node", "bytes",
                        "messages");
    for (size_t i = 0; i < show; i++)
      contend_sb_printf(o, "    %8d -> %-8d %16.0f %12.0f\n", f[i].src, f[i].dst, f[i].bytes,
                        f[i].msgs);
    if (n > show)
      contend_sb_printf(o, "    ... %zu more pairs (-o FILE writes them all)\n", n - show);
    double coll = 0;
    for (int q = 0; q < CONTEND_COLL_N; q++)
      coll += sum.coll_calls[q];
    if (coll > 0) {
      contend_sb_printf(o, "    collectives (calls summed over ranks):");
      for (int q = 0; q < CONTEND_COLL_N; q++)
        if (sum.coll_calls[q] > 0)
          contend_sb_printf(o, " %s %.0f (%.0f B)", contend_coll_names[q], sum.coll_calls[q],
                            sum.coll_bytes[q]);
      contend_sb_printf(o, "\n");
    }
    if (sum.io_write_bytes > 0 || sum.io_read_bytes > 0)
      contend_sb_printf(o,
                        "    file I/O: %.0f B written in %.0f calls, %.0f B read in %.0f calls\n",
                        sum.io_write_bytes, sum.io_write_ops, sum.io_read_bytes, sum.io_read_ops);
    if (sum.compute_s > 0)
      contend_sb_printf(o, "    compute: %.6g s requested (all ranks)\n", sum.compute_s);
    free(f);
    contend_traffic_free(&sum);
  }
}

/* Bandwidth motifs: min / mean / max over the sampling ranks and repeats of
 * each rank's achieved bandwidth, in Gb/s. */
static void table_bandwidth(const contend_jobs_run *r, contend_strbuf *o) {
  int any = 0;
  for (int g = 0; g < r->nm; g++)
    any |= is_bw_motif(r, g);
  if (!any)
    return;
  contend_sb_printf(o, "\nAchieved network bandwidth per rank (Gb/s; bully motifs: per rank "
                       "that takes samples, per invocation)\n");
  for (int g = 0; g < r->nm; g++) {
    if (!is_bw_motif(r, g))
      continue;
    char name[160];
    motif_label(r, g, name, sizeof name);
    for (int p = 0; p < r->npasses; p++) {
      const contend_jstat *b = &r->m[p][g].net_gbps;
      char a[32], m[32], c[32];
      fmt(a, sizeof a, b->n > 0 ? b->min : NAN);
      fmt(m, sizeof m, contend_jstat_mean(b));
      fmt(c, sizeof c, b->n > 0 ? b->max : NAN);
      contend_sb_printf(o, "  %s / %s, %s: min %s  mean %s  max %s Gb/s (%.0f samples)\n",
                        r->jf->jobs[r->mi[g].job].name, name + 2, pass_name(r->pass[p]), a, m, c,
                        b->n);
    }
  }
}

static void table_series(const contend_jobs_run *r, contend_strbuf *o) {
  const int pi = pass_index(r, CONTEND_PASS_ISOLATED), pc = pass_index(r, CONTEND_PASS_CONCURRENT);
  for (int g = 0; g < r->nm; g++) {
    const contend_minfo *mi = &r->mi[g];
    if (!mi->nseries)
      continue;
    char name[160];
    motif_label(r, g, name, sizeof name);
    contend_sb_printf(o, "\nLatency per size: job %s, motif%s (usec; iteration time / %g)\n",
                      r->jf->jobs[mi->job].name, name + 1, mi->divisor);
    static const int w[4] = {12, 13, 13, 6};
    rule(o, w, 4);
    contend_sb_printf(o, "| %12s | %13s | %13s | %6s |\n", "Size (B)", "Isolated us",
                      "Concurrent us", "CI");
    rule(o, w, 4);
    for (int s = 0; s < mi->nseries; s++) {
      double li = pi >= 0 ? contend_jstat_mean(&r->m[pi][g].series[s]) * 1e6 / mi->divisor : NAN;
      double lc = pc >= 0 ? contend_jstat_mean(&r->m[pc][g].series[s]) * 1e6 / mi->divisor : NAN;
      char a[32], b[32], c[32];
      fmt(a, sizeof a, li);
      fmt(b, sizeof b, lc);
      double ci = ratio(lc, li);
      if (isfinite(ci))
        snprintf(c, sizeof c, "%.3f", ci);
      else
        snprintf(c, sizeof c, "-");
      contend_sb_printf(o, "| %12.0f | %13s | %13s | %6s |\n", mi->series_value[s], a, b, c);
    }
    rule(o, w, 4);
  }
}

void contend_jobs_report_table(const contend_jobs_run *r, contend_strbuf *o) {
  const contend_jobfile *jf = r->jf;
  header(r, o);
  if (!r->dry_run) {
    const int pi = pass_index(r, CONTEND_PASS_ISOLATED),
              pc = pass_index(r, CONTEND_PASS_CONCURRENT);
    const int nw = name_width(r), w[7] = {nw, 10, 10, 10, 10, 11, 6};
    contend_sb_printf(o, "\n");
    rule(o, w, 7);
    contend_sb_printf(o, "| %-*s | %-10s | %10s | %10s | %10s | %11s | %6s |\n", nw, "Job / motif",
                      "Pass", "Min (ms)", "Avg (ms)", "Max (ms)", "I/O (MiB/s)", "CI");
    rule(o, w, 7);
    for (int j = 0; j < jf->njobs; j++) {
      const long R = jf->jobs[j].repeat;
      for (int k = -1; k < jf->jobs[j].nmotifs; k++) {
        const int g = r->first[j] + k;
        char name[160];
        if (k < 0)
          snprintf(name, sizeof name, "%s", jf->jobs[j].name);
        else
          motif_label(r, g, name, sizeof name);
        for (int p = 0; p < r->npasses; p++) {
          const contend_jstat *t = k < 0 ? &r->j[p][j].time : &r->m[p][g].time;
          double bw = k < 0 ? NAN : io_bw_mib_s(&r->m[p][g], R);
          double ci = NAN;
          if (p == pc && pi >= 0) {
            const contend_jstat *ti = k < 0 ? &r->j[pi][j].time : &r->m[pi][g].time;
            ci = ratio(contend_jstat_mean(t), contend_jstat_mean(ti));
          }
          row(o, nw, p == 0 ? name : "", pass_name(r->pass[p]), t, bw, ci);
        }
      }
    }
    rule(o, w, 7);
    table_bandwidth(r, o);
    table_series(r, o);
  }
  table_traffic(r, o);
  if (r->dry_run)
    table_pairs(r, o);
  double verr = 0, vchk = 0;
  for (int p = 0; p < r->npasses; p++)
    for (int g = 0; g < r->nm; g++) {
      verr += r->m[p][g].verify_errors;
      vchk += r->m[p][g].verify_checked;
    }
  if (!r->dry_run) {
    contend_sb_printf(
        o, "\n  Min/Avg/Max: a motif's time per invocation (its timed iterations) and a job's "
           "time per\n  repeat of its chain, over ranks and repeats.  CI = concurrent / isolated "
           "average\n  (StressBench eq. 3).  I/O MiB/s = bytes of all ranks / slowest rank's "
           "time.\n");
    if (vchk > 0)
      contend_sb_printf(o, "  Verification: %.0f payloads checked, %.0f corrupted\n", vchk, verr);
    double io = 0;
    for (int g = 0; g < r->nm; g++)
      io += r->mi[g].traffic.io_write_bytes + r->mi[g].traffic.io_read_bytes;
    const char *note = io > 0 && r->env ? r->env->engine->file_io_note : NULL;
    while (note && *note) { /* the engine's note on file I/O, each line indented */
      const int n = (int)strcspn(note, "\n");
      contend_sb_printf(o, "  %.*s\n", n, note);
      note += n + (note[n] == '\n');
    }
    contend_sb_printf(o, "  Wall time %.1f s\n", r->wall_s);
  }
}

/* ---- JSON --------------------------------------------------------------- */

static void json_jstat(contend_json *j, const char *key, const contend_jstat *s, double scale) {
  contend_json_obj_begin(j, key);
  contend_json_uint(j, "count", (uint64_t)s->n);
  contend_json_double(j, "min", s->n > 0 ? s->min * scale : NAN);
  contend_json_double(j, "mean", contend_jstat_mean(s) * scale);
  contend_json_double(j, "max", s->n > 0 ? s->max * scale : NAN);
  contend_json_double(j, "stddev", contend_jstat_stddev(s) * scale);
  contend_json_obj_end(j);
}

static void json_summary(contend_json *j, const char *key, const contend_hist *h, double div) {
  contend_summary s;
  contend_summarize(h, 0, &s);
  contend_json_obj_begin(j, key);
  contend_json_uint(j, "count", s.count);
  contend_json_double(j, "mean", s.mean / div);
  contend_json_double(j, "stddev", s.stddev / div);
  contend_json_double(j, "min", s.min / div);
  contend_json_double(j, "max", s.max / div);
  contend_json_double(j, "p50", s.p50 / div);
  contend_json_double(j, "p99", s.p99 / div);
  contend_json_obj_end(j);
}

/* key: [[src node, dst node, bytes, messages], ...], sorted by src, dst. */
static void json_pairs(contend_json *j, const char *key, const contend_flowmap *m) {
  size_t n;
  contend_flow *f = contend_flows_sorted(m, &n);
  contend_json_arr_begin(j, key);
  for (size_t i = 0; i < n; i++) {
    contend_json_arr_begin(j, NULL);
    contend_json_int(j, NULL, f[i].src);
    contend_json_int(j, NULL, f[i].dst);
    contend_json_count(j, NULL, f[i].bytes);
    contend_json_count(j, NULL, f[i].msgs);
    contend_json_arr_end(j);
  }
  contend_json_arr_end(j);
  free(f);
}

static void json_traffic(contend_json *j, const contend_traffic *t, int dry) {
  double bytes, msgs;
  contend_flows_total(&t->flows, &bytes, &msgs);
  contend_json_obj_begin(j, "traffic");
  contend_json_count(j, "messages", msgs);
  contend_json_count(j, "bytes", bytes);
  json_pairs(j, "pairs", &t->flows);
  contend_json_obj_begin(j, "collectives");
  for (int q = 0; q < CONTEND_COLL_N; q++) {
    contend_json_obj_begin(j, contend_coll_names[q]);
    contend_json_count(j, "calls", t->coll_calls[q]);
    contend_json_count(j, "bytes", t->coll_bytes[q]);
    contend_json_obj_end(j);
  }
  contend_json_obj_end(j);
  if (dry) {
    json_pairs(j, "estimated_collective_pairs", &t->estimated);
  } else {
    contend_json_null(j, "estimated_collective_pairs");
  }
  contend_json_double(j, "compute_s", t->compute_s);
  contend_json_obj_end(j);
  contend_json_obj_begin(j, "io");
  contend_json_count(j, "bytes_written", t->io_write_bytes);
  contend_json_count(j, "bytes_read", t->io_read_bytes);
  contend_json_count(j, "write_ops", t->io_write_ops);
  contend_json_count(j, "read_ops", t->io_read_ops);
  contend_json_obj_end(j);
}

static void json_motif_pass(contend_json *j, const contend_jobs_run *r, int p, int g) {
  const contend_mres *m = &r->m[p][g];
  const contend_minfo *mi = &r->mi[g];
  const long R = r->jf->jobs[mi->job].repeat;
  contend_json_obj_begin(j, pass_name(r->pass[p]));
  json_jstat(j, "time_s", &m->time, 1.0);
  contend_json_double(j, "slowest_rank_mean_s", slowest_mean(m->rep_max, R));
  json_repeats(j, m->rep_max, R);
  json_summary(j, "iteration_us", &m->iter_us, 1.0);
  if (mi->divisor != 1)
    json_summary(j, "latency_us", &m->iter_us, mi->divisor);
  else
    contend_json_null(j, "latency_us");
  contend_json_count(j, "io_bytes", m->io_bytes);
  contend_json_double(j, "io_bw_mib_s", io_bw_mib_s(m, R));
  if (is_bw_motif(r, g)) /* Gb/s per sampling rank and invocation */
    json_jstat(j, "bandwidth_gbps_per_rank", &m->net_gbps, 1.0);
  else
    contend_json_null(j, "bandwidth_gbps_per_rank");
  contend_json_arr_begin(j, "series");
  for (int s = 0; s < mi->nseries; s++) {
    contend_json_obj_begin(j, NULL);
    contend_json_double(j, "value", mi->series_value[s]);
    json_jstat(j, "iteration_s", &m->series[s], 1.0);
    contend_json_double(j, "latency_us", contend_jstat_mean(&m->series[s]) * 1e6 / mi->divisor);
    contend_json_obj_end(j);
  }
  contend_json_arr_end(j);
  if (m->samples) {
    contend_json_arr_begin(j, "samples_s");
    for (long q = 0; q < m->nsamples; q++)
      contend_json_double(j, NULL, m->samples[q]);
    contend_json_arr_end(j);
  } else {
    contend_json_null(j, "samples_s");
  }
  contend_json_obj_begin(j, "verify");
  contend_json_count(j, "checked", m->verify_checked);
  contend_json_count(j, "errors", m->verify_errors);
  contend_json_obj_end(j);
  contend_json_obj_end(j);
}

static void json_ci(contend_json *j, const contend_jobs_run *r, const contend_jstat *ti,
                    const contend_jstat *tc, const double *ri, const double *rc, long R, int g) {
  const int pi = pass_index(r, CONTEND_PASS_ISOLATED), pc = pass_index(r, CONTEND_PASS_CONCURRENT);
  if (pi < 0 || pc < 0) {
    contend_json_null(j, "ci");
    return;
  }
  contend_json_obj_begin(j, "ci");
  contend_json_double(j, "mean", ratio(contend_jstat_mean(tc), contend_jstat_mean(ti)));
  contend_json_double(j, "slowest_rank", ratio(slowest_mean(rc, R), slowest_mean(ri, R)));
  if (g >= 0 && r->mi[g].nseries) {
    contend_json_arr_begin(j, "series");
    for (int s = 0; s < r->mi[g].nseries; s++)
      contend_json_double(j, NULL,
                          ratio(contend_jstat_mean(&r->m[pc][g].series[s]),
                                contend_jstat_mean(&r->m[pi][g].series[s])));
    contend_json_arr_end(j);
  } else {
    contend_json_null(j, "series");
  }
  contend_json_obj_end(j);
}

void contend_jobs_report_json(const contend_jobs_run *r, contend_strbuf *out) {
  const contend_jobfile *jf = r->jf;
  const int pi = pass_index(r, CONTEND_PASS_ISOLATED), pc = pass_index(r, CONTEND_PASS_CONCURRENT);
  contend_json j;
  contend_json_init(&j, out);
  contend_json_obj_begin(&j, NULL);
  contend_envelope_json_head(&j, r->env, "contend-jobs", CONTEND_JOBS_SCHEMA_VERSION);
  contend_json_str(&j, "job_file", jf->path);
  contend_json_bool(&j, "dry_run", r->dry_run);
  contend_json_str(&j, "mode", contend_param_str(r->opts, "mode"));
  contend_json_arr_begin(&j, "passes");
  for (int p = 0; p < r->npasses; p++)
    contend_json_str(&j, NULL, pass_name(r->pass[p]));
  contend_json_arr_end(&j);
  contend_json_arr_begin(&j, "pass_clock");
  for (int p = 0; p < r->npasses && !r->dry_run; p++) {
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "pass", pass_name(r->pass[p]));
    contend_json_double(&j, "perform_t0_clock_s", r->pass_t0_clock_s[p]);
    contend_json_double(&j, "perform_t0_unix_s", r->pass_t0_unix_s[p]);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_obj_begin(&j, "config");
  contend_params_json(&j, "options", r->opts, r->seed);
  contend_json_obj_end(&j);

  contend_json_obj_begin(&j, "environment");
  contend_envelope_json_environment(&j, r->env);
  contend_json_obj_end(&j);

  double vchk = 0, verr = 0;
  contend_json_arr_begin(&j, "jobs");
  for (int q = 0; q < jf->njobs; q++) {
    const contend_job *job = &jf->jobs[q];
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", job->name);
    contend_json_int(&j, "line", job->line);
    contend_json_obj_begin(&j, "placement");
    contend_json_str(&j, "kind", contend_nodes_kind_name(job->kind));
    contend_json_int(&j, "line", job->nodes_line);
    if (job->kind == CONTEND_NODES_RANDOM || (job->kind >= CONTEND_NODES_COMPACT && job->seed_set))
      contend_json_uint(&j, "seed", job->placement_seed);
    else
      contend_json_null(&j, "seed");
    if (job->kind >= CONTEND_NODES_COMPACT) { /* the tree placement's options */
      if (job->per_leaf)
        contend_json_int(&j, "per_leaf", job->per_leaf);
      if (job->pods)
        contend_json_int(&j, "pods", job->pods);
      if (job->pod >= 0)
        contend_json_int(&j, "pod", job->pod);
      if (job->kind == CONTEND_NODES_PAIRS) {
        contend_json_int(&j, "pairs", job->want / 2);
        contend_json_str(&j, "across", job->across_pods ? "pod" : "leaf");
      }
      if (job->kind == CONTEND_NODES_INCAST) {
        contend_json_int(&j, "sender_leaves", job->sender_leaves);
        contend_json_int(&j, "receivers", job->receivers);
      }
    }
    contend_json_obj_end(&j);
    contend_json_arr_begin(&j, "nodes");
    for (int i = 0; i < job->nnodes; i++)
      contend_json_int(&j, NULL, job->nodes[i]);
    contend_json_arr_end(&j);
    if (job->node_leaf) { /* the machine's tree was known: leaf and pod of each node */
      contend_json_arr_begin(&j, "leaves");
      for (int i = 0; i < job->nnodes; i++)
        contend_json_int(&j, NULL, job->node_leaf[i]);
      contend_json_arr_end(&j);
      contend_json_arr_begin(&j, "pods");
      for (int i = 0; i < job->nnodes; i++)
        contend_json_int(&j, NULL, job->node_pod[i]);
      contend_json_arr_end(&j);
    }
    contend_json_int(&j, "ranks", r->job_ranks[q]);
    contend_json_int(&j, "repeat", job->repeat);
    contend_traffic sum;
    contend_traffic_init(&sum);
    contend_json_arr_begin(&j, "motifs");
    for (int k = 0; k < job->nmotifs; k++) {
      const int g = r->first[q] + k;
      const contend_minfo *mi = &r->mi[g];
      const contend_motif *m = job->motifs[k].motif;
      contend_traffic_merge(&sum, &mi->traffic);
      contend_json_obj_begin(&j, NULL);
      contend_json_str(&j, "name", m->name);
      contend_json_str(&j, "label", m->label);
      contend_json_int(&j, "position", k + 1);
      contend_json_int(&j, "line", job->motifs[k].line);
      contend_params_json(&j, "params", &job->motifs[k].params, r->seed);
      contend_json_int(&j, "iterations_per_invocation", mi->iterations);
      contend_json_count(&j, "message_bytes", mi->msg_bytes);
      contend_json_double(&j, "latency_divisor", mi->divisor);
      if (mi->nseries) {
        contend_json_str(&j, "series_key", mi->series_key ? mi->series_key : "series");
        contend_json_arr_begin(&j, "series_values");
        for (int s = 0; s < mi->nseries; s++)
          contend_json_double(&j, NULL, mi->series_value[s]);
        contend_json_arr_end(&j);
      } else {
        contend_json_null(&j, "series_key");
        contend_json_null(&j, "series_values");
      }
      json_traffic(&j, &mi->traffic, r->dry_run);
      contend_json_obj_begin(&j, "results");
      for (int p = 0; p < r->npasses; p++) {
        json_motif_pass(&j, r, p, g);
        vchk += r->m[p][g].verify_checked;
        verr += r->m[p][g].verify_errors;
      }
      contend_json_obj_end(&j);
      if (pi >= 0 && pc >= 0)
        json_ci(&j, r, &r->m[pi][g].time, &r->m[pc][g].time, r->m[pi][g].rep_max,
                r->m[pc][g].rep_max, job->repeat, g);
      else
        contend_json_null(&j, "ci");
      contend_json_obj_end(&j);
    }
    contend_json_arr_end(&j);
    json_traffic(&j, &sum, r->dry_run);
    contend_traffic_free(&sum);
    contend_json_obj_begin(&j, "results");
    for (int p = 0; p < r->npasses; p++) {
      const contend_jres *jr = &r->j[p][q];
      contend_json_obj_begin(&j, pass_name(r->pass[p]));
      json_jstat(&j, "time_s", &jr->time, 1.0);
      contend_json_double(&j, "slowest_rank_mean_s", slowest_mean(jr->rep_max, job->repeat));
      json_repeats(&j, jr->rep_max, job->repeat);
      contend_json_double(&j, "perform_start_s", jr->start_s < 1e299 ? jr->start_s : NAN);
      contend_json_double(&j, "perform_end_s", jr->end_s > -1e299 ? jr->end_s : NAN);
      contend_json_obj_end(&j);
    }
    contend_json_obj_end(&j);
    if (pi >= 0 && pc >= 0)
      json_ci(&j, r, &r->j[pi][q].time, &r->j[pc][q].time, r->j[pi][q].rep_max, r->j[pc][q].rep_max,
              job->repeat, -1);
    else
      contend_json_null(&j, "ci");
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_json_obj_begin(&j, "verify");
  contend_json_bool(&j, "enabled", contend_param_bool(r->opts, "verify"));
  contend_json_count(&j, "checked", vchk);
  contend_json_count(&j, "errors", verr);
  contend_json_obj_end(&j);
  contend_json_obj_end(&j);
}
