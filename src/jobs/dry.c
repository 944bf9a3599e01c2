/* `contend jobs --dry-run`: every job's motifs run on the trace engine in
 * this one process, rank after rank, through the same invocation loop as
 * a real run (contend_job_invoke), so the recorded steps are the ones an
 * MPI run takes.  Per motif instance: bytes and messages per node pair,
 * collective calls, I/O volume, compute time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../engine_trace/trace.h"
#include "jobs.h"

int contend_jobs_dry(contend_jobs_run *r, int ppn, char *err, size_t errlen) {
  const contend_jobfile *jf = r->jf;
  for (int j = 0; j < jf->njobs; j++) {
    const contend_job *job = &jf->jobs[j];
    const int n = job->nnodes * ppn;
    int *node_of = malloc(sizeof(int) * (size_t)n);
    if (!node_of)
      abort();
    for (int i = 0; i < n; i++)
      node_of[i] = job->nodes[i / ppn];
    for (int k = 0; k < job->nmotifs; k++) {
      const contend_job_motif *jm = &job->motifs[k];
      contend_minfo *mi = &r->mi[r->first[j] + k];
      contend_ctx tmpl = {.job_name = job->name,
                          .job_index = j,
                          .run_id = r->run_id,
                          .stream = contend_jobs_stream(j, k)};
      for (int rank = 0; rank < n; rank++) {
        contend_ctx c;
        if (contend_trace_ctx_open(&c, jm->motif, &jm->params, rank, n, node_of, r->seed, &tmpl)) {
          snprintf(err, errlen,
                   "%s:%d: motif '%s' of job '%s' failed in the decompose phase "
                   "(rank %d): %s",
                   jf->path, jm->line, jm->motif->name, job->name, rank,
                   *c.error ? c.error : "setup failed");
          contend_trace_ctx_close(&c);
          free(node_of);
          return 2;
        }
        long rings, warmup, iters;
        contend_job_loop(&c, &rings, &warmup, &iters);
        mi->iterations = rings * (warmup + iters);
        if ((double)c.msg_bytes > mi->msg_bytes)
          mi->msg_bytes = (double)c.msg_bytes;
        if (c.metric_scale > mi->divisor)
          mi->divisor = c.metric_scale;
        if (c.nseries && !mi->nseries) {
          mi->nseries = c.nseries;
          mi->series_key = jm->motif->series_key;
          mi->series_value = malloc(sizeof(double) * (size_t)c.nseries);
          if (!mi->series_value)
            abort();
          memcpy(mi->series_value, c.series_value, sizeof(double) * (size_t)c.nseries);
        }
        contend_job_exec ex = {.traffic = &mi->traffic};
        for (long rep = 0; rep < job->repeat; rep++)
          contend_job_invoke(&c, jm->motif, rep, &ex);
        c.job_phase = CONTEND_JOB_CLEANUP;
        if (jm->motif->cleanup)
          jm->motif->cleanup(&c);
        contend_trace_ctx_close(&c);
      }
    }
    free(node_of);
  }
  contend_jobs_run_series(r);
  return 0;
}
