/* Internal to the routings (route.c, routings.c, routing_*.c, cdg.c): the
 * routing object, the row each routing declares for the registry, and the
 * per-hop helpers the routing files share.  Nothing outside src/fabric/
 * includes it; the public interface is route.h.
 *
 * Adding a routing: write its sim_routing_def (a route and an
 * alternatives hook, in the file of its topology family or a file of its
 * own) and list it in routings.c.  Nothing else names a
 * routing: the deadlock check (cdg.c) reads the def's flags. */
#ifndef CONTEND_SIM_ROUTING_IMPL_H
#define CONTEND_SIM_ROUTING_IMPL_H

#include "route.h"

/* The topology kinds a routing applies to, as a bit set. */
#define SIM_KIND(k) (1u << (unsigned)(k))
#define SIM_KINDS_TREE (SIM_KIND(SIM_TOPO_XGFT) | SIM_KIND(SIM_TOPO_TREE))

/* Flags of a routing, read by the deadlock check (cdg.c):
 * - PER_NODE: its choices depend on the destination node, not only on the
 *   destination's router (the check then walks every destination node);
 * - NONMIN: at the source router it may send a packet to an intermediate
 *   group first (phase 0), then minimally to the destination; the check
 *   walks those segments separately (their choices depend on the
 *   intermediate, not on the destination);
 * - REEVAL: a packet that left its source router minimally may turn
 *   non-minimal at the next router of its source group (st->pending). */
enum { SIM_RF_PER_NODE = 1, SIM_RF_NONMIN = 2, SIM_RF_REEVAL = 4 };

typedef struct sim_routing_def sim_routing_def;

struct sim_routing {
  const sim_topo *t;
  const sim_routing_def *def;
  int classes, lanes, vcs, max_hops;
  uint32_t thr;       /* UGAL threshold, bytes */
  int ncand;          /* UGAL candidate intermediates per decision */
  uint32_t pkt_bytes; /* a full packet on the wire (adaptive's slack) */
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
  int a, p, hg, g, gl, gm, gp0; /* gl copies of gm = a*h / gl group ports */
  struct sim_df_way *dfw;       /* [i * gm + e]: routing_dragonfly.c's way from router index i */
};

/* One routing: a row of the registry (routings.c).  The hooks get the
 * packet's state already reset when `inject` (the source router's
 * decision: lane, phase, intermediate cleared). */
struct sim_routing_def {
  const char *name;
  unsigned kinds; /* SIM_KIND() bits of the topologies it routes */
  int classes;    /* VC classes it needs to be deadlock-free */
  int max_hops;   /* router-to-router hops at most; -1: init sets R->max_hops */
  unsigned flags; /* SIM_RF_* */
  /* Builds R's tables from R->t (shared by the routings of a family);
   * NULL: none.  Returns 0, or -1 out of memory.  sim_routing_free frees
   * every table of struct sim_routing. */
  int (*init)(sim_routing *R);
  /* The per-hop decision (sim_route's contract): returns the local output
   * port of r and sets *out_vc. */
  int (*route)(const sim_routing *R, int r, int inject, int dst, sim_route_state *st,
               sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_vc);
  /* Every choice route could make (sim_route_alternatives' contract):
   * writes at most max, returns how many there are. */
  int (*alternatives)(const sim_routing *R, int r, int inject, int dst, const sim_route_state *st,
                      unsigned which, sim_route_alt *alts, int max);
  /* The class of destination node dst at router r: two destinations of
   * one class get the same alternatives at r (for every input port, state
   * and `which`; the alternatives are a function of the class).  The
   * deadlock check computes the alternatives once per class for a batch
   * of destinations (cdg.c).  NULL: the destination node itself. */
  int64_t (*dclass)(const sim_routing *R, int r, int dst);
  /* Optional, for per-node routings: a rank of destination dst such that
   * destinations of equal rank share their classes at most routers (e.g.
   * D-mod-k's up ports); the check batches keys in rank order, which only
   * changes its speed.  NULL: node order. */
  int64_t (*key_rank)(const sim_routing *R, int dst);
  /* Optional: a routing of the same family (same init, so the same
   * tables; same classes) whose alternatives include this one's at every
   * router, for every destination, input and state.  Its graph contains
   * this one's, so if it is acyclic this one is: the deadlock check tries
   * it first when it is cheaper (keys per router, not per node: D-mod-k
   * under random up ports), and checks this routing itself only if the
   * cover has a cycle (the error is then this routing's own). */
  const sim_routing_def *covered_by;
  const char *help; /* one line for --help and docs */
};

/* The registry (routings.c): the def named name that applies to kind
 * (name NULL or "": the kind's default, its first row), or NULL. */
const sim_routing_def *sim_routing_lookup(sim_topo_kind kind, const char *name);
unsigned sim_routing_flags(const sim_routing *R);
/* The def's dclass of dst at r (dst itself when it has none). */
int64_t sim_routing_dclass(const sim_routing *R, int r, int dst);
/* The def's key_rank of dst (0 when it has none). */
int64_t sim_routing_key_rank(const sim_routing *R, int dst);

/* ---- shared per-hop helpers ---- */

/* The VC of class cls on lane `lane` (cls clamped for the unchecked test hook). */
static inline int sim_vc_of(const sim_routing *R, int cls, int lane) {
  if (cls >= R->classes)
    cls = R->classes - 1;
  return cls * R->lanes + lane;
}

/* Appends one alternative (counts it even past max). */
static inline void sim_alt_put(sim_route_alt *alts, int max, int *n, int port, int vc,
                               const sim_route_state *st) {
  if (*n < max) {
    alts[*n].port = port;
    alts[*n].vc = vc;
    alts[*n].st = *st;
  }
  (*n)++;
}

#endif
