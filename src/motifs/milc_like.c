/* milc_like: the communication skeleton of a MILC conjugate-gradient
 * iteration (lattice QCD, staggered fermions), the most delay-sensitive of
 * the three application proxies.  Every rank holds a fixed local lattice
 * lx x ly x lz x lt (weak scaling) on a periodic px x py x pz x pt process
 * grid.  One iteration: the Dslash gathers, one face message to each of the
 * 8 neighbours (+-x, +-y, +-z, +-t; face sites x site_bytes, 48 B = one
 * SU(3) colour vector of 3 complex doubles), waited for together; the
 * local work (site_time per local site); the CG dot product, an allreduce of
 * reduce_count doubles.  Messages are small (3 KiB faces on 4^4 sites) and
 * every iteration synchronises the job: runtime follows network latency. */
#include "halo.h"

static const contend_param_def params[] = {
    WL_ITERS(200),
    {"lx", CONTEND_P_INT, "4", "sites", "local lattice per rank, x", 1, 1e6},
    {"ly", CONTEND_P_INT, "4", "sites", "local lattice per rank, y", 1, 1e6},
    {"lz", CONTEND_P_INT, "4", "sites", "local lattice per rank, z", 1, 1e6},
    {"lt", CONTEND_P_INT, "4", "sites", "local lattice per rank, t", 1, 1e6},
    HALO_PROXY_PGRID,
    WL_PGRID("pt", "t", ""),
    {"site_bytes", CONTEND_P_INT, "48", "B",
     "bytes per face site (48: an SU(3) vector, 3 complex doubles)", 1, 1 << 20},
    {"reduce_count", CONTEND_P_INT, "1", "count",
     "doubles in the CG dot-product allreduce per iteration", 1, 1 << 20},
    {"site_time", CONTEND_P_DOUBLE, "125e-9", "s",
     "compute per local site and iteration (125 ns x 4^4 sites = 32 us per iteration)", 0, 1},
    CONTEND_PARAM_END};

static const char *const lnames[4] = {"lx", "ly", "lz", "lt"};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return halo_grid_validate(p, nranks, 4, err, errlen);
}

static int setup(contend_ctx *c) {
  halo_proxy *s = c->state;
  if (halo_proxy_place(c, 4))
    return -1;
  long sites = 1;
  for (int d = 0; d < 4; d++) {
    s->h.loc[d] = (long)contend_param_int(c->params, lnames[d]);
    sites *= s->h.loc[d];
  }
  size_t bytes[8];
  for (int dir = 0; dir < 8; dir++) {
    bytes[dir] = (size_t)contend_param_int(c->params, "site_bytes");
    for (int e = 0; e < 4; e++)
      if (e != dir / 2)
        bytes[dir] *= (size_t)s->h.loc[e];
  }
  halo_connect(c, &s->h, 1, 1, bytes, 0);
  halo_proxy_finish(c, (int)contend_param_int(c->params, "reduce_count"),
                    contend_param_double(c->params, "site_time") * (double)sites);
  return 0;
}

static void iterate(contend_ctx *c) {
  halo_proxy *s = c->state;
  halo_exchange(c, &s->h); /* Dslash gathers from the 8 neighbours */
  if (s->compute_s > 0)
    contend_compute(c, s->compute_s);
  contend_allreduce_kernel_iterate(c, &s->red); /* CG dot product */
}

const contend_motif contend_motif_milc_like = {
    .name = "milc_like",
    .label = "MILC-like CG",
    .help = "MILC-like CG: 4-D halo of small faces to 8 neighbours, compute, allreduce per "
            "iteration (latency-bound)",
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
