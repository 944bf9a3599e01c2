/* Measurement loops on the MPI engine: GPCNeT's random-ring infrastructure
 * (Listing 1) for canaries and the congestor infrastructure (Listing 2).
 * The runner owns timing: motifs only emit steps. */
#ifndef CONTEND_RUNNER_H
#define CONTEND_RUNNER_H

#include <mpi.h>

#include "contend/result.h"
#include "engine_mpi.h"

typedef struct contend_run_opts {
  double timeout_s; /* stop taking new measurements after this (decided collectively) */
  int verify;
  long verify_inject;
  int test_id;       /* names the random streams of this test (rings) */
  int progress;      /* print progress lines on stderr (rank 0 of sync comm) */
  const char *phase; /* for progress lines */
} contend_run_opts;

/* Canary loop.  Collective over sync (every rank running the test, all
 * sub-communicators): an MPI_Allreduce(MAX) of the elapsed time before
 * every round decides the timeout for all of them together.  Fills out. */
void contend_run_canary(contend_ctx *c, const contend_motif *m, MPI_Comm sync,
                        const contend_run_opts *o, contend_result *out);

/* Congestor loop on the context's own communicator.  Runs until *stop
 * completes (when stop != NULL), else for max_measurements measurements or
 * the timeout.  Samples go to out (may be NULL: warm-up) only from
 * measurements that start after *release completed (release may be NULL:
 * always). */
void contend_run_congestor(contend_ctx *c, const contend_motif *m, long max_measurements,
                           MPI_Request *stop, MPI_Request *release, const contend_run_opts *o,
                           contend_result *out);

/* The value of one timed interval (seconds) in the motif's metric. */
static inline double contend_metric_value(const contend_motif *m, const contend_ctx *c, double dt) {
  if (dt < 1e-9)
    dt = 1e-9; /* below timer resolution */
  return m->metric == CONTEND_METRIC_LAT_US ? dt * 1e6 / c->metric_scale : c->metric_scale / dt;
}

#endif
