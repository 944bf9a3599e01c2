/* Internal to the jobs orchestrator (orchestrate.c) and its collective
 * gathers (gather.c): one rank's view of a jobs run. */
#ifndef CONTEND_JOBS_ORCH_H
#define CONTEND_JOBS_ORCH_H

#include "../run/envelope.h"
#include "jobs.h"

/* Per-iteration samples of one motif instance on this rank. */
typedef struct contend_jobs_sink {
  contend_mres *m;
  int nseries;
  double *samples;
  long n, cap;
} contend_jobs_sink;

typedef struct contend_jobs_rank {
  contend_jobs_run *r;
  const contend_jobfile *jf;
  contend_envelope *env;
  contend_group *world, *job; /* job: the ranks of my job, or NULL */
  int my_job;
  contend_ctx *ctx; /* my job's motif contexts */
  int *opened;
  contend_traffic *tr;      /* [nm]: this rank's traffic in the current pass */
  contend_jobs_sink *sinks; /* [nm] */
  int verify;
  long verify_inject;
  long max_samples;
} contend_jobs_rank;

/* Collective over world (gather.c). */
/* Motif facts known after setup (iterations, sizes, series), made the same
 * on every rank. */
void contend_jobs_share_minfo(contend_jobs_rank *x);
/* After the decompose phase: 1 if any motif failed, with the first
 * failure's message (file:line) in out at rank 0. */
int contend_jobs_setup_failure(contend_jobs_rank *x, int fail_job, int fail_pos, const char *msg,
                               char *out, size_t outlen);
/* One pass's statistics and samples to rank 0. */
void contend_jobs_reduce_pass(contend_jobs_rank *x, int p);
/* This rank's traffic of the last pass into r->mi[].traffic at rank 0. */
void contend_jobs_gather_traffic(contend_jobs_rank *x);

#endif
