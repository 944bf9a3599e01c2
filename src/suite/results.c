/* The results list of a `network`/`load` run: its layout (the same on
 * every rank, from the configuration) and its reduction to rank 0 (with
 * the dry run's traffic and the ring records). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../run/ring_log.h"
#include "../run/traffic_gather.h"
#include "suite.h"

void contend_result_init(contend_result *r, const contend_motif *m, contend_phase ph, int during) {
  r->motif = m;
  r->phase = ph;
  r->during = during;
  contend_hist_reset(&r->fine);
  contend_hist_reset(&r->bulk);
  r->measurements = r->timed_out = r->msg_bytes = r->elapsed_s = r->iters = 0;
  r->ranks = r->verify_errors = r->verify_checked = 0;
}

void contend_run_layout(contend_run *run) {
  const contend_config *cfg = run->cfg;
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const int cong_base = load && (cong_only || contend_param_bool(&cfg->load, "congestor_baseline"));
  /* exactly the results below: every in-process rank holds its list */
  int n = 0, cap = (cong_only ? 0 : cfg->ncanary) + (cong_base ? cfg->ncong : 0) +
                   (load && !cong_only ? cfg->ncanary * (1 + cfg->ncong) : 0);
  run->results = calloc(cap ? (size_t)cap : 1, sizeof *run->results);
  if (!run->results)
    contend_fail("out of memory");
  if (!cong_only)
    for (int t = 0; t < cfg->ncanary; t++)
      contend_result_init(&run->results[n++], contend_motifs[cfg->canary[t]],
                          CONTEND_PHASE_ISOLATED, -1);
  if (cong_base)
    for (int k = 0; k < cfg->ncong; k++)
      contend_result_init(&run->results[n++], contend_motifs[cfg->cong[k]],
                          CONTEND_PHASE_CONGESTOR_ALONE, -1);
  if (load && !cong_only) {
    for (int t = 0; t < cfg->ncanary; t++)
      contend_result_init(&run->results[n++], contend_motifs[cfg->canary[t]],
                          CONTEND_PHASE_CONGESTED, -1);
    for (int t = 0; t < cfg->ncanary; t++)
      for (int k = 0; k < cfg->ncong; k++)
        contend_result_init(&run->results[n++], contend_motifs[cfg->cong[k]],
                            CONTEND_PHASE_CONGESTOR_LOADING, t);
  }
  if (n != cap)
    contend_fail("internal error: %d results laid out for %d", n, cap);
  run->nresults = n;
}

contend_ring_log *contend_run_rings(contend_run *run) {
  if (!run->rings) {
    run->rings = calloc((size_t)run->nresults + 1, sizeof *run->rings);
    if (!run->rings)
      contend_fail("out of memory");
    for (int i = 0; i < run->nresults; i++)
      run->rings[i].whole = run->rings_whole;
  }
  return run->rings;
}

int contend_result_index(const contend_run *run, int motif_index, contend_phase ph, int during) {
  for (int i = 0; i < run->nresults; i++)
    if (run->results[i].motif == contend_motifs[motif_index] && run->results[i].phase == ph &&
        run->results[i].during == during)
      return i;
  return -1;
}

#define REDUCE_BUDGET ((size_t)4 << 20) /* bytes of bucket buffers over all ranks */

/* Histogram j of the reduction: results[j / 2]'s fine (even) or bulk (odd). */
static contend_hist *hist_of(contend_run *run, int j) {
  return j % 2 ? &run->results[j / 2].bulk : &run->results[j / 2].fine;
}

/* Its span's buckets (from the reduced spans) and its count. */
static size_t hist_len(const int64_t *span, int j) {
  const int64_t lo = -span[2 * j], hi = span[2 * j + 1];
  return (size_t)(hi > lo ? hi - lo : 0) + 1;
}

void contend_run_reduce(contend_run *run, contend_group *world) {
  const int n = run->nresults, rank = world->rank;
  /* per histogram, the span of buckets any rank holds [lo, hi): only it
   * travels (thousands of in-process ranks each send every histogram at
   * once; a dry run has none) */
  int64_t *span = malloc(sizeof(int64_t) * ((size_t)n * 4 + 1));
  if (!span)
    contend_fail("out of memory");
  for (int i = 0; i < n; i++) {
    const contend_hist *h[2] = {&run->results[i].fine, &run->results[i].bulk};
    for (int k = 0; k < 2; k++) {
      span[(i * 2 + k) * 2] = h[k]->bucket ? -(int64_t)h[k]->lo : -CONTEND_HIST_NBUCKETS;
      span[(i * 2 + k) * 2 + 1] = h[k]->bucket ? h[k]->lo + h[k]->n : 0;
    }
  }
  contend_gallreduce(world, span, n * 4, CONTEND_DT_INT64, CONTEND_OP_MAX); /* -min lo, max hi */
  /* the buckets travel in batches of whole histograms (each its span's
   * buckets, then its count): every in-process rank holds its batch's
   * buffer while parked in the reduction, so a batch takes at most
   * REDUCE_BUDGET over all ranks (and at least one histogram); a run of
   * few ranks sends them all at once */
  size_t total = 0, longest = 0;
  for (int j = 0; j < 2 * n; j++) {
    total += hist_len(span, j);
    longest = hist_len(span, j) > longest ? hist_len(span, j) : longest;
  }
  size_t cap = REDUCE_BUDGET / sizeof(int64_t) / (size_t)(world->size > 0 ? world->size : 1);
  cap = cap < longest ? longest : cap > total ? total : cap;
  int64_t *u = malloc(sizeof(int64_t) * (cap + 1));
  double *sum = malloc(sizeof(double) * ((size_t)n * 7 + 1));
  double *mn = malloc(sizeof(double) * ((size_t)n * 2 + 1));
  double *mx = malloc(sizeof(double) * ((size_t)n * 7 + 1));
  if (!u || !sum || !mn || !mx)
    contend_fail("out of memory");
  for (int i = 0; i < n; i++) {
    contend_result *r = &run->results[i];
    const contend_hist *h[2] = {&r->fine, &r->bulk};
    for (int k = 0; k < 2; k++) {
      sum[i * 7 + 2 * k] = h[k]->sum;
      sum[i * 7 + 2 * k + 1] = h[k]->sumsq;
      mn[i * 2 + k] = h[k]->min;
      mx[i * 7 + k] = h[k]->max;
    }
    sum[i * 7 + 4] = r->ranks;
    sum[i * 7 + 5] = r->verify_errors;
    sum[i * 7 + 6] = r->verify_checked;
    mx[i * 7 + 2] = r->measurements;
    mx[i * 7 + 3] = r->timed_out;
    mx[i * 7 + 4] = r->msg_bytes;
    mx[i * 7 + 5] = r->elapsed_s;
    mx[i * 7 + 6] = r->iters;
  }
  for (int j0 = 0; j0 < 2 * n;) { /* histogram j: results[j / 2], fine or bulk */
    int j1 = j0;
    size_t at = 0;
    for (; j1 < 2 * n && at + hist_len(span, j1) <= cap; at += hist_len(span, j1++)) {
      const contend_hist *h = hist_of(run, j1);
      const int lo = (int)-span[2 * j1], hi = (int)span[2 * j1 + 1];
      for (int b = lo; b < hi; b++)
        u[at + (size_t)(b - lo)] = (int64_t)contend_hist_at(h, b);
      u[at + hist_len(span, j1) - 1] = (int64_t)h->count;
    }
    contend_greduce(world, u, (int)at, CONTEND_DT_INT64, CONTEND_OP_SUM);
    for (at = 0; rank == 0 && j0 < j1; at += hist_len(span, j0++)) {
      contend_hist *h = hist_of(run, j0);
      const int lo = (int)-span[2 * j0], hi = (int)span[2 * j0 + 1];
      const int64_t *d = u + at;
      const int nb = (int)hist_len(span, j0) - 1;
      if (d[nb] > 0) { /* samples: buckets */
        uint64_t *bk = contend_hist_buckets(h);
        memset(bk, 0, sizeof *bk * CONTEND_HIST_NBUCKETS);
        for (int b = lo; b < hi; b++)
          bk[b] = (uint64_t)d[b - lo];
      }
      h->count = (uint64_t)d[nb];
    }
    j0 = j1;
  }
  contend_greduce(world, sum, n * 7, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  contend_greduce(world, mn, n * 2, CONTEND_DT_DOUBLE, CONTEND_OP_MIN);
  contend_greduce(world, mx, n * 7, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  if (rank == 0)
    for (int i = 0; i < n; i++) {
      contend_result *r = &run->results[i];
      contend_hist *h[2] = {&r->fine, &r->bulk};
      for (int k = 0; k < 2; k++) {
        h[k]->sum = sum[i * 7 + 2 * k];
        h[k]->sumsq = sum[i * 7 + 2 * k + 1];
        h[k]->min = mn[i * 2 + k];
        h[k]->max = mx[i * 7 + k];
      }
      r->ranks = sum[i * 7 + 4];
      r->verify_errors = sum[i * 7 + 5];
      r->verify_checked = sum[i * 7 + 6];
      r->measurements = mx[i * 7 + 2];
      r->timed_out = mx[i * 7 + 3];
      r->msg_bytes = mx[i * 7 + 4];
      r->elapsed_s = mx[i * 7 + 5];
      r->iters = mx[i * 7 + 6];
    }
  free(u);
  free(span);
  free(sum);
  free(mn);
  free(mx);
  if (run->traffic) /* the recorded steps of every rank to rank 0 */
    contend_traffic_gather(world, run->traffic, run->traffic, run->nresults);
  if (run->want_rings) /* the ring records, kept by one rank per test */
    contend_ring_log_gather(world, run->rings, run->nresults);
}
