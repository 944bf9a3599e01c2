/* The collective gathers of a jobs run (see orch.h): motif facts after
 * setup, the first setup failure, per-pass statistics and samples, and
 * the traffic per node pair, all through the control plane. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../run/traffic_gather.h"
#include "orch.h"

/* Motif facts known after setup (same on every rank afterwards). */
void contend_jobs_share_minfo(contend_jobs_rank *x) {
  contend_jobs_run *r = x->r;
  const int n = r->nm;
  double *v = calloc((size_t)n * 4 + 1, sizeof(double));
  if (!v)
    contend_fail("out of memory");
  if (x->my_job >= 0)
    for (int k = 0; k < x->jf->jobs[x->my_job].nmotifs; k++) {
      const contend_ctx *c = &x->ctx[k];
      const int g = r->first[x->my_job] + k;
      long rings, warmup, iters;
      contend_job_loop(c, &rings, &warmup, &iters);
      v[4 * g] = (double)(rings * (warmup + iters));
      v[4 * g + 1] = (double)c->msg_bytes;
      /* bandwidth motifs: metric_scale is MiB per iteration, not a divisor */
      v[4 * g + 2] = x->jf->jobs[x->my_job].motifs[k].motif->metric == CONTEND_METRIC_BW_MIB_S
                         ? 1
                         : c->metric_scale;
      v[4 * g + 3] = c->nseries;
    }
  contend_gallreduce(x->world, v, n * 4, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  int total = 0;
  for (int g = 0; g < n; g++) {
    r->mi[g].iterations = (long)v[4 * g];
    r->mi[g].msg_bytes = v[4 * g + 1];
    r->mi[g].divisor = v[4 * g + 2] > 0 ? v[4 * g + 2] : 1;
    r->mi[g].nseries = (int)v[4 * g + 3];
    total += r->mi[g].nseries;
  }
  free(v);
  double *sv = calloc((size_t)total + 1, sizeof(double));
  if (!sv)
    contend_fail("out of memory");
  for (int g = 0, o = 0; g < n; o += r->mi[g].nseries, g++)
    if (x->my_job == r->mi[g].job) {
      const contend_ctx *c = &x->ctx[r->mi[g].pos];
      for (int s = 0; s < c->nseries; s++)
        sv[o + s] = c->series_value[s];
    }
  contend_gallreduce(x->world, sv, total, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  for (int g = 0, o = 0; g < n; o += r->mi[g].nseries, g++) {
    if (!r->mi[g].nseries)
      continue;
    r->mi[g].series_value = malloc(sizeof(double) * (size_t)r->mi[g].nseries);
    if (!r->mi[g].series_value)
      contend_fail("out of memory");
    memcpy(r->mi[g].series_value, sv + o, sizeof(double) * (size_t)r->mi[g].nseries);
    r->mi[g].series_key = x->jf->jobs[r->mi[g].job].motifs[r->mi[g].pos].motif->series_key;
  }
  free(sv);
  contend_jobs_run_series(r);
  for (int g = 0; g < n; g++)
    x->sinks[g].nseries = r->mi[g].nseries;
}

/* After a failed decompose: the first failure's message at rank 0
 * (collective over world).  Returns 1 if any motif failed. */
int contend_jobs_setup_failure(contend_jobs_rank *x, int fail_job, int fail_pos, const char *msg,
                               char *out, size_t outlen) {
  /* severity 2: this rank has the reason; 1: failed without one */
  int mine[3] = {fail_job >= 0 ? (msg && *msg ? 2 : 1) : 0, fail_job, fail_pos};
  int *all = x->world->rank == 0 ? malloc(sizeof(int) * 3 * (size_t)x->world->size) : NULL;
  contend_ggather(x->world, mine, sizeof mine, all);
  int who = -1;
  if (x->world->rank == 0) {
    for (int q = 0; q < x->world->size; q++) {
      if (!all[3 * q])
        continue;
      if (who < 0 || all[3 * q] > all[3 * who] ||
          (all[3 * q] == all[3 * who] &&
           (all[3 * q + 1] < all[3 * who + 1] ||
            (all[3 * q + 1] == all[3 * who + 1] && all[3 * q + 2] < all[3 * who + 2]))))
        who = q;
    }
  }
  contend_gbcast(x->world, &who, sizeof who);
  if (who < 0) {
    free(all);
    return 0;
  }
  char text[256] = "";
  if (who == x->world->rank && msg)
    snprintf(text, sizeof text, "%s", msg);
  /* the reason travels to rank 0 with everyone's (empty) text */
  char *texts = x->world->rank == 0 ? malloc(sizeof text * (size_t)x->world->size) : NULL;
  contend_ggather(x->world, text, sizeof text, texts);
  if (x->world->rank == 0) {
    memcpy(text, texts + (size_t)who * sizeof text, sizeof text);
    text[sizeof text - 1] = 0;
  }
  free(texts);
  if (x->world->rank == 0) {
    const int j = all[3 * who + 1], k = all[3 * who + 2];
    const contend_job *job = &x->jf->jobs[j];
    snprintf(out, outlen, "%s:%d: motif '%s' of job '%s' failed in the decompose phase: %s",
             x->jf->path, job->motifs[k].line, job->motifs[k].motif->name, job->name,
             *text ? text : "setup failed");
  }
  free(all);
  return 1;
}

/* Reduces one pass's statistics to rank 0 (collective over world). */
void contend_jobs_reduce_pass(contend_jobs_rank *x, int p) {
  contend_jobs_run *r = x->r;
  const contend_jobfile *jf = x->jf;
  size_t ns = 0, nn = 0, nx = 0;
  /* count */
  for (int g = 0; g < r->nm; g++) {
    const long R = jf->jobs[r->mi[g].job].repeat;
    ns += 11 + 3 * (size_t)r->mi[g].nseries; /* time, hist, verify, io, net_gbps; series */
    nn += 3 + (size_t)r->mi[g].nseries;
    nx += 1 + 1 + 1 + (size_t)R + (size_t)r->mi[g].nseries;
  }
  for (int j = 0; j < jf->njobs; j++) {
    ns += 3;
    nn += 2;
    nx += 2 + (size_t)jf->jobs[j].repeat;
  }
  double *S = calloc(ns + 1, sizeof(double)), *N = calloc(nn + 1, sizeof(double)),
         *X = calloc(nx + 1, sizeof(double));
  if (!S || !N || !X)
    contend_fail("out of memory");
  for (int dir = 0; dir < 2; dir++) { /* 0: pack, 1: unpack */
    size_t a = 0, b = 0, c = 0;
#define SUMV(v)                                                                                    \
  do {                                                                                             \
    if (dir)                                                                                       \
      (v) = S[a++];                                                                                \
    else                                                                                           \
      S[a++] = (v);                                                                                \
  } while (0)
#define MINV(v)                                                                                    \
  do {                                                                                             \
    if (dir)                                                                                       \
      (v) = N[b++];                                                                                \
    else                                                                                           \
      N[b++] = (v);                                                                                \
  } while (0)
#define MAXV(v)                                                                                    \
  do {                                                                                             \
    if (dir)                                                                                       \
      (v) = X[c++];                                                                                \
    else                                                                                           \
      X[c++] = (v);                                                                                \
  } while (0)
    for (int g = 0; g < r->nm; g++) {
      contend_mres *m = &r->m[p][g];
      const long R = jf->jobs[r->mi[g].job].repeat;
      SUMV(m->time.n);
      SUMV(m->time.sum);
      SUMV(m->time.sumsq);
      MINV(m->time.min);
      MAXV(m->time.max);
      SUMV(m->iter_us.sum);
      SUMV(m->iter_us.sumsq);
      MINV(m->iter_us.min);
      MAXV(m->iter_us.max);
      SUMV(m->verify_errors);
      SUMV(m->verify_checked);
      SUMV(m->io_bytes);
      SUMV(m->net_gbps.n);
      SUMV(m->net_gbps.sum);
      SUMV(m->net_gbps.sumsq);
      MINV(m->net_gbps.min);
      MAXV(m->net_gbps.max);
      for (long q = 0; q < R; q++)
        MAXV(m->rep_max[q]);
      for (int s = 0; s < r->mi[g].nseries; s++) {
        SUMV(m->series[s].n);
        SUMV(m->series[s].sum);
        SUMV(m->series[s].sumsq);
        MINV(m->series[s].min);
        MAXV(m->series[s].max);
      }
    }
    for (int j = 0; j < jf->njobs; j++) {
      contend_jres *jr = &r->j[p][j];
      SUMV(jr->time.n);
      SUMV(jr->time.sum);
      SUMV(jr->time.sumsq);
      MINV(jr->time.min);
      MINV(jr->start_s);
      MAXV(jr->time.max);
      MAXV(jr->end_s);
      for (long q = 0; q < jf->jobs[j].repeat; q++)
        MAXV(jr->rep_max[q]);
    }
#undef SUMV
#undef MINV
#undef MAXV
    if (dir == 0) {
      contend_greduce(x->world, S, (int)a, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
      contend_greduce(x->world, N, (int)b, CONTEND_DT_DOUBLE, CONTEND_OP_MIN);
      contend_greduce(x->world, X, (int)c, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
      if (x->world->rank != 0)
        break;
    }
  }
  free(S);
  free(N);
  free(X);
  /* histogram buckets and counts */
  for (int g = 0; g < r->nm; g++) {
    contend_hist *h = &r->m[p][g].iter_us;
    int64_t v[CONTEND_HIST_NBUCKETS + 1];
    for (int q = 0; q < CONTEND_HIST_NBUCKETS; q++)
      v[q] = (int64_t)contend_hist_at(h, q);
    v[CONTEND_HIST_NBUCKETS] = (int64_t)h->count;
    contend_greduce(x->world, v, CONTEND_HIST_NBUCKETS + 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
    if (x->world->rank == 0) {
      h->count = (uint64_t)v[CONTEND_HIST_NBUCKETS];
      if (h->count > 0) {
        uint64_t *b = contend_hist_buckets(h);
        for (int q = 0; q < CONTEND_HIST_NBUCKETS; q++)
          b[q] = (uint64_t)v[q];
      }
    }
  }
  /* samples: gathered to rank 0 */
  if (x->max_samples > 0)
    for (int g = 0; g < r->nm; g++) {
      size_t *counts = x->world->rank == 0 ? malloc(sizeof(size_t) * (size_t)x->world->size) : NULL;
      double *all = contend_ggatherv(x->world, x->sinks[g].samples,
                                     sizeof(double) * (size_t)x->sinks[g].n, counts);
      if (x->world->rank == 0) {
        size_t total = 0;
        for (int q = 0; q < x->world->size; q++)
          total += counts[q] / sizeof(double);
        r->m[p][g].samples = all;
        r->m[p][g].nsamples = (long)total;
      }
      free(counts);
      x->sinks[g].n = 0;
    }
}

/* Gathers every rank's traffic of the last pass into r->mi[].traffic at
 * rank 0 (collective over world). */
void contend_jobs_gather_traffic(contend_jobs_rank *x) {
  contend_traffic *into = NULL;
  if (x->world->rank == 0) {
    into = calloc((size_t)x->r->nm + 1, sizeof *into);
    if (!into)
      contend_fail("out of memory");
  }
  contend_traffic_gather(x->world, x->tr, into, x->r->nm);
  if (x->world->rank == 0)
    for (int g = 0; g < x->r->nm; g++) {
      contend_traffic_merge(&x->r->mi[g].traffic, &into[g]);
      contend_traffic_free(&into[g]);
    }
  free(into);
}
