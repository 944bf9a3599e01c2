/* Canary and congestor measurement policies (GPCNeT Listings 1 and 2) on
 * top of the one measurement driver: the collective timeout of canaries,
 * congestors that run until the canaries signal they are done. */
#ifndef CONTEND_MEASURE_H
#define CONTEND_MEASURE_H

#include "contend/result.h"
#include "contend/traffic.h"
#include "contend/world.h"

typedef struct contend_measure_opts {
  double timeout_s; /* stop taking new measurements after this (decided collectively) */
  int verify;
  long verify_inject;
  int test_id;            /* names the random streams of this test (rings) */
  int progress;           /* progress lines on stderr (rank 0 of the sync group) */
  const char *phase;      /* for progress lines */
  int plan_only;          /* dry run: one measurement of one round of one iteration, no warm-up */
  contend_traffic *first; /* records the first timed iteration (dry runs), or NULL */
  /* ring records (motifs with ring_of): this rank adds the ring of every
   * round it runs to *rings (NULL: it records none; one rank per test
   * does, its group's ranks all draw the same rings) */
  struct contend_ring_log *rings;
  /* canaries with rings in measuring runs, --record-rings: every rank of
   * the ring's group keeps its value of every round, gathered after the
   * loop over this group (the motif's; collective) into the rings of its
   * rank 0 (contend_ring_log_values); NULL: none */
  contend_group *values_group;
  /* dry runs (plan_only) of canaries with rings: record the rings of the
   * whole plan (every round of every measurement the test's counts name)
   * instead of the one planned round, at most this many (< 0: all; 0:
   * none) */
  long plan_rings;
  /* the test's iters is its default (neither its option nor --iters given):
   * a congestor's motif may scale it with its group (iters_base_ranks) */
  int iters_auto;
} contend_measure_opts;

/* Canary loop.  Collective over sync (every rank running the test, all
 * sub-groups): the elapsed time is reduced (MAX) on sync's control
 * channel before every round, so all sub-groups time out together. */
void contend_measure_canary(contend_ctx *c, const contend_motif *m, contend_group *sync,
                            const contend_measure_opts *o, contend_result *out);

/* Congestor loop on the context's group `own`.  Runs until the signal
 * *stop (posted on sig_group) completes when stop != NULL, else for
 * max_measurements measurements or the timeout; every rank of `own`
 * stops after the same measurement.  Samples go to out (NULL: warm-up)
 * only from measurements that start after *release completed (NULL:
 * always). */
void contend_measure_congestor(contend_ctx *c, const contend_motif *m, contend_group *own,
                               long max_measurements, contend_group *sig_group,
                               contend_signal *stop, contend_signal *release,
                               const contend_measure_opts *o, contend_result *out);

/* The value of one timed interval (seconds) in the motif's metric. */
static inline double contend_metric_value(const contend_motif *m, const contend_ctx *c, double dt) {
  if (dt < 1e-9)
    dt = 1e-9; /* below timer resolution */
  return m->metric == CONTEND_METRIC_LAT_US ? dt * 1e6 / c->metric_scale : c->metric_scale / dt;
}

#endif
