/* Routing on the simulated fabric: which output port and VC a packet takes
 * at each router, and the start-up deadlock check of the channel
 * dependency graph (cdg.c).
 *
 * Routings are registered by name (routings.c: one table row each, with
 * the topology kinds it applies to, the VC classes it needs, its route and
 * alternatives hooks, its hop bound and its help line); the name is parsed
 * there only.  The first routing of a kind is its default.  The routings
 * (routing_switch.c, routing_tree.c, routing_dragonfly.c; `contend sim
 * --help` lists them):
 *   switch:             minimal
 *   fat trees (xgft, fattree, slurm): dmodk (static D-mod-k up ports),
 *                       random (uniform up port per packet), adaptive (the
 *                       up port with the least downstream occupancy, ties
 *                       broken at random), dmodk-adaptive (D-mod-k's up
 *                       port while it is within a packet of the least
 *                       occupied one, else a random one of those that are)
 *   dragonfly:          minimal, valiant, ugal (UGAL-L at the source
 *                       router over ugal_candidates random intermediates),
 *                       ugal-g (UGAL-G: also the candidate paths' global
 *                       channels' occupancy), par (progressive adaptive:
 *                       ugal at the source router, decided again at the
 *                       next router of the source group);
 *                       valiant's random intermediate router is drawn from
 *                       the whole network (the route is minimal when it is
 *                       in the source's or the destination's group); UGAL's
 *                       from the other groups; the packet turns to the
 *                       destination on entering the intermediate group (one
 *                       local hop there: 3 VC classes)
 * VCs: a packet injects on VC 0; the routing assigns the VC of every hop so
 * that the channel dependency graph is acyclic (fat trees: 1 VC suffices;
 * dragonfly minimal: 2, valiant/ugal/ugal-g: 3, par: 4); sim_routing_new
 * refuses fewer VCs than the routing needs.  More VCs than needed are used as parallel
 * lanes (a packet keeps its lane class, VC = class * lanes + lane). */
#ifndef CONTEND_SIM_ROUTE_H
#define CONTEND_SIM_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "contend/rng.h"
#include "topo.h"

/* Per-packet routing state, zeroed at injection, updated by sim_route. */
typedef struct sim_route_state {
  int32_t inter;   /* valiant/ugal: intermediate router, -1 none */
  uint8_t phase;   /* routing phase (e.g. 0 to intermediate, 1 to destination) */
  uint8_t nonmin;  /* 1 if a non-minimal path was taken */
  uint8_t ghops;   /* global hops taken so far */
  uint8_t lane;    /* the lane among spare VCs */
  uint8_t pending; /* may still turn non-minimal at the next router (par) */
  uint8_t divert;  /* turned non-minimal after the source router: VC class + 1 (par) */
} sim_route_state;

typedef struct sim_routing sim_routing; /* opaque */

/* Occupancy seen by adaptive choices: bytes queued for or held downstream
 * of router r's local output port (all VCs).  Provided by net.c. */
typedef uint32_t (*sim_occ_fn)(void *arg, int router, int port);

/* Options of a routing; zero = the default of each. */
typedef struct sim_routing_opts {
  int vcs;                 /* VCs per port; 0: what the routing needs */
  uint32_t ugal_threshold; /* bytes: UGAL takes the non-minimal path when
                              q_min * H_min > q_nonmin * H_nonmin + threshold */
  int ugal_candidates;     /* random intermediates UGAL compares per decision; 0: the default */
  uint32_t packet_bytes;   /* a full packet on the wire (mtu + header); 0: 4096 */
} sim_routing_opts;

/* ugal_candidates: the default (also --ugal-candidates', as text) and
 * the largest accepted. */
#define SIM_UGAL_DEFAULT_CANDIDATES 4
#define SIM_UGAL_MAX_CANDIDATES 64
#define SIM_STR_(x) #x
#define SIM_STR(x) SIM_STR_(x) /* a macro's value as a string literal */

/* name NULL or "" = the topology's default; opts NULL = every default.
 * Returns 0 or -1 with err (unknown name for this topology, listing the
 * valid ones; too few VCs; > SIM_MAX_VCS; candidates out of range).  The
 * caller frees *out with sim_routing_free. */
int sim_routing_new(const sim_topo *t, const char *name, const sim_routing_opts *opts,
                    sim_routing **out, char *err, size_t errlen);
void sim_routing_free(sim_routing *R);
const char *sim_routing_name(const sim_routing *R);
/* The UGAL bias in bytes the routing was built with (sim_routing_opts). */
uint32_t sim_routing_ugal_threshold(const sim_routing *R);
int sim_routing_vcs(const sim_routing *R); /* VCs every channel has */
/* The names valid on a topology kind, comma-separated, the default first
 * (for errors and tests).  Built from the registry at the first call. */
const char *sim_routing_names(sim_topo_kind kind);
/* Appends the routings' help to out: per topology family, one line per
 * routing, name and help (the registry's rows). */
struct contend_strbuf;
void sim_routing_help(struct contend_strbuf *out);

/* At router r, a packet that came in on local port in_port, VC in_vc,
 * from node src to node dst: sets *out_port (local port of r) and
 * *out_vc, and updates *st.  At dst's router the answer is dst's node
 * port.  rng: the network's stream (random/valiant choices). */
void sim_route(const sim_routing *R, int r, int in_port, int in_vc, int src, int dst,
               sim_route_state *st, sim_occ_fn occ, void *occ_arg, contend_rng *rng, int *out_port,
               int *out_vc);

/* The output port sim_route would take for a packet in state st at r
 * (exact for deterministic routings; adaptive and random ones are guessed
 * with no occupancies and no draws): a prefetch hint, changing nothing. */
int sim_route_guess(const sim_routing *R, int r, int in_port, int src, int dst,
                    const sim_route_state *st);

/* Builds the channel dependency graph of every route the routing can
 * choose (all alternatives of random/adaptive/valiant/ugal) and looks for
 * a cycle.  Returns 0, or -1 with err naming the cycle's channels. */
int sim_routing_check_deadlock(const sim_routing *R, char *err, size_t errlen);

/* Router-to-router hops a route takes at most (trees: 2 * (levels - 1);
 * dragonfly: 3 minimal, 5 valiant/ugal/ugal-g, 6 par; switch: 0); NIC
 * links not counted. */
int sim_routing_max_hops(const sim_routing *R);

/* ---- internal: the deadlock check (cdg.c) and tests ---- */

/* Test hook: sim_routing_new that accepts fewer VCs than the routing needs
 * (the VC class, e.g. global hops taken, is clamped to vcs - 1), so that
 * the deadlock check can be seen to fail. */
int sim_routing_new_unchecked(const sim_topo *t, const char *name, const sim_routing_opts *opts,
                              sim_routing **out, char *err, size_t errlen);
/* Test hook: the deadlock check with `width` destinations walked together
 * (1..64; the check uses 64) and with (use_dclass) or without the
 * routing's destination classes (routing_impl.h); *digest (may be NULL)
 * gets a hash of the graph's edges, so that the reduced check can be
 * compared with one walk per destination, which it must equal. */
int sim_routing_check_deadlock_ref(const sim_routing *R, int width, int use_dclass,
                                   uint64_t *digest, char *err, size_t errlen);
const sim_topo *sim_routing_topo(const sim_routing *R);
/* The name of the routing whose alternatives include R's everywhere, which
 * the deadlock check tries first (routing_impl.h's covered_by), or NULL. */
const char *sim_routing_cover(const sim_routing *R);
int sim_routing_classes(const sim_routing *R); /* VC classes in use */
int sim_routing_lanes(const sim_routing *R);   /* VC = class * lanes + lane */

/* Every choice sim_route could make at this hop (same arguments; the
 * choices of random, adaptive, valiant and ugal all listed), each with the
 * state the packet would carry on.  At a decision router (the source
 * router, in_port = the source node's port; for a routing that decides
 * again, the next router while st.pending) `which` selects the minimal
 * (SIM_ALT_MIN) and/or non-minimal (SIM_ALT_NONMIN) decisions;
 * non-minimal routings list one alternative per intermediate group
 * (st.inter = its first router: routes depend on the intermediate's group
 * only).  Writes at most
 * max alternatives, returns how many there are. */
typedef struct sim_route_alt {
  int port, vc;
  sim_route_state st;
} sim_route_alt;
enum { SIM_ALT_MIN = 1, SIM_ALT_NONMIN = 2, SIM_ALT_ALL = 3 };
int sim_route_alternatives(const sim_routing *R, int r, int in_port, int src, int dst,
                           const sim_route_state *st, unsigned which, sim_route_alt *alts, int max);

#endif
