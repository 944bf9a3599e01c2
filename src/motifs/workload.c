/* Helpers shared by the workload motifs (workload.h). */
#include "workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int wl_parse_dist(const char *s, wl_dist *d) {
  if (!strcasecmp(s, "fixed") || !strcasecmp(s, "constant"))
    *d = WL_DIST_FIXED;
  else if (!strcasecmp(s, "gaussian") || !strcasecmp(s, "normal"))
    *d = WL_DIST_GAUSSIAN;
  else if (!strcasecmp(s, "uniform"))
    *d = WL_DIST_UNIFORM;
  else if (!strcasecmp(s, "exponential"))
    *d = WL_DIST_EXPONENTIAL;
  else
    return -1;
  return 0;
}

double wl_normal(contend_rng *r) {
  double u1 = 1.0 - contend_rng_uniform(r); /* (0, 1]: log is finite */
  double u2 = contend_rng_uniform(r);
  return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

double wl_exponential(contend_rng *r, double mean) {
  return -mean * log(1.0 - contend_rng_uniform(r));
}

void wl_split(long n, int p, int i, long *start, long *len) {
  long base = n / p, extra = n % p;
  *len = base + (i < extra ? 1 : 0);
  *start = (long)i * base + (i < extra ? i : extra);
}

/* Halo cells of an interior rank (two faces per split dimension) for a
 * candidate grid. */
static double surface(int ndims, const long *ext, const int *dims) {
  double loc[3], s = 0;
  for (int d = 0; d < ndims; d++)
    loc[d] = (double)ext[d] / dims[d];
  for (int d = 0; d < ndims; d++) {
    double face = 1;
    for (int e = 0; e < ndims; e++)
      if (e != d)
        face *= loc[e];
    s += dims[d] > 1 ? 2 * face : 0;
  }
  return s;
}

int wl_grid(int nranks, int ndims, const long *ext, int *dims, char *err, size_t errlen) {
  int best[3] = {0, 0, 0}, cand[3] = {1, 1, 1};
  double best_s = INFINITY;
  /* enumerate d0 | nranks, d1 | nranks/d0, d2 = rest */
  for (int a = 1; a <= nranks; a++) {
    if (nranks % a || (dims[0] && dims[0] != a))
      continue;
    for (int b = 1; b <= nranks / a; b++) {
      if ((nranks / a) % b || (dims[1] && dims[1] != b))
        continue;
      int c3 = nranks / a / b;
      if (ndims == 2 && c3 != 1)
        continue;
      if (ndims == 3 && dims[2] && dims[2] != c3)
        continue;
      cand[0] = a, cand[1] = b, cand[2] = ndims == 3 ? c3 : 1;
      int fits = 1;
      for (int d = 0; d < ndims; d++)
        fits &= cand[d] <= ext[d];
      if (!fits)
        continue;
      double s = surface(ndims, ext, cand);
      int spread = 0, best_spread = 0; /* ties: the more even grid */
      for (int d = 0; d < ndims; d++)
        for (int e = 0; e < ndims; e++) {
          spread = cand[d] - cand[e] > spread ? cand[d] - cand[e] : spread;
          best_spread = best[d] - best[e] > best_spread ? best[d] - best[e] : best_spread;
        }
      if (s < best_s - 1e-9 || (fabs(s - best_s) <= 1e-9 && spread < best_spread)) {
        best_s = s;
        memcpy(best, cand, sizeof best);
      }
    }
  }
  if (!isfinite(best_s)) {
    if (ndims == 2)
      snprintf(err, errlen,
               "no %d-rank process grid px x py fits (px=%d py=%d given; domain %ld x %ld)", nranks,
               dims[0], dims[1], ext[0], ext[1]);
    else
      snprintf(err, errlen,
               "no %d-rank process grid px x py x pz fits (px=%d py=%d pz=%d given; domain "
               "%ld x %ld x %ld)",
               nranks, dims[0], dims[1], dims[2], ext[0], ext[1], ext[2]);
    return -1;
  }
  for (int d = 0; d < ndims; d++)
    dims[d] = best[d];
  return 0;
}

const char *const wl_pgrid_keys[4] = {"px", "py", "pz", "pt"};

void wl_read_dims(const contend_params *p, int ndims, int *dims) {
  for (int d = 0; d < ndims; d++)
    dims[d] = (int)contend_param_int(p, wl_pgrid_keys[d]);
}

int wl_domain_grid(const contend_params *p, int nranks, int ndims, long *ext, int *dims, char *err,
                   size_t errlen) {
  static const char *const ext_keys[3] = {"nx", "ny", "nz"};
  for (int d = 0; d < ndims; d++)
    ext[d] = (long)contend_param_int(p, ext_keys[d]);
  wl_read_dims(p, ndims, dims);
  return nranks > 0 ? wl_grid(nranks, ndims, ext, dims, err, errlen) : 0;
}

int wl_domain_validate(const contend_params *p, int nranks, int ndims, char *err, size_t errlen) {
  long ext[3];
  int dims[3] = {0, 0, 0};
  return wl_domain_grid(p, nranks, ndims, ext, dims, err, errlen);
}

uint64_t wl_seed(const contend_params *p, const char *key, uint64_t fallback) {
  int i = contend_params_find(p, key);
  if (i < 0 || p->v[i].is_time)
    return fallback;
  return (uint64_t)p->v[i].i;
}

int wl_pair(const char *mode, int rank, int size, int *peer, int *initiator) {
  const int half = size / 2;
  if (strcmp(mode, "one") && strcmp(mode, "all"))
    return -1;
  const int one = !strcmp(mode, "one");
  if (half == 0)
    return 0;
  if (rank < half && (!one || rank == 0)) {
    *peer = rank + half;
    *initiator = 1;
    return 1;
  }
  if (rank >= half && rank < 2 * half && (!one || rank == half)) {
    *peer = rank - half;
    *initiator = 0;
    return 1;
  }
  return 0;
}

void wl_pair_setup(contend_ctx *c, wl_pair_state *ps, size_t bytes) {
  ps->active = wl_pair(contend_param_str(c->params, "pairs"), c->rank, c->size, &ps->peer,
                       &ps->initiator) == 1;
  if (ps->active) {
    ps->s = contend_alloc(c, bytes);
    ps->r = contend_alloc(c, bytes);
  }
  c->msg_bytes = bytes;
  c->metric_scale = ps->active && ps->initiator ? 2.0 : 0.0;
}

void wl_pingpong(contend_ctx *c, void *sbuf, void *rbuf, size_t bytes, int peer, int initiator,
                 long times) {
  /* {buf, bytes, peer, tag, send}: pings carry tag 0, replies tag 1 */
  static const int together[1] = {2}, in_turn[2] = {1, 1};
  if (initiator) {
    const contend_xfer x[2] = {{rbuf, bytes, peer, 1, 0}, {sbuf, bytes, peer, 0, 1}};
    contend_repeat(c, x, together, 1, times);
  } else {
    const contend_xfer x[2] = {{rbuf, bytes, peer, 0, 0}, {sbuf, bytes, peer, 1, 1}};
    contend_repeat(c, x, in_turn, 2, times);
  }
}

int wl_pair_validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  int peer, init;
  if (wl_pair(contend_param_str(p, "pairs"), 0, 2, &peer, &init) < 0) {
    snprintf(err, errlen, "pairs='%s' is not valid: expected one or all",
             contend_param_str(p, "pairs"));
    return -1;
  }
  if (nranks == 1) {
    snprintf(err, errlen, "needs a job of at least 2 ranks");
    return -1;
  }
  return 0;
}
