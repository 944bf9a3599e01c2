#include "contend/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Buckets: bucket 0 holds (-inf, LO]; bucket i >= 1 holds
 * (LO*g^(i-1), LO*g^i] with g = (1+e)/(1-e); the representative value
 * 2*upper/(g+1) is then within relative error e of any value in it. */
static double g_gamma(void) { return (1.0 + CONTEND_HIST_REL_ERR) / (1.0 - CONTEND_HIST_REL_ERR); }

void contend_hist_reset(contend_hist *h) {
  memset(h, 0, sizeof *h);
  h->min = INFINITY;
  h->max = -INFINITY;
}

void contend_hist_free(contend_hist *h) {
  free(h->bucket);
  h->bucket = NULL;
}

/* Makes the window cover buckets [lo, hi) (and what it held). */
static void cover(contend_hist *h, int lo, int hi) {
  if (h->bucket) {
    if (lo >= h->lo && hi <= h->lo + h->n)
      return;
    if (h->lo < lo)
      lo = h->lo;
    if (h->lo + h->n > hi)
      hi = h->lo + h->n;
  }
  if (lo < 0)
    lo = 0;
  if (hi > CONTEND_HIST_NBUCKETS)
    hi = CONTEND_HIST_NBUCKETS;
  uint64_t *b = calloc((size_t)(hi - lo), sizeof *b);
  if (!b)
    abort();
  if (h->bucket)
    memcpy(b + (h->lo - lo), h->bucket, sizeof *b * (size_t)h->n);
  free(h->bucket);
  h->bucket = b;
  h->lo = lo;
  h->n = hi - lo;
}

uint64_t *contend_hist_buckets(contend_hist *h) {
  cover(h, 0, CONTEND_HIST_NBUCKETS);
  return h->bucket;
}

int contend_hist_index(double v) {
  if (!(v > CONTEND_HIST_LO))
    return 0; /* also NaN */
  double k = ceil(log(v / CONTEND_HIST_LO) / log(g_gamma()));
  if (k >= CONTEND_HIST_NBUCKETS - 1)
    return CONTEND_HIST_NBUCKETS - 1;
  if (k < 1)
    k = 1;
  return (int)k;
}

double contend_hist_lower(int idx) {
  if (idx <= 0)
    return 0.0;
  return CONTEND_HIST_LO * pow(g_gamma(), idx - 1);
}

double contend_hist_upper(int idx) {
  if (idx >= CONTEND_HIST_NBUCKETS - 1)
    return INFINITY;
  return CONTEND_HIST_LO * pow(g_gamma(), idx);
}

void contend_hist_add(contend_hist *h, double v) {
  h->count++;
  h->sum += v;
  h->sumsq += v * v;
  if (v < h->min)
    h->min = v;
  if (v > h->max)
    h->max = v;
  const int i = contend_hist_index(v);
  if (!h->bucket || i < h->lo || i >= h->lo + h->n) {
    /* the first sample's bucket alone (a histogram of one sample, as
     * every in-process rank holds per test at small counts, costs one
     * bucket); then room around the sample: half again the span held,
     * at least 16 */
    const int slack = !h->bucket ? 0 : h->n / 2 > 16 ? h->n / 2 : 16;
    cover(h, i - slack, i + 1 + slack);
  }
  h->bucket[i - h->lo]++;
}

void contend_hist_merge(contend_hist *into, const contend_hist *from) {
  into->count += from->count;
  into->sum += from->sum;
  into->sumsq += from->sumsq;
  if (from->min < into->min)
    into->min = from->min;
  if (from->max > into->max)
    into->max = from->max;
  if (!from->bucket)
    return;
  cover(into, from->lo, from->lo + from->n);
  for (int i = 0; i < from->n; i++)
    into->bucket[from->lo + i - into->lo] += from->bucket[i];
}

double contend_hist_quantile(const contend_hist *h, double q) {
  if (h->count == 0 || !h->bucket)
    return NAN;
  if (q <= 0)
    return h->min;
  if (q >= 1)
    return h->max;
  /* nearest rank: the k-th smallest sample, k = ceil(q*n) (1-based) */
  uint64_t k = (uint64_t)ceil(q * (double)h->count);
  if (k < 1)
    k = 1;
  uint64_t seen = 0;
  int idx = h->lo;
  for (; idx < h->lo + h->n; idx++) {
    seen += h->bucket[idx - h->lo];
    if (seen >= k)
      break;
  }
  if (idx >= h->lo + h->n)
    idx = CONTEND_HIST_NBUCKETS - 1; /* (counts short of count: the maximum) */
  double v;
  if (idx == 0)
    v = h->min; /* underflow bucket: best estimate is the exact minimum */
  else if (idx >= CONTEND_HIST_NBUCKETS - 1)
    v = h->max;
  else
    v = 2.0 * contend_hist_upper(idx) / (g_gamma() + 1.0);
  if (v < h->min)
    v = h->min;
  if (v > h->max)
    v = h->max;
  return v;
}

double contend_hist_mean(const contend_hist *h) {
  return h->count ? h->sum / (double)h->count : NAN;
}

double contend_hist_stddev(const contend_hist *h) {
  if (h->count < 2)
    return h->count ? 0.0 : NAN;
  double n = (double)h->count, m = h->sum / n;
  double var = (h->sumsq - n * m * m) / (n - 1);
  return var > 0 ? sqrt(var) : 0.0;
}

void contend_summarize(const contend_hist *h, int higher_is_better, contend_summary *s) {
  s->count = h->count;
  s->mean = contend_hist_mean(h);
  s->stddev = contend_hist_stddev(h);
  s->min = h->count ? h->min : NAN;
  s->max = h->count ? h->max : NAN;
  s->p0_1 = contend_hist_quantile(h, 0.001);
  s->p1 = contend_hist_quantile(h, 0.01);
  s->p50 = contend_hist_quantile(h, 0.5);
  s->p99 = contend_hist_quantile(h, 0.99);
  s->p99_9 = contend_hist_quantile(h, 0.999);
  s->tail_99 = higher_is_better ? s->p1 : s->p99;
  s->tail_99_9 = higher_is_better ? s->p0_1 : s->p99_9;
}
