/* The measurement driver (see driver.h): rounds, warm-up, timed
 * iterations or blocks, series, verification, traffic attachment, ring
 * records. */
#include "driver.h"

#include <stdlib.h>

#include "../core/error.h"

/* The random stream of round r of measurement mi: the same on every rank
 * of the group. */
static void round_rng(const contend_ctx *c, const contend_drive *d, long mi, long r,
                      contend_rng *rng) {
  contend_rng_init(rng, c->seed, d->rng_kind, d->rng_id, d->rng_first + (uint64_t)mi, (uint64_t)r);
}

/* Scratch for one ring (c->size ranks), or NULL when no ring is reported. */
static int *ring_scratch(const contend_ctx *c, const contend_motif *m, const contend_drive *d) {
  if (!d->ring || !m->ring_of || c->size < 1)
    return NULL;
  int *order = malloc(sizeof(int) * (size_t)c->size);
  if (!order)
    contend_fail("out of memory");
  return order;
}

/* Asks the motif for the ring of the round whose stream is rng (a copy:
 * the round hook gets the stream untouched) and reports it. */
static void report_ring(contend_ctx *c, const contend_motif *m, const contend_drive *d, long mi,
                        long r, contend_rng rng, int *order) {
  if (m->ring_of(c, &rng, order))
    d->ring(d->arg, mi, r, order, c->size);
}

static inline void attach(contend_ctx *c, contend_traffic *t) {
  if (t)
    c->ops->count(c, t);
}
static inline void detach(contend_ctx *c, contend_traffic *t) {
  if (t)
    c->ops->count(c, NULL);
}

/* Block timing: each run of consecutive iterations of one series is timed
 * as a whole, one clock read before and one after.  Untimed ranks of such
 * a motif (the ping-pong responder) run the same tight loop: they are on
 * the critical path of every round trip.  Returns the timed sum; *span as
 * contend_drive.after. */
static double run_blocks(contend_ctx *c, const contend_motif *m, const contend_drive *d, long base,
                         int timed, double *span) {
  const long warmup = d->warmup, iters = d->iters;
  double total = 0, first = -1, last = 0;
  for (long i = -warmup; i < iters;) {
    long n;
    int s;
    c->iter = base + i + warmup;
    if (i < 0) { /* warm-up */
      s = -1;
      n = -i;
    } else if (m->series_of) {
      s = m->series_of(c, &n);
    } else {
      s = 0;
      n = iters - i;
    }
    if (n < 1 || n > iters - i)
      n = iters - i > 0 ? iters - i : 1;
    c->series = s;
    const long it0 = c->iter;
    const int t = timed && s >= 0;
    const double t0 = t ? d->clock->now() : 0;
    if (m->iterate_block) {
      m->iterate_block(c, n);
      c->iter = it0 + n - 1;
    } else {
      for (long k = 0; k < n; k++) {
        c->iter = it0 + k;
        m->iterate(c);
      }
    }
    if (t) {
      const double t1 = d->clock->now(), dt = t1 - t0;
      if (first < 0)
        first = t0;
      last = t1;
      total += dt;
      if (d->sample)
        d->sample(d->arg, s, dt / (double)n, n);
    }
    i += n;
  }
  *span = first >= 0 ? last - first : 0;
  return total;
}

/* Samples of run_plain kept between clock reads and handed to d->sample
 * in batches: per-iteration bookkeeping (a histogram update: a logarithm,
 * a bucket) between two timed iterations delays this rank's next message,
 * which its partners' timed iterations wait for. */
enum { PLAIN_BATCH = 256 }; /* doubles on the stack: fiber stacks are small */

static void flush_samples(const contend_drive *d, const double *dt, int n) {
  for (int k = 0; k < n; k++)
    d->sample(d->arg, 0, dt[k], 1);
}

/* The common case of a round timed iteration by iteration: no
 * verification, no series, nothing recorded.  As tight as a hand-written
 * latency loop: one clock read before and one after each iteration, the
 * duration stored, nothing else in between (see PLAIN_BATCH). */
static double run_plain(contend_ctx *c, const contend_motif *m, const contend_drive *d, long base,
                        int timed, double *span) {
  void (*const iterate)(contend_ctx *) = m->iterate;
  double (*const now)(void) = timed ? d->clock->now : NULL;
  const long warmup = d->warmup, iters = d->iters;
  c->series = -1;
  for (long i = -warmup; i < 0; i++) {
    c->iter = base + i + warmup;
    iterate(c);
  }
  c->series = 0;
  if (!timed) {
    for (long i = 0; i < iters; i++) {
      c->iter = base + i + warmup;
      iterate(c);
    }
    *span = 0;
    return 0;
  }
  /* no more room than the iterations need: every in-process rank's stack
   * costs the pages its deepest moment touched */
  const int batch = iters < PLAIN_BATCH ? (int)(iters > 0 ? iters : 1) : PLAIN_BATCH;
  double total = 0, first = 0, t1 = 0, dt[batch];
  int nb = 0;
  /* an iteration that is one RMA epoch goes to the engine directly: the
   * dispatch through the motif is a tenth of an 8-byte get on shared memory */
  int nx = 0;
  const contend_rma *x = m->epoch_of && c->ops->rma_epoch ? m->epoch_of(c, &nx) : NULL;
  void (*const epoch)(contend_ctx *, const contend_rma *, int) = c->ops->rma_epoch;
  for (long i = 0; i < iters; i++) {
    c->iter = base + i + warmup;
    const double t0 = now();
    if (x)
      epoch(c, x, nx);
    else
      iterate(c);
    t1 = now();
    if (i == 0)
      first = t0;
    total += t1 - t0;
    dt[nb++] = t1 - t0;
    if (nb == batch) {
      if (d->sample)
        flush_samples(d, dt, nb);
      nb = 0;
    }
  }
  if (d->sample)
    flush_samples(d, dt, nb);
  *span = iters > 0 ? t1 - first : 0;
  return total;
}

/* Round timing (CONTEND_MOTIF_ROUND_TIMING): one clock read before the
 * warm-up and one after the last iteration; every timed iteration gets the
 * round's mean over all its iterations.  Returns the timed sum; *span as
 * contend_drive.after (iters x that mean). */
static double run_round(contend_ctx *c, const contend_motif *m, const contend_drive *d, long base,
                        int timed, int prepare, int check, double *span) {
  const double t0 = timed ? d->clock->now() : 0;
  for (long i = -d->warmup; i < d->iters; i++) {
    c->iter = base + i + d->warmup;
    c->series = i < 0 ? -1 : 0;
    if (prepare) {
      detach(c, d->traffic);
      m->prepare(c);
      attach(c, d->traffic);
    }
    m->iterate(c);
    if (check) {
      detach(c, d->traffic);
      m->check(c);
      attach(c, d->traffic);
    }
  }
  *span = 0;
  if (!timed || d->iters < 1)
    return 0;
  const double mean = (d->clock->now() - t0) / (double)(d->warmup + d->iters);
  if (d->sample)
    d->sample(d->arg, 0, mean, d->iters);
  *span = mean * (double)d->iters;
  return *span;
}

/* One round of iterations timed one by one.  plan: attach d->first
 * during the first timed iteration. */
static double run_iterations(contend_ctx *c, const contend_motif *m, const contend_drive *d,
                             long base, int timed, int prepare, int check, int plan, double *span) {
  long same = 0; /* iterations left in the current series run (series_of) */
  int cur = 0;
  double total = 0, first = 0, last = 0;
  for (long i = -d->warmup; i < d->iters; i++) {
    c->iter = base + i + d->warmup;
    if (i < 0) {
      c->series = -1;
    } else if (m->series_of) {
      if (same <= 0)
        cur = m->series_of(c, &same);
      c->series = cur;
      same--;
    } else {
      c->series = 0;
    }
    if (prepare) {
      detach(c, d->traffic);
      m->prepare(c);
      attach(c, d->traffic);
    }
    const int t = timed && i >= 0 && c->series >= 0;
    const int rec = plan && i == 0;
    if (rec)
      attach(c, d->first);
    const double t0 = t ? d->clock->now() : 0;
    m->iterate(c);
    const double t1 = t ? d->clock->now() : 0;
    if (rec)
      detach(c, d->first);
    if (check) {
      detach(c, d->traffic);
      m->check(c);
      attach(c, d->traffic);
    }
    if (t) {
      if (i == 0)
        first = t0;
      last = t1;
      total += t1 - t0;
      if (d->sample)
        d->sample(d->arg, c->series, t1 - t0, 1);
    }
  }
  *span = last - first;
  return total;
}

contend_drive_done contend_drive_run(contend_ctx *c, const contend_motif *m,
                                     const contend_drive *d) {
  contend_drive_done done = {0, 0, 0, 0};
  const int no_data = ((m->flags & CONTEND_MOTIF_FILE_DATA) && !c->ops->files_hold_data) ||
                      ((m->flags & CONTEND_MOTIF_COLL_DATA) && !c->ops->colls_compute);
  const int check = m->check && !no_data && (d->verify || (m->flags & CONTEND_MOTIF_ALWAYS_CHECK));
  const int prepare = m->prepare && !no_data && d->verify;
  const int blocks = (m->flags & CONTEND_MOTIF_BLOCK_TIMING) && !check && !prepare;
  int plan = d->first != NULL && d->traffic == NULL;
  int *order = ring_scratch(c, m, d);
  c->verify_inject = d->verify_inject;
  for (long mi = 0; mi < d->measurements; mi++) {
    for (long r = 0; r < d->rounds; r++) {
      int sampled = 1;
      if (d->before && d->before(d->arg, mi, r, &sampled)) {
        done.stopped = 1;
        free(order);
        return done;
      }
      const long k = mi * d->rounds + r; /* round of this call */
      c->round = d->round_offset + k;
      if (m->round) { /* the same stream on every rank of the group */
        contend_rng rng;
        round_rng(c, d, mi, r, &rng);
        if (order)
          report_ring(c, m, d, mi, r, rng, order);
        m->round(c, &rng);
      }
      const int timed = sampled && c->metric_scale > 0 && d->clock;
      const long base = k * (d->warmup + d->iters);
      double span = 0;
      attach(c, d->traffic);
      const int rec = plan && sampled;
      if ((m->flags & CONTEND_MOTIF_ROUND_TIMING) && !rec && !m->series_of)
        done.timed_s += run_round(c, m, d, base, timed, prepare, check, &span);
      else if (blocks)
        done.timed_s += run_blocks(c, m, d, base, timed, &span);
      else if (!prepare && !check && !m->series_of && !rec)
        done.timed_s += run_plain(c, m, d, base, timed, &span);
      else
        done.timed_s += run_iterations(c, m, d, base, timed, prepare, check, rec, &span);
      detach(c, d->traffic);
      if (sampled) {
        plan = 0;
        done.sampled++;
      }
      if (timed && d->after)
        d->after(d->arg, span, d->iters);
      done.measurements = mi + 1;
    }
  }
  free(order);
  return done;
}

long contend_drive_rings(contend_ctx *c, const contend_motif *m, const contend_drive *d,
                         long max_rounds) {
  int *order = m->round ? ring_scratch(c, m, d) : NULL;
  long n = 0;
  for (long mi = 0; order && mi < d->measurements && (max_rounds < 0 || n < max_rounds); mi++)
    for (long r = 0; r < d->rounds && (max_rounds < 0 || n < max_rounds); r++, n++) {
      contend_rng rng;
      round_rng(c, d, mi, r, &rng);
      report_ring(c, m, d, mi, r, rng, order);
    }
  free(order);
  return n;
}
