/* The simulated fabric: packets moved by virtual cut-through over
 * input-buffered routers with per-VC credit flow control (net.c), NICs
 * that packetize messages, congestion control (cc.c) and port counters
 * (counters.c).  Upper layers (the MPI semantics of sim_mpi.c, the
 * synthetic traffic of synth.c) post messages and timers and are called
 * back when a message has left its source NIC and when it has arrived.
 *
 * Model (every number is a parameter, see netparams.c):
 * - A message of B payload bytes becomes ceil(B / mtu) packets (at least
 *   one), each carrying `header` extra bytes on the wire.
 * - A channel (one direction of a link) serializes a packet in
 *   bytes / bandwidth and delivers its head `latency` later.  The head
 *   then spends `router_latency` in the router's pipeline before it may
 *   compete for an output: arrival at the next input buffer is at
 *   start + link latency + router latency (cut-through: the packet may
 *   leave before its tail has arrived).  At a NIC the packet counts as
 *   arrived when its tail is in: start + serialization + link latency.
 *   So an unloaded packet crossing k links and k-1 routers takes
 *   ser(first link) + sum(link latencies) + (k-1) router latencies, where
 *   ser is serialization on the slowest... on the first link (links of a
 *   path are assumed no faster downstream than upstream; if they are the
 *   model lets the packet finish early).
 * - Every router input port has `buffer_bytes` of credits per VC: its
 *   upstream sender sends a packet only into free credits.  What happens
 *   inside the router is the router model's (router.h, cfg.router: iq
 *   input FIFOs, voq virtual output queues, oq a shared output-queued
 *   buffer).  Credits come back, after the link latency, when the packet's
 *   tail has left the input buffer (iq, voq) or the switch (oq).  NIC
 *   injection uses VC 0 into the leaf router; NICs eject at link rate (no
 *   back-pressure from the host).
 * - Time is integer picoseconds; equal times run in scheduling order. */
#ifndef CONTEND_SIM_NET_H
#define CONTEND_SIM_NET_H

#include <stddef.h>
#include <stdint.h>

#include "../fabric/route.h"
#include "../fabric/topo.h"
#include "des.h"

typedef enum { SIM_CC_NONE, SIM_CC_ECN, SIM_CC_PERFLOW } sim_cc_mode;

struct sim_router_model;

typedef struct sim_net_config {
  const sim_topo *topo;                  /* borrowed: must outlive the net */
  const sim_routing *routing;            /* borrowed */
  const struct sim_router_model *router; /* router.h; NULL: the default (iq) */
  uint32_t mtu;                          /* payload bytes per packet */
  uint32_t header;                       /* wire bytes added to every packet */
  double gbps[SIM_LINK_NCLASS];          /* link bandwidth per class, Gbit/s */
  sim_time latency[SIM_LINK_NCLASS];     /* link latency per class */
  sim_time router_latency;
  uint32_t buffer_bytes; /* per VC per router input port */
  uint32_t speedup;      /* iq, voq: an input feeds the crossbar this many times its link rate */
  uint32_t islip_iterations;    /* voq: iterations of the allocator per round */
  uint32_t output_buffer_bytes; /* voq: per router output port, between crossbar and link */
  uint64_t shared_buffer_bytes; /* oq: the buffer pool of one switch */
  double dt_alpha;              /* oq: dynamic threshold: a queue grows while < alpha x free pool */
  sim_cc_mode cc;
  double ecn_threshold;     /* fraction of a VC buffer: mark above it */
  sim_time cc_period;       /* rate-increase period of ecn / hold time of perflow */
  double cc_gain;           /* DCQCN g */
  uint64_t seed;            /* of the random routing choices (random, valiant, ugal) */
  const double *link_scale; /* borrowed: nports + nnodes bandwidth factors per channel (degraded
                               links, degrade.h); NULL: every channel at its class's bandwidth */
} sim_net_config;

/* Called back from inside sim_net_run (never re-entered).  msg ids are
 * valid until delivered returns (the net then frees the message). */
typedef struct sim_net_hooks {
  void *arg;
  /* the last packet of msg starts leaving its source NIC; it is out at t */
  void (*injected)(void *arg, uint32_t msg, sim_time t);
  /* the last packet of msg has arrived at its destination NIC (now) */
  void (*delivered)(void *arg, uint32_t msg);
  /* a timer set with sim_net_timer fired (now) */
  void (*timer)(void *arg, uint32_t kind, uint32_t id);
} sim_net_hooks;

typedef struct sim_msg {
  uint32_t next;     /* NIC queue link (the net's) */
  uint32_t src, dst; /* nodes */
  uint64_t bytes;    /* payload */
  uint64_t left;     /* payload not yet packetized */
  uint32_t npkts, got;
  uint32_t kind;            /* the upper layer's */
  uint32_t flow;            /* cc flow slot at the source NIC (the net's) */
  uint64_t cookie;          /* the upper layer's */
  sim_time t_post, t_first; /* posted; first packet injected */
} sim_msg;

typedef struct sim_net_stats {
  uint64_t packet_hops;     /* channel traversals (NIC links included) */
  uint64_t packets, events; /* packets delivered; events processed */
  uint64_t bytes_delivered; /* payload */
  uint64_t ecn_marks, cc_notifications;
} sim_net_stats;

typedef struct sim_net sim_net;

/* The most packets one VC buffer may hold (buffer_bytes / (mtu + header)):
 * in-flight packets are memory, and a hot spot fills the buffers. */
#define SIM_BUFFER_PACKETS_MAX 65536

/* Validates a configuration: 0, or -1 with one line in err (a buffer
 * smaller than one packet, VCs out of range, a zero bandwidth). */
int sim_net_config_check(const sim_net_config *cfg, char *err, size_t errlen);
/* Returns NULL with err on bad configuration (sim_net_config_check) (e.g. a buffer smaller than
 * one packet, more VCs than SIM_MAX_VCS). */
sim_net *sim_net_new(const sim_net_config *cfg, const sim_net_hooks *hooks, char *err,
                     size_t errlen);
void sim_net_free(sim_net *n);
/* Restarts the random streams of the routing choices (one per router) from seed, as
 * sim_net_new does from cfg->seed (before any packet moves: the run's
 * seed, once the run envelope has resolved it). */
void sim_net_seed(sim_net *n, uint64_t seed);

/* ---- a part of the fabric (net_part.c) ----
 * sim_net_partition makes n simulate one part (me) of the routers split
 * into `parts` (part_of_router: borrowed, valid while n lives), with the
 * NICs of their nodes: call it before anything moves.  The upper layer
 * then makes messages only at nodes the part owns (sim_net_owns_node) and
 * sets its timers only for them; a packet or credit that crosses to
 * another part goes to that part's outbox instead; the driver runs every
 * part in windows no longer than the smallest latency of a link between
 * parts, hands each part's outbox for q to q with sim_net_inbox (the
 * parts in order), then clears the outboxes.  Congestion control's notes
 * go to their source NIC's part the same way (sim_cc_delay). */
void sim_net_partition(sim_net *n, const int *part_of_router, int parts, int me);
/* --cc's notification delay under cfg (ps): a notification crosses parts
 * in the swap of a window, so a partition's lookahead must not exceed it. */
sim_time sim_cc_delay(const sim_net_config *cfg);
int sim_net_owns_node(const sim_net *n, int node);
/* The records for part q since the last clear (len bytes; valid until the
 * next event or clear). */
const void *sim_net_outbox(const sim_net *n, int q, size_t *len);
void sim_net_outbox_clear(sim_net *n);
/* Applies the records another part sent for this one. */
void sim_net_inbox(sim_net *n, const void *buf, size_t len);

sim_time sim_net_now(const sim_net *n);
/* The time of the next pending event (SIM_NEVER: none). */
sim_time sim_net_next_time(sim_net *n);
/* A new message (not yet sent): payload bytes from node src to node dst. */
uint32_t sim_msg_new(sim_net *n, int src, int dst, uint64_t bytes, uint32_t kind, uint64_t cookie);
sim_msg *sim_msg_at(sim_net *n, uint32_t msg);
/* Queues msg at its source NIC now (FIFO per NIC). */
void sim_msg_send(sim_net *n, uint32_t msg);
/* Calls hooks->timer(kind, id) at time t (>= now). */
void sim_net_timer(sim_net *n, sim_time t, uint32_t kind, uint32_t id);
/* The same, for a timer that by itself neither moves a packet nor wakes a
 * rank (a watchdog, a periodic controller): sim_net_pending_active does
 * not count it.  A kind is passive or not for the whole run (at most
 * SIM_PASSIVE_KINDS kinds). */
void sim_net_timer_passive(sim_net *n, sim_time t, uint32_t kind, uint32_t id);
/* Pending events that may move a packet or wake a rank: all but passive
 * timers and the counters' samples.  0 with every rank parked: nothing
 * can ever wake them (a deadlock), whatever the passive timers do. */
size_t sim_net_pending_active(const sim_net *n);
/* Runs events in time order until none is left, the next is later than
 * `until`, or stop(arg) returns non-zero after an event.  Returns 1 if
 * events remain. */
int sim_net_run(sim_net *n, sim_time until, int (*stop)(void *arg), void *arg);
/* Messages queued at node's NIC (not fully injected). */
uint32_t sim_nic_backlog(const sim_net *n, int node);
/* Time node's NIC has had a packet to inject and no credit into its leaf
 * router since the start, the stall under way included (ps): the
 * injection stall (the throttle's congestion signal). */
sim_time sim_nic_stall(const sim_net *n, int node);
/* Time the oldest packet of the leaf router's input buffer fed by node's
 * NIC waited for the network (iq, voq: the crossbar, an output, credits;
 * oq: admission into the pool) since the start, the wait under way
 * included (ps): back-pressure on the node's own traffic, from its leaf
 * router or from a congestion tree beyond it. */
sim_time sim_nic_blocked(const sim_net *n, int node);
/* Integral over time of the bytes node's NIC has in its leaf router's
 * input buffer (credits in use on the injection VC) since the start
 * (B x ps). */
double sim_nic_occupancy(sim_net *n, int node);
/* Bytes of one router input buffer per VC. */
double sim_net_buffer_bytes(const sim_net *n);
/* Nodes of the fabric's topology. */
int sim_net_nodes(const sim_net *n);
/* Events pending (fabric work, timers). */
size_t sim_net_pending(const sim_net *n);
const sim_net_stats *sim_net_stats_get(const sim_net *n);
/* Serialization time of `bytes` on a link of class cls (ps, rounded up). */
sim_time sim_net_ser(const sim_net *n, int cls, uint64_t bytes);

#endif
