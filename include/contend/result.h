/* contend: the result of one measured test in one phase.
 *
 * Every rank holds the same list of results (the list follows from the
 * configuration), fills the ones it takes part in, and rank 0 reduces them
 * all at the end (contend_result_reduce, collective over MPI_COMM_WORLD):
 * histograms merge, counters add, extremes take min/max.  The human table
 * and the JSON file are two views of the reduced list. */
#ifndef CONTEND_RESULT_H
#define CONTEND_RESULT_H

#include <stdint.h>

#include "contend/motif.h"
#include "contend/stats.h"

typedef enum {
  CONTEND_PHASE_ISOLATED,          /* canary alone */
  CONTEND_PHASE_CONGESTED,         /* canary while congestors run */
  CONTEND_PHASE_CONGESTOR_ALONE,   /* congestor alone (its baseline) */
  CONTEND_PHASE_CONGESTOR_LOADING, /* congestor while a canary measures */
} contend_phase;

typedef struct contend_result {
  const contend_motif *motif;
  contend_phase phase;
  int during;        /* CONGESTOR_LOADING: index (into the canary list) of the canary; else -1 */
  contend_hist fine; /* one sample per timed iteration */
  contend_hist bulk; /* one sample per round: mean over its nI iterations */
  /* reduced with MAX */
  double measurements; /* measurements completed */
  double timed_out;    /* 1 if the timeout ended the test */
  double msg_bytes;
  double elapsed_s;
  double iters; /* iterations per measurement (nI) the test ran */
  /* reduced with SUM */
  double ranks; /* ranks that took samples */
  double verify_errors, verify_checked;
} contend_result;

void contend_result_init(contend_result *r, const contend_motif *m, contend_phase ph, int during);

#endif
