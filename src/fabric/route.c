/* Routing on the simulated fabric, the generic part: a routing object made
 * from its registry row (routings.c), its VCs and lanes, and sim_route /
 * sim_route_alternatives, which reset a packet's state at its source router
 * and hand the hop to the routing's hooks (routing_*.c).
 *
 * Lanes: with vcs >= lanes * classes, VC = class * lanes + lane, lane =
 * src mod lanes fixed at injection (st->lane).  Lanes are disjoint copies
 * of the class graph, so deadlock freedom carries over.
 *
 * The first hop is recognized by in_port being a node port (or < 0): the
 * source-router decisions (lane, valiant/ugal) are taken there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_impl.h"

uint32_t sim_routing_ugal_threshold(const sim_routing *R) { return R->thr; }

const char *sim_routing_name(const sim_routing *R) { return R->def->name; }
int sim_routing_vcs(const sim_routing *R) { return R->vcs; }
int sim_routing_max_hops(const sim_routing *R) { return R->max_hops; }
const sim_topo *sim_routing_topo(const sim_routing *R) { return R->t; }
int sim_routing_classes(const sim_routing *R) { return R->classes; }
int sim_routing_lanes(const sim_routing *R) { return R->lanes; }
unsigned sim_routing_flags(const sim_routing *R) { return R->def->flags; }
int64_t sim_routing_key_rank(const sim_routing *R, int dst) {
  return R->def->key_rank ? R->def->key_rank(R, dst) : 0;
}
int64_t sim_routing_dclass(const sim_routing *R, int r, int dst) {
  return R->def->dclass ? R->def->dclass(R, r, dst) : dst;
}

void sim_routing_free(sim_routing *R) {
  if (!R)
    return;
  free(R->xlo);
  free(R->leaf_of);
  free(R->tab);
  free(R->pool);
  free(R->dfw);
  free(R);
}

/* ---- construction ---- */

static int setup(const sim_topo *t, const char *name, const sim_routing_opts *opts,
                 sim_routing **out, char *err, size_t errlen, int unchecked) {
  *out = NULL;
  const sim_routing_opts o = opts ? *opts : (sim_routing_opts){0};
  const sim_routing_def *def = sim_routing_lookup(t->kind, name);
  if (!def) {
    snprintf(err, errlen, "unknown routing '%s' for topology '%s' (known: %s)", name, t->spec,
             sim_routing_names(t->kind));
    return -1;
  }
  const int need = def->classes;
  int vcs = o.vcs ? o.vcs : need;
  if (vcs < 1 || vcs > SIM_MAX_VCS) {
    snprintf(err, errlen, "%d VCs: must be 1..%d", vcs, SIM_MAX_VCS);
    return -1;
  }
  if (vcs < need && !unchecked) {
    snprintf(err, errlen, "routing '%s' on '%s' needs at least %d VCs (got %d)", def->name, t->spec,
             need, vcs);
    return -1;
  }
  const int ncand = o.ugal_candidates ? o.ugal_candidates : SIM_UGAL_DEFAULT_CANDIDATES;
  if (ncand < 1 || ncand > SIM_UGAL_MAX_CANDIDATES) {
    snprintf(err, errlen, "%d UGAL candidates: must be 1..%d", ncand, SIM_UGAL_MAX_CANDIDATES);
    return -1;
  }
  sim_routing *R = calloc(1, sizeof *R);
  if (!R) {
    snprintf(err, errlen, "out of memory (routing)");
    return -1;
  }
  R->t = t;
  R->def = def;
  R->vcs = vcs;
  R->classes = vcs < need ? vcs : need;
  R->lanes = vcs / R->classes;
  R->thr = o.ugal_threshold;
  R->ncand = ncand;
  R->pkt_bytes = o.packet_bytes ? o.packet_bytes : 4096;
  R->max_hops = def->max_hops;
  if (def->init && def->init(R)) {
    sim_routing_free(R);
    snprintf(err, errlen, "out of memory (routing tables)");
    return -1;
  }
  *out = R;
  return 0;
}

int sim_routing_new(const sim_topo *t, const char *name, const sim_routing_opts *opts,
                    sim_routing **out, char *err, size_t errlen) {
  return setup(t, name, opts, out, err, errlen, 0);
}

int sim_routing_new_unchecked(const sim_topo *t, const char *name, const sim_routing_opts *opts,
                              sim_routing **out, char *err, size_t errlen) {
  return setup(t, name, opts, out, err, errlen, 1);
}

/* ---- per hop ---- */

/* 1 at the source router (in_port a node port, or < 0); then resets st. */
static inline int at_source(const sim_routing *R, int r, int in_port, int src,
                            sim_route_state *st) {
  const sim_topo *t = R->t;
  if (in_port >= 0 && t->peer[t->port_base[r] + in_port] >= 0)
    return 0;
  *st = (sim_route_state){.inter = -1, .lane = (uint8_t)((src >= 0 ? src : 0) % R->lanes)};
  return 1;
}

void sim_route(const sim_routing *R, int r, int in_port, int in_vc, int src, int dst,
               sim_route_state *st, sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_port,
               int *out_vc) {
  (void)in_vc;
  const int inject = at_source(R, r, in_port, src, st);
  *out_port = R->def->route(R, r, inject, dst, st, occ, occ_arg, rng, out_vc);
}

int sim_route_guess(const sim_routing *R, int r, int in_port, int src, int dst,
                    const sim_route_state *st0) {
  sim_route_state st = *st0;
  int vc;
  const int inject = at_source(R, r, in_port, src, &st);
  return R->def->route(R, r, inject, dst, &st, NULL, NULL, NULL, &vc);
}

int sim_route_alternatives(const sim_routing *R, int r, int in_port, int src, int dst,
                           const sim_route_state *st0, unsigned which, sim_route_alt *alts,
                           int max) {
  sim_route_state st = *st0;
  const int inject = at_source(R, r, in_port, src, &st);
  return R->def->alternatives(R, r, inject, dst, &st, which, alts, max);
}
