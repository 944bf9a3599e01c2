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
 *   apart from theirs).
 * Cycles are found by an iterative depth-first search (no recursion); the
 * error names up to six channels of the first cycle found.
 * Cost: about keys * routers alternatives; < 1 s for a 16,512-node
 * dragonfly (2,064 routers) or a 16k-node 3-level fat tree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "routing_impl.h"

typedef struct {
  const sim_routing *R;
  const sim_topo *t;
  int C, L, vcs;
  size_t nv;
  size_t *off; /* nv + 1: bit offsets into bits */
  uint64_t *bits;
  int *prouter, *pport; /* per port: the router and local port the channel leads to, or -1 */
  /* per-key walk */
  int *stamp; /* per vertex: last key that reached it */
  int *queue;
  sim_route_state *qst;
  size_t qcap;
  /* per-key cache of a router's alternatives per incoming class */
  int *cstamp, *coff, *cn; /* nrouters * C */
  uint64_t *csig;          /* nrouters * C: signature of the cached list */
  uint64_t *usig;          /* per vertex: signature of the edge set last added from it */
  sim_route_alt *arena;
  size_t arena_n, arena_cap;
  sim_route_alt *alts;
  int alts_cap;
  unsigned walk_which; /* decisions the walks follow: SIM_ALT_MIN when non-minimal
                         segments are walked apart (phase0), else SIM_ALT_ALL */
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

static int push(cdg *g, size_t *qt, long v, const sim_route_state *st) {
  if (*qt == g->qcap) {
    const size_t cap = g->qcap * 2;
    int *q = realloc(g->queue, sizeof *q * cap);
    if (q)
      g->queue = q;
    sim_route_state *s = q ? realloc(g->qst, sizeof *s * cap) : NULL;
    if (!q || !s)
      return oom(g);
    g->qst = s;
    g->qcap = cap;
  }
  g->queue[*qt] = (int)v;
  g->qst[*qt] = *st;
  (*qt)++;
  return 0;
}

/* Queues the vertex alternative a leads to (once per key). */
static int reach(cdg *g, long v, const sim_route_alt *a, int key, size_t *qt) {
  if (g->t->peer[v / g->C] < 0 || g->stamp[v] == key)
    return 0;
  g->stamp[v] = key;
  return push(g, qt, v, &a->st);
}

/* The alternatives at router r for packets arriving on class cls,
 * computed once per (router, class) and cache key ckey (they do not depend
 * on the input port); their successors are queued then (once per walk key
 * key).  Returns the cache index or -1. */
static long expand(cdg *g, int r, int in_port, int cls, int dst, const sim_route_state *st,
                   int ckey, int key, size_t *qt) {
  const size_t ci = (size_t)r * (size_t)g->C + (size_t)cls;
  if (g->cstamp[ci] == ckey)
    return (long)ci;
  const int n = alternatives(g, r, in_port, dst, st, g->walk_which);
  if (n < 0)
    return -1;
  if (g->arena_n + (size_t)n > g->arena_cap) {
    size_t cap = g->arena_cap ? g->arena_cap * 2 : 4096;
    while (g->arena_n + (size_t)n > cap)
      cap *= 2;
    sim_route_alt *a = realloc(g->arena, sizeof *a * cap);
    if (!a)
      return oom(g);
    g->arena = a;
    g->arena_cap = cap;
  }
  uint64_t sig = 1469598103934665603ull ^ (uint64_t)r;
  for (int i = 0; i < n; i++) {
    const long v = vertex_of(g, r, &g->alts[i], dst);
    if (v < 0)
      return -1;
    sig = (sig ^ (uint64_t)v) * 1099511628211ull;
    g->arena[g->arena_n + (size_t)i] = g->alts[i];
  }
  g->cstamp[ci] = ckey;
  g->coff[ci] = (int)g->arena_n;
  g->cn[ci] = n;
  g->csig[ci] = sig | 1;
  g->arena_n += (size_t)n;
  for (int i = 0; i < n; i++) {
    const sim_route_alt *a = &g->arena[g->coff[ci] + i];
    if (reach(g, (long)(g->t->port_base[r] + a->port) * g->C + a->vc / g->L, a, key, qt))
      return -1;
  }
  return (long)ci;
}

/* Adds the edges from vertex u to the cached alternatives ci (skipped when
 * u already has exactly this edge set). */
static void connect(cdg *g, long u, size_t ci) {
  if (g->usig[u] == g->csig[ci])
    return;
  g->usig[u] = g->csig[ci];
  for (int i = 0; i < g->cn[ci]; i++) {
    const sim_route_alt *a = &g->arena[g->coff[ci] + i];
    add_edge(g, (size_t)u, a->port, a->vc / g->L);
  }
}

/* The walk of one key: queue[0..qt) already seeded (stamped with key). */
static int walk(cdg *g, int ckey, int key, int dst, size_t qt) {
  for (size_t qh = 0; qh < qt; qh++) {
    const long u = g->queue[qh];
    const sim_route_state st = g->qst[qh];
    const int gp = (int)(u / g->C), cls = (int)(u % g->C);
    const long ci = expand(g, g->prouter[gp], g->pport[gp], cls, dst, &st, ckey, key, &qt);
    if (ci < 0)
      return -1;
    connect(g, u, (size_t)ci);
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

/* Seeds the injections of every source router towards dst (minimal
 * decisions only when which says so). */
static int seed_sources(cdg *g, int key, int dst, unsigned which, size_t *qt) {
  const sim_topo *t = g->t;
  const sim_route_state st0 = {.inter = -1};
  for (int s = 0; s < t->nrouters; s++) {
    const int ip = node_port_of(t, s);
    if (ip < 0 || s == t->node_router[dst])
      continue;
    const int n = alternatives(g, s, ip, dst, &st0, which);
    if (n < 0)
      return -1;
    for (int i = 0; i < n; i++) {
      const long v = vertex_of(g, s, &g->alts[i], dst);
      if (v < 0 || reach(g, v, &g->alts[i], key, qt))
        return -1;
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

/* SIM_RF_REEVAL: from source router s towards every other group, the
 * minimal first hop marked pending and, at the router it reaches, the
 * turns to every intermediate group (their phase-0 segments). */
static int reeval(cdg *g, junctions *j, int s) {
  const sim_topo *t = g->t;
  const sim_route_state st0 = {.inter = -1};
  const int G = s / t->a;
  int rc = 0;
  for (int Gd = 0; Gd < t->g && !rc; Gd++) {
    if (Gd == G)
      continue;
    const int dst = Gd * t->a * t->p;
    const int n = alternatives(g, s, node_port_of(t, s), dst, &st0, SIM_ALT_MIN);
    if (n < 0)
      return -1;
    if (n != 1 || !g->alts[0].st.pending)
      continue;
    const sim_route_alt first = g->alts[0];
    const long u = vertex_of(g, s, &first, dst);
    if (u < 0)
      return -1;
    const int gp = (int)(u / g->C);
    sim_route_alt *turns = NULL;
    const int nt =
        alternatives_copy(g, g->prouter[gp], g->pport[gp], dst, &first.st, SIM_ALT_NONMIN, &turns);
    rc = nt < 0 ? -1 : 0;
    for (int i = 0; i < nt && !rc; i++)
      rc = segment(g, j, u, g->prouter[gp], turns[i], dst);
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

static int build(cdg *g) {
  const sim_topo *t = g->t;
  const unsigned flags = sim_routing_flags(g->R);
  const int nonmin = (flags & SIM_RF_NONMIN) != 0;
  const int per_node = (flags & SIM_RF_PER_NODE) != 0;
  g->walk_which = nonmin ? SIM_ALT_MIN : SIM_ALT_ALL;
  int key = 0;
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
      if ((flags & SIM_RF_REEVAL) && reeval(g, &j, s))
        goto fail;
    }
  }
  for (int d = 0; d < t->nrouters; d++) {
    if (node_port_of(t, d) < 0)
      continue;
    int first = -1, last = -1; /* the key's destination nodes */
    for (int gp = t->port_base[d]; gp < t->port_base[d + 1]; gp++)
      if (t->peer[gp] < 0 && t->peer[gp] != SIM_UNCONNECTED) {
        const int n = -1 - t->peer[gp];
        if (first < 0 || n < first)
          first = n;
        if (n > last)
          last = n;
      }
    for (int dst = first; dst <= (per_node ? last : first); dst++) {
      if (t->node_router[dst] != d)
        continue;
      size_t qt = 0;
      const int skey = ++key; /* stamps of this destination's walk */
      if (seed_sources(g, skey, dst, SIM_ALT_MIN | (nonmin ? 0 : SIM_ALT_NONMIN), &qt))
        goto fail;
      if (nonmin) {
        /* junctions outside d's group: the first step of phase 1; the
         * junction packets (phase 0, entering their intermediate group)
         * get a cache key of their own */
        const int jkey = ++key;
        for (int k = 0; k < j.n; k++) {
          const long v = j.v[k];
          const int gp = (int)(v / g->C), q = g->prouter[gp];
          if (q / t->a == d / t->a)
            continue;
          const long ci =
              expand(g, q, g->pport[gp], (int)(v % g->C), dst, &j.st[k], jkey, skey, &qt);
          if (ci < 0)
            goto fail;
          connect(g, v, (size_t)ci);
        }
      }
      if (walk(g, ++key, skey, dst, qt))
        goto fail;
      g->arena_n = 0;
    }
  }
  free(j.v);
  free(j.st);
  free(j.seen);
  return 0;
fail:
  free(j.v);
  free(j.st);
  free(j.seen);
  return -1;
}

int sim_routing_check_deadlock(const sim_routing *R, char *err, size_t errlen) {
  const sim_topo *t = sim_routing_topo(R);
  cdg g = {.R = R,
           .t = t,
           .C = sim_routing_classes(R),
           .L = sim_routing_lanes(R),
           .vcs = sim_routing_vcs(R),
           .err = err,
           .errlen = errlen};
  g.nv = (size_t)t->nports * (size_t)g.C;
  const size_t nrc = (size_t)t->nrouters * (size_t)g.C;
  g.off = malloc(sizeof *g.off * (g.nv + 1));
  g.prouter = malloc(sizeof *g.prouter * (size_t)(t->nports ? t->nports : 1));
  g.pport = malloc(sizeof *g.pport * (size_t)(t->nports ? t->nports : 1));
  g.stamp = calloc(g.nv ? g.nv : 1, sizeof *g.stamp);
  g.qcap = 1024;
  g.queue = malloc(sizeof *g.queue * g.qcap);
  g.qst = malloc(sizeof *g.qst * g.qcap);
  g.cstamp = calloc(nrc, sizeof *g.cstamp);
  g.coff = malloc(sizeof *g.coff * nrc);
  g.cn = malloc(sizeof *g.cn * nrc);
  g.csig = malloc(sizeof *g.csig * nrc);
  g.usig = calloc(g.nv ? g.nv : 1, sizeof *g.usig);
  g.alts_cap = SIM_TOPO_MAX_RADIX;
  g.alts = malloc(sizeof *g.alts * (size_t)g.alts_cap);
  int rc = -1;
  if (!g.off || !g.prouter || !g.pport || !g.stamp || !g.queue || !g.qst || !g.cstamp || !g.coff ||
      !g.cn || !g.csig || !g.usig || !g.alts) {
    oom(&g);
    goto out;
  }
  for (int gp = 0; gp < t->nports; gp++) {
    const int q = t->peer[gp];
    g.prouter[gp] = q >= 0 ? sim_port_router(t, q) : -1;
    g.pport[gp] = q >= 0 ? q - t->port_base[g.prouter[gp]] : -1;
  }
  g.off[0] = 0;
  for (size_t v = 0; v < g.nv; v++) {
    const int r = g.prouter[v / (size_t)g.C];
    const size_t deg = r >= 0 ? (size_t)(t->port_base[r + 1] - t->port_base[r]) : 0;
    g.off[v + 1] = g.off[v] + deg * (size_t)g.C;
  }
  g.bits = calloc(g.off[g.nv] / 64 + 1, sizeof *g.bits);
  if (!g.bits) {
    oom(&g);
    goto out;
  }
  if (build(&g))
    goto out;
  rc = find_cycle(&g, err, errlen);
out:
  free(g.off);
  free(g.bits);
  free(g.prouter);
  free(g.pport);
  free(g.stamp);
  free(g.queue);
  free(g.qst);
  free(g.cstamp);
  free(g.coff);
  free(g.cn);
  free(g.csig);
  free(g.usig);
  free(g.arena);
  free(g.alts);
  return rc;
}
