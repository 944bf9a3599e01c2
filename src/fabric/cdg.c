/* The start-up deadlock check: builds the channel dependency graph (CDG)
 * of every route a routing can choose and looks for a cycle (Dally and
 * Seitz: a routing is deadlock-free if its CDG is acyclic).
 *
 * Vertices: (channel, VC class); a channel is the global port it leaves.
 * Edges: a packet holding channel c on class k may wait for channel c' on
 * class k' at the router c leads to.  Stored per vertex as a bitset over
 * (local port of that router, class): deduplication is free and memory is
 * nports * degree * classes^2 bits.  Lanes (VC = class * lanes + lane) are
 * disjoint copies of the class graph (a packet keeps its lane), so lane 0
 * is enumerated and checked; an alternative that changes lane is
 * reported as an error.
 *
 * The decisions are the routing's own (sim_route_alternatives lists every
 * choice of random/adaptive/valiant/ugal); what is exploited is what the
 * routes depend on:
 * - Per destination key, a breadth-first walk from every source router
 *   over (channel, class) marks each vertex once.  Keys: the destination
 *   node for a routing flagged SIM_RF_PER_NODE (dmodk: its up choice
 *   depends on the node), the destination router for everything else (random/adaptive trees go up
 * any way, the down way depends on the destination router only; the dragonfly routes to a router).
 * Edges into ejection channels are only those of the key's representative node: ejection channels
 * have no successors, so they cannot lie on a cycle.
 * - Within a key a router's choice depends on the incoming class only
 *   (not on the input port), so it is computed once per (router, class)
 *   and applied to every input that reaches it.
 * - Keys are walked 64 at a time, a vertex carrying the mask of the keys
 *   that reached it (each key reaches a vertex once, with the state it
 *   first brings, as a walk of its own would).  At a router the keys of a
 *   mask are grouped by the routing's destination class (dclass in
 *   routing_impl.h: the alternatives are a function of it) and the
 *   choices computed once per (router, class, destination class).  This
 *   is exact: a key's edges are those its own walk would add, since its
 *   reached vertices are the same and the choices at each are those of
 *   its class; test_sim_topo compares the edges with one walk per key
 *   without classes.  The cost falls from keys x routers alternatives to
 *   about keys / 64 x routers x the classes met per router.  A per-node
 *   routing may rank its keys (key_rank: dmodk's up ports) so that a
 *   batch shares its classes; the order changes nothing else.
 * - Non-minimal routes (SIM_RF_NONMIN: valiant, ugal) are two minimal segments: phase 0 from
 *   the source router to the intermediate group depends on (source,
 *   group) only and is walked once per pair; it ends on the global channel
 *   entering the group (the junction).  From there on the route is minimal
 *   to the destination, so each junction channel seeds the walk of every
 *   destination outside its group.  The walks then follow the minimal
 *   decisions only (SIM_ALT_MIN): every non-minimal choice is a segment.
 * - SIM_RF_REEVAL (par): a packet that left its source router minimally
 *   may turn at the next router.  For every source router and destination
 *   group, the minimal first hop (pending) gets an edge to each turn, and
 *   each turn's phase-0 segment is walked to its junction like those from
 *   the source router (the turn's VC class, one up, keeps its junctions
 *   apart from theirs).  Sources whose first hops meet at one router in
 *   one class and state share its turns and their segments (reeval).
 * - A routing with a cover (covered_by: D-mod-k, whose keys are nodes,
 *   under random, whose keys are routers) is first checked through it:
 *   the cover's graph contains the routing's, so an acyclic cover settles
 *   it; only a cover with a cycle leads to the routing's own walk.
 * Cycles are found by an iterative depth-first search (no recursion); the
 * error names up to six channels of the first cycle found.
 * Cost: still quadratic, with a small constant: keys / 64 x vertices
 * mask operations, keys x source routers destination classes (the
 * seeds), and for non-minimal routings junctions x destination groups
 * and par's turns, groups^2 x (routers per group + groups).  About 1 s
 * of CPU (dmodk 4 s, par 8 s) at 100,000 nodes (docs/simulator.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_impl.h"

/* Keys checked together: one bit each in a vertex's mask. */
#define BATCH 64

/* One queued vertex: the keys of the batch that reached it first here. */
typedef struct {
  int v;
  sim_route_state st;
  uint64_t mask;
} qent;

/* A cached list of alternatives: (router, incoming class, destination
 * class, namespace) within one batch. */
typedef struct {
  uint64_t key;
  int64_t dc;
  unsigned stamp;
  int off, n;
  uint64_t sig;
} centry;

/* A group of keys of one destination class at a router. */
typedef struct {
  int64_t dc;
  uint64_t mask;
  int rep;
} kgroup;

typedef struct {
  const sim_routing *R;
  const sim_topo *t;
  int C, L, vcs;
  size_t nv;
  size_t *off; /* nv + 1: bit offsets into bits */
  uint64_t *bits;
  int *prouter, *pport; /* per port: the router and local port the channel leads to, or -1 */
  int *nodeport;        /* per router: a node port (the injection port), or -1 */
  /* the batch: its keys' destination nodes and routers */
  int nb, bdst[BATCH], brouter[BATCH];
  uint64_t *seen;  /* per vertex: the keys of the batch that reached it */
  uint64_t *rkeys; /* per router: the keys of the batch it is the router of */
  uint64_t *gkeys; /* per dragonfly group: the keys of the batch in it */
  /* per router: its last grouping of keys (group_keys) */
  unsigned *gm_stamp;
  uint64_t *gm_mask;
  size_t *gm_off;
  int *gm_n;
  kgroup *gmemo;
  size_t gmemo_n, gmemo_cap;
  qent *queue;
  size_t qcap;
  /* cache of alternatives, open addressing; valid when stamp == batch */
  centry *cache;
  size_t ccap, cn_used;
  unsigned batch;
  uint64_t *usig; /* per vertex: signature of the edge set last added from it */
  sim_route_alt *arena;
  size_t arena_n, arena_cap;
  sim_route_alt *alts;
  int alts_cap;
  unsigned walk_which; /* decisions the walks follow: SIM_ALT_MIN when non-minimal
                         segments are walked apart (phase0), else SIM_ALT_ALL */
  int width;           /* keys per batch, 1..BATCH (1: one walk per key, the reference) */
  int use_dclass;      /* 0: the reference: every key its own class, no shared turns */
  char *err;
  size_t errlen;
  int failed;
} cdg;

static int oom(cdg *g) {
  snprintf(g->err, g->errlen, "deadlock check: out of memory");
  g->failed = 1;
  return -1;
}

static void chan_label(const cdg *g, int gp, int cls, char *buf, size_t len) {
  const int r = sim_port_router(g->t, gp);
  char name[64];
  sim_router_label(g->t, r, name, sizeof name);
  snprintf(buf, len, "%s port %d vc %d", name, gp - g->t->port_base[r], cls * g->L);
}

/* Alternatives at router r into g->alts; returns the count or -1. */
static int alternatives(cdg *g, int r, int in_port, int dst, const sim_route_state *st,
                        unsigned which) {
  for (;;) {
    const int n = sim_route_alternatives(g->R, r, in_port, 0, dst, st, which, g->alts, g->alts_cap);
    if (n <= g->alts_cap)
      return n;
    sim_route_alt *a = realloc(g->alts, sizeof *a * (size_t)n);
    if (!a)
      return oom(g);
    g->alts = a;
    g->alts_cap = n;
  }
}

/* Checks one alternative at router r: returns its vertex (channel, class)
 * or -1 after reporting a routing error. */
static long vertex_of(cdg *g, int r, const sim_route_alt *a, int dst) {
  const sim_topo *t = g->t;
  const int deg = t->port_base[r + 1] - t->port_base[r];
  char name[64];
  if (a->port < 0 || a->port >= deg || t->peer[t->port_base[r] + a->port] == SIM_UNCONNECTED) {
    sim_router_label(t, r, name, sizeof name);
    snprintf(g->err, g->errlen, "routing '%s': at %s towards node %d: port %d is %s",
             sim_routing_name(g->R), name, dst, a->port,
             a->port < 0 || a->port >= deg ? "out of range" : "unconnected");
    g->failed = 1;
    return -1;
  }
  if (a->vc < 0 || a->vc >= g->vcs || a->vc % g->L != 0) {
    sim_router_label(t, r, name, sizeof name);
    snprintf(g->err, g->errlen, "routing '%s': at %s towards node %d: VC %d %s",
             sim_routing_name(g->R), name, dst, a->vc,
             a->vc < 0 || a->vc >= g->vcs ? "out of range" : "leaves the packet's lane");
    g->failed = 1;
    return -1;
  }
  return (long)(t->port_base[r] + a->port) * g->C + a->vc / g->L;
}

static void add_edge(cdg *g, size_t u, int out_port, int out_cls) {
  const size_t b = g->off[u] + (size_t)out_port * (size_t)g->C + (size_t)out_cls;
  g->bits[b / 64] |= 1ull << (b % 64);
}

/* Queues vertex v for the keys of mask that have not reached it yet (a
 * key reaches a vertex once, with the state it first arrives with). */
static int reach(cdg *g, long v, const sim_route_state *st, uint64_t mask, size_t *qt) {
  if (g->t->peer[v / g->C] < 0)
    return 0;
  mask &= ~g->seen[v];
  if (!mask)
    return 0;
  g->seen[v] |= mask;
  if (*qt == g->qcap) {
    qent *q = realloc(g->queue, sizeof *q * g->qcap * 2);
    if (!q)
      return oom(g);
    g->queue = q;
    g->qcap *= 2;
  }
  g->queue[(*qt)++] = (qent){.v = (int)v, .st = *st, .mask = mask};
  return 0;
}

/* The keys of mask grouped by their destination class at router r:
 * returns the number of groups (-1 out of memory); dcs[i] the class,
 * masks[i] its keys and rep[i] one of them.  The last grouping of each
 * router is kept for the batch (a router is asked about the same keys by
 * each of its inputs). */
static int group_keys(cdg *g, int r, uint64_t mask, int64_t *dcs, uint64_t *masks, int *rep) {
  if (g->gm_stamp[r] == g->batch && g->gm_mask[r] == mask) {
    const kgroup *kg = &g->gmemo[g->gm_off[r]];
    for (int i = 0; i < g->gm_n[r]; i++) {
      dcs[i] = kg[i].dc;
      masks[i] = kg[i].mask;
      rep[i] = kg[i].rep;
    }
    return g->gm_n[r];
  }
  int n = 0;
  while (mask) {
    const int k = __builtin_ctzll(mask);
    mask &= mask - 1;
    const int64_t dc =
        g->use_dclass ? sim_routing_dclass(g->R, r, g->bdst[k]) : (int64_t)g->bdst[k];
    int i = 0;
    while (i < n && dcs[i] != dc)
      i++;
    if (i == n) {
      dcs[n] = dc;
      masks[n] = 0;
      rep[n++] = k;
    }
    masks[i] |= 1ull << k;
  }
  if (g->gmemo_n + (size_t)n > g->gmemo_cap) {
    size_t cap = g->gmemo_cap ? 2 * g->gmemo_cap : 4096;
    while (g->gmemo_n + (size_t)n > cap)
      cap *= 2;
    kgroup *m = realloc(g->gmemo, sizeof *m * cap);
    if (!m)
      return oom(g);
    g->gmemo = m;
    g->gmemo_cap = cap;
  }
  uint64_t all = 0;
  for (int i = 0; i < n; i++) {
    g->gmemo[g->gmemo_n + (size_t)i] = (kgroup){.dc = dcs[i], .mask = masks[i], .rep = rep[i]};
    all |= masks[i];
  }
  g->gm_stamp[r] = g->batch;
  g->gm_mask[r] = all;
  g->gm_off[r] = g->gmemo_n;
  g->gm_n[r] = n;
  g->gmemo_n += (size_t)n;
  return n;
}

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* The cache slot of (r, cls, dc, ns) in this batch: found, or empty (stamp
 * != batch) for the caller to fill.  Returns NULL out of memory. */
static centry *cache_slot(cdg *g, int r, int cls, int64_t dc, int ns) {
  if (2 * (g->cn_used + 1) > g->ccap) {
    const size_t cap = g->ccap ? 2 * g->ccap : 4096;
    centry *c = calloc(cap, sizeof *c);
    if (!c) {
      oom(g);
      return NULL;
    }
    size_t used = 0;
    for (size_t i = 0; i < g->ccap; i++)
      if (g->cache[i].stamp == g->batch) {
        size_t h = mix(g->cache[i].key ^ mix((uint64_t)g->cache[i].dc)) & (cap - 1);
        while (c[h].stamp == g->batch)
          h = (h + 1) & (cap - 1);
        c[h] = g->cache[i];
        used++;
      }
    free(g->cache);
    g->cache = c;
    g->ccap = cap;
    g->cn_used = used;
  }
  const uint64_t key = ((uint64_t)(uint32_t)r << 8) | ((uint64_t)cls << 1) | (uint64_t)ns;
  size_t h = mix(key ^ mix((uint64_t)dc)) & (g->ccap - 1);
  while (g->cache[h].stamp == g->batch) {
    if (g->cache[h].key == key && g->cache[h].dc == dc)
      return &g->cache[h];
    h = (h + 1) & (g->ccap - 1);
  }
  g->cache[h].key = key;
  g->cache[h].dc = dc;
  return &g->cache[h];
}

/* The alternatives at router r for packets arriving on class cls towards
 * destination class dc (representative node dst), computed once per
 * (router, class, destination class, namespace ns) and batch: they
 * depend neither on the input port nor on which key of the class asks. */
static centry *expand(cdg *g, int r, int in_port, int cls, int64_t dc, int ns, int dst,
                      const sim_route_state *st) {
  centry *c = cache_slot(g, r, cls, dc, ns);
  if (!c || c->stamp == g->batch)
    return c;
  const int n = alternatives(g, r, in_port, dst, st, g->walk_which);
  if (n < 0)
    return NULL;
  if (g->arena_n + (size_t)n > g->arena_cap) {
    size_t cap = g->arena_cap ? g->arena_cap * 2 : 4096;
    while (g->arena_n + (size_t)n > cap)
      cap *= 2;
    sim_route_alt *a = realloc(g->arena, sizeof *a * cap);
    if (!a) {
      oom(g);
      return NULL;
    }
    g->arena = a;
    g->arena_cap = cap;
  }
  uint64_t sig = 1469598103934665603ull ^ (uint64_t)r;
  for (int i = 0; i < n; i++) {
    const long v = vertex_of(g, r, &g->alts[i], dst);
    if (v < 0)
      return NULL;
    sig = (sig ^ (uint64_t)v) * 1099511628211ull;
    g->arena[g->arena_n + (size_t)i] = g->alts[i];
  }
  c->stamp = g->batch;
  g->cn_used++;
  c->off = (int)g->arena_n;
  c->n = n;
  c->sig = sig | 1;
  g->arena_n += (size_t)n;
  return c;
}

/* Adds the edges from vertex u to the cached alternatives c (skipped when
 * u already has exactly this edge set) and queues their vertices for the
 * keys of mask. */
static int connect(cdg *g, long u, const centry *c, int r, uint64_t mask, size_t *qt) {
  const int add = g->usig[u] != c->sig;
  g->usig[u] = c->sig;
  for (int i = 0; i < c->n; i++) {
    const sim_route_alt *a = &g->arena[c->off + i];
    if (add)
      add_edge(g, (size_t)u, a->port, a->vc / g->L);
    if (reach(g, (long)(g->t->port_base[r] + a->port) * g->C + a->vc / g->L, &a->st, mask, qt))
      return -1;
  }
  return 0;
}

/* Expands vertex u (the channel into router prouter, class u % C) for the
 * keys of mask, arriving with state st: per destination class, the cached
 * alternatives of namespace ns. */
static int expand_keys(cdg *g, long u, const sim_route_state *st, uint64_t mask, int ns,
                       size_t *qt) {
  const int gp = (int)(u / g->C), cls = (int)(u % g->C), r = g->prouter[gp];
  int64_t dcs[BATCH];
  uint64_t masks[BATCH];
  int rep[BATCH];
  const int ng = group_keys(g, r, mask, dcs, masks, rep);
  if (ng < 0)
    return -1;
  for (int i = 0; i < ng; i++) {
    const centry *c = expand(g, r, g->pport[gp], cls, dcs[i], ns, g->bdst[rep[i]], st);
    if (!c || connect(g, u, c, r, masks[i], qt))
      return -1;
  }
  return 0;
}

/* The walk of the batch: queue[0..*qt) already seeded; *qt: the entries
 * queued in all. */
static int walk(cdg *g, size_t *qt) {
  for (size_t qh = 0; qh < *qt; qh++) {
    const qent e = g->queue[qh];
    if (expand_keys(g, e.v, &e.st, e.mask, 0, qt))
      return -1;
  }
  return 0;
}

/* A node port of router r (the injection port), or -1 if r has no nodes. */
static int node_port_of(const sim_topo *t, int r) {
  for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++)
    if (t->peer[gp] < 0 && t->peer[gp] != SIM_UNCONNECTED)
      return gp - t->port_base[r];
  return -1;
}

/* Seeds the injections of every source router towards the batch's keys
 * (minimal decisions only when which says so), once per destination
 * class at the source. */
static int seed_sources(cdg *g, unsigned which, size_t *qt) {
  const sim_topo *t = g->t;
  const sim_route_state st0 = {.inter = -1};
  const uint64_t all = g->nb == BATCH ? ~0ull : (1ull << g->nb) - 1;
  for (int s = 0; s < t->nrouters; s++) {
    const int ip = g->nodeport[s];
    if (ip < 0)
      continue;
    const uint64_t mask = all & ~g->rkeys[s];
    int64_t dcs[BATCH];
    uint64_t masks[BATCH];
    int rep[BATCH];
    const int ng = group_keys(g, s, mask, dcs, masks, rep);
    if (ng < 0)
      return -1;
    for (int i = 0; i < ng; i++) {
      const int dst = g->bdst[rep[i]];
      const int n = alternatives(g, s, ip, dst, &st0, which);
      if (n < 0)
        return -1;
      for (int k = 0; k < n; k++) {
        const long v = vertex_of(g, s, &g->alts[k], dst);
        if (v < 0 || reach(g, v, &g->alts[k].st, masks[i], qt))
          return -1;
      }
    }
  }
  return 0;
}

/* ---- valiant / ugal: phase-0 segments and their junctions ---- */

typedef struct {
  int *v; /* junction vertices (global channel entering the intermediate group, class) */
  sim_route_state *st;
  int n, cap;
  uint8_t *seen; /* per vertex */
} junctions;

static int junction_add(cdg *g, junctions *j, long v, const sim_route_state *st) {
  if (j->seen[v])
    return 0;
  j->seen[v] = 1;
  if (j->n == j->cap) {
    const int cap = j->cap ? 2 * j->cap : 1024;
    int *a = realloc(j->v, sizeof *a * (size_t)cap);
    if (a)
      j->v = a;
    sim_route_state *s = a ? realloc(j->st, sizeof *s * (size_t)cap) : NULL;
    if (!a || !s)
      return oom(g);
    j->st = s;
    j->cap = cap;
  }
  j->v[j->n] = (int)v;
  j->st[j->n++] = *st;
  return 0;
}

/* Follows a phase-0 segment from router r, where the packet takes
 * alternative cur (u: the vertex it holds arriving at r, or -1 at the
 * source), to the global channel entering its intermediate group (a
 * junction).  Phase 0 is deterministic past its first hop. */
static int segment(cdg *g, junctions *j, long u, int r, sim_route_alt cur, int dst) {
  const sim_topo *t = g->t;
  const int a = t->a;
  for (int hop = 0; hop < 8; hop++) { /* phase 0 is at most 2 hops */
    const long v = vertex_of(g, r, &cur, dst);
    if (v < 0)
      return -1;
    if (u >= 0)
      add_edge(g, (size_t)u, cur.port, cur.vc / g->L);
    const int gp = (int)(v / g->C);
    if (t->peer[gp] < 0)
      return 0;
    const int q = g->prouter[gp];
    if (q / a == cur.st.inter / a)
      return junction_add(g, j, v, &cur.st);
    const int n = alternatives(g, q, g->pport[gp], dst, &cur.st, SIM_ALT_ALL);
    if (n < 0)
      return -1;
    for (int k = 1; k < n; k++) /* phase 0 is deterministic; be safe */
      if (g->t->peer[t->port_base[q] + g->alts[k].port] >= 0) {
        snprintf(g->err, g->errlen, "deadlock check: phase 0 of '%s' branches",
                 sim_routing_name(g->R));
        g->failed = 1;
        return -1;
      }
    if (n == 0)
      return 0;
    cur = g->alts[0];
    r = q;
    u = v;
  }
  return 0;
}

/* The alternatives of `which` at router r (in_port, st) for dst, copied
 * out of g->alts (which segment() reuses).  Returns the count, -1 on
 * error; *out is freed by the caller. */
static int alternatives_copy(cdg *g, int r, int in_port, int dst, const sim_route_state *st,
                             unsigned which, sim_route_alt **out) {
  const int n = alternatives(g, r, in_port, dst, st, which);
  if (n < 0)
    return -1;
  *out = malloc(sizeof **out * (size_t)(n ? n : 1));
  if (!*out)
    return oom(g);
  memcpy(*out, g->alts, sizeof **out * (size_t)n);
  return n;
}

/* Walks phase 0 from source router s for destination node dst (a node
 * chosen so that every intermediate group other than s's is a candidate). */
static int phase0(cdg *g, junctions *j, int s, int dst) {
  const sim_route_state st0 = {.inter = -1};
  sim_route_alt *first = NULL;
  const int n0 = alternatives_copy(g, s, node_port_of(g->t, s), dst, &st0, SIM_ALT_NONMIN, &first);
  int rc = n0 < 0 ? -1 : 0;
  for (int i = 0; i < n0 && !rc; i++)
    rc = segment(g, j, -1, s, first[i], dst);
  free(first);
  return rc;
}

static int st_equal(const sim_route_state *x, const sim_route_state *y) {
  return x->inter == y->inter && x->phase == y->phase && x->nonmin == y->nonmin &&
         x->ghops == y->ghops && x->lane == y->lane && x->pending == y->pending &&
         x->divert == y->divert;
}

/* SIM_RF_REEVAL: from the source routers of group G towards every other
 * group, the minimal first hop marked pending and, at the router it
 * reaches, the turns to every intermediate group (their phase-0
 * segments).  The turns at a router depend on the packet's state and
 * class, not on the input port (as everywhere in this check), and a
 * segment past its first hop not on the hop before it: the sources whose
 * first hops reach the same router with the same class and state share
 * one list of turns and one walk of each segment, the others only adding
 * their edges to the turns (not in the reference check: use_dclass 0). */
static int reeval(cdg *g, junctions *j, int G) {
  const sim_topo *t = g->t;
  const sim_route_state st0 = {.inter = -1};
  int rc = 0;
  for (int Gd = 0; Gd < t->g && !rc; Gd++) {
    if (Gd == G)
      continue;
    const int dst = Gd * t->a * t->p;
    sim_route_alt *turns = NULL;
    int nt = 0;
    sim_route_alt shared = {0}; /* the first hop the turns were computed for */
    long shared_u = -1;
    for (int s = G * t->a; s < (G + 1) * t->a && !rc; s++) {
      const int n = alternatives(g, s, g->nodeport[s], dst, &st0, SIM_ALT_MIN);
      if (n < 0)
        rc = -1;
      if (n != 1 || !g->alts[0].st.pending)
        continue;
      const sim_route_alt first = g->alts[0];
      const long u = vertex_of(g, s, &first, dst);
      if (u < 0) {
        rc = -1;
        break;
      }
      const int gp = (int)(u / g->C), q = g->prouter[gp];
      if (g->use_dclass && shared_u >= 0 && g->prouter[shared_u / g->C] == q &&
          shared_u % g->C == u % g->C && st_equal(&shared.st, &first.st)) {
        for (int i = 0; i < nt; i++) /* the turns' vertices were checked */
          add_edge(g, (size_t)u, turns[i].port, turns[i].vc / g->L);
        continue;
      }
      free(turns);
      turns = NULL;
      nt = alternatives_copy(g, q, g->pport[gp], dst, &first.st, SIM_ALT_NONMIN, &turns);
      rc = nt < 0 ? -1 : 0;
      shared = first;
      shared_u = u;
      for (int i = 0; i < nt && !rc; i++)
        rc = segment(g, j, u, q, turns[i], dst);
    }
    free(turns);
  }
  return rc;
}

/* ---- cycle search ---- */

static int find_cycle(cdg *g, char *err, size_t errlen) {
  const size_t nv = g->nv;
  uint8_t *color = calloc(nv, 1);
  size_t *it = malloc(sizeof *it * nv);
  int *stack = malloc(sizeof *stack * nv), *pos = malloc(sizeof *pos * nv);
  if (!color || !it || !stack || !pos) {
    free(color);
    free(it);
    free(stack);
    free(pos);
    snprintf(err, errlen, "deadlock check: out of memory");
    return -1;
  }
  int rc = 0;
  for (size_t root = 0; root < nv && !rc; root++) {
    if (color[root] || g->off[root] == g->off[root + 1])
      continue;
    int sp = 0;
    stack[sp++] = (int)root;
    pos[root] = 0;
    color[root] = 1;
    it[root] = g->off[root];
    while (sp && !rc) {
      const size_t u = (size_t)stack[sp - 1];
      size_t b = it[u];
      const size_t end = g->off[u + 1];
      size_t found = end;
      while (b < end) {
        const uint64_t w = g->bits[b / 64] >> (b % 64);
        if (w) {
          b += (size_t)__builtin_ctzll(w);
          if (b < end)
            found = b;
          break;
        }
        b = (b / 64 + 1) * 64;
      }
      if (found == end) {
        color[u] = 2;
        sp--;
        continue;
      }
      it[u] = found + 1;
      const int gp = (int)(u / (size_t)g->C), q = g->prouter[gp];
      const size_t rel = found - g->off[u];
      const size_t v =
          ((size_t)g->t->port_base[q] + rel / (size_t)g->C) * (size_t)g->C + rel % (size_t)g->C;
      if (color[v] == 0) {
        color[v] = 1;
        pos[v] = sp;
        it[v] = g->off[v];
        stack[sp++] = (int)v;
      } else if (color[v] == 1) {
        const int len = sp - pos[v];
        int o = snprintf(err, errlen,
                         "routing '%s' on '%s' can deadlock: the channel dependency graph has a "
                         "cycle of %d channel%s: ",
                         sim_routing_name(g->R), g->t->spec, len, len == 1 ? "" : "s");
        for (int k = 0; k < len && k < 6 && o > 0 && (size_t)o < errlen; k++) {
          const int x = stack[pos[v] + k];
          char lab[96];
          chan_label(g, x / g->C, x % g->C, lab, sizeof lab);
          o += snprintf(err + o, errlen - (size_t)o, "%s%s", k ? " -> " : "", lab);
        }
        if (o > 0 && (size_t)o < errlen)
          snprintf(err + o, errlen - (size_t)o, len > 6 ? " -> ..." : " -> (back)");
        rc = -1;
      }
    }
  }
  free(color);
  free(it);
  free(stack);
  free(pos);
  return rc;
}

/* ---- the check ---- */

static int cmp_i64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int build(cdg *g) {
  const sim_topo *t = g->t;
  const unsigned flags = sim_routing_flags(g->R);
  const int nonmin = (flags & SIM_RF_NONMIN) != 0;
  const int per_node = (flags & SIM_RF_PER_NODE) != 0;
  g->walk_which = nonmin ? SIM_ALT_MIN : SIM_ALT_ALL;
  junctions j = {0};
  if (nonmin) {
    j.seen = calloc(g->nv, 1);
    if (!j.seen)
      return oom(g);
    const int a = t->a, p = t->p;
    for (int s = 0; s < t->nrouters; s++) {
      const int G = s / a;
      if (a >= 2) { /* a destination in s's group: every other group is a candidate */
        if (phase0(g, &j, s, (G * a + (s % a + 1) % a) * p))
          goto fail;
      } else if (t->g >= 3) { /* two destinations in two other groups cover them all */
        for (int k = 1; k <= 2; k++)
          if (phase0(g, &j, s, ((G + k) % t->g) * a * p))
            goto fail;
      }
      if ((flags & SIM_RF_REEVAL) && s % a == 0 && reeval(g, &j, G))
        goto fail;
    }
  }
  /* the keys: every destination node of a per-node routing, else one
   * node per router with nodes (the first) */
  const int nkeys = per_node ? t->nnodes : 0;
  int *keys = malloc(sizeof *keys * (size_t)(nkeys ? nkeys : t->nrouters));
  if (!keys) {
    oom(g);
    goto fail;
  }
  int nk = 0;
  for (int d = 0; d < t->nrouters; d++) {
    if (g->nodeport[d] < 0)
      continue;
    int first = -1, last = -1; /* the router's destination nodes */
    for (int gp = t->port_base[d]; gp < t->port_base[d + 1]; gp++)
      if (t->peer[gp] < 0 && t->peer[gp] != SIM_UNCONNECTED) {
        const int n = -1 - t->peer[gp];
        if (first < 0 || n < first)
          first = n;
        if (n > last)
          last = n;
      }
    for (int dst = first; dst <= (per_node ? last : first); dst++)
      if (t->node_router[dst] == d)
        keys[nk++] = dst;
  }
  if (g->use_dclass && per_node) {
    /* keys of one rank share their classes: batch them together (the
     * order of keys changes nothing but the speed) */
    int64_t *rk = malloc(sizeof *rk * (size_t)(nk ? nk : 1));
    if (!rk) {
      oom(g);
      goto fail_keys;
    }
    for (int k = 0; k < nk; k++)
      rk[k] = sim_routing_key_rank(g->R, keys[k]) * (int64_t)(t->nnodes + 1) + keys[k];
    qsort(rk, (size_t)nk, sizeof *rk, cmp_i64);
    for (int k = 0; k < nk; k++)
      keys[k] = (int)(rk[k] % (t->nnodes + 1));
    free(rk);
  }
  for (int k0 = 0; k0 < nk; k0 += g->width) {
    g->nb = nk - k0 < g->width ? nk - k0 : g->width;
    g->batch++;
    g->arena_n = 0;
    g->gmemo_n = 0;
    g->cn_used = 0; /* the entries of earlier batches are free slots */
    for (int k = 0; k < g->nb; k++) {
      g->bdst[k] = keys[k0 + k];
      g->brouter[k] = t->node_router[g->bdst[k]];
      g->rkeys[g->brouter[k]] |= 1ull << k;
      if (nonmin)
        g->gkeys[g->brouter[k] / t->a] |= 1ull << k;
    }
    const uint64_t all = g->nb == BATCH ? ~0ull : (1ull << g->nb) - 1;
    size_t qt = 0;
    if (seed_sources(g, SIM_ALT_MIN | (nonmin ? 0 : SIM_ALT_NONMIN), &qt))
      goto fail_keys;
    if (nonmin) {
      /* junctions outside the key's group: the first step of phase 1; the
       * junction packets (phase 0, entering their intermediate group) get
       * a cache namespace of their own */
      for (int k = 0; k < j.n; k++) {
        const long v = j.v[k];
        const int q = g->prouter[v / g->C];
        const uint64_t mask = all & ~g->gkeys[q / t->a];
        if (mask && expand_keys(g, v, &j.st[k], mask, 1, &qt))
          goto fail_keys;
      }
    }
    if (walk(g, &qt))
      goto fail_keys;
    for (size_t q = 0; q < qt; q++) /* clear what the batch marked */
      g->seen[g->queue[q].v] = 0;
    for (int k = 0; k < g->nb; k++) {
      g->rkeys[g->brouter[k]] = 0;
      if (nonmin)
        g->gkeys[g->brouter[k] / t->a] = 0;
    }
  }
  free(keys);
  free(j.v);
  free(j.st);
  free(j.seen);
  return 0;
fail_keys:
  free(keys);
fail:
  free(j.v);
  free(j.st);
  free(j.seen);
  return -1;
}

static int check(const sim_routing *R, int width, int use_dclass, uint64_t *digest, char *err,
                 size_t errlen) {
  const sim_topo *t = sim_routing_topo(R);
  cdg g = {.R = R,
           .t = t,
           .C = sim_routing_classes(R),
           .L = sim_routing_lanes(R),
           .vcs = sim_routing_vcs(R),
           .width = width,
           .use_dclass = use_dclass,
           .err = err,
           .errlen = errlen};
  g.nv = (size_t)t->nports * (size_t)g.C;
  const size_t nr = (size_t)(t->nrouters ? t->nrouters : 1);
  g.off = malloc(sizeof *g.off * (g.nv + 1));
  g.prouter = malloc(sizeof *g.prouter * (size_t)(t->nports ? t->nports : 1));
  g.pport = malloc(sizeof *g.pport * (size_t)(t->nports ? t->nports : 1));
  g.nodeport = malloc(sizeof *g.nodeport * nr);
  g.seen = calloc(g.nv ? g.nv : 1, sizeof *g.seen);
  g.rkeys = calloc(nr, sizeof *g.rkeys);
  g.gkeys = calloc((size_t)(t->g > 0 ? t->g : 1), sizeof *g.gkeys);
  g.gm_stamp = calloc(nr, sizeof *g.gm_stamp);
  g.gm_mask = malloc(sizeof *g.gm_mask * nr);
  g.gm_off = malloc(sizeof *g.gm_off * nr);
  g.gm_n = malloc(sizeof *g.gm_n * nr);
  g.qcap = 1024;
  g.queue = malloc(sizeof *g.queue * g.qcap);
  g.usig = calloc(g.nv ? g.nv : 1, sizeof *g.usig);
  g.alts_cap = SIM_TOPO_MAX_RADIX;
  g.alts = malloc(sizeof *g.alts * (size_t)g.alts_cap);
  int rc = -1;
  if (!g.off || !g.prouter || !g.pport || !g.nodeport || !g.seen || !g.rkeys || !g.gkeys ||
      !g.gm_stamp || !g.gm_mask || !g.gm_off || !g.gm_n || !g.queue || !g.usig || !g.alts) {
    oom(&g);
    goto out;
  }
  for (int gp = 0; gp < t->nports; gp++) {
    const int q = t->peer[gp];
    g.prouter[gp] = q >= 0 ? sim_port_router(t, q) : -1;
    g.pport[gp] = q >= 0 ? q - t->port_base[g.prouter[gp]] : -1;
  }
  for (int r = 0; r < t->nrouters; r++)
    g.nodeport[r] = node_port_of(t, r);
  g.off[0] = 0;
  for (size_t v = 0; v < g.nv; v++) {
    const int r = g.prouter[v / (size_t)g.C];
    const size_t deg = r >= 0 ? (size_t)(t->port_base[r + 1] - t->port_base[r]) : 0;
    g.off[v + 1] = g.off[v] + deg * (size_t)g.C;
  }
  const size_t nwords = g.off[g.nv] / 64 + 1;
  g.bits = calloc(nwords, sizeof *g.bits);
  if (!g.bits) {
    oom(&g);
    goto out;
  }
  if (build(&g))
    goto out;
  if (digest) {
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < nwords; i++)
      h = (h ^ mix(g.bits[i] + i)) * 1099511628211ull;
    *digest = h;
  }
  rc = find_cycle(&g, err, errlen);
out:
  free(g.off);
  free(g.bits);
  free(g.prouter);
  free(g.pport);
  free(g.nodeport);
  free(g.seen);
  free(g.rkeys);
  free(g.gkeys);
  free(g.gm_stamp);
  free(g.gm_mask);
  free(g.gm_off);
  free(g.gm_n);
  free(g.gmemo);
  free(g.queue);
  free(g.cache);
  free(g.usig);
  free(g.arena);
  free(g.alts);
  return rc;
}

/* R's cover (routing_impl.h) as a routing on R's tables, or 0. */
static int cover_of(const sim_routing *R, sim_routing *C) {
  const sim_routing_def *cov = R->def->covered_by;
  if (!cov || cov->init != R->def->init || cov->classes != R->def->classes ||
      !(cov->kinds & SIM_KIND(R->t->kind)))
    return 0;
  *C = *R; /* not freed: the tables are R's */
  C->def = cov;
  return 1;
}

const char *sim_routing_cover(const sim_routing *R) {
  sim_routing C;
  return cover_of(R, &C) ? C.def->name : NULL;
}

int sim_routing_check_deadlock(const sim_routing *R, char *err, size_t errlen) {
  sim_routing C;
  char e[256];
  if (cover_of(R, &C) && !check(&C, BATCH, 1, NULL, e, sizeof e))
    return 0; /* a subgraph of an acyclic graph */
  return check(R, BATCH, 1, NULL, err, errlen);
}

int sim_routing_check_deadlock_ref(const sim_routing *R, int width, int use_dclass,
                                   uint64_t *digest, char *err, size_t errlen) {
  return check(R, width < 1 ? 1 : width > BATCH ? BATCH : width, use_dclass, digest, err, errlen);
}
