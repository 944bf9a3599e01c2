/* Routing on the simulated fabric: the per-hop decision (sim_route) of
 * every routing algorithm, the tables it is precomputed into, and the list
 * of alternatives the deadlock check (cdg.c) enumerates.
 *
 * Fat trees (xgft, fattree: O(1) arithmetic on the XGFT labels of
 * topo_xgft.c).  A packet at a level-l router goes down if dst lies in the
 * router's subtree (dst / prod_{i<=l} m_i == X), to child (dst /
 * prod_{i<l} m_i) mod m_l, else up:
 *   dmodk     up port (dst / prod_{i<=l} w_i) mod w_{l+1} (Zahavi's D-mod-k:
 *             shift permutations are contention free on full-bisection
 *             trees);
 *   random    a uniform up port per hop (the network's rng);
 *   adaptive  the up port with the least occupancy (occ), ties to the
 *             lowest.
 * Slurm trees: per (switch, destination switch) table built here from the
 * graph.  Up candidates are the parents on a shortest way up to an
 * ancestor of the destination's switch (dmodk picks candidate (dst / d_l)
 * mod n, d_l the product of the largest parent counts of the levels
 * below); down candidates lead to the destination switch on a shortest
 * way, picked by the destination switch's index mod n (so routes depend on
 * the destination switch only, except dmodk's up choice).
 * One VC class.
 *
 * Dragonfly (the palm-tree of topo_dragonfly.c: group G's link to group T
 * is its port k = (G - T - 1) mod (a*h+1), on router k / h):
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
 *   ugal      UGAL-L at the source router: one random valiant candidate;
 *             non-minimal when q_min * H_min > q_val * H_val + threshold,
 *             q the occupancy of the two candidate first-hop ports and H
 *             the router hops of the two paths.
 * VC class = global hops taken so far (local hops and the global hop
 * itself): minimal uses classes 0..1, valiant/ugal 0..2; the classes
 * increase along every route, so the channel dependency graph is acyclic.
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

#include "route.h"

enum { A_SWITCH, A_DMODK, A_RANDOM, A_ADAPTIVE, A_DF_MIN, A_DF_VAL, A_DF_UGAL };

#define DOWNFLAG (1 << 30)
#define NOROUTE INT32_MIN

struct sim_routing {
  const sim_topo *t;
  int alg, classes, lanes, vcs, max_hops;
  uint32_t thr;
  char name[16];
  /* xgft: level l = 1..R; M[l] = m_l, Wt[l] = w_l (Wt[R+1] = 0) */
  int R, M[SIM_MAX_LEVELS + 2], Wt[SIM_MAX_LEVELS + 2];
  int Mp[SIM_MAX_LEVELS + 1], Wp[SIM_MAX_LEVELS + 1]; /* prefix products */
  int *xlo;                                           /* per router: first node of its subtree */
  /* slurm: tab[r * nleaf + leaf] = port (>= 0) or -(pool offset + 1) */
  int nleaf, *leaf_of; /* router -> index among routers with nodes, or -1 */
  int32_t *tab;
  int *pool, npool;
  int div[SIM_MAX_LEVELS + 1];
  /* dragonfly */
  int a, p, hg, g, ah1, gp0;
};

/* ---- names ---- */

static const char *tree_names = "dmodk,random,adaptive";
static const char *df_names = "minimal,valiant,ugal";

const char *sim_routing_names(sim_topo_kind kind) {
  switch (kind) {
  case SIM_TOPO_SWITCH:
    return "minimal";
  case SIM_TOPO_XGFT:
  case SIM_TOPO_TREE:
    return tree_names;
  case SIM_TOPO_DRAGONFLY:
    return df_names;
  }
  return "";
}

const char *sim_routing_name(const sim_routing *R) { return R->name; }
int sim_routing_vcs(const sim_routing *R) { return R->vcs; }
int sim_routing_max_hops(const sim_routing *R) { return R->max_hops; }
const sim_topo *sim_routing_topo(const sim_routing *R) { return R->t; }
int sim_routing_classes(const sim_routing *R) { return R->classes; }
int sim_routing_lanes(const sim_routing *R) { return R->lanes; }

void sim_routing_free(sim_routing *R) {
  if (!R)
    return;
  free(R->xlo);
  free(R->leaf_of);
  free(R->tab);
  free(R->pool);
  free(R);
}

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

static int setup(const sim_topo *t, const char *name, int vcs, uint32_t thr, sim_routing **out,
                 char *err, size_t errlen, int unchecked) {
  *out = NULL;
  const char *names = sim_routing_names(t->kind);
  char dflt[16];
  if (!name || !*name) { /* the default: the first name */
    snprintf(dflt, sizeof dflt, "%.*s", (int)strcspn(names, ","), names);
    name = dflt;
  }
  const size_t nlen = strlen(name);
  int alg = -1, need = 1;
#define IS(s) (nlen == strlen(s) && !strncmp(name, s, nlen))
  switch (t->kind) {
  case SIM_TOPO_SWITCH:
    if (IS("minimal"))
      alg = A_SWITCH;
    break;
  case SIM_TOPO_XGFT:
  case SIM_TOPO_TREE:
    alg = IS("dmodk") ? A_DMODK : IS("random") ? A_RANDOM : IS("adaptive") ? A_ADAPTIVE : -1;
    break;
  case SIM_TOPO_DRAGONFLY:
    alg = IS("minimal") ? A_DF_MIN : IS("valiant") ? A_DF_VAL : IS("ugal") ? A_DF_UGAL : -1;
    need = alg == A_DF_MIN ? 2 : 3;
    break;
  }
#undef IS
  if (alg < 0) {
    snprintf(err, errlen, "unknown routing '%s' for topology '%s' (known: %s)", name, t->spec,
             names);
    return -1;
  }
  if (vcs == 0)
    vcs = need;
  if (vcs < 1 || vcs > SIM_MAX_VCS) {
    snprintf(err, errlen, "%d VCs: must be 1..%d", vcs, SIM_MAX_VCS);
    return -1;
  }
  if (vcs < need && !unchecked) {
    snprintf(err, errlen, "routing '%s' on '%s' needs at least %d VCs (got %d)", name, t->spec,
             need, vcs);
    return -1;
  }
  sim_routing *R = calloc(1, sizeof *R);
  if (!R) {
    snprintf(err, errlen, "out of memory (routing)");
    return -1;
  }
  R->t = t;
  R->alg = alg;
  R->vcs = vcs;
  R->classes = vcs < need ? vcs : need;
  R->lanes = vcs / R->classes;
  R->thr = thr;
  snprintf(R->name, sizeof R->name, "%s", name);
  int rc = 0;
  if (t->kind == SIM_TOPO_XGFT) {
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
      rc = -1;
    for (int r = 0, l = 1, idx = 0; !rc && r < t->nrouters; r++, idx++) {
      if (t->router_level[r] != l) {
        l = t->router_level[r];
        idx = 0;
      }
      R->xlo[r] = (idx / R->Wp[l]) * R->Mp[l];
    }
  } else if (t->kind == SIM_TOPO_TREE) {
    rc = build_slurm(R);
  } else if (t->kind == SIM_TOPO_DRAGONFLY) {
    R->a = t->a;
    R->p = t->p;
    R->hg = t->hg;
    R->g = t->g;
    R->ah1 = t->a * t->hg + 1;
    R->gp0 = t->p + t->a - 1;
    R->max_hops = alg == A_DF_MIN ? 3 : 5;
  }
  if (rc) {
    sim_routing_free(R);
    snprintf(err, errlen, "out of memory (routing tables)");
    return -1;
  }
  *out = R;
  return 0;
}

int sim_routing_new(const sim_topo *t, const char *name, int vcs, uint32_t ugal_threshold,
                    sim_routing **out, char *err, size_t errlen) {
  return setup(t, name, vcs, ugal_threshold, out, err, errlen, 0);
}

int sim_routing_new_unchecked(const sim_topo *t, const char *name, int vcs, uint32_t ugal_threshold,
                              sim_routing **out, char *err, size_t errlen) {
  return setup(t, name, vcs, ugal_threshold, out, err, errlen, 1);
}

/* ---- per-hop helpers ---- */

static inline int is_inject(const sim_topo *t, int r, int in_port) {
  return in_port < 0 || t->peer[t->port_base[r] + in_port] < 0;
}

static inline int vc_of(const sim_routing *R, int cls, int lane) {
  if (cls >= R->classes)
    cls = R->classes - 1;
  return cls * R->lanes + lane;
}

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

/* dragonfly */
static inline int df_local(const sim_routing *R, int i, int j) {
  return R->p + (j - i - 1 + R->a) % R->a;
}
static inline int df_k(const sim_routing *R, int G, int T) { /* G's port to group T */
  return (G - T - 1 + 2 * R->ah1) % R->ah1;
}
/* First port from router r towards group T (T != r's group). */
static inline int df_to_group(const sim_routing *R, int r, int T) {
  const int G = r / R->a, i = r % R->a, k = df_k(R, G, T), gw = k / R->hg;
  return i == gw ? R->gp0 + k % R->hg : df_local(R, i, gw);
}
/* First port from router r towards router d (r != d). */
static inline int df_to_router(const sim_routing *R, int r, int d) {
  return r / R->a == d / R->a ? df_local(R, r % R->a, d % R->a) : df_to_group(R, r, d / R->a);
}
/* The router where a packet from group G enters group T. */
static inline int df_entry(const sim_routing *R, int G, int T) {
  return T * R->a + (R->ah1 - 2 - df_k(R, G, T)) / R->hg;
}
static int df_hops(const sim_routing *R, int x, int y) {
  if (x == y)
    return 0;
  const int Gx = x / R->a, Gy = y / R->a;
  if (Gx == Gy)
    return 1;
  const int gw = df_k(R, Gx, Gy) / R->hg;
  return (x % R->a != gw) + 1 + (df_entry(R, Gx, Gy) != y);
}
static int df_hops_valiant(const sim_routing *R, int s, int I, int d) {
  const int Gs = s / R->a, gw = df_k(R, Gs, I) / R->hg;
  return (s % R->a != gw) + 1 + df_hops(R, df_entry(R, Gs, I), d);
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

/* ---- sim_route ---- */

void sim_route(const sim_routing *R, int r, int in_port, int in_vc, int src, int dst,
               sim_route_state *st, sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_port,
               int *out_vc) {
  (void)in_vc;
  const sim_topo *t = R->t;
  const int inject = is_inject(t, r, in_port);
  if (inject) {
    st->lane = (uint8_t)((src >= 0 ? src : 0) % R->lanes);
    st->ghops = st->phase = st->nonmin = 0;
    st->inter = -1;
  }
  int port;
  switch (R->alg) {
  case A_SWITCH:
    port = t->node_port[dst];
    break;
  case A_DMODK:
  case A_RANDOM:
  case A_ADAPTIVE: {
    if (t->node_router[dst] == r) {
      port = t->node_port[dst];
      break;
    }
    const cands c = tree_cands(R, r, dst);
    int i = c.pick;
    if (c.n > 1 && !c.down) {
      if (R->alg == A_RANDOM && rng)
        i = (int)contend_rng_below(rng, (uint64_t)c.n);
      else if (R->alg == A_ADAPTIVE) {
        uint32_t best = UINT32_MAX;
        i = 0;
        for (int k = 0; k < c.n; k++) {
          const uint32_t o = occ ? occ(occ_arg, r, cand_port(&c, k)) : 0;
          if (o < best) {
            best = o;
            i = k;
          }
        }
      }
    }
    port = cand_port(&c, i);
    break;
  }
  default: { /* dragonfly */
    const int d = t->node_router[dst];
    if (inject && R->alg != A_DF_MIN && r != d) {
      const int Gs = r / R->a, Gd = d / R->a;
      const int nc = R->alg == A_DF_VAL ? R->g : df_ncand(R, Gs, Gd);
      if (nc > 0) {
        const int k = rng ? (int)contend_rng_below(rng, (uint64_t)nc * (uint64_t)R->a) : 0;
        const int I = R->alg == A_DF_VAL ? k / R->a : df_cand_group(k / R->a, Gs, Gd);
        const int inter = I * R->a + k % R->a;
        /* valiant draws from every group; the source's or the destination's
         * own group makes the route minimal */
        int take = I != Gs && I != Gd;
        if (R->alg == A_DF_UGAL) {
          const int pmin = df_to_router(R, r, d), pval = df_to_group(R, r, I);
          const uint64_t qmin = occ ? occ(occ_arg, r, pmin) : 0;
          const uint64_t qval = occ ? occ(occ_arg, r, pval) : 0;
          take = qmin * (uint64_t)df_hops(R, r, d) >
                 qval * (uint64_t)df_hops_valiant(R, r, I, d) + R->thr;
        }
        if (take) {
          st->inter = inter;
          st->nonmin = 1;
        }
      }
    }
    port = df_port(R, r, dst, st);
    *out_port = port;
    *out_vc = vc_of(R, st->ghops, st->lane);
    if (port >= R->gp0)
      st->ghops++;
    return;
  }
  }
  *out_port = port;
  *out_vc = vc_of(R, 0, st->lane);
}

/* ---- alternatives (cdg.c, tests) ---- */

static inline void put(sim_route_alt *alts, int max, int *n, int port, int vc,
                       const sim_route_state *st) {
  if (*n < max) {
    alts[*n].port = port;
    alts[*n].vc = vc;
    alts[*n].st = *st;
  }
  (*n)++;
}

int sim_route_alternatives(const sim_routing *R, int r, int in_port, int src, int dst,
                           const sim_route_state *st0, unsigned which, sim_route_alt *alts,
                           int max) {
  const sim_topo *t = R->t;
  sim_route_state st = *st0;
  const int inject = is_inject(t, r, in_port);
  int n = 0;
  if (inject) {
    st.lane = (uint8_t)((src >= 0 ? src : 0) % R->lanes);
    st.ghops = st.phase = st.nonmin = 0;
    st.inter = -1;
  }
  switch (R->alg) {
  case A_SWITCH:
    put(alts, max, &n, t->node_port[dst], vc_of(R, 0, st.lane), &st);
    return n;
  case A_DMODK:
  case A_RANDOM:
  case A_ADAPTIVE: {
    if (t->node_router[dst] == r) {
      put(alts, max, &n, t->node_port[dst], vc_of(R, 0, st.lane), &st);
      return n;
    }
    const cands c = tree_cands(R, r, dst);
    if (c.down || c.n == 1 || R->alg == A_DMODK)
      put(alts, max, &n, cand_port(&c, c.n == 1 ? 0 : c.pick), vc_of(R, 0, st.lane), &st);
    else
      for (int k = 0; k < c.n; k++)
        put(alts, max, &n, cand_port(&c, k), vc_of(R, 0, st.lane), &st);
    return n;
  }
  default:
    break;
  }
  const int d = t->node_router[dst];
  int minimal_ok = 1;
  if (inject && R->alg != A_DF_MIN && r != d) {
    const int Gs = r / R->a, Gd = d / R->a, nc = df_ncand(R, Gs, Gd);
    if (nc > 0) {
      minimal_ok = R->alg == A_DF_UGAL;
      if (which & SIM_ALT_NONMIN)
        for (int k = 0; k < nc; k++) {
          sim_route_state s2 = st;
          s2.inter = df_cand_group(k, Gs, Gd) * R->a;
          s2.nonmin = 1;
          const int port = df_port(R, r, dst, &s2);
          const int vc = vc_of(R, s2.ghops, s2.lane);
          if (port >= R->gp0)
            s2.ghops++;
          put(alts, max, &n, port, vc, &s2);
        }
    }
  }
  if (inject && !(which & SIM_ALT_MIN))
    return n;
  if (!minimal_ok)
    return n;
  const int port = df_port(R, r, dst, &st);
  const int vc = vc_of(R, st.ghops, st.lane);
  if (port >= R->gp0)
    st.ghops++;
  put(alts, max, &n, port, vc, &st);
  return n;
}
