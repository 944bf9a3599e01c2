/* The fabric's private state, shared by net.c (channels, wires, credits,
 * NICs), the router models (router_*.c), cc.c (congestion control) and
 * counters.c.  Nobody else includes it. */
#ifndef CONTEND_SIM_NET_IMPL_H
#define CONTEND_SIM_NET_IMPL_H

#include "contend/rng.h"
#include "net.h"
#include "router.h"

#define SIM_NIL UINT32_MAX
/* PKT_RSV, PKT_CRED: the oq model admitted the packet into its output
 * queue's reserved minimum / returned its input credits on admission */
enum { PKT_LAST = 1, PKT_ECN = 2, PKT_RSV = 4, PKT_CRED = 8 };
/* EV_ROUTER: the router model's own events (sim_router_model.event) */
enum { SIM_PASSIVE_KINDS = 4 };
enum { EV_ARRIVE = 0, EV_ARB = 1, EV_CC = 2, EV_SAMPLE = 3, EV_ROUTER = 4, EV_USER = 16 };

/* One cache line per packet (the pool is aligned). */
typedef struct __attribute__((aligned(64))) sim_pkt {
  uint32_t next, msg;
  uint32_t src, dst;
  uint32_t bytes;    /* on the wire, header included */
  uint16_t out_port; /* routed: local output port at the current router */
  uint8_t vc, out_vc;
  uint8_t flags;
  sim_route_state rs;
  uint32_t in_ch; /* oq: the channel it came in on (its credits go back there) */
  sim_time t_arr; /* on a wire: when it reaches the next hop */
  union {
    /* on a wire, with a packet behind it: that packet's t_arr (so the
     * arrival of this one schedules the next without reading it) */
    sim_time next_t_arr;
    /* in a voq VOQ, with a packet behind it: that packet's sim_head_info
     * (so taking this one off reads the new head's without reading it) */
    uint32_t next_hinfo;
  };
} sim_pkt;

/* A credit on its way back (one per packet that left a buffer): 16 B, as
 * millions are in flight on a large fabric. */
typedef struct sim_cred {
  sim_time t;
  uint32_t next;
  uint32_t bytes : 28; /* a packet's wire bytes: mtu + header, at most 2^20 + 2^12 */
  uint32_t vc : 4;     /* < SIM_MAX_VCS */
} sim_cred;
_Static_assert(sizeof(sim_cred) == 16, "a credit record is 16 B");

/* One (channel, VC): credits towards the downstream buffer and counters. */
typedef struct sim_cvc {
  int64_t credit; /* free bytes in the downstream buffer */
  uint64_t bytes, pkts;
  sim_time stall;    /* time this VC had a packet waiting and no credit */
  sim_time occ_last; /* occupancy integral last updated */
  double occ_int;    /* integral of downstream occupancy (B x ps) */
} sim_cvc;

/* One channel: the direction of a link leaving a router port (id = the
 * global port) or a NIC (id = nports + node).  Two cache lines, aligned:
 * the first holds what every event of the channel reads (the event loop
 * prefetches both).  Its credits on their way back are a FIFO in time
 * order: the oldest SIM_CRED_INLINE in the channel's second line (most
 * channels have no more in flight), the rest a list of pool records
 * (cred_head..cred_tail, non-empty only when the inline ones are full). */
#define SIM_CRED_INLINE 2
typedef struct __attribute__((aligned(64))) sim_chan {
  sim_time busy_until; /* serializing until */
  sim_time ev_time;    /* pending arbitration event, or SIM_NEVER */
  sim_time head_delay; /* start -> arrival at the next hop (see net.h) */
  uint64_t ppb;        /* ps per byte, 16.16 fixed point */
  int32_t dst_router;  /* or -1 - node (a NIC) */
  int16_t dst_port;    /* local port at dst_router (radix <= SIM_TOPO_MAX_RADIX) */
  uint8_t cls, stalled;
  int32_t src_router;            /* -1: a NIC's injection channel */
  uint32_t wire_head, wire_tail; /* packets on the wire */
  uint32_t cred_head, cred_tail; /* credits on their way back */
  int32_t dst_gp; /* the router port (global) whose input buffers this channel feeds, or -1 */
  uint8_t stall_mask;
  uint8_t ncred_inl; /* credits in cred_inl, oldest first */
  sim_time stall_since;
  sim_time busy;  /* total serialization time */
  sim_time stall; /* total credit-stall time */
  sim_cred cred_inl[SIM_CRED_INLINE];
} sim_chan;
_Static_assert(sizeof(sim_chan) == 128, "a channel is two cache lines");

typedef struct sim_ibuf {
  uint32_t head, tail;
  uint32_t bytes;
} sim_ibuf;

typedef struct sim_nic {
  uint32_t q_head, q_tail, q_len; /* messages to inject, FIFO */
  /* the first router's input buffer fed by this NIC (VC 0): since when its
   * head packet has waited, and the waits of the heads that left */
  sim_time head_since, blocked;
  void *cc; /* cc.c's per-NIC state */
} sim_nic;

struct sim_net {
  sim_net_config cfg;
  sim_net_hooks hooks;
  const sim_topo *t;
  int V;          /* VCs */
  uint32_t nchan; /* nports + nnodes */
  sim_chan *chan;
  sim_cvc *cvc; /* nchan x V */
  /* Per router input port (global port gp, the router's own in a row, so a
   * router's inputs are together in memory), indexed gp x V + VC: the
   * input buffer (iq: its FIFO; voq: its bytes; oq: the packets waiting
   * for admission); channel c feeds port chan[c].dst_gp (sim_in_buf). */
  sim_ibuf *ibuf;
  sim_time *in_busy; /* nports: an input port reads one packet at a time into the crossbar
                      * (across its VCs): free again then */
  uint32_t *in_chan; /* nports: the channel feeding router port gp */
  sim_nic *nic;
  sim_pkt *pkt;
  uint32_t npkt, cappkt, free_pkt;
  sim_msg *msg;
  uint32_t nmsg, capmsg, free_msg;
  sim_cred *cred;
  uint32_t ncred, capcred, free_cred;
  sim_des des;
  contend_rng *rng; /* nrouters: each router's stream of routing choices */
  sim_net_stats stats;
  /* the channels' state outgrows a core's cache: the event loop guesses a
   * packet's route ahead of its arrival to prefetch the output (a hint;
   * on a small fabric the guess costs more than it saves) */
  int route_ahead;
  void *rm; /* the router model's state (cfg.router) */
  void *cc; /* cc.c's global state */
  /* a part of the fabric (net_part.c): part_of_router NULL (ps NULL) for
   * the whole fabric */
  const int *part_of_router;
  int parts, me;
  struct sim_part_state *ps;
  /* counters.c's sampler: called at EV_SAMPLE events */
  void (*sample)(void *arg);
  void *sample_arg;
  /* pending events that are EV_SAMPLE or passive timers (of the kinds
   * in passive_kind[0..npassive_kinds)): sim_net_pending_active */
  size_t passive;
  uint32_t passive_kind[SIM_PASSIVE_KINDS];
  int npassive_kinds;
};

/* ---- shared by net.c and the router models ---- */

/* Pools (net.c): a packet or message record taken / given back. */
uint32_t sim_pkt_take(sim_net *n);
void sim_pkt_release(sim_net *n, uint32_t p);
void sim_msg_release(sim_net *n, uint32_t m);
/* Puts packet p (t_arr set) on channel c's wire, its arrival scheduled. */
void sim_wire_append(sim_net *n, uint32_t c, uint32_t p);
/* Credits for `bytes` on VC vc of channel c land at t (the local half of
 * sim_credit_back). */
void sim_credit_land(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t);
/* net_part.c, with a part set (n->ps): packet p about to cross channel c
 * / the credits of channel c: 1 when they went to another part's outbox
 * (p released), 0 when they stay in this part. */
int sim_part_ship_packet(sim_net *n, uint32_t c, uint32_t p);
int sim_part_ship_credit(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t);
/* At delivery: the message a packet's message counts into (its assembly
 * at the destination when it came from another part); then, when every
 * packet is in, forgets the assembly. */
uint32_t sim_part_assemble(sim_net *n, uint32_t m);
void sim_part_delivered(sim_net *n, uint32_t m);
/* The part that owns channel c, the part of its source (0 without parts):
 * its counters (bytes, stalls, credits) are kept there. */
int sim_part_of_channel(const sim_net *n, uint32_t c);
void sim_net_partition_free(sim_net *n);

/* calloc of n x size (n = 0: one) that ends the run on out-of-memory,
 * naming what; the caller frees. */
void *sim_xcalloc(size_t n, size_t size, const char *what);

/* sim_xcalloc's zeroed n x size on a 64 B (cache-line) boundary, the
 * size rounded up to whole lines; the caller frees (free()). */
void *sim_xcalloc_aligned(size_t n, size_t size, const char *what);

/* A prefetch hint for the state an upcoming event will touch (gcc 12
 * drops __builtin_prefetch in the event loop as dead code; the
 * instruction itself is kept). */
static inline void sim_prefetch(const void *p) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("prefetcht0 (%0)" : : "r"(p));
#else
  __builtin_prefetch(p);
#endif
}

/* Serialization time of bytes on channel c (ps, rounded up). */
static inline sim_time sim_chan_ser(const sim_chan *c, uint64_t bytes) {
  return (bytes * c->ppb + 0xffff) >> 16;
}
/* Asks for an EV_ARB event of channel c at t (one pending per channel:
 * the earliest wins). */
static inline void sim_chan_request(sim_net *n, uint32_t c, sim_time t) {
  sim_chan *ch = &n->chan[c];
  if (ch->ev_time <= t)
    return;
  ch->ev_time = t;
  sim_des_push(&n->des, t, EV_ARB, c);
  if (t - n->des.now < ((sim_time)1 << SIM_DES_BUCKET_SHIFT)) {
    /* due within the current bucket: the event loop's look-ahead does not
     * see it, so fetch what its arbitration reads first (credits) now */
    const char *v = (const char *)&n->cvc[(size_t)c * (size_t)n->V];
    sim_prefetch(v);
    sim_prefetch(v + sizeof(sim_cvc) * (size_t)n->V - 1);
    sim_prefetch(ch->cred_inl);
  }
}
/* When the first / last of channel c's credits on their way back lands
 * (SIM_NEVER: none). */
static inline sim_time sim_cred_first_t(const sim_chan *ch) {
  return ch->ncred_inl ? ch->cred_inl[0].t : SIM_NEVER;
}
static inline sim_time sim_cred_last_t(const sim_net *n, const sim_chan *ch) {
  if (ch->cred_tail != SIM_NIL)
    return n->cred[ch->cred_tail].t;
  return ch->ncred_inl ? ch->cred_inl[ch->ncred_inl - 1].t : SIM_NEVER;
}
/* The latency of router-bound channel c's link, for its credits' way back
 * (head_delay is link + router latency; the link's own is not kept). */
static inline sim_time sim_chan_credit_lat(const sim_net *n, uint32_t c) {
  return n->chan[c].head_delay - n->cfg.router_latency;
}
/* Brings the downstream occupancy integral of (channel, VC) v up to now. */
static inline void sim_cvc_touch(sim_net *n, sim_cvc *v) {
  const sim_time now = n->des.now;
  v->occ_int += (double)((int64_t)n->cfg.buffer_bytes - v->credit) * (double)(now - v->occ_last);
  v->occ_last = now;
}
/* Stall accounting of channel c: a stall (data waiting, no credit or
 * buffer downstream) on the VCs of mask begins / every stall ends now. */
void sim_stall_begin(sim_net *n, sim_chan *ch, unsigned mask);
void sim_stall_end(sim_net *n, sim_chan *ch, uint32_t c);
/* Bytes held in the downstream buffers of router channel c over all VCs,
 * as of now: credits that have arrived but are not yet taken up (that
 * happens when the port next sends) count as free, so an idle port does
 * not look as full as it last was (the occupancy adaptive routings read). */
int64_t sim_downstream_used(const sim_net *n, uint32_t c);
/* Takes up the credits of channel c that have arrived by now. */
void sim_drain_credits(sim_net *n, uint32_t c);
/* Credits for `bytes` on VC vc of channel c land at time t (a stalled
 * channel is woken then). */
void sim_credit_back(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t);
/* Puts packet p on channel c's wire now, on VC p->vc downstream (takes the
 * credits). */
void sim_transmit(sim_net *n, uint32_t c, uint32_t p);
/* The two halves of sim_transmit, for a model that reserves the downstream
 * credits before the link is free (voq's output buffers): takes `bytes`
 * of VC vc's credits of router channel c now / puts p on the wire without
 * taking credits. */
void sim_take_credit(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes);
void sim_transmit_reserved(sim_net *n, uint32_t c, uint32_t p);
/* The input buffer of VC v that router channel or NIC channel c feeds. */
static inline sim_ibuf *sim_in_buf(const sim_net *n, uint32_t c, int v) {
  return &n->ibuf[(size_t)n->chan[c].dst_gp * (size_t)n->V + (size_t)v];
}
/* What arbitration reads of a queue's head packet, in one word beside the
 * queue (iq, voq): bytes << 3 | output VC; never 0 (a packet has a byte). */
_Static_assert(SIM_MAX_VCS <= 8, "sim_head_info keeps the VC in 3 bits");
static inline uint32_t sim_head_info(const sim_pkt *pk) { return pk->bytes << 3 | pk->out_vc; }
/* FIFOs of packets linked through sim_pkt.next (input buffers, queues). */
static inline void sim_fifo_push(sim_net *n, sim_ibuf *q, uint32_t p) {
  n->pkt[p].next = SIM_NIL;
  if (q->tail == SIM_NIL)
    q->head = p;
  else
    n->pkt[q->tail].next = p;
  q->tail = p;
  q->bytes += n->pkt[p].bytes;
}
static inline uint32_t sim_fifo_pop(sim_net *n, sim_ibuf *q) {
  const uint32_t p = q->head;
  q->head = n->pkt[p].next;
  if (q->head == SIM_NIL)
    q->tail = SIM_NIL;
  q->bytes -= n->pkt[p].bytes;
  return p;
}
/* Next set bit of a bitmask of nbits bits in `words` words at or after
 * `from`, circularly; nbits if none is set. */
static inline uint32_t sim_bits_next(const uint64_t *w, uint32_t words, uint32_t nbits,
                                     uint32_t from) {
  if (from >= nbits)
    from = 0;
  uint32_t wi = from / 64;
  uint64_t m = w[wi] & (~0ull << (from % 64));
  for (uint32_t k = 0; k <= words; k++) {
    if (m)
      return wi * 64 + (uint32_t)__builtin_ctzll(m);
    wi = wi + 1 == words ? 0 : wi + 1;
    m = w[wi];
  }
  return nbits;
}
/* Radix (local ports) of router r. */
static inline uint32_t sim_radix(const sim_net *n, int r) {
  return (uint32_t)(n->t->port_base[r + 1] - n->t->port_base[r]);
}
/* Routes packet p, which arrived on channel c (VC p->vc), at c's router:
 * sets p->out_port and p->out_vc, reading occupancies from the model. */
void sim_route_packet(sim_net *n, uint32_t c, uint32_t p);
/* The input buffer fed by NIC channel c (c >= nports) started holding a
 * packet now (the wait sim_nic_blocked reports begins) / a packet left it. */
void sim_nic_in_start(sim_net *n, uint32_t c);
void sim_nic_in_leave(sim_net *n, uint32_t c);

/* cc.c: called by net.c when cfg.cc != SIM_CC_NONE. */
int sim_cc_init(sim_net *n, char *err, size_t errlen);
void sim_cc_free(sim_net *n);
/* the earliest time msg may inject its next packet (now: at once) */
sim_time sim_cc_allowed(sim_net *n, int node, sim_msg *m);
/* a packet left an input buffer that held `occupied` bytes on its VC,
 * towards a NIC (to_nic) or a router */
void sim_cc_departure(sim_net *n, sim_pkt *p, uint32_t occupied, uint32_t capacity, int to_nic);
/* a packet of m of `wire` bytes left node's NIC, serialized in s */
void sim_cc_sent(sim_net *n, int node, sim_msg *m, sim_time s);
/* a packet reached its destination NIC over ejection channel c */
void sim_cc_delivered(sim_net *n, const sim_pkt *p, uint32_t c);
/* A congestion notification for source NIC src about its flow to dst,
 * taking effect at t; (c, i) orders notes of equal t as one process
 * makes them (c: the ejection channel whose delivery made it, i: its
 * number among that delivery's notes).  rate: perflow's, ecn: < 0. */
typedef struct sim_cc_note {
  sim_time t;
  uint32_t c, i;
  int32_t src, dst;
  double rate;
} sim_cc_note;
/* A note made in another part of the fabric, for a source NIC of this
 * one (net_part.c's inbox). */
void sim_cc_note_land(sim_net *n, const sim_cc_note *x);
/* Ships note x to the part of its source NIC; 0: that is this part. */
int sim_part_ship_note(sim_net *n, const sim_cc_note *x);
/* an EV_CC event fired */
void sim_cc_event(sim_net *n, uint32_t id);
/* the NIC of node may have become allowed to send: rearm its arbiter */
void sim_net_kick_nic(sim_net *n, int node, sim_time t);

#endif
