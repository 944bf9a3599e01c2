/* The fat-tree routings (xgft, fattree and Slurm trees): dmodk, random and
 * adaptive (two rules), and the tables they share (routing_impl.h).
 *
 * XGFT and fattree: O(1) arithmetic on the XGFT labels of topo_xgft.c.  A
 * packet at a level-l router goes down if dst lies in the router's subtree
 * (dst / prod_{i<=l} m_i == X), to child (dst / prod_{i<l} m_i) mod m_l,
 * else up:
 *   dmodk     up port (dst / prod_{i<=l} w_i) mod w_{l+1} (Zahavi's D-mod-k:
 *             shift permutations are contention free on full-bisection
 *             trees);
 *   random    a uniform up port per hop (the network's rng);
 *   adaptive  the up port with the least occupancy (occ: bytes queued for
 *             the port plus bytes held in the buffer downstream of it, all
 *             VCs), ties broken uniformly at random with the network's rng;
 *   dmodk-adaptive  D-mod-k's up port while its occupancy is within one
 *             packet (mtu + header) of the least occupied one, else one
 *             drawn uniformly among the up ports that are.
 *             Down ports are never a choice.
 * Slurm trees: per (switch, destination switch) table built here from the
 * graph.  Up candidates are the parents on a shortest way up to an
 * ancestor of the destination's switch (dmodk picks candidate (dst / d_l)
 * mod n, d_l the product of the largest parent counts of the levels
 * below); down candidates lead to the destination switch on a shortest
 * way, picked by the destination switch's index mod n (so routes depend on
 * the destination switch only, except dmodk's up choice).
 * One VC class. */
#include <stdlib.h>
#include <string.h>

#include "routing_impl.h"

#define DOWNFLAG (1 << 30)
#define NOROUTE INT32_MIN

/* ---- slurm tables ---- */

static int pool_add(sim_routing *R, int *cap, const int *list, int n, int down) {
  if (R->npool + n + 1 > *cap) {
    int c = *cap ? *cap : 1024;
    while (R->npool + n + 1 > c)
      c *= 2;
    int *p = realloc(R->pool, sizeof *p * (size_t)c);
    if (!p)
      return -1;
    R->pool = p;
    *cap = c;
  }
  const int off = R->npool;
  R->pool[off] = n | (down ? DOWNFLAG : 0);
  memcpy(R->pool + off + 1, list, sizeof *list * (size_t)n);
  R->npool += n + 1;
  return off;
}

/* Stores a candidate list for (r, leaf), sharing the previous list of r
 * when equal (last[r] = its pool offset). */
static int store(sim_routing *R, int *cap, int *last, int r, int leaf, const int *list, int n,
                 int down) {
  int32_t *e = &R->tab[(size_t)r * R->nleaf + leaf];
  if (n == 0) {
    *e = NOROUTE;
    return 0;
  }
  if (n == 1) {
    *e = list[0];
    return 0;
  }
  const int o = last[r];
  if (o >= 0 && R->pool[o] == (n | (down ? DOWNFLAG : 0)) &&
      !memcmp(R->pool + o + 1, list, sizeof *list * (size_t)n)) {
    *e = -(o + 1);
    return 0;
  }
  const int off = pool_add(R, cap, list, n, down);
  if (off < 0)
    return -1;
  last[r] = off;
  *e = -(off + 1);
  return 0;
}

static int build_slurm(sim_routing *R) {
  const sim_topo *t = R->t;
  const int nr = t->nrouters;
  int rc = -1, cap = 0;
  R->leaf_of = malloc(sizeof *R->leaf_of * (size_t)nr);
  int *order = malloc(sizeof *order * (size_t)nr), *dist = malloc(sizeof *dist * (size_t)nr);
  int *queue = malloc(sizeof *queue * (size_t)nr);
  int *anc = malloc(sizeof *anc * (size_t)nr), *last = malloc(sizeof *last * (size_t)nr);
  int *list = malloc(sizeof *list * (SIM_TOPO_MAX_RADIX + 1));
  if (!R->leaf_of || !order || !dist || !queue || !anc || !last || !list)
    goto out;
  R->nleaf = 0;
  int maxpar[SIM_MAX_LEVELS + 2] = {0};
  for (int r = 0; r < nr; r++) {
    int nodes = 0, par = 0;
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      const int q = t->peer[gp];
      if (q < 0 && q != SIM_UNCONNECTED)
        nodes = 1;
      else if (q >= 0 && t->router_level[sim_port_router(t, q)] > t->router_level[r])
        par++;
    }
    R->leaf_of[r] = nodes ? R->nleaf++ : -1;
    if (par > maxpar[t->router_level[r]])
      maxpar[t->router_level[r]] = par;
    order[r] = r;
    anc[r] = -1;
    last[r] = -1;
  }
  R->div[1] = 1;
  for (int l = 1; l < SIM_MAX_LEVELS; l++) {
    const long long d = (long long)R->div[l] * (maxpar[l] ? maxpar[l] : 1);
    R->div[l + 1] = d > SIM_TOPO_MAX_NODES ? SIM_TOPO_MAX_NODES + 1 : (int)d;
  }
  /* routers by level, ascending (counting sort) */
  int cnt[SIM_MAX_LEVELS + 2] = {0};
  for (int r = 0; r < nr; r++)
    cnt[t->router_level[r]]++;
  int pos[SIM_MAX_LEVELS + 2];
  pos[0] = 0;
  for (int l = 1; l <= SIM_MAX_LEVELS + 1; l++)
    pos[l] = pos[l - 1] + cnt[l - 1];
  for (int r = 0; r < nr; r++)
    order[pos[t->router_level[r]]++] = r;
  R->tab = malloc(sizeof *R->tab * (size_t)nr * (size_t)R->nleaf);
  if (!R->tab)
    goto out;
  for (int d = 0; d < nr; d++) {
    const int j = R->leaf_of[d];
    if (j < 0)
      continue;
    /* ancestors of d (d included): anc[] == d */
    int qt = 0;
    queue[qt++] = d;
    anc[d] = d;
    for (int qi = 0; qi < qt; qi++) {
      const int s = queue[qi];
      for (int gp = t->port_base[s]; gp < t->port_base[s + 1]; gp++) {
        const int q = t->peer[gp];
        if (q < 0)
          continue;
        const int u = sim_port_router(t, q);
        if (t->router_level[u] > t->router_level[s] && anc[u] != d) {
          anc[u] = d;
          queue[qt++] = u;
        }
      }
    }
    /* down: ascending levels, dist = hops down to d */
    for (int k = 0; k < nr; k++) {
      const int s = order[k];
      if (anc[s] != d)
        continue;
      if (s == d) {
        dist[s] = 0;
        R->tab[(size_t)s * R->nleaf + j] = NOROUTE; /* at d: the node port */
        continue;
      }
      int best = 1 << 30, n = 0;
      for (int gp = t->port_base[s]; gp < t->port_base[s + 1]; gp++) {
        const int q = t->peer[gp];
        if (q < 0)
          continue;
        const int u = sim_port_router(t, q);
        if (t->router_level[u] >= t->router_level[s] || anc[u] != d)
          continue;
        if (dist[u] < best) {
          best = dist[u];
          n = 0;
        }
        if (dist[u] == best)
          list[n++] = gp - t->port_base[s];
      }
      dist[s] = best + 1;
      if (store(R, &cap, last, s, j, list, n, 1))
        goto out;
    }
    /* up: descending levels, dist = hops up to an ancestor of d */
    for (int k = nr - 1; k >= 0; k--) {
      const int s = order[k];
      if (anc[s] == d)
        continue;
      int best = 1 << 30, n = 0;
      for (int gp = t->port_base[s]; gp < t->port_base[s + 1]; gp++) {
        const int q = t->peer[gp];
        if (q < 0)
          continue;
        const int u = sim_port_router(t, q);
        if (t->router_level[u] <= t->router_level[s])
          continue;
        const int du = anc[u] == d ? 0 : dist[u];
        if (du < best) {
          best = du;
          n = 0;
        }
        if (du == best && du < (1 << 30))
          list[n++] = gp - t->port_base[s];
      }
      dist[s] = best < (1 << 30) ? best + 1 : 1 << 30;
      if (store(R, &cap, last, s, j, list, n, 0))
        goto out;
    }
  }
  int maxl = 1;
  for (int r = 0; r < nr; r++)
    if (t->router_level[r] > maxl)
      maxl = t->router_level[r];
  R->max_hops = 2 * (maxl - 1);
  rc = 0;
out:
  free(order);
  free(dist);
  free(queue);
  free(anc);
  free(last);
  free(list);
  return rc;
}

/* ---- construction ---- */

static int tree_init(sim_routing *R) {
  const sim_topo *t = R->t;
  if (t->kind == SIM_TOPO_TREE)
    return build_slurm(R);
  R->R = t->h;
  R->Mp[0] = R->Wp[0] = 1;
  for (int l = 1; l <= t->h; l++) {
    R->M[l] = t->m[l - 1];
    R->Wt[l] = t->w[l - 1];
    R->Mp[l] = R->Mp[l - 1] * R->M[l];
    R->Wp[l] = R->Wp[l - 1] * R->Wt[l];
  }
  R->Wt[t->h + 1] = 0;
  R->max_hops = 2 * (t->h - 1);
  R->xlo = malloc(sizeof *R->xlo * (size_t)t->nrouters);
  if (!R->xlo)
    return -1;
  for (int r = 0, l = 1, idx = 0; r < t->nrouters; r++, idx++) {
    if (t->router_level[r] != l) {
      l = t->router_level[r];
      idx = 0;
    }
    R->xlo[r] = (idx / R->Wp[l]) * R->Mp[l];
  }
  return 0;
}

/* ---- per hop ---- */

/* Candidate ports at a tree router r (not dst's router): list[0..n) or
 * base..base+n-1; *down: 1 when going down (one deterministic choice). */
typedef struct {
  const int *list;
  int base, n, down, pick; /* pick: the dmodk / deterministic index */
} cands;

static inline cands tree_cands(const sim_routing *R, int r, int dst) {
  const sim_topo *t = R->t;
  cands c = {0};
  const int l = t->router_level[r];
  if (t->kind == SIM_TOPO_XGFT) {
    const int lo = R->xlo[r];
    if (dst >= lo && dst < lo + R->Mp[l]) {
      c.base = (dst / R->Mp[l - 1]) % R->M[l];
      c.n = 1;
      c.down = 1;
    } else {
      c.base = R->M[l];
      c.n = R->Wt[l + 1];
      c.pick = (dst / R->Wp[l]) % c.n;
    }
    return c;
  }
  const int leaf = R->leaf_of[t->node_router[dst]];
  const int32_t e = R->tab[(size_t)r * R->nleaf + leaf];
  if (e >= 0) {
    c.base = e;
    c.n = 1;
    c.down = 1;
  } else if (e == NOROUTE) {
    c.base = 0; /* unreachable (no traffic comes here): any port */
    c.n = 1;
    c.down = 1;
  } else {
    const int *p = R->pool + (-e - 1);
    c.list = p + 1;
    c.n = p[0] & ~DOWNFLAG;
    c.down = (p[0] & DOWNFLAG) != 0;
    c.pick = c.down ? leaf % c.n : (dst / R->div[l]) % c.n;
  }
  return c;
}

static inline int cand_port(const cands *c, int i) { return c->list ? c->list[i] : c->base + i; }

/* The up ports' choice of each routing: an index into c (c->n > 1, up). */
static int pick_dmodk(const sim_routing *R, int r, const cands *c, sim_occ_fn occ, void *occ_arg,
                      contend_rng *rng) {
  (void)R, (void)r, (void)occ, (void)occ_arg, (void)rng;
  return c->pick;
}

static int pick_random(const sim_routing *R, int r, const cands *c, sim_occ_fn occ, void *occ_arg,
                       contend_rng *rng) {
  (void)R, (void)r, (void)occ, (void)occ_arg;
  return rng ? (int)contend_rng_below(rng, (uint64_t)c->n) : c->pick;
}

/* The adaptive choices: the up ports whose occupancy is within slack
 * bytes of the least are the candidates; `prefer` (an index, or -1) when
 * it is one of them, else one drawn uniformly (one draw of the network's
 * rng; without an rng, the first: the unit tests). */
static int pick_least(int r, const cands *c, sim_occ_fn occ, void *occ_arg, contend_rng *rng,
                      uint64_t slack, int prefer) {
  uint32_t o[SIM_TOPO_MAX_RADIX], best = UINT32_MAX;
  for (int k = 0; k < c->n; k++) {
    o[k] = occ ? occ(occ_arg, r, cand_port(c, k)) : 0;
    if (o[k] < best)
      best = o[k];
  }
  const uint64_t lim = (uint64_t)best + slack;
  if (prefer >= 0 && o[prefer] <= lim)
    return prefer;
  int n = 0;
  for (int k = 0; k < c->n; k++)
    n += o[k] <= lim;
  int q = rng ? (int)contend_rng_below(rng, (uint64_t)n) : 0;
  for (int k = 0;; k++)
    if (o[k] <= lim && q-- == 0)
      return k;
}

/* adaptive: the least occupied up port, ties broken at random. */
static int pick_adaptive(const sim_routing *R, int r, const cands *c, sim_occ_fn occ, void *occ_arg,
                         contend_rng *rng) {
  (void)R;
  return pick_least(r, c, occ, occ_arg, rng, 0, -1);
}

/* dmodk-adaptive: D-mod-k's port while it is within a packet of the least
 * occupied one.  Keeping D-mod-k's port keeps its down paths, which do not
 * collide where a free choice's do: with one or two VCs (head-of-line
 * blocking) that accepts more than adaptive; the slack keeps the packet in
 * flight on a busy link from moving traffic off it, and is small enough
 * that a second input waiting for the port moves it (in an input-queued
 * router an output's queue is at most one head per input). */
static int pick_dmodk_adaptive(const sim_routing *R, int r, const cands *c, sim_occ_fn occ,
                               void *occ_arg, contend_rng *rng) {
  return pick_least(r, c, occ, occ_arg, rng, R->pkt_bytes, c->pick);
}

typedef int (*up_pick)(const sim_routing *R, int r, const cands *c, sim_occ_fn occ, void *occ_arg,
                       contend_rng *rng);

static inline int tree_route(const sim_routing *R, int r, int dst, const sim_route_state *st,
                             sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc,
                             up_pick pick) {
  const sim_topo *t = R->t;
  *out_vc = sim_vc_of(R, 0, st->lane);
  if (t->node_router[dst] == r)
    return t->node_port[dst];
  const cands c = tree_cands(R, r, dst);
  const int i = c.n > 1 && !c.down ? pick(R, r, &c, occ, occ_arg, rng) : c.pick;
  return cand_port(&c, i);
}

#define TREE_ROUTE(NAME, PICK)                                                                     \
  static int NAME(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,           \
                  sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc) {                  \
    (void)inject;                                                                                  \
    return tree_route(R, r, dst, st, occ, occ_arg, rng, out_vc, PICK);                             \
  }
TREE_ROUTE(route_dmodk, pick_dmodk)
TREE_ROUTE(route_random, pick_random)
TREE_ROUTE(route_adaptive, pick_adaptive)
TREE_ROUTE(route_dmodk_adaptive, pick_dmodk_adaptive)

/* Alternatives: dmodk its one port; the others every up port. */
static inline int tree_alternatives(const sim_routing *R, int r, int dst, const sim_route_state *st,
                                    sim_route_alt *alts, int max, int every_up) {
  const sim_topo *t = R->t;
  const int vc = sim_vc_of(R, 0, st->lane);
  int n = 0;
  if (t->node_router[dst] == r) {
    sim_alt_put(alts, max, &n, t->node_port[dst], vc, st);
    return n;
  }
  const cands c = tree_cands(R, r, dst);
  if (c.down || c.n == 1 || !every_up)
    sim_alt_put(alts, max, &n, cand_port(&c, c.n == 1 ? 0 : c.pick), vc, st);
  else
    for (int k = 0; k < c.n; k++)
      sim_alt_put(alts, max, &n, cand_port(&c, k), vc, st);
  return n;
}

/* The class of dst at r (routing_impl.h's dclass): what tree_alternatives
 * reads of dst, i.e. dst's node port at its router, else the one port it
 * lists, else (every up port) the candidate list, which is the same for
 * every destination with the same table entry. */
static inline int64_t tree_dclass(const sim_routing *R, int r, int dst, int every_up) {
  const sim_topo *t = R->t;
  if (t->node_router[dst] == r)
    return -1 - (int64_t)t->node_port[dst];
  const cands c = tree_cands(R, r, dst);
  if (c.down || c.n == 1 || !every_up)
    return cand_port(&c, c.n == 1 ? 0 : c.pick);
  return SIM_TOPO_MAX_RADIX + (c.list ? (int64_t)(c.list - R->pool) : (int64_t)c.base);
}

static int64_t dclass_one(const sim_routing *R, int r, int dst) {
  return tree_dclass(R, r, dst, 0);
}

static int64_t dclass_every_up(const sim_routing *R, int r, int dst) {
  return tree_dclass(R, r, dst, 1);
}

/* dmodk's up ports are digits of dst mod prod w (xgft): destinations
 * equal modulo it go up the same way from every router. */
static int64_t key_rank_dmodk(const sim_routing *R, int dst) {
  return R->t->kind == SIM_TOPO_XGFT ? dst % R->Wp[R->R] : 0;
}

static int alts_one(const sim_routing *R, int r, int inject, int dst, const sim_route_state *st,
                    unsigned which, sim_route_alt *alts, int max) {
  (void)inject, (void)which;
  return tree_alternatives(R, r, dst, st, alts, max, 0);
}

static int alts_every_up(const sim_routing *R, int r, int inject, int dst,
                         const sim_route_state *st, unsigned which, sim_route_alt *alts, int max) {
  (void)inject, (void)which;
  return tree_alternatives(R, r, dst, st, alts, max, 1);
}

extern const sim_routing_def sim_routing_tree_random;

const sim_routing_def sim_routing_tree_dmodk = {
    .name = "dmodk",
    .kinds = SIM_KINDS_TREE,
    .classes = 1,
    .max_hops = -1,
    .flags = SIM_RF_PER_NODE,
    .init = tree_init,
    .route = route_dmodk,
    .alternatives = alts_one,
    .dclass = dclass_one,
    .key_rank = key_rank_dmodk,
    .covered_by = &sim_routing_tree_random, /* its one up port is one of random's */
    .help = "static D-mod-k: up port (dst / prod w) mod w, by the destination node",
};

const sim_routing_def sim_routing_tree_random = {
    .name = "random",
    .kinds = SIM_KINDS_TREE,
    .classes = 1,
    .max_hops = -1,
    .init = tree_init,
    .route = route_random,
    .alternatives = alts_every_up,
    .dclass = dclass_every_up,
    .help = "a uniformly random up port per packet and hop",
};

const sim_routing_def sim_routing_tree_adaptive = {
    .name = "adaptive",
    .kinds = SIM_KINDS_TREE,
    .classes = 1,
    .max_hops = -1,
    .init = tree_init,
    .route = route_adaptive,
    .alternatives = alts_every_up,
    .dclass = dclass_every_up,
    .help = "the up port with the least occupancy (queued + in the buffer downstream), ties "
            "broken at random",
};

const sim_routing_def sim_routing_tree_dmodk_adaptive = {
    .name = "dmodk-adaptive",
    .kinds = SIM_KINDS_TREE,
    .classes = 1,
    .max_hops = -1,
    .init = tree_init,
    .route = route_dmodk_adaptive,
    .alternatives = alts_every_up,
    .dclass = dclass_every_up,
    .help = "D-mod-k's up port while its occupancy is within a packet of the least occupied "
            "one, else a random one of those that are",
};
