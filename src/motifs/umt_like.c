/* umt_like: the communication skeleton of UMT (deterministic S_n
 * radiation transport) as the fat-tree congestion study describes it
 * (seeds/fattree-congestion-poster.md): a 7-point stencil, one message to
 * each face neighbour of a 3-D decomposition, ~53 kB on average.  Every
 * rank owns a fixed block (weak scaling) on a non-periodic px x py x pz
 * process grid (axis 0 fastest: rank = x + px (y + py z)).  One iteration:
 * the compute phase (compute_time), the face exchange with the (up to) 6
 * neighbours, waited for together, then an allreduce of reduce_count
 * doubles (the convergence test; 0: none). */
#include "halo.h"

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
  halo_proxy *s = c->state;
  if (halo_proxy_place(c, 3))
    return -1;
  size_t bytes[6];
  for (int dir = 0; dir < 6; dir++)
    bytes[dir] = (size_t)contend_param_int(c->params, "face_bytes");
  halo_connect(c, &s->h, 0, 1, bytes, 0);
  halo_proxy_finish(c, (int)contend_param_int(c->params, "reduce_count"),
                    contend_param_double(c->params, "compute_time"));
  return 0;
}

static void iterate(contend_ctx *c) {
  halo_proxy *s = c->state;
  if (s->compute_s > 0)
    contend_compute(c, s->compute_s);
  halo_exchange(c, &s->h);
  if (s->reduce > 0)
    contend_allreduce_kernel_iterate(c, &s->red);
}

const contend_motif contend_motif_umt_like = {
    .name = "umt_like",
    .label = "UMT-like transport",
    .help = "UMT-like: compute, 7-point face exchange of face_bytes (53 kB) on a 3-D grid, "
            "allreduce per iteration",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(halo_proxy),
    .setup = setup,
    .prepare = halo_proxy_prepare,
    .iterate = iterate,
    .check = halo_proxy_check,
    .validate = validate,
};
