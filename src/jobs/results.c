/* The result arrays of a jobs run (jobs.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jobs.h"

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p)
    abort();
  return p;
}

void contend_jobs_run_init(contend_jobs_run *r, const contend_jobfile *jf, int npasses) {
  memset(r, 0, sizeof *r);
  r->jf = jf;
  r->npasses = npasses;
  r->job_ranks = xcalloc((size_t)jf->njobs, sizeof(int));
  r->first = xcalloc((size_t)jf->njobs, sizeof(int));
  for (int j = 0; j < jf->njobs; j++) {
    r->first[j] = r->nm;
    r->nm += jf->jobs[j].nmotifs;
  }
  r->mi = xcalloc((size_t)r->nm, sizeof(contend_minfo));
  for (int j = 0; j < jf->njobs; j++)
    for (int k = 0; k < jf->jobs[j].nmotifs; k++) {
      contend_minfo *mi = &r->mi[r->first[j] + k];
      mi->job = j;
      mi->pos = k;
      mi->divisor = 1;
      contend_traffic_init(&mi->traffic);
    }
  for (int p = 0; p < npasses; p++) {
    r->m[p] = xcalloc((size_t)r->nm, sizeof(contend_mres));
    r->j[p] = xcalloc((size_t)jf->njobs, sizeof(contend_jres));
    for (int g = 0; g < r->nm; g++) {
      contend_mres *m = &r->m[p][g];
      contend_jstat_reset(&m->time);
      contend_jstat_reset(&m->net_gbps);
      contend_hist_reset(&m->iter_us);
      m->rep_max = xcalloc((size_t)jf->jobs[r->mi[g].job].repeat, sizeof(double));
    }
    for (int j = 0; j < jf->njobs; j++) {
      contend_jres *jr = &r->j[p][j];
      contend_jstat_reset(&jr->time);
      jr->rep_max = xcalloc((size_t)jf->jobs[j].repeat, sizeof(double));
      jr->start_s = 1e300;
      jr->end_s = -1e300;
    }
  }
}

void contend_jobs_run_free(contend_jobs_run *r) {
  for (int p = 0; p < r->npasses; p++) {
    for (int g = 0; g < r->nm; g++) {
      free(r->m[p][g].rep_max);
      contend_hist_free(&r->m[p][g].iter_us);
      free(r->m[p][g].series);
      free(r->m[p][g].samples);
    }
    for (int j = 0; r->jf && j < r->jf->njobs; j++)
      free(r->j[p][j].rep_max);
    free(r->m[p]);
    free(r->j[p]);
  }
  for (int g = 0; g < r->nm; g++) {
    free(r->mi[g].series_value);
    contend_traffic_free(&r->mi[g].traffic);
  }
  free(r->mi);
  free(r->first);
  free(r->job_ranks);
  memset(r, 0, sizeof *r);
}

/* Series arrays once nseries is known (every rank, same sizes). */
void contend_jobs_run_series(contend_jobs_run *r) {
  for (int p = 0; p < r->npasses; p++)
    for (int g = 0; g < r->nm; g++) {
      const int n = r->mi[g].nseries;
      if (!n || r->m[p][g].series)
        continue;
      r->m[p][g].series = xcalloc((size_t)n, sizeof(contend_jstat));
      for (int s = 0; s < n; s++)
        contend_jstat_reset(&r->m[p][g].series[s]);
    }
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
