/* One invocation of a job motif, the same on every engine: the rings of
 * its loop through the one measurement driver (src/run/driver.c), with the
 * random stream of the job's motif instance. */
#include "../run/driver.h"
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

double contend_job_invoke(contend_ctx *c, const contend_motif *m, long rep,
                          const contend_job_exec *x) {
  long rings, warmup, iters;
  contend_job_loop(c, &rings, &warmup, &iters);
  contend_drive d = {
      .clock = x->clock,
      .measurements = 1,
      .rounds = rings,
      .warmup = warmup,
      .iters = iters,
      .verify = x->verify,
      .verify_inject = x->verify_inject,
      .rng_kind = STREAM_ROUNDS,
      .rng_id = c->stream,
      .rng_first = (uint64_t)rep,
      .round_offset = rep * rings,
      .traffic = x->traffic,
      .sample = x->clock ? x->sample : NULL,
      .arg = x->arg,
  };
  c->job_phase = CONTEND_JOB_PERFORM;
  return contend_drive_run(c, m, &d).timed_s;
}
