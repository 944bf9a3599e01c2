/* One invocation of a motif, the same on every engine: the MPI runner
 * times it, the trace engine only records its steps, so both see exactly
 * the same steps in the same order. */
#include <math.h>

#include "jobs.h"

enum { STREAM_ROUNDS = 3 };

void contend_job_loop(const contend_ctx *c, long *rings, long *warmup, long *iters) {
  const contend_params *p = c->params;
  if (c->iterations > 0) {
    *rings = 1, *warmup = 0, *iters = c->iterations;
    return;
  }
  *rings = contend_params_find(p, "rings") >= 0 ? (long)contend_param_int(p, "rings") : 1;
  *warmup = contend_params_find(p, "warmup") >= 0 ? (long)contend_param_int(p, "warmup") : 0;
  *iters = contend_params_find(p, "iters") >= 0 ? (long)contend_param_int(p, "iters") : 1;
}

/* Block timing (CONTEND_MOTIF_BLOCK_TIMING): each run of consecutive
 * iterations of one series is timed as a whole, in a loop as tight as a
 * hand-written one: one clock read before and one after. */
static double ring_blocks(contend_ctx *c, const contend_motif *m, long base, long warmup,
                          long iters, int timed, const contend_job_exec *x) {
  double total = 0;
  for (long i = -warmup; i < iters;) {
    long n;
    int s;
    c->iter = base + i + warmup;
    if (i < 0) { /* the runner's warm-up */
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
    const long first = c->iter;
    const double t0 = timed && s >= 0 ? x->clock() : 0;
    if (m->iterate_block) {
      m->iterate_block(c, n);
      c->iter = first + n - 1;
    } else {
      for (long k = 0; k < n; k++) {
        c->iter = first + k;
        m->iterate(c);
      }
    }
    if (timed && s >= 0) {
      const double dt = x->clock() - t0;
      total += dt;
      if (x->sample)
        x->sample(x->arg, s, dt / (double)n, n);
    }
    i += n;
  }
  return total;
}

double contend_job_invoke(contend_ctx *c, const contend_motif *m, long rep,
                          const contend_job_exec *x) {
  long rings, warmup, iters;
  contend_job_loop(c, &rings, &warmup, &iters);
  const int check = m->check && (x->verify || (m->flags & CONTEND_MOTIF_ALWAYS_CHECK));
  const int prepare = m->prepare && x->verify;
  const int timed = x->clock && c->metric_scale > 0;
  /* untimed ranks of such a motif (the ping-pong responder) run the same
   * tight loop: they are on the critical path of every round trip */
  const int blocks = (m->flags & CONTEND_MOTIF_BLOCK_TIMING) && !check && !prepare;
  double total = 0;
  c->job_phase = CONTEND_JOB_PERFORM;
  c->verify_inject = x->verify_inject;
  for (long ring = 0; ring < rings; ring++) {
    c->round = rep * rings + ring;
    if (m->round) { /* the same stream on every rank of the group */
      contend_rng rng;
      contend_rng_init(&rng, c->seed, STREAM_ROUNDS, c->stream, (uint64_t)rep, (uint64_t)ring);
      m->round(c, &rng);
    }
    if (x->traffic)
      c->ops->count(c, x->traffic);
    if (blocks) {
      total += ring_blocks(c, m, ring * (warmup + iters), warmup, iters, timed, x);
      if (x->traffic)
        c->ops->count(c, NULL);
      continue;
    }
    long same = 0; /* iterations left in the current series run (series_of) */
    int cur = 0;
    for (long i = -warmup; i < iters; i++) {
      c->iter = ring * (warmup + iters) + i + warmup;
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
        if (x->traffic)
          c->ops->count(c, NULL);
        m->prepare(c);
        if (x->traffic)
          c->ops->count(c, x->traffic);
      }
      double t0 = timed ? x->clock() : 0;
      m->iterate(c);
      double t1 = timed ? x->clock() : 0;
      if (check) {
        if (x->traffic)
          c->ops->count(c, NULL);
        m->check(c);
        if (x->traffic)
          c->ops->count(c, x->traffic);
      }
      if (timed && c->series >= 0) {
        total += t1 - t0;
        if (x->sample)
          x->sample(x->arg, c->series, t1 - t0, 1);
      }
    }
    if (x->traffic)
      c->ops->count(c, NULL);
  }
  return total;
}

void contend_jstat_reset(contend_jstat *s) {
  s->n = s->sum = s->sumsq = 0;
  s->min = INFINITY;
  s->max = -INFINITY;
}

void contend_jstat_add(contend_jstat *s, double v) {
  s->n += 1;
  s->sum += v;
  s->sumsq += v * v;
  s->min = v < s->min ? v : s->min;
  s->max = v > s->max ? v : s->max;
}

double contend_jstat_mean(const contend_jstat *s) { return s->n > 0 ? s->sum / s->n : NAN; }

double contend_jstat_stddev(const contend_jstat *s) {
  if (s->n < 2)
    return s->n == 1 ? 0 : NAN;
  double var = (s->sumsq - s->sum * s->sum / s->n) / (s->n - 1);
  return var > 0 ? sqrt(var) : 0;
}
