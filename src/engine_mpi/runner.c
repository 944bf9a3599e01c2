#include "runner.h"

#include <stdio.h>

#include "../core/error.h"

void contend_result_init(contend_result *r, const contend_motif *m, contend_phase ph, int during) {
  r->motif = m;
  r->phase = ph;
  r->during = during;
  contend_hist_reset(&r->fine);
  contend_hist_reset(&r->bulk);
  r->measurements = r->timed_out = r->msg_bytes = r->elapsed_s = 0;
  r->ranks = r->verify_errors = r->verify_checked = 0;
}

/* One round: warm-up then nI timed iterations.  Returns the bulk time of
 * the timed part.  record: add fine samples to h. */
static double run_round(contend_ctx *c, const contend_motif *m, long warmup, long iters,
                        long base_iter, int verify, contend_hist *h) {
  const int sampling = h != NULL && c->metric_scale > 0;
  double tb = 0, t1 = 0;
  for (long i = -warmup; i < iters; i++) {
    c->iter = base_iter + i + warmup;
    if (verify && m->prepare)
      m->prepare(c);
    double t0 = MPI_Wtime();
    if (i == 0)
      tb = t0;
    m->iterate(c);
    t1 = MPI_Wtime();
    if (verify && m->check)
      m->check(c);
    if (i >= 0 && sampling)
      contend_hist_add(h, contend_metric_value(m, c, t1 - t0));
  }
  return t1 - tb;
}

static void finish(contend_ctx *c, contend_result *out, int sampled, long done, int timed_out,
                   double elapsed) {
  if (!out)
    return;
  out->measurements = (double)done;
  out->timed_out = timed_out;
  out->msg_bytes = (double)c->msg_bytes;
  out->elapsed_s = elapsed;
  out->ranks = sampled ? 1 : 0;
  out->verify_errors = (double)c->verify_errors;
  out->verify_checked = (double)c->verify_checked;
}

void contend_run_canary(contend_ctx *c, const contend_motif *m, MPI_Comm sync,
                        const contend_run_opts *o, contend_result *out) {
  const long nm = (long)contend_param_int(c->params, "measurements");
  const long nr = (long)contend_param_int(c->params, "rings");
  const long ni = (long)contend_param_int(c->params, "iters");
  const long wu = (long)contend_param_int(c->params, "warmup");
  int srank = 0;
  CONTEND_MPI_CHECK(MPI_Comm_rank(sync, &srank));
  c->verify_inject = o->verify_inject;
  const double start = MPI_Wtime();
  double last_print = start;
  long m_done = 0;
  int timed_out = 0;
  /* The timeout is decided before every round (GPCNeT: every measurement),
   * so a slow network overruns it by one round, not by nR of them. */
  for (long mi = 0; mi < nm && !timed_out; mi++) {
    for (long r = 0; r < nr; r++) {
      double el = MPI_Wtime() - start;
      CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &el, 1, MPI_DOUBLE, MPI_MAX, sync));
      if ((mi > 0 || r > 0) && el > o->timeout_s) {
        timed_out = 1;
        break;
      }
      if (o->progress && srank == 0 && el - (last_print - start) >= 2.0) {
        fprintf(stderr, "[contend] %s %-22s measurement %ld/%ld  %.1f s of %.1f s timeout\n",
                o->phase, m->name, mi, nm, el, o->timeout_s);
        last_print = start + el;
      }
      c->round = mi * nr + r;
      contend_rng rng;
      contend_rng_init(&rng, c->seed, 2, (uint64_t)o->test_id, (uint64_t)mi, (uint64_t)r);
      if (m->round)
        m->round(c, &rng);
      double bulk = run_round(c, m, wu, ni, c->round * (wu + ni), o->verify, &out->fine);
      if (c->metric_scale > 0)
        contend_hist_add(&out->bulk, contend_metric_value(m, c, bulk / ni));
      m_done = mi + 1; /* measurements begun, the last one possibly cut short */
    }
  }
  finish(c, out, c->metric_scale > 0, m_done, timed_out, MPI_Wtime() - start);
}

void contend_run_congestor(contend_ctx *c, const contend_motif *m, long max_measurements,
                           MPI_Request *stop, MPI_Request *release, const contend_run_opts *o,
                           contend_result *out) {
  const long ni = (long)contend_param_int(c->params, "iters");
  const long wu = (long)contend_param_int(c->params, "warmup");
  MPI_Comm comm = contend_mpi_ctx_comm(c);
  c->verify_inject = o->verify_inject;
  const double start = MPI_Wtime();
  long done = 0;
  int timed_out = 0, released = release == NULL;
  for (long mi = 0;; mi++) {
    int flag = 0;
    if (stop)
      CONTEND_MPI_CHECK(MPI_Test(stop, &flag, MPI_STATUS_IGNORE));
    else if (mi >= max_measurements)
      flag = 1;
    else if (MPI_Wtime() - start > o->timeout_s && mi > 0)
      flag = 2;
    /* every rank of the congestor stops after the same measurement */
    CONTEND_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, comm));
    if (flag) {
      timed_out = flag == 2;
      break;
    }
    if (!released)
      CONTEND_MPI_CHECK(MPI_Test(release, &released, MPI_STATUS_IGNORE));
    contend_hist *h = out && released ? &out->fine : NULL;
    c->round = mi;
    double bulk = run_round(c, m, wu, ni, mi * (wu + ni), o->verify, h);
    if (h && c->metric_scale > 0)
      contend_hist_add(&out->bulk, contend_metric_value(m, c, bulk / ni));
    if (h)
      done++;
  }
  finish(c, out, c->metric_scale > 0, done, timed_out, MPI_Wtime() - start);
}
