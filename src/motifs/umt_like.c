/* umt_like: the communication skeleton of UMT (deterministic S_n
 * radiation transport) as the fat-tree congestion study describes it
 * (seeds/fattree-congestion-poster.md): a 7-point stencil, one message to
 * each face neighbour of a 3-D decomposition, ~53 kB on average.  Every
 * rank owns a fixed block (weak scaling) on a non-periodic px x py x pz
 * process grid (axis 0 fastest: rank = x + px (y + py z)).  One iteration:
 * the compute phase (compute_time), the face exchange with the (up to) 6
 * neighbours, waited for together, then an allreduce of reduce_count
 * doubles (the convergence test; 0: none). */
#include <stdio.h>

#include "allreduce_kernel.h"
#include "halo.h"

typedef struct {
  halo_state h;
  contend_allreduce_kernel red;
  int reduce;
  double compute_s;
} state;

static const contend_param_def params[] = {
    WL_ITERS(10),
    {"face_bytes", CONTEND_P_INT, "53000", "B", "bytes per face message (UMT: ~53 kB)", 1, 1 << 30},
    HALO_PROXY_PGRID,
    {"compute_time", CONTEND_P_DOUBLE, "1e-3", "s", "compute phase per iteration", 0, 3600},
    {"reduce_count", CONTEND_P_INT, "1", "count",
     "doubles in the allreduce per iteration (0: no allreduce)", 0, 1 << 20},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return halo_grid_validate(p, nranks, 3, err, errlen);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  int dims[3];
  if (halo_grid_of(c->params, c->size, 3, dims, c->error, sizeof c->error))
    return -1;
  halo_place(&s->h, 3, dims, c->rank);
  size_t bytes[6];
  for (int dir = 0; dir < 6; dir++)
    bytes[dir] = (size_t)contend_param_int(c->params, "face_bytes");
  halo_connect(c, &s->h, 0, 1, bytes, 0);
  s->reduce = (int)contend_param_int(c->params, "reduce_count");
  if (s->reduce > 0)
    contend_allreduce_kernel_setup(c, &s->red, s->reduce, CONTEND_OP_SUM);
  s->compute_s = contend_param_double(c->params, "compute_time");
  c->msg_bytes = halo_biggest(&s->h);
  c->metric_scale = 1.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  halo_fill(c, &s->h);
  if (s->reduce > 0)
    contend_allreduce_kernel_prepare(c, &s->red);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  if (s->compute_s > 0)
    contend_compute(c, s->compute_s);
  halo_exchange(c, &s->h);
  if (s->reduce > 0)
    contend_allreduce_kernel_iterate(c, &s->red);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  halo_verify(c, &s->h);
  if (s->reduce > 0 && c->ops->colls_compute)
    contend_allreduce_kernel_check(c, &s->red);
}

const contend_motif contend_motif_umt_like = {
    .name = "umt_like",
    .label = "UMT-like transport",
    .help = "UMT-like: compute, 7-point face exchange of face_bytes (53 kB) on a 3-D grid, "
            "allreduce per iteration",
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
