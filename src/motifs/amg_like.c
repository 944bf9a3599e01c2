/* amg_like: the communication skeleton of an algebraic-multigrid V-cycle
 * (AMG / BoomerAMG on a 3-D Laplacian), the least delay-sensitive of the
 * three application proxies: most of its time is memory-bound relaxation.
 * Every rank owns an n x n x n block of the fine grid (weak scaling) on a
 * non-periodic px x py x pz process grid.  Level l (0: finest) keeps
 * m = max(1, n >> l) points per axis and talks to the ranks 2^l grid
 * steps away along each axis (coarse levels reach past the next rank: the
 * coarse operator's neighbours are non-local; none past the grid's edge).
 * A relaxation sweep on level l overlaps its halo with the interior, as
 * hypre's matrix-vector product does: post the exchange of the 6 faces of
 * m^2 x elem_bytes, compute the (m-2)^3 interior points, wait, compute the
 * boundary points (point_time per point).  The fine levels hide network
 * delay behind milliseconds of interior work; the coarse levels, with
 * little work and the farther neighbours, expose it.
 * One iteration is one V-cycle:
 *   down, levels 0 .. L-2: `sweeps` relaxations;
 *   coarsest level L-1: the same, then an allreduce of reduce_count doubles
 *     (the coarse solve's / residual norm's reduction);
 *   up, levels L-2 .. 0: `sweeps` relaxations again.
 * L = levels, or every level down to one point per axis when 0.
 * stencil=27 (the 27-point operator of the fat-tree study's AMG test
 * problem) adds the 12 edge (m x elem_bytes) and 8 corner (elem_bytes)
 * neighbours at the same distance to every relaxation's exchange;
 * stencil=7 (the default) exchanges faces only. */
#include <stdio.h>

#include "allreduce_kernel.h"
#include "halo.h"

#define MAX_LEVELS 16
#define NDIAG 20      /* edge and corner directions of a 27-point stencil */
#define DIAG_TAG0 128 /* tags DIAG_TAG0 + NDIAG l + k (faces use 6 l + dir) */

typedef struct {
  int levels, sweeps;
  halo_state lv[MAX_LEVELS];
  double interior_s[MAX_LEVELS], boundary_s[MAX_LEVELS];
  contend_allreduce_kernel red;
  /* stencil=27: per level and diagonal direction k, the peer (-1: none) */
  int stencil;
  int dpeer[MAX_LEVELS][NDIAG];
  size_t dbytes[MAX_LEVELS][NDIAG];
  unsigned char *dsbuf[MAX_LEVELS][NDIAG], *drbuf[MAX_LEVELS][NDIAG];
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"n", CONTEND_P_INT, "32", "points", "fine-grid points per axis of each rank's block", 1,
     32768},
    {"levels", CONTEND_P_INT, "0", "count",
     "multigrid levels (0: down to one point per axis, floor(log2 n) + 1)", 0, MAX_LEVELS},
    {"sweeps", CONTEND_P_INT, "1", "count",
     "relaxation sweeps per level on the way down and again on the way up", 1, 1000},
    HALO_PROXY_PGRID,
    {"elem_bytes", CONTEND_P_INT, "8", "B", "bytes per face point", 1, 1024},
    {"point_time", CONTEND_P_DOUBLE, "200e-9", "s",
     "relaxation compute per point and sweep, restriction and interpolation included (200 ns x "
     "32^3 = 6.6 ms per fine-level sweep, 15 ms per V-cycle with the defaults)",
     0, 1},
    {"reduce_count", CONTEND_P_INT, "1", "count", "doubles in the coarse-level allreduce", 1,
     1 << 20},
    {"stencil", CONTEND_P_INT, "7", "points",
     "7: face neighbours only; 27: also the edge and corner neighbours", 7, 27},
    CONTEND_PARAM_END};

/* Levels down to one point per axis. */
static int max_levels(long n) {
  int l = 1;
  while ((n >> l) >= 1)
    l++;
  return l;
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  const long n = (long)contend_param_int(p, "n");
  const int levels = (int)contend_param_int(p, "levels");
  if (levels > max_levels(n)) {
    snprintf(err, errlen,
             "levels=%d is more than n=%ld points per axis allow (%d: halving down to one point)",
             levels, n, max_levels(n));
    return -1;
  }
  const long long st = contend_param_int(p, "stencil");
  if (st != 7 && st != 27) {
    snprintf(err, errlen, "stencil=%lld is not valid: expected 7 or 27", st);
    return -1;
  }
  return halo_grid_validate(p, nranks, 3, err, errlen);
}

/* The diagonal directions (two or three non-zero offsets), in a fixed
 * order: o[k][0..2]; opposite(k) is the index of -o[k]. */
static void diag_offsets(int o[NDIAG][3]) {
  int k = 0;
  for (int z = -1; z <= 1; z++)
    for (int y = -1; y <= 1; y++)
      for (int x = -1; x <= 1; x++)
        if ((x != 0) + (y != 0) + (z != 0) >= 2)
          o[k][0] = x, o[k][1] = y, o[k][2] = z, k++;
}
static int opposite(int k) { return NDIAG - 1 - k; } /* the order is symmetric */

/* Edge and corner neighbours of level l at grid distance dist (none past
 * the grid's edge), with their buffers. */
static void diag_connect(contend_ctx *c, state *s, int l, int dist, long m, size_t elem) {
  int o[NDIAG][3];
  diag_offsets(o);
  const halo_state *h = &s->lv[l];
  for (int k = 0; k < NDIAG; k++) {
    int q[3], in = 1;
    for (int d = 0; d < 3; d++) {
      q[d] = h->coord[d] + o[k][d] * dist;
      in &= q[d] >= 0 && q[d] < h->dims[d];
    }
    s->dpeer[l][k] = in ? q[0] + h->dims[0] * (q[1] + h->dims[1] * q[2]) : -1;
    const int edge = (o[k][0] != 0) + (o[k][1] != 0) + (o[k][2] != 0) == 2;
    s->dbytes[l][k] = (size_t)(edge ? m : 1) * elem;
    if (in) {
      s->dsbuf[l][k] = contend_alloc(c, s->dbytes[l][k]);
      s->drbuf[l][k] = contend_alloc(c, s->dbytes[l][k]);
    }
  }
}

static void diag_post(contend_ctx *c, const state *s, int l) {
  for (int k = 0; k < NDIAG; k++)
    if (s->dpeer[l][k] >= 0) /* the peer at +o sends its -o message */
      contend_irecv(c, s->drbuf[l][k], s->dbytes[l][k], s->dpeer[l][k],
                    DIAG_TAG0 + NDIAG * l + opposite(k));
  for (int k = 0; k < NDIAG; k++)
    if (s->dpeer[l][k] >= 0)
      contend_isend(c, s->dsbuf[l][k], s->dbytes[l][k], s->dpeer[l][k], DIAG_TAG0 + NDIAG * l + k);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  const contend_params *p = c->params;
  int dims[3];
  if (halo_grid_of(p, c->size, 3, dims, c->error, sizeof c->error))
    return -1;
  const long n = (long)contend_param_int(p, "n");
  s->levels = (int)contend_param_int(p, "levels");
  if (s->levels == 0)
    s->levels = max_levels(n);
  s->sweeps = (int)contend_param_int(p, "sweeps");
  s->stencil = (int)contend_param_int(p, "stencil");
  const size_t elem = (size_t)contend_param_int(p, "elem_bytes");
  const double point_time = contend_param_double(p, "point_time");
  for (int l = 0; l < s->levels; l++) {
    const long m = n >> l > 0 ? n >> l : 1;
    size_t bytes[6];
    for (int dir = 0; dir < 6; dir++)
      bytes[dir] = (size_t)(m * m) * elem;
    halo_place(&s->lv[l], 3, dims, c->rank);
    halo_connect(c, &s->lv[l], 0, 1 << l, bytes, 6 * l);
    if (s->stencil == 27)
      diag_connect(c, s, l, 1 << l, m, elem);
    const long in = m > 2 ? (m - 2) * (m - 2) * (m - 2) : 0;
    s->interior_s[l] = point_time * (double)in;
    s->boundary_s[l] = point_time * (double)(m * m * m - in);
  }
  contend_allreduce_kernel_setup(c, &s->red, (int)contend_param_int(p, "reduce_count"),
                                 CONTEND_OP_SUM);
  c->msg_bytes = halo_biggest(&s->lv[0]);
  c->metric_scale = 1.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int l = 0; l < s->levels; l++) {
    halo_fill(c, &s->lv[l]);
    for (int k = 0; k < NDIAG && s->stencil == 27; k++)
      if (s->dpeer[l][k] >= 0)
        contend_pattern_fill(s->dsbuf[l][k], s->dbytes[l][k], c->rank, c->iter,
                             1000 * (size_t)(l * NDIAG + k));
  }
  contend_allreduce_kernel_prepare(c, &s->red);
}

static void relax(contend_ctx *c, int l) {
  state *s = c->state;
  for (int k = 0; k < s->sweeps; k++) {
    halo_post(c, &s->lv[l]);
    if (s->stencil == 27)
      diag_post(c, s, l);
    if (s->interior_s[l] > 0)
      contend_compute(c, s->interior_s[l]);
    contend_waitall(c);
    if (s->boundary_s[l] > 0)
      contend_compute(c, s->boundary_s[l]);
  }
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  for (int l = 0; l < s->levels; l++)
    relax(c, l);
  contend_allreduce_kernel_iterate(c, &s->red);
  for (int l = s->levels - 2; l >= 0; l--)
    relax(c, l);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  for (int l = 0; l < s->levels; l++) {
    halo_verify(c, &s->lv[l]);
    for (int k = 0; k < NDIAG && s->stencil == 27; k++)
      if (s->dpeer[l][k] >= 0)
        contend_pattern_check(c, s->drbuf[l][k], s->dbytes[l][k], s->dpeer[l][k], c->iter,
                              1000 * (size_t)(l * NDIAG + opposite(k)));
  }
  if (c->ops->colls_compute)
    contend_allreduce_kernel_check(c, &s->red);
}

const contend_motif contend_motif_amg_like = {
    .name = "amg_like",
    .label = "AMG-like V-cycle",
    .help = "AMG-like V-cycle: per level relaxation compute and a shrinking halo to neighbours "
            "2^level ranks away, coarse allreduce (compute-bound)",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
};
