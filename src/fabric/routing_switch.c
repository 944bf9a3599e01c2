/* The single switch's routing (routing_impl.h): every node one hop away,
 * straight to the destination's port, VC class 0. */
#include "routing_impl.h"

static int sw_route(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
                    sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {
  (void)r, (void)inject, (void)occ, (void)occ_arg, (void)rng;
  *out_vc = sim_vc_of(R, 0, st->lane);
  return R->t->node_port[dst];
}

static int sw_alternatives(const sim_routing *R, int r, int inject, int dst,
                           const sim_route_state *st, unsigned which, sim_route_alt *alts,
                           int max) {
  (void)r, (void)inject, (void)which;
  int n = 0;
  sim_alt_put(alts, max, &n, R->t->node_port[dst], sim_vc_of(R, 0, st->lane), st);
  return n;
}

const sim_routing_def sim_routing_switch_minimal = {
    .name = "minimal",
    .kinds = SIM_KIND(SIM_TOPO_SWITCH),
    .classes = 1,
    .max_hops = 0,
    .route = sw_route,
    .alternatives = sw_alternatives,
    .help = "the destination's port",
};
