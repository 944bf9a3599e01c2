/* contend: streaming statistics with bounded memory.
 *
 * A contend_hist keeps the exact count, sum, sum of squares, min and max of
 * the samples, and a log-bucketed histogram whose quantiles are within
 * CONTEND_HIST_REL_ERR relative error of the exact order statistic
 * (nearest-rank definition, numpy's method="inverted_cdf"), clamped to
 * [min, max] so percentiles are always consistent with the extremes.
 * Histograms of equal layout merge by adding fields (MPI_SUM on counts,
 * MIN/MAX on extremes), so per-rank histograms reduce to a global one.
 * Memory is bounded (at most about 11 KiB) whatever the number of
 * samples: only the span of buckets the samples fell in is held, a few
 * dozen for one rank's samples of one test. */
#ifndef CONTEND_STATS_H
#define CONTEND_STATS_H

#include <stdint.h>

#define CONTEND_HIST_REL_ERR 0.01
/* Values below LO go to bucket 0, above HI to the last bucket (min/max
 * stay exact).  Units are the metric's (us or MiB/s). */
#define CONTEND_HIST_LO 1e-3
#define CONTEND_HIST_HI 1e9
#define CONTEND_HIST_NBUCKETS 1400

/* The buckets are allocated at the first sample, as a window that grows
 * to cover the samples (a histogram that never gets one costs its header
 * only: thousands of in-process ranks each hold every result of a run);
 * its owner frees them with contend_hist_free.  Copying a contend_hist
 * copies the pointer. */
typedef struct contend_hist {
  double sum, sumsq, min, max; /* min = +inf, max = -inf when empty */
  uint64_t count;
  uint64_t *bucket; /* counts of buckets lo .. lo + n - 1, or NULL: all zero */
  int lo, n;
} contend_hist;

/* Makes h empty without reading it (any buckets it held are forgotten:
 * free them first). */
void contend_hist_reset(contend_hist *h);
void contend_hist_free(contend_hist *h);
/* The count of bucket b (0 .. CONTEND_HIST_NBUCKETS - 1). */
static inline uint64_t contend_hist_at(const contend_hist *h, int b) {
  return h->bucket && b >= h->lo && b < h->lo + h->n ? h->bucket[b - h->lo] : 0;
}
/* Every bucket, CONTEND_HIST_NBUCKETS counts indexed by bucket (the
 * window widened to all of them, zeroed where new): for code that fills a
 * histogram from a reduction. */
uint64_t *contend_hist_buckets(contend_hist *h);
void contend_hist_add(contend_hist *h, double v);
void contend_hist_merge(contend_hist *into, const contend_hist *from);

/* Bucket of a value, and the bounds of a bucket: (lower, upper]. */
int contend_hist_index(double v);
double contend_hist_lower(int idx);
double contend_hist_upper(int idx);

/* Quantile q in [0,1]; NaN when empty. */
double contend_hist_quantile(const contend_hist *h, double q);
double contend_hist_mean(const contend_hist *h);
double contend_hist_stddev(const contend_hist *h);

/* Summary computed from one histogram.  "tail" statistics are the values
 * 99 % (99.9 %) of samples are better than: the upper quantile for a
 * latency, the lower quantile for a bandwidth (GPCNeT's "99%" column). */
typedef struct contend_summary {
  uint64_t count;
  double mean, stddev, min, max, p0_1, p1, p50, p99, p99_9, tail_99, tail_99_9;
} contend_summary;

void contend_summarize(const contend_hist *h, int higher_is_better, contend_summary *s);

#endif
