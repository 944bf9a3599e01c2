/* The fabric's packet machinery (see net.h for the model): channels with
 * their wires and credits, NIC packetization, and the event loop that
 * drives them.  What happens inside a router is the router model's
 * (router.h; cfg.router): net.c hands it arrivals and its channels' events.
 *
 * Events per packet hop: one wire arrival (EV_ARRIVE, only the head of a
 * wire is scheduled) and about one arbitration (EV_ARB, one pending per
 * channel).  Credits travel back lazily: they are queued with their
 * arrival time and taken up when the channel next arbitrates; a channel
 * that is stalled for want of credits is woken when the next one lands. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/vgrow.h"
#include "net_impl.h"

void *sim_xcalloc(size_t n, size_t size, const char *what) {
  void *p = calloc(n ? n : 1, size);
  if (!p)
    contend_fail("out of memory (simulator %s, %zu x %zu B)", what, n, size);
  return p;
}

void *sim_xcalloc_aligned(size_t n, size_t size, const char *what) {
  const size_t count = n ? n : 1;
  const size_t bytes = count * size;
  if (size && bytes / size != count)
    contend_fail("out of memory (simulator %s, %zu x %zu B)", what, n, size);
  const size_t whole = (bytes + 63) / 64 * 64;
  void *p = aligned_alloc(64, whole ? whole : 64);
  if (!p)
    contend_fail("out of memory (simulator %s, %zu x %zu B)", what, n, size);
  memset(p, 0, whole);
  return p;
}

/* ---- pools ---- */

uint32_t sim_pkt_take(sim_net *n) {
  if (n->free_pkt != SIM_NIL) {
    const uint32_t i = n->free_pkt;
    n->free_pkt = n->pkt[i].next;
    return i;
  }
  if (n->npkt == n->cappkt) {
    size_t cap = n->cappkt;
    n->pkt = contend_vgrow(n->pkt, &cap, (size_t)n->npkt + 1, sizeof *n->pkt, "simulator packets");
    n->cappkt = (uint32_t)cap;
  }
  return n->npkt++;
}

void sim_pkt_release(sim_net *n, uint32_t i) {
  n->pkt[i].next = n->free_pkt;
  n->free_pkt = i;
}

static uint32_t cred_new(sim_net *n) {
  if (n->free_cred != SIM_NIL) {
    const uint32_t i = n->free_cred;
    n->free_cred = n->cred[i].next;
    return i;
  }
  if (n->ncred == n->capcred) {
    size_t cap = n->capcred;
    n->cred =
        contend_vgrow(n->cred, &cap, (size_t)n->ncred + 1, sizeof *n->cred, "simulator credits");
    n->capcred = (uint32_t)cap;
  }
  return n->ncred++;
}

uint32_t sim_msg_new(sim_net *n, int src, int dst, uint64_t bytes, uint32_t kind, uint64_t cookie) {
  uint32_t i;
  if (n->free_msg != SIM_NIL) {
    i = n->free_msg;
    n->free_msg = n->msg[i].next;
  } else {
    if (n->nmsg == n->capmsg) {
      size_t cap = n->capmsg;
      n->msg =
          contend_vgrow(n->msg, &cap, (size_t)n->nmsg + 1, sizeof *n->msg, "simulator messages");
      n->capmsg = (uint32_t)cap;
    }
    i = n->nmsg++;
  }
  const uint64_t mtu = n->cfg.mtu;
  n->msg[i] = (sim_msg){.next = SIM_NIL,
                        .src = (uint32_t)src,
                        .dst = (uint32_t)dst,
                        .bytes = bytes,
                        .left = bytes,
                        .npkts = bytes ? (uint32_t)((bytes + mtu - 1) / mtu) : 1,
                        .kind = kind,
                        .flow = SIM_NIL,
                        .cookie = cookie,
                        .t_post = n->des.now};
  return i;
}

sim_msg *sim_msg_at(sim_net *n, uint32_t i) { return &n->msg[i]; }

void sim_msg_release(sim_net *n, uint32_t i) {
  n->msg[i].next = n->free_msg;
  n->free_msg = i;
}

/* ---- time helpers ---- */

sim_time sim_net_now(const sim_net *n) { return n->des.now; }

sim_time sim_net_next_time(sim_net *n) { return sim_des_next_time(&n->des); }

static uint64_t ppb_of(double gbps) { return (uint64_t)llround(8000.0 / gbps * 65536.0); }

sim_time sim_net_ser(const sim_net *n, int cls, uint64_t bytes) {
  return (bytes * ppb_of(n->cfg.gbps[cls]) + 0xffff) >> 16;
}

void sim_net_timer(sim_net *n, sim_time t, uint32_t kind, uint32_t id) {
  sim_des_push(&n->des, t, EV_USER + kind, id);
}

static int passive_kind(const sim_net *n, uint32_t kind) {
  for (int k = 0; k < n->npassive_kinds; k++)
    if (n->passive_kind[k] == kind)
      return 1;
  return 0;
}

void sim_net_timer_passive(sim_net *n, sim_time t, uint32_t kind, uint32_t id) {
  if (!passive_kind(n, kind)) {
    if (n->npassive_kinds == SIM_PASSIVE_KINDS)
      contend_fail("internal error: more than %d kinds of passive timers", SIM_PASSIVE_KINDS);
    n->passive_kind[n->npassive_kinds++] = kind;
  }
  n->passive++;
  sim_des_push(&n->des, t, EV_USER + kind, id);
}

size_t sim_net_pending_active(const sim_net *n) { return sim_des_pending(&n->des) - n->passive; }

/* ---- occupancy and stalls (counters) ---- */

_Static_assert(SIM_TOPO_MAX_RADIX <= INT16_MAX, "sim_chan.dst_port is 16 bits");
_Static_assert(sizeof(sim_pkt) == 64, "a packet is one cache line");

void sim_stall_end(sim_net *n, sim_chan *ch, uint32_t c) {
  if (!ch->stalled)
    return;
  const sim_time d = n->des.now - ch->stall_since;
  ch->stall += d;
  for (int v = 0; v < n->V; v++)
    if (ch->stall_mask & (1u << v))
      n->cvc[(size_t)c * n->V + v].stall += d;
  ch->stalled = 0;
  ch->stall_mask = 0;
}

void sim_stall_begin(sim_net *n, sim_chan *ch, unsigned mask) {
  if (ch->stalled) {
    ch->stall_mask |= (uint8_t)mask;
    return;
  }
  ch->stalled = 1;
  ch->stall_mask = (uint8_t)mask;
  ch->stall_since = n->des.now;
}

int64_t sim_downstream_used(const sim_net *n, uint32_t c) {
  const sim_chan *ch = &n->chan[c];
  int64_t used = 0;
  for (int v = 0; v < n->V; v++)
    used += (int64_t)n->cfg.buffer_bytes - n->cvc[(size_t)c * n->V + v].credit;
  for (int k = 0; k < ch->ncred_inl && ch->cred_inl[k].t <= n->des.now; k++)
    used -= ch->cred_inl[k].bytes;
  if (ch->ncred_inl == SIM_CRED_INLINE) /* the list follows the inline ones */
    for (uint32_t i = ch->cred_head; i != SIM_NIL && n->cred[i].t <= n->des.now;
         i = n->cred[i].next)
      used -= n->cred[i].bytes;
  return used;
}

void sim_drain_credits(sim_net *n, uint32_t c) {
  sim_chan *ch = &n->chan[c];
  const sim_time now = n->des.now;
  while (ch->ncred_inl && ch->cred_inl[0].t <= now) {
    const sim_cred cr = ch->cred_inl[0];
    sim_cvc *v = &n->cvc[(size_t)c * n->V + cr.vc];
    sim_cvc_touch(n, v);
    v->credit += cr.bytes;
    for (int k = 1; k < ch->ncred_inl; k++)
      ch->cred_inl[k - 1] = ch->cred_inl[k];
    ch->ncred_inl--;
    const uint32_t i = ch->cred_head;
    if (i != SIM_NIL) { /* the list's oldest moves in */
      ch->cred_inl[ch->ncred_inl++] = n->cred[i];
      ch->cred_head = n->cred[i].next;
      if (ch->cred_head == SIM_NIL)
        ch->cred_tail = SIM_NIL;
      n->cred[i].next = n->free_cred;
      n->free_cred = i;
    }
  }
}

void sim_credit_land(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t) {
  sim_chan *ch = &n->chan[c];
  const sim_time last = sim_cred_last_t(n, ch);
  if (last != SIM_NEVER && last > t)
    t = last; /* keep the FIFO in time order */
  const sim_cred cr = {.t = t, .next = SIM_NIL, .bytes = bytes, .vc = vc};
  if (ch->ncred_inl < SIM_CRED_INLINE) {
    ch->cred_inl[ch->ncred_inl++] = cr;
  } else {
    const uint32_t i = cred_new(n);
    n->cred[i] = cr;
    if (ch->cred_tail == SIM_NIL)
      ch->cred_head = i;
    else
      n->cred[ch->cred_tail].next = i;
    ch->cred_tail = i;
  }
  if (ch->stalled)
    sim_chan_request(n, c, t);
}

void sim_credit_back(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t) {
  if (n->ps && sim_part_ship_credit(n, c, vc, bytes, t))
    return;
  sim_credit_land(n, c, vc, bytes, t);
}

/* ---- moving packets ---- */

void sim_take_credit(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes) {
  sim_cvc *v = &n->cvc[(size_t)c * n->V + vc];
  sim_cvc_touch(n, v);
  v->credit -= bytes;
}

void sim_transmit(sim_net *n, uint32_t c, uint32_t p) {
  if (n->chan[c].dst_router >= 0)
    sim_take_credit(n, c, n->pkt[p].vc, n->pkt[p].bytes);
  sim_transmit_reserved(n, c, p);
}

void sim_transmit_reserved(sim_net *n, uint32_t c, uint32_t p) {
  sim_chan *ch = &n->chan[c];
  sim_pkt *pk = &n->pkt[p];
  const sim_time now = n->des.now;
  const sim_time s = sim_chan_ser(ch, pk->bytes);
  sim_cvc *v = &n->cvc[(size_t)c * n->V + pk->vc];
  if (ch->dst_router >= 0) {
    pk->t_arr = now + ch->head_delay;
  } else {
    pk->t_arr = now + s + ch->head_delay;
  }
  v->bytes += pk->bytes;
  v->pkts++;
  ch->busy += s;
  ch->busy_until = now + s;
  n->stats.packet_hops++;
  if (n->ps && sim_part_ship_packet(n, c, p))
    return;
  sim_wire_append(n, c, p);
}

void sim_wire_append(sim_net *n, uint32_t c, uint32_t p) {
  sim_chan *ch = &n->chan[c];
  sim_pkt *pk = &n->pkt[p];
  pk->next = SIM_NIL;
  if (ch->wire_tail == SIM_NIL) {
    ch->wire_head = p;
    sim_des_push(&n->des, pk->t_arr, EV_ARRIVE, c);
  } else {
    n->pkt[ch->wire_tail].next = p;
    n->pkt[ch->wire_tail].next_t_arr = pk->t_arr;
  }
  ch->wire_tail = p;
}

void sim_route_packet(sim_net *n, uint32_t c, uint32_t p) {
  const sim_chan *ch = &n->chan[c];
  sim_pkt *pk = &n->pkt[p];
  int op, ovc;
  sim_route(n->cfg.routing, ch->dst_router, ch->dst_port, pk->vc, (int)pk->src, (int)pk->dst,
            &pk->rs, n->cfg.router->occupancy, n, &n->rng[ch->dst_router], &op, &ovc);
  pk->out_port = (uint16_t)op;
  pk->out_vc = (uint8_t)ovc;
}

void sim_nic_in_start(sim_net *n, uint32_t c) {
  n->nic[c - (uint32_t)n->t->nports].head_since = n->des.now;
}

void sim_nic_in_leave(sim_net *n, uint32_t c) {
  sim_nic *x = &n->nic[c - (uint32_t)n->t->nports];
  x->blocked += n->des.now - x->head_since;
  x->head_since = n->des.now; /* the next packet's wait, if one is there */
}

/* The NIC of `node` injects its next packet if it can. */
static void arbitrate_nic(sim_net *n, uint32_t c) {
  sim_chan *ch = &n->chan[c];
  const int node = (int)(c - (uint32_t)n->t->nports);
  sim_nic *nic = &n->nic[node];
  const sim_time now = n->des.now;
  if (nic->q_head == SIM_NIL)
    return;
  if (ch->busy_until > now) {
    sim_chan_request(n, c, ch->busy_until);
    return;
  }
  sim_drain_credits(n, c);
  /* the first message allowed to send (FIFO unless congestion control
   * holds some flows back) */
  uint32_t prev = SIM_NIL, mi = nic->q_head;
  sim_time earliest = SIM_NEVER;
  if (n->cfg.cc != SIM_CC_NONE) {
    int scanned = 0;
    while (mi != SIM_NIL && scanned < 64) {
      const sim_time ok = sim_cc_allowed(n, node, &n->msg[mi]);
      if (ok <= now)
        break;
      if (ok < earliest)
        earliest = ok;
      prev = mi;
      mi = n->msg[mi].next;
      scanned++;
    }
    if (mi != SIM_NIL && scanned == 64 && sim_cc_allowed(n, node, &n->msg[mi]) > now)
      mi = SIM_NIL;
    if (mi == SIM_NIL) {
      if (earliest != SIM_NEVER)
        sim_chan_request(n, c, earliest);
      return;
    }
  }
  sim_msg *m = &n->msg[mi];
  const uint64_t part = m->left < n->cfg.mtu ? m->left : n->cfg.mtu;
  uint32_t wire = (uint32_t)part + n->cfg.header;
  if (!wire)
    wire = 1;
  sim_cvc *v0 = &n->cvc[(size_t)c * n->V];
  if (v0->credit < wire) {
    sim_stall_begin(n, ch, 1);
    if (ch->ncred_inl)
      sim_chan_request(n, c, sim_cred_first_t(ch));
    return;
  }
  sim_stall_end(n, ch, c);
  if (m->left == m->bytes)
    m->t_first = now;
  m->left -= part;
  const int last = m->left == 0;
  const uint32_t p = sim_pkt_take(n);
  m = &n->msg[mi];
  n->pkt[p] = (sim_pkt){.next = SIM_NIL,
                        .msg = mi,
                        .src = m->src,
                        .dst = m->dst,
                        .bytes = wire,
                        .vc = 0,
                        .flags = last ? PKT_LAST : 0,
                        .rs = {.inter = -1}};
  const sim_time s = sim_chan_ser(ch, wire);
  if (last) { /* out of the queue */
    if (prev == SIM_NIL)
      nic->q_head = m->next;
    else
      n->msg[prev].next = m->next;
    if (nic->q_tail == mi)
      nic->q_tail = prev;
    nic->q_len--;
    m->next = SIM_NIL;
  }
  sim_transmit(n, c, p);
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_sent(n, node, &n->msg[mi], s);
  if (last && n->hooks.injected)
    n->hooks.injected(n->hooks.arg, mi, now + s);
  if (nic->q_head != SIM_NIL)
    sim_chan_request(n, c, ch->busy_until);
}

void sim_net_kick_nic(sim_net *n, int node, sim_time t) {
  if (n->nic[node].q_head != SIM_NIL)
    sim_chan_request(n, (uint32_t)n->t->nports + (uint32_t)node, t < n->des.now ? n->des.now : t);
}

void sim_msg_send(sim_net *n, uint32_t mi) {
  sim_msg *m = &n->msg[mi];
  sim_nic *nic = &n->nic[m->src];
  m->next = SIM_NIL;
  m->t_post = n->des.now;
  if (nic->q_tail == SIM_NIL)
    nic->q_head = mi;
  else
    n->msg[nic->q_tail].next = mi;
  nic->q_tail = mi;
  nic->q_len++;
  sim_chan_request(n, (uint32_t)n->t->nports + m->src, n->des.now);
}

uint32_t sim_nic_backlog(const sim_net *n, int node) { return n->nic[node].q_len; }

sim_time sim_nic_stall(const sim_net *n, int node) {
  const sim_chan *ch = &n->chan[n->t->nports + node];
  return ch->stall + (ch->stalled ? n->des.now - ch->stall_since : 0);
}

sim_time sim_nic_blocked(const sim_net *n, int node) {
  const sim_nic *x = &n->nic[node];
  const uint32_t c = (uint32_t)(n->t->nports + node);
  const int waiting = sim_in_buf(n, c, 0)->bytes != 0;
  return x->blocked + (waiting ? n->des.now - x->head_since : 0);
}

double sim_nic_occupancy(sim_net *n, int node) {
  sim_cvc *v = &n->cvc[(size_t)(n->t->nports + node) * n->V]; /* NICs inject on VC 0 */
  sim_cvc_touch(n, v);
  return v->occ_int;
}

int sim_net_nodes(const sim_net *n) { return n->t->nnodes; }
double sim_net_buffer_bytes(const sim_net *n) { return n->cfg.buffer_bytes; }

size_t sim_net_pending(const sim_net *n) { return sim_des_pending(&n->des); }

/* Packet p reached its NIC over ejection channel c (the key of the
 * notifications it may cause). */
static void deliver(sim_net *n, uint32_t p, uint32_t c) {
  const sim_pkt *pk = &n->pkt[p];
  const uint32_t mi = n->ps ? sim_part_assemble(n, pk->msg) : pk->msg;
  sim_msg *m = &n->msg[mi];
  const uint32_t payload = pk->bytes > n->cfg.header ? pk->bytes - n->cfg.header : 0;
  n->stats.packets++;
  n->stats.bytes_delivered += payload;
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_delivered(n, pk, c);
  sim_pkt_release(n, p);
  if (++m->got == m->npkts) {
    if (n->hooks.delivered)
      n->hooks.delivered(n->hooks.arg, mi);
    if (n->ps)
      sim_part_delivered(n, mi);
    sim_msg_release(n, mi);
  }
}

static void on_arrive(sim_net *n, uint32_t c) {
  sim_chan *ch = &n->chan[c];
  const uint32_t p = ch->wire_head;
  sim_pkt *pk = &n->pkt[p];
  ch->wire_head = pk->next;
  if (ch->wire_head == SIM_NIL)
    ch->wire_tail = SIM_NIL;
  else
    sim_des_push(&n->des, pk->next_t_arr, EV_ARRIVE, c);
  if (ch->dst_router < 0) {
    deliver(n, p, c);
    return;
  }
  n->cfg.router->arrive(n, c, p);
}

/* Prefetch distances (events ahead in the current bucket): a channel's
 * state far ahead, then what it points to (its wire's head packet, its
 * first credit) once the channel is in cache.  A hint only: the order and
 * results do not depend on it.  On a large fabric each event's state is
 * a cache miss; fetching it while earlier events run keeps the cost per
 * event flat in the fabric's size. */
enum { AHEAD_FAR = 8, AHEAD_NEAR = 4, AHEAD_MSG = 2 };

static inline void prefetch_far(const sim_net *n, const sim_event *e) {
  if (e->kind > EV_ARB) {
    if (e->kind == EV_ROUTER && n->cfg.router->prefetch)
      n->cfg.router->prefetch(n, e->id, e->kind, 0);
    return;
  }
  const char *c = (const char *)&n->chan[e->id];
  sim_prefetch(c);
  sim_prefetch(c + 64);
  const char *v = (const char *)&n->cvc[(size_t)e->id * n->V];
  sim_prefetch(v);
  sim_prefetch(v + sizeof(sim_cvc) * (size_t)n->V - 1);
  if (e->kind == EV_ARB && e->id >= (uint32_t)n->t->nports)
    sim_prefetch(&n->nic[e->id - (uint32_t)n->t->nports]);
  if (n->cfg.router->prefetch)
    n->cfg.router->prefetch(n, e->id, e->kind, 0);
}

static inline void prefetch_near(const sim_net *n, const sim_event *e) {
  if (e->kind > EV_ARB)
    return;
  const sim_chan *ch = &n->chan[e->id];
  if (e->kind == EV_ARRIVE) {
    if (ch->wire_head != SIM_NIL)
      sim_prefetch(&n->pkt[ch->wire_head]);
    if (ch->dst_router >= 0) /* a router's input buffer (iq: its tail is linked) */
      sim_prefetch(sim_in_buf(n, e->id, 0));
  } else {
    if (ch->cred_head != SIM_NIL && ch->cred_inl[0].t <= e->t)
      sim_prefetch(&n->cred[ch->cred_head]); /* moves in as the first drains */
    if (e->id >= (uint32_t)n->t->nports) {   /* a NIC: the message it sends from */
      const uint32_t m = n->nic[e->id - (uint32_t)n->t->nports].q_head;
      if (m != SIM_NIL)
        sim_prefetch(&n->msg[m]);
    }
  }
  if (n->cfg.router->prefetch)
    n->cfg.router->prefetch(n, e->id, e->kind, 1);
}

/* A packet about to reach a NIC: its message (delivery counts it); on a
 * fabric larger than a core's cache (n->route_ahead), about to reach a
 * router's empty input buffer (so it is routed at once): the output
 * channel its route likely takes, and the model's state of it. */
static inline void prefetch_msg(const sim_net *n, uint32_t c) {
  const sim_chan *ch = &n->chan[c];
  if (ch->wire_head == SIM_NIL)
    return;
  const sim_pkt *pk = &n->pkt[ch->wire_head];
  if (ch->dst_router < 0) {
    sim_prefetch(&n->msg[pk->msg]);
    return;
  }
  const sim_router_model *m = n->cfg.router;
  /* a model with its own arrival hint always wants the guess; otherwise
   * only a large fabric's packet reaching an empty input does */
  if (!m->prefetch_arrival && (!n->route_ahead || sim_in_buf(n, c, pk->vc)->tail != SIM_NIL))
    return;
  const int op = sim_route_guess(n->cfg.routing, ch->dst_router, ch->dst_port, (int)pk->src,
                                 (int)pk->dst, &pk->rs);
  if (m->prefetch_arrival) {
    m->prefetch_arrival(n, c, ch->wire_head, op);
    return;
  }
  const uint32_t oc = (uint32_t)(n->t->port_base[ch->dst_router] + op);
  sim_prefetch(&n->chan[oc]);
  if (n->cfg.router->prefetch)
    n->cfg.router->prefetch(n, oc, EV_ARB, 0);
}

int sim_net_run(sim_net *n, sim_time until, int (*stop)(void *arg), void *arg) {
  sim_event e;
  while (sim_des_pending(&n->des) && sim_des_next_time(&n->des) <= until) {
    const sim_event *a = sim_des_ahead(&n->des, AHEAD_FAR);
    if (a)
      prefetch_far(n, a);
    if ((a = sim_des_ahead(&n->des, AHEAD_NEAR)))
      prefetch_near(n, a);
    if ((a = sim_des_ahead(&n->des, AHEAD_MSG)) && a->kind == EV_ARRIVE)
      prefetch_msg(n, a->id);
    sim_des_pop(&n->des, &e);
    n->stats.events++;
    switch (e.kind) {
    case EV_ARRIVE:
      on_arrive(n, e.id);
      break;
    case EV_ARB: {
      sim_chan *ch = &n->chan[e.id];
      if (ch->ev_time != e.t)
        break; /* superseded by an earlier request */
      ch->ev_time = SIM_NEVER;
      if (ch->src_router < 0)
        arbitrate_nic(n, e.id);
      else
        n->cfg.router->arbitrate(n, e.id);
      break;
    }
    case EV_ROUTER:
      n->cfg.router->event(n, e.id);
      break;
    case EV_CC:
      sim_cc_event(n, e.id);
      break;
    case EV_SAMPLE:
      n->passive--;
      if (n->sample)
        n->sample(n->sample_arg);
      break;
    default:
      if (n->npassive_kinds && passive_kind(n, e.kind - EV_USER))
        n->passive--;
      if (n->hooks.timer)
        n->hooks.timer(n->hooks.arg, e.kind - EV_USER, e.id);
      break;
    }
    if (stop && stop(arg))
      break;
  }
  return sim_des_pending(&n->des) != 0;
}

const sim_net_stats *sim_net_stats_get(const sim_net *n) { return &n->stats; }

/* ---- construction ---- */

int sim_net_config_check(const sim_net_config *cfg, char *err, size_t errlen) {
  const sim_router_model *rm = cfg->router ? cfg->router : sim_router_default();
  const int V = sim_routing_vcs(cfg->routing);
  if (V < 1 || V > SIM_MAX_VCS) {
    snprintf(err, errlen, "%d VCs: the simulator supports 1 to %d", V, SIM_MAX_VCS);
    return -1;
  }
  if (cfg->mtu < 1) {
    snprintf(err, errlen, "--mtu must be at least 1 B");
    return -1;
  }
  if (cfg->buffer_bytes < cfg->mtu + cfg->header) {
    snprintf(err, errlen,
             "--buffer-bytes %u B holds less than one packet (mtu %u B + header %u B): "
             "virtual cut-through needs room for a whole packet",
             cfg->buffer_bytes, cfg->mtu, cfg->header);
    return -1;
  }
  if (cfg->buffer_bytes / (cfg->mtu + cfg->header) > SIM_BUFFER_PACKETS_MAX) {
    snprintf(err, errlen,
             "--buffer-bytes %u B holds %u packets of mtu %u B + header %u B, more than the limit "
             "of %d per virtual channel (packets in flight are memory): a larger --mtu or a "
             "smaller --buffer-bytes",
             cfg->buffer_bytes, cfg->buffer_bytes / (cfg->mtu + cfg->header), cfg->mtu, cfg->header,
             SIM_BUFFER_PACKETS_MAX);
    return -1;
  }
  for (int k = 0; k < SIM_LINK_NCLASS; k++)
    if (!(cfg->gbps[k] > 0)) {
      snprintf(err, errlen, "link bandwidths must be > 0 Gbit/s");
      return -1;
    }
  return rm->check ? rm->check(cfg, err, errlen) : 0;
}

sim_net *sim_net_new(const sim_net_config *cfg, const sim_net_hooks *hooks, char *err,
                     size_t errlen) {
  if (sim_net_config_check(cfg, err, errlen))
    return NULL;
  const sim_topo *t = cfg->topo;
  const int V = sim_routing_vcs(cfg->routing);
  sim_net *n = calloc(1, sizeof *n);
  if (!n)
    contend_fail("out of memory (simulator)");
  n->cfg = *cfg;
  if (!n->cfg.router)
    n->cfg.router = sim_router_default();
  if (!n->cfg.speedup)
    n->cfg.speedup = 1;
  if (hooks)
    n->hooks = *hooks;
  n->t = t;
  n->V = V;
  n->nchan = (uint32_t)t->nports + (uint32_t)t->nnodes;
  n->chan = sim_xcalloc_aligned(n->nchan, sizeof *n->chan, "channels");
  n->route_ahead = sizeof *n->chan * (size_t)n->nchan > ((size_t)4 << 20);
  n->cvc = calloc((size_t)n->nchan * V, sizeof *n->cvc);
  const size_t nports = (size_t)(t->nports ? t->nports : 1);
  n->ibuf = malloc(sizeof *n->ibuf * nports * V);
  n->in_busy = calloc(nports, sizeof *n->in_busy);
  n->in_chan = malloc(sizeof *n->in_chan * (size_t)(t->nports ? t->nports : 1));
  n->nic = calloc((size_t)t->nnodes, sizeof *n->nic);
  if (!n->chan || !n->cvc || !n->ibuf || !n->in_busy || !n->in_chan || !n->nic)
    contend_fail("out of memory (simulator fabric of %u channels)", n->nchan);
  for (size_t i = 0; i < (size_t)n->nchan * V; i++)
    n->cvc[i].credit = cfg->buffer_bytes;
  for (size_t i = 0; i < nports * V; i++)
    n->ibuf[i] = (sim_ibuf){SIM_NIL, SIM_NIL, 0};
  for (int r = 0; r < t->nrouters; r++)
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      sim_chan *ch = &n->chan[gp];
      const int cls = t->cls[gp];
      ch->src_router = r;
      ch->ppb = ppb_of(cfg->gbps[cls] * (cfg->link_scale ? cfg->link_scale[gp] : 1.0));
      ch->cls = (uint8_t)cls;
      const sim_time link_lat = cfg->latency[cls];
      const int peer = t->peer[gp];
      if (peer == SIM_UNCONNECTED) {
        ch->dst_router = -1;
        ch->dst_port = -1;
        ch->dst_gp = -1;
        n->in_chan[gp] = SIM_NIL;
      } else if (peer < 0) {
        const int node = -1 - peer;
        ch->dst_router = -1 - node;
        ch->dst_port = -1;
        ch->dst_gp = -1;
        ch->head_delay = link_lat;
        n->in_chan[gp] = (uint32_t)t->nports + (uint32_t)node;
      } else {
        ch->dst_router = sim_port_router(t, peer);
        ch->dst_port = (int16_t)(peer - t->port_base[ch->dst_router]);
        ch->dst_gp = peer;
        ch->head_delay = link_lat + cfg->router_latency;
        n->in_chan[gp] = (uint32_t)peer;
      }
    }
  for (int node = 0; node < t->nnodes; node++) {
    sim_chan *ch = &n->chan[t->nports + node];
    const int r = t->node_router[node];
    ch->src_router = -1;
    ch->ppb = ppb_of(cfg->gbps[SIM_LINK_NODE] *
                     (cfg->link_scale ? cfg->link_scale[t->nports + node] : 1.0));
    ch->cls = SIM_LINK_NODE;
    ch->dst_router = r;
    ch->dst_port = (int16_t)t->node_port[node];
    ch->dst_gp = t->port_base[r] + ch->dst_port;
    ch->head_delay = cfg->latency[SIM_LINK_NODE] + cfg->router_latency;
    n->nic[node] = (sim_nic){.q_head = SIM_NIL, .q_tail = SIM_NIL};
  }
  for (uint32_t c = 0; c < n->nchan; c++) {
    sim_chan *ch = &n->chan[c];
    ch->ev_time = SIM_NEVER;
    ch->wire_head = ch->wire_tail = ch->cred_head = ch->cred_tail = SIM_NIL;
  }
  n->free_pkt = n->free_msg = n->free_cred = SIM_NIL;
  sim_des_init(&n->des);
  /* a channel's arbitration, a router's own event (voq: its allocation),
   * asked for at once */
  sim_des_now_kind(&n->des, EV_ARB, n->nchan);
  if (cfg->router->event)
    sim_des_now_kind(&n->des, EV_ROUTER, (uint32_t)t->nrouters);
  n->rng = sim_xcalloc((size_t)t->nrouters, sizeof *n->rng, "routing streams");
  sim_net_seed(n, cfg->seed);
  if (n->cfg.router->init)
    n->cfg.router->init(n);
  if (cfg->cc != SIM_CC_NONE && sim_cc_init(n, err, errlen)) {
    sim_net_free(n);
    return NULL;
  }
  return n;
}

void sim_net_seed(sim_net *n, uint64_t seed) {
  for (int r = 0; r < n->t->nrouters; r++) /* one stream per router: a router's choices */
    contend_rng_init(&n->rng[r], seed, 0x5111, (uint64_t)r, 0, 0); /* do not depend on others */
}

void sim_net_free(sim_net *n) {
  if (!n)
    return;
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_free(n);
  if (n->cfg.router->free)
    n->cfg.router->free(n);
  sim_des_free(&n->des);
  sim_net_partition_free(n);
  free(n->rng);
  free(n->chan);
  free(n->cvc);
  free(n->ibuf);
  free(n->in_busy);
  free(n->in_chan);
  free(n->nic);
  contend_vgrow_free(n->pkt, n->cappkt, sizeof *n->pkt);
  contend_vgrow_free(n->msg, n->capmsg, sizeof *n->msg);
  contend_vgrow_free(n->cred, n->capcred, sizeof *n->cred);
  free(n);
}
