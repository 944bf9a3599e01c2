/* Canary and congestor measurement policies (see measure.h). */
#include "measure.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "../core/error.h"
#include "../run/driver.h"
#include "../run/ring_log.h"

/* Samples into a result: fine = every timed iteration, bulk = per round
 * the mean over its iterations. */
typedef struct sink {
  const contend_motif *m;
  contend_ctx *c;
  contend_result *out;
  /* canary */
  contend_group *sync;
  const contend_measure_opts *o;
  long nm;
  double start, last_print;
  double *values; /* this rank's value of every round (values_group) */
  long nvalues, cap_values;
  int timed_out;
  /* congestor */
  contend_group *own, *sig_group;
  contend_signal *stop, *release;
  long max_measurements;
  int released;
} sink;

static void on_sample(void *arg, int series, double s, long count) {
  sink *k = arg;
  (void)series;
  const double v = contend_metric_value(k->m, k->c, s);
  for (long q = 0; q < count; q++)
    contend_hist_add(&k->out->fine, v);
}

static void on_round(void *arg, double span, long iters) {
  sink *k = arg;
  const double v = contend_metric_value(k->m, k->c, span / (double)iters);
  contend_hist_add(&k->out->bulk, v);
  if (k->cap_values > 0) { /* --record-rings */
    if (k->nvalues == k->cap_values) {
      k->cap_values *= 2;
      k->values = realloc(k->values, sizeof(double) * (size_t)k->cap_values);
      if (!k->values)
        contend_fail("out of memory (ring records)");
    }
    k->values[k->nvalues++] = v;
  }
}

static void on_ring(void *arg, long measurement, long round, const int *order, int n) {
  sink *k = arg;
  (void)round;
  contend_ring_log_add(k->o->rings, measurement, order, n, k->c->node_of);
}

/* done: the measurements this rank sampled.  A rank that takes no samples
 * (metric_scale 0: an incast's senders or root) records none, so that the
 * MAX over ranks is a count the histograms hold. */
static void finish(contend_ctx *c, contend_result *out, long done, int timed_out, double elapsed,
                   long iters) {
  if (!out)
    return;
  out->measurements = c->metric_scale > 0 ? (double)done : 0;
  out->iters = (double)iters;
  out->timed_out = timed_out;
  out->msg_bytes = (double)c->msg_bytes;
  out->elapsed_s = elapsed;
  out->ranks = c->metric_scale > 0 ? 1 : 0;
  out->verify_errors = (double)c->verify_errors;
  out->verify_checked = (double)c->verify_checked;
}

/* A congestor's iterations per measurement in a group of `ranks` ranks
 * when its default `iters` is scaled (contend_motif.iters_base_ranks). */
static long congestor_iters(long iters, int base_ranks, int ranks) {
  /* GPCNeT's arithmetic, in float: (int)((float)512 * (float)32 / (float)n) */
  const long v = (long)((float)iters * (float)base_ranks / (float)ranks);
  return v < 1 ? 1 : v;
}

static void loop_counts(contend_drive *d, const contend_ctx *c, const contend_measure_opts *o) {
  d->rounds = (long)contend_param_int(c->params, "rings");
  d->iters = (long)contend_param_int(c->params, "iters");
  d->warmup = (long)contend_param_int(c->params, "warmup");
  if (o->plan_only)
    d->rounds = d->iters = 1, d->warmup = 0;
}

/* The timeout is decided before every round (GPCNeT: every measurement),
 * so a slow network overruns it by one round, not by nR of them. */
static int canary_before(void *arg, long mi, long r, int *sampled) {
  sink *k = arg;
  (void)sampled;
  double el = contend_now(k->sync) - k->start;
  contend_gallreduce(k->sync, &el, 1, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  if ((mi > 0 || r > 0) && el > k->o->timeout_s) {
    k->timed_out = 1;
    return 1;
  }
  if (k->o->progress && k->sync->rank == 0 && el - (k->last_print - k->start) >= 2.0) {
    fprintf(stderr, "[contend] %s %-22s measurement %ld/%ld  %.1f s of %.1f s timeout\n",
            k->o->phase, k->m->name, mi, k->nm, el, k->o->timeout_s);
    k->last_print = k->start + el;
  }
  return 0;
}

void contend_measure_canary(contend_ctx *c, const contend_motif *m, contend_group *sync,
                            const contend_measure_opts *o, contend_result *out) {
  sink k = {.m = m, .c = c, .out = out, .sync = sync, .o = o};
  k.nm = o->plan_only ? 1 : (long)contend_param_int(c->params, "measurements");
  k.start = k.last_print = contend_now(sync);
  contend_drive d = {
      .clock = o->plan_only ? NULL : sync, /* a dry run times nothing */
      .measurements = k.nm,
      .verify = o->verify,
      .verify_inject = o->verify_inject,
      .rng_kind = 2,
      .rng_id = (uint64_t)o->test_id,
      .first = o->first,
      .before = canary_before,
      .sample = on_sample,
      .after = on_round,
      .ring = o->rings && !o->plan_only ? on_ring : NULL,
      .arg = &k,
  };
  loop_counts(&d, c, o);
  const int values = o->values_group && m->ring_of && !o->plan_only;
  if (values) {
    k.cap_values = 64;
    k.values = malloc(sizeof(double) * (size_t)k.cap_values);
    if (!k.values)
      contend_fail("out of memory (ring records)");
  }
  contend_drive_done done = contend_drive_run(c, m, &d);
  finish(c, out, done.measurements, k.timed_out, contend_now(sync) - k.start, d.iters);
  if (values)
    contend_ring_log_values(o->values_group, o->rings, k.values, k.nvalues);
  free(k.values);
  if (o->rings && o->plan_only && o->plan_rings != 0) { /* the rings of the whole plan */
    contend_drive all = d;
    all.measurements = (long)contend_param_int(c->params, "measurements");
    all.rounds = (long)contend_param_int(c->params, "rings");
    all.ring = on_ring;
    contend_drive_rings(c, m, &all, o->plan_rings);
  }
}

static int congestor_before(void *arg, long mi, long r, int *sampled) {
  sink *k = arg;
  (void)r;
  int flag = 0;
  if (k->stop)
    flag = contend_signal_test(k->sig_group, k->stop);
  else if (mi >= k->max_measurements)
    flag = 1;
  else if (contend_now(k->own) - k->start > k->o->timeout_s && mi > 0)
    flag = 2;
  if (!k->released)
    k->released = contend_signal_test(k->sig_group, k->release);
  /* every rank of the congestor stops after the same measurement, and
   * starts sampling with the same one: a rank that saw the release sooner
   * than the others would count measurements they did not sample (the
   * ranks still wait for the release signal afterwards) */
  int64_t f[2] = {flag, k->released};
  contend_gallreduce(k->own, f, 2, CONTEND_DT_INT64, CONTEND_OP_MAX);
  if (f[0]) {
    k->timed_out = f[0] == 2;
    return 1;
  }
  k->released = (int)f[1];
  *sampled = k->out && k->released;
  return 0;
}

void contend_measure_congestor(contend_ctx *c, const contend_motif *m, contend_group *own,
                               long max_measurements, contend_group *sig_group,
                               contend_signal *stop, contend_signal *release,
                               const contend_measure_opts *o, contend_result *out) {
  sink k = {.m = m,
            .c = c,
            .out = out,
            .o = o,
            .own = own,
            .sig_group = sig_group,
            .stop = stop,
            .release = release,
            .max_measurements = max_measurements,
            .released = release == NULL};
  k.start = contend_now(own);
  contend_drive d = {
      .clock = o->plan_only ? NULL : own,
      .measurements = LONG_MAX,
      .verify = o->verify,
      .verify_inject = o->verify_inject,
      .first = out ? o->first : NULL,
      .before = congestor_before,
      .sample = out ? on_sample : NULL,
      .after = out ? on_round : NULL,
      .ring = o->rings && out ? on_ring : NULL,
      .arg = &k,
  };
  loop_counts(&d, c, o);
  d.rounds = 1; /* a congestor's measurement is one round */
  if (o->iters_auto && !o->plan_only && m->iters_base_ranks > 0 && c->size > m->iters_base_ranks)
    d.iters = congestor_iters(d.iters, m->iters_base_ranks, c->size);
  contend_drive_done done = contend_drive_run(c, m, &d);
  finish(c, out, done.sampled, k.timed_out, contend_now(own) - k.start, d.iters);
}
