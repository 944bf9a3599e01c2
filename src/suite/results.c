/* The results list of a `network`/`load` run: its layout (the same on
 * every rank, from the configuration) and its reduction to rank 0. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "suite.h"

void contend_run_layout(contend_run *run) {
  const contend_config *cfg = run->cfg;
  int n = 0, cap = 2 * cfg->ncanary + cfg->ncong * (1 + cfg->ncanary) + 1;
  run->results = calloc((size_t)cap, sizeof *run->results);
  if (!run->results)
    contend_fail("out of memory");
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const int cong_base = load && (cong_only || contend_param_bool(&cfg->load, "congestor_baseline"));
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
  run->nresults = n;
}

int contend_result_index(const contend_run *run, int motif_index, contend_phase ph, int during) {
  for (int i = 0; i < run->nresults; i++)
    if (run->results[i].motif == contend_motifs[motif_index] && run->results[i].phase == ph &&
        run->results[i].during == during)
      return i;
  return -1;
}

/* The recorded steps of every rank to rank 0: rows of (result, kind,
 * src, dst, bytes, msgs), kind 0 exact, 1 estimated, 2 a collective call
 * count (src = kind of collective). */
static void gather_traffic(contend_run *run, contend_group *world) {
  const int K = 6;
  size_t n = 0;
  for (int i = 0; i < run->nresults; i++)
    n += run->traffic[i].flows.n + run->traffic[i].estimated.n + CONTEND_COLL_N;
  double *mine = malloc(sizeof(double) * (size_t)K * (n ? n : 1));
  if (!mine)
    contend_fail("out of memory");
  size_t o = 0;
  for (int i = 0; i < run->nresults; i++) {
    const contend_flowmap *maps[2] = {&run->traffic[i].flows, &run->traffic[i].estimated};
    for (int kind = 0; kind < 2; kind++) {
      size_t nf;
      contend_flow *f = contend_flows_sorted(maps[kind], &nf);
      for (size_t q = 0; q < nf; q++) {
        const double row[6] = {i, kind, f[q].src, f[q].dst, f[q].bytes, f[q].msgs};
        memcpy(mine + o, row, sizeof row);
        o += K;
      }
      free(f);
    }
    for (int k = 0; k < CONTEND_COLL_N; k++)
      if (run->traffic[i].coll_calls[k] > 0) {
        const double row[6] = {i, 2, k, 0, run->traffic[i].coll_bytes[k],
                               run->traffic[i].coll_calls[k]};
        memcpy(mine + o, row, sizeof row);
        o += K;
      }
  }
  size_t counts_total = 0;
  (void)counts_total;
  size_t *counts = world->rank == 0 ? malloc(sizeof(size_t) * (size_t)world->size) : NULL;
  double *all = contend_ggatherv(world, mine, o * sizeof(double), counts);
  free(mine);
  for (int i = 0; i < run->nresults; i++)
    contend_traffic_reset(&run->traffic[i]);
  if (world->rank == 0) {
    size_t rows = 0;
    for (int q = 0; q < world->size; q++)
      rows += counts[q] / (sizeof(double) * K);
    for (size_t q = 0; q < rows; q++) {
      const double *row = all + q * K;
      contend_traffic *t = &run->traffic[(int)row[0]];
      if (row[1] < 2)
        contend_flow_add(row[1] == 0 ? &t->flows : &t->estimated, (int)row[2], (int)row[3],
                         row[4], row[5]);
      else {
        t->coll_calls[(int)row[2]] += row[5];
        t->coll_bytes[(int)row[2]] += row[4];
      }
    }
  }
  free(all);
  free(counts);
}

void contend_run_reduce(contend_run *run, contend_group *world) {
  const int n = run->nresults, NB = CONTEND_HIST_NBUCKETS, rank = world->rank;
  const size_t nu = (size_t)n * 2 * (NB + 1);
  int64_t *u = malloc(sizeof(int64_t) * (nu + 1));
  double *sum = malloc(sizeof(double) * ((size_t)n * 7 + 1));
  double *mn = malloc(sizeof(double) * ((size_t)n * 2 + 1));
  double *mx = malloc(sizeof(double) * ((size_t)n * 6 + 1));
  if (!u || !sum || !mn || !mx)
    contend_fail("out of memory");
  for (int i = 0; i < n; i++) {
    contend_result *r = &run->results[i];
    const contend_hist *h[2] = {&r->fine, &r->bulk};
    for (int k = 0; k < 2; k++) {
      int64_t *d = u + ((size_t)i * 2 + k) * (NB + 1);
      for (int b = 0; b < NB; b++)
        d[b] = (int64_t)h[k]->bucket[b];
      d[NB] = (int64_t)h[k]->count;
      sum[i * 7 + 2 * k] = h[k]->sum;
      sum[i * 7 + 2 * k + 1] = h[k]->sumsq;
      mn[i * 2 + k] = h[k]->min;
      mx[i * 6 + k] = h[k]->max;
    }
    sum[i * 7 + 4] = r->ranks;
    sum[i * 7 + 5] = r->verify_errors;
    sum[i * 7 + 6] = r->verify_checked;
    mx[i * 6 + 2] = r->measurements;
    mx[i * 6 + 3] = r->timed_out;
    mx[i * 6 + 4] = r->msg_bytes;
    mx[i * 6 + 5] = r->elapsed_s;
  }
  contend_greduce(world, u, (int)nu, CONTEND_DT_INT64, CONTEND_OP_SUM);
  contend_greduce(world, sum, n * 7, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  contend_greduce(world, mn, n * 2, CONTEND_DT_DOUBLE, CONTEND_OP_MIN);
  contend_greduce(world, mx, n * 6, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  if (rank == 0)
    for (int i = 0; i < n; i++) {
      contend_result *r = &run->results[i];
      contend_hist *h[2] = {&r->fine, &r->bulk};
      for (int k = 0; k < 2; k++) {
        const int64_t *d = u + ((size_t)i * 2 + k) * (NB + 1);
        for (int b = 0; b < NB; b++)
          h[k]->bucket[b] = (uint64_t)d[b];
        h[k]->count = (uint64_t)d[NB];
        h[k]->sum = sum[i * 7 + 2 * k];
        h[k]->sumsq = sum[i * 7 + 2 * k + 1];
        h[k]->min = mn[i * 2 + k];
        h[k]->max = mx[i * 6 + k];
      }
      r->ranks = sum[i * 7 + 4];
      r->verify_errors = sum[i * 7 + 5];
      r->verify_checked = sum[i * 7 + 6];
      r->measurements = mx[i * 6 + 2];
      r->timed_out = mx[i * 6 + 3];
      r->msg_bytes = mx[i * 6 + 4];
      r->elapsed_s = mx[i * 6 + 5];
    }
  free(u);
  free(sum);
  free(mn);
  free(mx);
  if (run->traffic)
    gather_traffic(run, world);
}
