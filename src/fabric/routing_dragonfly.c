/* The dragonfly routings: minimal, valiant, UGAL-L, UGAL-G and PAR
 * (routing_impl.h).
 *
 * Dragonfly (the palm tree of topo_dragonfly.c: group G's links to group T
 * are its ports k = j * M + e, e = (G - T - 1) mod (M + 1), one per copy
 * j < links, on router k / h; M = floor(a*h / links)).  Towards group T a
 * router takes its own link when it has one (no local hop), else a copy
 * that depends on the router and T only (df_k_of): the parallel links share
 * the group pair's traffic, and the hop counts UGAL weighs are those of
 * the route taken.
 *   minimal   local-global-local;
 *   valiant   at the source router a uniformly random intermediate router
 *             of the whole network; when it lies in the source's or the
 *             destination's group the route is minimal, otherwise the
 *             packet goes minimally to that group and, once it enters it,
 *             minimally to the destination (the intermediate router itself
 *             is not visited: this keeps one local hop in the intermediate
 *             group, which is what lets 3 VC classes suffice).  Drawing
 *             from every group balances the global links: under the
 *             group_shift worst case each carries 2/g of a group's load
 *             (bound g/16 per node for a=4,h=2), where excluding the two
 *             end groups would leave the direct link idle (bound 7/16).
 *             Packets between two routers of one group may go through
 *             another group too;
 *   ugal      UGAL-L at the source router: ncand random intermediates
 *             (routers of groups other than the source's and the
 *             destination's, drawn with replacement); the candidate with
 *             the least q_val * H_val (the first drawn on a tie) is taken
 *             instead of the minimal path when q_min * H_min > q_val *
 *             H_val + threshold, q the occupancy of the path's first-hop
 *             port at the source router and H the router hops of the path;
 *   ugal-g    UGAL-G: as ugal, q adding the occupancy of the path's global
 *             channel out of the source group, read at the router that owns
 *             it (when that is not the source router), as if the source
 *             router saw the global queues of its group;
 *   par       progressive adaptive routing (Jiang, Kim, Dally, ISCA 2009):
 *             UGAL-L at the source router; a packet that leaves it
 *             minimally by a local hop to the gateway of its global link
 *             decides again there (UGAL-L with that router's own queues,
 *             the global link's among them: the same rule, candidates
 *             and threshold) and may turn non-minimal.  The turn's local
 *             hop, if any, is a second local hop in the source group.
 * VC class = global hops taken so far (local hops and the global hop
 * itself), plus one from par's turn on: minimal uses classes 0..1,
 * valiant/ugal/ugal-g 0..2, par 0..3 (a turned packet: local 0, local 1,
 * global 1, local 2, global 2, local 3).  Within a class a local hop only
 * waits for a global one or the ejection, and a global hop for the next
 * class: the classes never decrease along a route and no class holds a
 * cycle, so the channel dependency graph is acyclic (cdg.c checks it). */
#include <stdlib.h>

#include "routing_impl.h"

/* The group port router index i takes towards the group at offset e
 * ((G - T - 1) mod (M + 1) from group G to T): its own link to T if it
 * has one (at most one: M >= h), else copy (rank + e) mod gl,
 * rank = i's index among the routers of its group without a link to T.
 * Each copy then carries the traffic of about 1/gl of the group's
 * routers (its owner and an equal share of the others) to every router
 * of T, and a router's copies vary with T, so neither the global links,
 * the local hops to their owners nor the local hops out of the entry
 * routers concentrate (docs/simulator.md). */
static int df_k_of(const sim_routing *R, int i, int e) {
  const int k0 = i * R->hg;
  int jlo = k0 <= e ? 0 : (k0 - e + R->gm - 1) / R->gm; /* copies owned by routers below i */
  if (jlo > R->gl)
    jlo = R->gl;
  if (jlo < R->gl && jlo * R->gm + e < k0 + R->hg)
    return jlo * R->gm + e;
  return (i - jlo + e) % R->gl * R->gm + e;
}

/* A router's way towards the group at offset e: the group port it takes
 * (df_k_of), the index of that port's router in the group (the gateway)
 * and the index of the router the link enters in the target group. */
struct sim_df_way {
  int32_t k;
  int16_t gw, ent;
};
typedef struct sim_df_way df_way;

static df_way df_way_of(const sim_routing *R, int i, int e) {
  const int k = df_k_of(R, i, e), j = (k - e) / R->gm;
  return (df_way){
      .k = k, .gw = (int16_t)(k / R->hg), .ent = (int16_t)((j * R->gm + R->gm - 1 - e) / R->hg)};
}

/* The table of ways: router index i towards the group T at difference
 * d = G - T - 1 (-g .. g-2, its own group's d = -1 unused) at
 * [i * (2g - 1) + d + g]: 2 * a * g entries at most, twice the routers
 * (a <= SIM_TOPO_MAX_RADIX fits gw and ent). */
_Static_assert(SIM_TOPO_MAX_RADIX <= INT16_MAX, "a router index fits df_way's int16_t");

static int df_init(sim_routing *R) {
  const sim_topo *t = R->t;
  R->a = t->a;
  R->p = t->p;
  R->hg = t->hg;
  R->g = t->g;
  R->gl = t->gl > 0 ? t->gl : 1;
  R->gm = t->a * t->hg / R->gl;
  R->gp0 = t->p + t->a - 1;
  const int span = 2 * R->g - 1;
  R->dfw = calloc((size_t)R->a * (size_t)span, sizeof *R->dfw);
  if (!R->dfw)
    return -1;
  for (int i = 0; i < R->a; i++)
    for (int d = -R->g; d <= R->g - 2; d++)
      if (d != -1)
        R->dfw[(long)i * span + d + R->g] = df_way_of(R, i, d < 0 ? d + R->gm + 1 : d);
  return 0;
}

/* ---- geometry ---- */

static inline int df_local(const sim_routing *R, int i, int j) {
  return R->p + (j - i - 1 + R->a) % R->a;
}
/* Router r's way towards group T (T != r's group). */
static inline df_way df_way_to(const sim_routing *R, int r, int T) {
  return R->dfw[(long)(r % R->a) * (2 * R->g - 1) + r / R->a - T - 1 + R->g];
}
/* First port from router r towards group T (T != r's group). */
static inline int df_to_group(const sim_routing *R, int r, int T) {
  const df_way w = df_way_to(R, r, T);
  const int i = r % R->a;
  return i == w.gw ? R->gp0 + w.k - w.gw * R->hg : df_local(R, i, w.gw);
}
/* First port from router r towards router d (r != d). */
static inline int df_to_router(const sim_routing *R, int r, int d) {
  return r / R->a == d / R->a ? df_local(R, r % R->a, d % R->a) : df_to_group(R, r, d / R->a);
}
/* Router hops from x to y on the minimal route. */
static int df_hops(const sim_routing *R, int x, int y) {
  if (x == y)
    return 0;
  const int Gy = y / R->a;
  if (x / R->a == Gy)
    return 1;
  const df_way w = df_way_to(R, x, Gy);
  return (x % R->a != w.gw) + 1 + (Gy * R->a + w.ent != y);
}
/* Router hops from s by way of group I to d. */
static int df_hops_valiant(const sim_routing *R, int s, int I, int d) {
  const df_way w = df_way_to(R, s, I);
  return (s % R->a != w.gw) + 1 + df_hops(R, I * R->a + w.ent, d);
}

/* Valiant's candidate groups for a packet from group Gs to group Gd. */
static inline int df_ncand(const sim_routing *R, int Gs, int Gd) { return R->g - 1 - (Gs != Gd); }
static inline int df_cand_group(int k, int Gs, int Gd) {
  const int lo = Gs < Gd ? Gs : Gd, hi = Gs < Gd ? Gd : Gs;
  if (k >= lo)
    k++;
  if (Gs != Gd && k >= hi)
    k++;
  return k;
}

/* The port of a dragonfly packet past its source decision; updates phase. */
static inline int df_port(const sim_routing *R, int r, int dst, sim_route_state *st) {
  const sim_topo *t = R->t;
  if (st->inter >= 0 && st->phase == 0) {
    if (r / R->a == st->inter / R->a)
      st->phase = 1;
    else
      return df_to_group(R, r, st->inter / R->a);
  }
  const int d = t->node_router[dst];
  return r == d ? t->node_port[dst] : df_to_router(R, r, d);
}

/* The hop from r on port: its VC, and the global hop counted. */
static inline int df_hop(const sim_routing *R, int port, sim_route_state *st, int *out_vc) {
  *out_vc = sim_vc_of(R, st->ghops + st->divert, st->lane);
  if (port >= R->gp0)
    st->ghops++;
  return port;
}

/* ---- per hop ---- */

static int route_minimal(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
                         sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {
  (void)inject, (void)occ, (void)occ_arg, (void)rng;
  return df_hop(R, df_port(R, r, dst, st), st, out_vc);
}

static int route_valiant(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
                         sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {
  (void)occ, (void)occ_arg;
  const int d = R->t->node_router[dst];
  if (inject && r != d) {
    /* drawn from every group; the source's or the destination's own group
     * makes the route minimal */
    const int k = rng ? (int)contend_rng_below(rng, (uint64_t)R->g * (uint64_t)R->a) : 0;
    const int I = k / R->a;
    if (I != r / R->a && I != d / R->a) {
      st->inter = I * R->a + k % R->a;
      st->nonmin = 1;
    }
  }
  return df_hop(R, df_port(R, r, dst, st), st, out_vc);
}

/* The occupancy UGAL weighs for a path leaving r by port `first` towards
 * group T (-1: the destination is in r's group): the first hop's; for
 * UGAL-G (global) also that of the path's global channel, read at the
 * router of r's group that owns it when that is not r. */
static uint64_t path_q(const sim_routing *R, int r, int first, int T, int global, sim_occ_fn occ,
                       void *occ_arg) {
  if (!occ)
    return 0;
  uint64_t q = occ(occ_arg, r, first);
  if (global && T >= 0) {
    const df_way w = df_way_to(R, r, T);
    const int gw = r / R->a * R->a + w.gw;
    if (gw != r)
      q += occ(occ_arg, gw, R->gp0 + w.k - w.gw * R->hg);
  }
  return q;
}

/* UGAL's decision at router r for a packet to router d (r != d): sets
 * st->inter when the best of R->ncand random intermediates beats the
 * minimal path (see the file comment). */
static void ugal_decide(const sim_routing *R, int r, int d, int global, sim_route_state *st,
                        sim_occ_fn occ, void *occ_arg, contend_rng *rng) {
  const int Gs = r / R->a, Gd = d / R->a, nc = df_ncand(R, Gs, Gd);
  if (nc <= 0)
    return;
  const uint64_t cmin =
      path_q(R, r, df_to_router(R, r, d), Gs == Gd ? -1 : Gd, global, occ, occ_arg) *
      (uint64_t)df_hops(R, r, d);
  uint64_t best = UINT64_MAX;
  int inter = -1;
  for (int c = 0; c < R->ncand; c++) {
    const int k = rng ? (int)contend_rng_below(rng, (uint64_t)nc * (uint64_t)R->a) : 0;
    const int I = df_cand_group(k / R->a, Gs, Gd);
    const uint64_t cval = path_q(R, r, df_to_group(R, r, I), I, global, occ, occ_arg) *
                          (uint64_t)df_hops_valiant(R, r, I, d);
    if (cval < best) {
      best = cval;
      inter = I * R->a + k % R->a;
    }
  }
  if (cmin > best + R->thr) {
    st->inter = inter;
    st->nonmin = 1;
  }
}

static int route_ugal(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
                      sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {
  const int d = R->t->node_router[dst];
  if (inject && r != d)
    ugal_decide(R, r, d, 0, st, occ, occ_arg, rng);
  return df_hop(R, df_port(R, r, dst, st), st, out_vc);
}

static int route_ugal_g(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
                        sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {
  const int d = R->t->node_router[dst];
  if (inject && r != d)
    ugal_decide(R, r, d, 1, st, occ, occ_arg, rng);
  return df_hop(R, df_port(R, r, dst, st), st, out_vc);
}

/* par: UGAL-L at the source router; a packet that leaves it minimally by
 * a local hop towards another group is pending, and the next router (the
 * gateway of the minimal path's global link) decides again, seeing that
 * global link's queue as its own port's.  A packet that turns there
 * takes one VC class more on every later hop (st->divert). */
static int route_par(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
                     sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {
  const int d = R->t->node_router[dst];
  if (inject && r != d) {
    ugal_decide(R, r, d, 0, st, occ, occ_arg, rng);
    st->pending = st->inter < 0 && r / R->a != d / R->a && df_to_router(R, r, d) < R->gp0;
  } else if (st->pending) {
    st->pending = 0;
    ugal_decide(R, r, d, 0, st, occ, occ_arg, rng);
    st->divert = st->inter >= 0;
  }
  return df_hop(R, df_port(R, r, dst, st), st, out_vc);
}

/* ---- alternatives ---- */

/* The choices at r: at a decision router (decide) of a routing with
 * non-minimal routes (nonmin: 1 valiant, which then never takes the
 * minimal route, 2 ugal), one per intermediate group, then the minimal
 * one.  `which` filters at a decision router only.  The non-minimal
 * choices get st.divert = divert; the minimal one st.pending = pending
 * when its first hop stays in r's group towards another group (par). */
static int df_alternatives(const sim_routing *R, int r, int decide, int nonmin, int divert,
                           int pending, int dst, const sim_route_state *st0, unsigned which,
                           sim_route_alt *alts, int max) {
  const int d = R->t->node_router[dst];
  sim_route_state st = *st0;
  int n = 0, minimal_ok = 1;
  if (decide && nonmin && r != d) {
    const int Gs = r / R->a, Gd = d / R->a, nc = df_ncand(R, Gs, Gd);
    if (nc > 0) {
      minimal_ok = nonmin == 2;
      if (which & SIM_ALT_NONMIN)
        for (int k = 0; k < nc; k++) {
          sim_route_state s2 = st;
          s2.inter = df_cand_group(k, Gs, Gd) * R->a;
          s2.nonmin = 1;
          s2.divert = (uint8_t)divert;
          int vc;
          const int port = df_hop(R, df_port(R, r, dst, &s2), &s2, &vc);
          sim_alt_put(alts, max, &n, port, vc, &s2);
        }
    }
  }
  if ((decide && !(which & SIM_ALT_MIN)) || !minimal_ok)
    return n;
  int vc;
  const int port = df_hop(R, df_port(R, r, dst, &st), &st, &vc);
  if (pending && r / R->a != d / R->a && port < R->gp0)
    st.pending = 1;
  sim_alt_put(alts, max, &n, port, vc, &st);
  return n;
}

static int alts_minimal(const sim_routing *R, int r, int inject, int dst, const sim_route_state *st,
                        unsigned which, sim_route_alt *alts, int max) {
  return df_alternatives(R, r, inject, 0, 0, 0, dst, st, which, alts, max);
}

/* valiant: the minimal route only by way of its own two groups, which are
 * not listed as intermediates (their routes are the minimal one) */
static int alts_valiant(const sim_routing *R, int r, int inject, int dst, const sim_route_state *st,
                        unsigned which, sim_route_alt *alts, int max) {
  return df_alternatives(R, r, inject, 1, 0, 0, dst, st, which, alts, max);
}

static int alts_ugal(const sim_routing *R, int r, int inject, int dst, const sim_route_state *st,
                     unsigned which, sim_route_alt *alts, int max) {
  return df_alternatives(R, r, inject, 2, 0, 0, dst, st, which, alts, max);
}

/* par: the source router's choices as ugal's, marking the minimal one
 * pending; at a pending packet's next router, the minimal hop and the
 * diversions (one VC class up). */
static int alts_par(const sim_routing *R, int r, int inject, int dst, const sim_route_state *st,
                    unsigned which, sim_route_alt *alts, int max) {
  if (inject)
    return df_alternatives(R, r, 1, 2, 0, 1, dst, st, which, alts, max);
  if (st->pending) {
    sim_route_state s2 = *st;
    s2.pending = 0;
    return df_alternatives(R, r, 1, 2, 1, 0, dst, &s2, which, alts, max);
  }
  return df_alternatives(R, r, 0, 2, 0, 0, dst, st, which, alts, max);
}

/* The class of dst at r (routing_impl.h's dclass), the same for every
 * dragonfly routing: what df_alternatives reads of dst is its node port
 * at its router, its router when in r's group (the local port to it),
 * else its group (the way there, UGAL's candidate groups, par's pending
 * mark).  Phase 0 depends on the intermediate only. */
static int64_t df_dclass(const sim_routing *R, int r, int dst) {
  const int d = R->t->node_router[dst];
  if (r == d)
    return -1 - (int64_t)R->t->node_port[dst];
  return r / R->a == d / R->a ? (int64_t)R->g + d % R->a : d / R->a;
}

const sim_routing_def sim_routing_df_minimal = {
    .name = "minimal",
    .kinds = SIM_KIND(SIM_TOPO_DRAGONFLY),
    .classes = 2,
    .max_hops = 3,
    .init = df_init,
    .route = route_minimal,
    .dclass = df_dclass,
    .alternatives = alts_minimal,
    .help = "local-global-local",
};

const sim_routing_def sim_routing_df_valiant = {
    .name = "valiant",
    .kinds = SIM_KIND(SIM_TOPO_DRAGONFLY),
    .classes = 3,
    .max_hops = 5,
    .flags = SIM_RF_NONMIN,
    .init = df_init,
    .route = route_valiant,
    .dclass = df_dclass,
    .alternatives = alts_valiant,
    .help = "by a uniformly random intermediate router of the whole network (minimal when it "
            "is in the source's or the destination's group)",
};

const sim_routing_def sim_routing_df_ugal = {
    .name = "ugal",
    .kinds = SIM_KIND(SIM_TOPO_DRAGONFLY),
    .classes = 3,
    .max_hops = 5,
    .flags = SIM_RF_NONMIN,
    .init = df_init,
    .route = route_ugal,
    .dclass = df_dclass,
    .alternatives = alts_ugal,
    .help = "UGAL-L at the source router: minimal, or the best of --ugal-candidates random "
            "intermediates, by first-hop occupancy x hops",
};

const sim_routing_def sim_routing_df_ugal_g = {
    .name = "ugal-g",
    .kinds = SIM_KIND(SIM_TOPO_DRAGONFLY),
    .classes = 3,
    .max_hops = 5,
    .flags = SIM_RF_NONMIN,
    .init = df_init,
    .route = route_ugal_g,
    .dclass = df_dclass,
    .alternatives = alts_ugal,
    .help = "UGAL-G at the source router: as ugal, q adding the occupancy of each path's global "
            "channel (read at the router of the source group that owns it)",
};

const sim_routing_def sim_routing_df_par = {
    .name = "par",
    .kinds = SIM_KIND(SIM_TOPO_DRAGONFLY),
    .classes = 4,
    .max_hops = 6,
    .flags = SIM_RF_NONMIN | SIM_RF_REEVAL,
    .init = df_init,
    .route = route_par,
    .dclass = df_dclass,
    .alternatives = alts_par,
    .help = "progressive adaptive: ugal at the source router, decided again at the next router "
            "of the source group (the minimal path's gateway); one VC class more",
};
