/* The fabric layer (src/fabric/): a machine's network as a graph, its
 * routings, the paths they give and the tree view of it.  The simulator
 * (src/engine_sim/), the job-file placements (src/jobs/) and `contend
 * topology` use it; it depends on src/core only, never on an engine (its
 * names keep the simulator's sim_ prefix, where it was born).
 *
 * This header: routers, their ports, the links between them and where
 * each node's NIC attaches (topo*.c build it from a topology spec;
 * route.c routes on it; the simulator's net.c moves packets on it).
 *
 * Numbering:
 * - nodes 0 .. nnodes-1 (a node = one NIC = the unit contend calls a node);
 * - routers 0 .. nrouters-1;
 * - router ports: router r owns the global ports port_base[r] ..
 *   port_base[r+1]-1; "local port" p of r is global port port_base[r]+p.
 * Every link is bidirectional: two unidirectional channels, one leaving
 * each end.  The channel leaving router port gp is identified by gp.
 *
 * Ownership: sim_topo_parse fills *t with arrays it allocates;
 * sim_topo_free releases them.  Read-only afterwards. */
#ifndef CONTEND_SIM_TOPO_H
#define CONTEND_SIM_TOPO_H

#include <stddef.h>

#define SIM_MAX_VCS 8
#define SIM_MAX_LEVELS 8
#define SIM_UNCONNECTED (-2147483647 - 1) /* INT_MIN: a port with no link */
#define SIM_TOPO_MAX_RADIX 1024

/* Size limits of every topology (specs and topology.conf), checked before
 * anything of that size is allocated.  A variable, not constants, so that
 * the fuzz harnesses can scale them down (fuzz/); nothing else writes it.
 * Defaults: 1,000,000 nodes and routers, 2^24 router ports in all. */
typedef struct sim_topo_limits {
  int nodes, routers, ports;
} sim_topo_limits;
extern sim_topo_limits sim_topo_max;
#define SIM_TOPO_MAX_NODES (sim_topo_max.nodes)
#define SIM_TOPO_MAX_ROUTERS (sim_topo_max.routers)
#define SIM_TOPO_MAX_PORTS (sim_topo_max.ports)

/* Link classes: each has its own bandwidth and latency (net parameters). */
typedef enum {
  SIM_LINK_NODE,   /* NIC <-> its router */
  SIM_LINK_LOCAL,  /* router <-> router inside a group / lower tree levels */
  SIM_LINK_GLOBAL, /* dragonfly global links; top tree level */
  SIM_LINK_NCLASS
} sim_link_class;

typedef enum { SIM_TOPO_SWITCH, SIM_TOPO_XGFT, SIM_TOPO_DRAGONFLY, SIM_TOPO_TREE } sim_topo_kind;

typedef struct sim_topo {
  sim_topo_kind kind;
  char spec[256]; /* canonical form of the spec (recorded in results) */
  int nnodes, nrouters;
  int nports;         /* router ports in all */
  int *port_base;     /* nrouters + 1 */
  int *peer;          /* nports: peer global port (>= 0), -1 - node (a NIC), or SIM_UNCONNECTED */
  unsigned char *cls; /* nports: sim_link_class of the link at this port */
  int *router_level;  /* nrouters: tree level (1 = leaf, h = top); dragonfly: 1 */
  int *router_group;  /* nrouters: dragonfly group; tree: pod (3-level) or 0 */
  int *node_router;   /* nnodes: the router node n's NIC attaches to */
  int *node_port;     /* nnodes: the local port of that router */
  /* kind-specific shape (read by route.c): */
  int h, m[SIM_MAX_LEVELS], w[SIM_MAX_LEVELS]; /* XGFT(h; m1..mh; w1..wh): m[0] = m1;
                                                  slurm: h = tree height, m, w 0 */
  int a, p, hg, g, gl;                         /* dragonfly (gl: links per pair of groups) */
  void *extra;                                 /* builder-private tables (freed by sim_topo_free) */
} sim_topo;

/* Parses and builds a topology.  Returns 0, or -1 with one line in err
 * naming what is wrong (for exit status 2).  Specs (all counts >= 1):
 *   switch:nodes=N                        one N-port router, N nodes
 *   fattree:leaves=L,nodes=N,uplinks=U    2 levels (= xgft:h=1,down=L,up=U,servers=N)
 *   fattree:pods=P,leaves=L,nodes=N,uplinks=U,pod_uplinks=Q   3 levels
 *                                         (= xgft:h=2,down=L,P,up=U,Q,servers=N)
 *   xgft:h=H,down=D1,..,DH,up=U1,..,UH[,servers=S]
 *                                         caminos-lib's XGFT{height, down, up,
 *                                         servers_per_leaf}: H stages above the
 *                                         leaf routers, S nodes per leaf
 *                                         (default S = D1), see below
 *   dragonfly:a=A,p=P,h=H[,g=G][,links=L] 2 <= G <= A*H+1 groups (default A*H+1);
 *                                         L parallel links per pair of groups,
 *                                         1..A*H/(G-1) (default the most)
 *   slurm:FILE                            a Slurm topology.conf tree
 *
 * xgft (as caminos-lib, src/topology/multistage.rs, Fat stages): router
 * levels 0..H (leaves at 0 here called level 1); stage i (1..H) joins level
 * i-1 to level i; every level-(i-1) router has Ui parents, every level-i
 * router has Di children.  Level i holds prod_{j>i} Dj * prod_{j<=i} Uj
 * routers, so there are prod Dj leaves and S * prod Dj nodes.  It is
 * Ohring's XGFT(H+1; S,D1..DH; 1,U1..UH) with the nodes as level 0, which
 * is what t->h, t->m, t->w hold: t->h = H+1 router levels, t->m[0] = S,
 * t->w[0] = 1, t->m[i] = Di, t->w[i] = Ui.  Example: xgft:h=2,down=8,8,
 * up=4,8 has 64 leaves (8 nodes, 4 uplinks each: 2:1 taper), 32 + 32
 * upper routers, 512 nodes.
 * Limits: at most SIM_TOPO_MAX_NODES nodes and routers, SIM_TOPO_MAX_RADIX
 * ports per router, SIM_TOPO_MAX_PORTS ports in all. */
int sim_topo_parse(const char *spec, sim_topo *t, char *err, size_t errlen);
void sim_topo_free(sim_topo *t);

/* A short name of router r for tables and counters ("leaf3", "spine0",
 * "g2.r1", "s14"): written into buf, returned. */
const char *sim_router_label(const sim_topo *t, int r, char *buf, size_t len);

/* The router a global port belongs to (binary search on port_base). */
int sim_port_router(const sim_topo *t, int gp);

/* Channels (one direction of a link) are numbered as the fabric numbers
 * them: c < nports is the channel leaving router port c; c = nports + n is
 * node n's NIC injecting into its router.  These name a channel the way
 * the counters CSV does: component (router label or "nicN"), local output
 * port (a NIC: 0), and tier ("injection (nic->router)", "ejection
 * (router->nic)", dragonfly "local" / "global", trees "level A->B (up)").
 * Each writes into buf and returns it (port: returns the number). */
const char *sim_channel_component(const sim_topo *t, long c, char *buf, size_t len);
int sim_channel_port(const sim_topo *t, long c);
/* The channel in the opposite direction on the same link (a NIC's
 * injection channel and its router's ejection port are one link); -1 for
 * a port without a link. */
long sim_channel_reverse(const sim_topo *t, long c);
const char *sim_channel_tier(const sim_topo *t, long c, char *buf, size_t len);

/* ---- internal: shared by the builders (topo*.c) ---- */

/* One key of a "kind:key=value,..." spec; list keys take comma-separated
 * values ("down=8,8,up=4,8").  sim_topo_parse_keys fills n and v (values
 * >= 1) and rejects unknown, repeated, zero or malformed keys. */
typedef struct sim_topo_key {
  const char *name;
  int list; /* 1: up to SIM_MAX_LEVELS values */
  int n;    /* values given, 0 = absent */
  long long v[SIM_MAX_LEVELS];
} sim_topo_key;
int sim_topo_parse_keys(const char *spec, const char *args, sim_topo_key *keys, int nkeys,
                        char *err, size_t errlen);
/* Allocates every array of t for nrouters routers and nnodes nodes; the
 * port counts are given by nports_of[r] (r < nrouters).  Ports start
 * SIM_UNCONNECTED.  Returns 0 or -1 with err. */
int sim_topo_alloc(sim_topo *t, int nrouters, int nnodes, const int *nports_of, char *err,
                   size_t errlen);
/* Checks peer symmetry and node attachment (every builder's last step). */
int sim_topo_validate(const sim_topo *t, char *err, size_t errlen);
/* Kind builders: args is the text after "kind:". */
int sim_topo_parse_xgft(const char *spec, const char *args, sim_topo *t, char *err, size_t errlen);
int sim_topo_parse_fattree(const char *spec, const char *args, sim_topo *t, char *err,
                           size_t errlen);
int sim_topo_parse_dragonfly(const char *spec, const char *args, sim_topo *t, char *err,
                             size_t errlen);
int sim_topo_parse_slurm(const char *spec, const char *path, sim_topo *t, char *err, size_t errlen);
/* The same from the file's text (conf, NUL-terminated, not modified); spec
 * names the topology in messages. */
int sim_topo_parse_slurm_text(const char *spec, const char *conf, sim_topo *t, char *err,
                              size_t errlen);
/* The switch name of router r of a slurm topology (t->extra). */
const char *sim_topo_slurm_name(const sim_topo *t, int r);
/* The host name of node n of a slurm topology (as listed in the file). */
const char *sim_topo_slurm_node_name(const sim_topo *t, int n);

#endif
