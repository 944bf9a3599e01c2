/* The fabric's packet machinery (see net.h for the model): channels with
 * their wires and credits, input buffers, round-robin output arbiters,
 * NIC packetization, and the event loop that drives them.
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
#include "net_impl.h"

static void *xrealloc(void *p, size_t n, const char *what) {
  void *q = realloc(p, n ? n : 1);
  if (!q)
    contend_fail("out of memory (simulator %s, %zu B)", what, n);
  return q;
}

/* ---- pools ---- */

static uint32_t pkt_new(sim_net *n) {
  if (n->free_pkt != SIM_NIL) {
    const uint32_t i = n->free_pkt;
    n->free_pkt = n->pkt[i].next;
    return i;
  }
  if (n->npkt == n->cappkt) {
    n->cappkt = n->cappkt ? 2 * n->cappkt : 4096;
    n->pkt = xrealloc(n->pkt, sizeof *n->pkt * n->cappkt, "packet pool");
  }
  return n->npkt++;
}

static void pkt_free(sim_net *n, uint32_t i) {
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
    n->capcred = n->capcred ? 2 * n->capcred : 4096;
    n->cred = xrealloc(n->cred, sizeof *n->cred * n->capcred, "credit pool");
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
      n->capmsg = n->capmsg ? 2 * n->capmsg : 1024;
      n->msg = xrealloc(n->msg, sizeof *n->msg * n->capmsg, "message pool");
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

static void msg_free(sim_net *n, uint32_t i) {
  n->msg[i].next = n->free_msg;
  n->free_msg = i;
}

/* ---- time helpers ---- */

sim_time sim_net_now(const sim_net *n) { return n->des.now; }

static inline sim_time ser(const sim_chan *c, uint64_t bytes) {
  return (bytes * c->ppb + 0xffff) >> 16;
}

static uint64_t ppb_of(double gbps) { return (uint64_t)llround(8000.0 / gbps * 65536.0); }

sim_time sim_net_ser(const sim_net *n, int cls, uint64_t bytes) {
  return (bytes * ppb_of(n->cfg.gbps[cls]) + 0xffff) >> 16;
}

static void request_arb(sim_net *n, uint32_t c, sim_time t) {
  sim_chan *ch = &n->chan[c];
  if (ch->ev_time <= t)
    return;
  ch->ev_time = t;
  sim_des_push(&n->des, t, EV_ARB, c);
}

void sim_net_timer(sim_net *n, sim_time t, uint32_t kind, uint32_t id) {
  sim_des_push(&n->des, t, EV_USER + kind, id);
}

/* ---- occupancy and stalls (counters) ---- */

static inline void occ_touch(sim_net *n, sim_cvc *v) {
  const sim_time now = n->des.now;
  v->occ_int += (double)((int64_t)n->cfg.buffer_bytes - v->credit) * (double)(now - v->occ_last);
  v->occ_last = now;
}

static void stall_end(sim_net *n, sim_chan *ch, uint32_t c) {
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

static void stall_begin(sim_net *n, sim_chan *ch, unsigned mask) {
  if (ch->stalled) {
    ch->stall_mask |= (uint8_t)mask;
    return;
  }
  ch->stalled = 1;
  ch->stall_mask = (uint8_t)mask;
  ch->stall_since = n->des.now;
}

/* Takes up the credits that have arrived by now. */
static void drain_credits(sim_net *n, uint32_t c) {
  sim_chan *ch = &n->chan[c];
  const sim_time now = n->des.now;
  while (ch->cred_head != SIM_NIL && n->cred[ch->cred_head].t <= now) {
    const uint32_t i = ch->cred_head;
    sim_cvc *v = &n->cvc[(size_t)c * n->V + n->cred[i].vc];
    occ_touch(n, v);
    v->credit += n->cred[i].bytes;
    ch->cred_head = n->cred[i].next;
    if (ch->cred_head == SIM_NIL)
      ch->cred_tail = SIM_NIL;
    n->cred[i].next = n->free_cred;
    n->free_cred = i;
  }
}

/* Credits for `bytes` on VC vc of channel c land at time t. */
static void credit_back(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t) {
  const uint32_t i = cred_new(n);
  sim_chan *ch = &n->chan[c];
  if (ch->cred_tail != SIM_NIL && n->cred[ch->cred_tail].t > t)
    t = n->cred[ch->cred_tail].t; /* keep the list in time order */
  n->cred[i] = (sim_cred){.t = t, .next = SIM_NIL, .bytes = bytes, .vc = vc};
  if (ch->cred_tail == SIM_NIL)
    ch->cred_head = i;
  else
    n->cred[ch->cred_tail].next = i;
  ch->cred_tail = i;
  if (ch->stalled)
    request_arb(n, c, t);
}

/* ---- moving packets ---- */

/* Puts packet p on channel c's wire now (its VC downstream is p->vc). */
static void transmit(sim_net *n, uint32_t c, uint32_t p) {
  sim_chan *ch = &n->chan[c];
  sim_pkt *pk = &n->pkt[p];
  const sim_time now = n->des.now;
  const sim_time s = ser(ch, pk->bytes);
  sim_cvc *v = &n->cvc[(size_t)c * n->V + pk->vc];
  if (ch->dst_router >= 0) {
    occ_touch(n, v);
    v->credit -= pk->bytes;
    pk->t_arr = now + ch->head_delay;
  } else {
    pk->t_arr = now + s + ch->head_delay;
  }
  v->bytes += pk->bytes;
  v->pkts++;
  ch->busy += s;
  ch->busy_until = now + s;
  n->stats.packet_hops++;
  pk->next = SIM_NIL;
  if (ch->wire_tail == SIM_NIL) {
    ch->wire_head = p;
    sim_des_push(&n->des, pk->t_arr, EV_ARRIVE, c);
  } else {
    n->pkt[ch->wire_tail].next = p;
  }
  ch->wire_tail = p;
}

static uint32_t occupancy(void *arg, int router, int port) {
  sim_net *n = arg;
  const uint32_t c = (uint32_t)(n->t->port_base[router] + port);
  const sim_chan *ch = &n->chan[c];
  if (ch->dst_router < 0)
    return ch->nwait * (n->cfg.mtu + n->cfg.header);
  int64_t used = 0;
  for (int v = 0; v < n->V; v++)
    used += (int64_t)n->cfg.buffer_bytes - n->cvc[(size_t)c * n->V + v].credit;
  /* credits already back but not yet drained (drain_credits runs when the
   * port arbitrates: an idle port would look as full as it last was) */
  for (uint32_t i = ch->cred_head; i != SIM_NIL && n->cred[i].t <= n->des.now; i = n->cred[i].next)
    used -= n->cred[i].bytes;
  used += (int64_t)ch->nwait * (n->cfg.mtu + n->cfg.header);
  return used > 0 ? (uint32_t)used : 0;
}

/* The head of input buffer (c, v) is new: route it and ask for its output. */
static void head_route(sim_net *n, uint32_t c, int v) {
  const sim_chan *ch = &n->chan[c];
  const uint32_t p = n->ibuf[(size_t)c * n->V + v].head;
  sim_pkt *pk = &n->pkt[p];
  const int r = ch->dst_router, in_port = ch->dst_port;
  int op, ovc;
  sim_route(n->cfg.routing, r, in_port, v, (int)pk->src, (int)pk->dst, &pk->rs, occupancy, n,
            &n->rng, &op, &ovc);
  pk->out_port = (uint16_t)op;
  pk->out_vc = (uint8_t)ovc;
  if (c >= (uint32_t)n->t->nports) /* the head of a NIC's first buffer: its wait starts */
    n->nic[c - (uint32_t)n->t->nports].head_since = n->des.now;
  const uint32_t oc = (uint32_t)(n->t->port_base[r] + op);
  sim_chan *o = &n->chan[oc];
  const uint32_t bit = (uint32_t)(in_port * n->V + v);
  n->waitbits[o->wait_off + bit / 64] |= 1ull << (bit % 64);
  o->nwait++;
  request_arb(n, oc, n->in_busy[c] > n->des.now ? n->in_busy[c] : n->des.now);
}

/* Next set bit of a router output's waiting set at or after `from`,
 * circularly; nbits > 0 and at least one bit set. */
static uint32_t next_waiter(const uint64_t *w, uint32_t words, uint32_t nbits, uint32_t from) {
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
  return nbits; /* none */
}

static void arbitrate_router(sim_net *n, uint32_t oc) {
  sim_chan *o = &n->chan[oc];
  const sim_time now = n->des.now;
  if (!o->nwait)
    return;
  if (o->busy_until > now) {
    request_arb(n, oc, o->busy_until);
    return;
  }
  drain_credits(n, oc);
  const int V = n->V;
  const int r = o->src_router;
  const uint32_t words = n->words_of[r];
  const uint32_t radix = (uint32_t)(n->t->port_base[r + 1] - n->t->port_base[r]);
  const uint32_t nbits = radix * (uint32_t)V;
  uint64_t *w = &n->waitbits[o->wait_off];
  uint32_t b = o->rr, seen = 0, win = SIM_NIL;
  unsigned blocked = 0;
  sim_time input_free = SIM_NEVER; /* earliest a busy input is free */
  while (seen < o->nwait) {
    b = next_waiter(w, words, nbits, b);
    const uint32_t in_port = b / (uint32_t)V, v = b % (uint32_t)V;
    const uint32_t ic = n->in_chan[n->t->port_base[r] + (int)in_port];
    const sim_pkt *pk = &n->pkt[n->ibuf[(size_t)ic * V + v].head];
    if (n->in_busy[ic] > now) {
      if (n->in_busy[ic] < input_free)
        input_free = n->in_busy[ic];
    } else if (o->dst_router < 0 || n->cvc[(size_t)oc * V + pk->out_vc].credit >= pk->bytes) {
      win = b;
      break;
    } else {
      blocked |= 1u << pk->out_vc;
    }
    seen++;
    b++;
  }
  if (win == SIM_NIL) { /* every waiter lacks credits or its input is busy */
    if (blocked)
      stall_begin(n, o, blocked);
    if (o->cred_head != SIM_NIL)
      request_arb(n, oc, n->cred[o->cred_head].t);
    if (input_free != SIM_NEVER)
      request_arb(n, oc, input_free);
    return;
  }
  stall_end(n, o, oc);
  w[win / 64] &= ~(1ull << (win % 64));
  o->nwait--;
  o->rr = win + 1;
  const uint32_t in_port = win / (uint32_t)V, v = win % (uint32_t)V;
  const uint32_t ic = n->in_chan[n->t->port_base[r] + (int)in_port];
  sim_ibuf *q = &n->ibuf[(size_t)ic * V + v];
  const uint32_t p = q->head;
  sim_pkt *pk = &n->pkt[p];
  const uint32_t occupied = q->bytes;
  if (ic >= (uint32_t)n->t->nports) {
    sim_nic *x = &n->nic[ic - (uint32_t)n->t->nports];
    x->blocked += now - x->head_since;
  }
  q->head = pk->next;
  if (q->head == SIM_NIL)
    q->tail = SIM_NIL;
  q->bytes -= pk->bytes;
  const sim_time s = ser(o, pk->bytes);
  n->in_busy[ic] = now + s / n->cfg.speedup;
  credit_back(n, ic, v, pk->bytes, now + s + n->chan[ic].link_lat);
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_departure(n, pk, occupied, n->cfg.buffer_bytes, o->dst_router < 0);
  pk->vc = pk->out_vc;
  transmit(n, oc, p);
  if (q->head != SIM_NIL)
    head_route(n, ic, (int)v);
  if (o->nwait)
    request_arb(n, oc, o->busy_until);
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
    request_arb(n, c, ch->busy_until);
    return;
  }
  drain_credits(n, c);
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
        request_arb(n, c, earliest);
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
    stall_begin(n, ch, 1);
    if (ch->cred_head != SIM_NIL)
      request_arb(n, c, n->cred[ch->cred_head].t);
    return;
  }
  stall_end(n, ch, c);
  if (m->left == m->bytes)
    m->t_first = now;
  m->left -= part;
  const int last = m->left == 0;
  const uint32_t p = pkt_new(n);
  m = &n->msg[mi];
  n->pkt[p] = (sim_pkt){.next = SIM_NIL,
                        .msg = mi,
                        .src = m->src,
                        .dst = m->dst,
                        .bytes = wire,
                        .vc = 0,
                        .flags = last ? PKT_LAST : 0,
                        .rs = {.inter = -1}};
  const sim_time s = ser(ch, wire);
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
  transmit(n, c, p);
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_sent(n, node, &n->msg[mi], s);
  if (last && n->hooks.injected)
    n->hooks.injected(n->hooks.arg, mi, now + s);
  if (nic->q_head != SIM_NIL)
    request_arb(n, c, ch->busy_until);
}

void sim_net_kick_nic(sim_net *n, int node, sim_time t) {
  if (n->nic[node].q_head != SIM_NIL)
    request_arb(n, (uint32_t)n->t->nports + (uint32_t)node, t < n->des.now ? n->des.now : t);
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
  request_arb(n, (uint32_t)n->t->nports + m->src, n->des.now);
}

uint32_t sim_nic_backlog(const sim_net *n, int node) { return n->nic[node].q_len; }

sim_time sim_nic_stall(const sim_net *n, int node) {
  const sim_chan *ch = &n->chan[n->t->nports + node];
  return ch->stall + (ch->stalled ? n->des.now - ch->stall_since : 0);
}

sim_time sim_nic_blocked(const sim_net *n, int node) {
  const sim_nic *x = &n->nic[node];
  const uint32_t c = (uint32_t)(n->t->nports + node);
  const int waiting = n->ibuf[(size_t)c * n->V].head != SIM_NIL;
  return x->blocked + (waiting ? n->des.now - x->head_since : 0);
}

double sim_nic_occupancy(sim_net *n, int node) {
  sim_cvc *v = &n->cvc[(size_t)(n->t->nports + node) * n->V]; /* NICs inject on VC 0 */
  occ_touch(n, v);
  return v->occ_int;
}

int sim_net_nodes(const sim_net *n) { return n->t->nnodes; }
double sim_net_buffer_bytes(const sim_net *n) { return n->cfg.buffer_bytes; }

size_t sim_net_pending(const sim_net *n) { return sim_des_pending(&n->des); }

static void deliver(sim_net *n, uint32_t p) {
  const sim_pkt *pk = &n->pkt[p];
  const uint32_t mi = pk->msg;
  sim_msg *m = &n->msg[mi];
  const uint32_t payload = pk->bytes > n->cfg.header ? pk->bytes - n->cfg.header : 0;
  n->stats.packets++;
  n->stats.bytes_delivered += payload;
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_delivered(n, pk);
  pkt_free(n, p);
  if (++m->got == m->npkts) {
    if (n->hooks.delivered)
      n->hooks.delivered(n->hooks.arg, mi);
    msg_free(n, mi);
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
    sim_des_push(&n->des, n->pkt[ch->wire_head].t_arr, EV_ARRIVE, c);
  if (ch->dst_router < 0) {
    deliver(n, p);
    return;
  }
  const int v = pk->vc;
  sim_ibuf *q = &n->ibuf[(size_t)c * n->V + v];
  pk->next = SIM_NIL;
  q->bytes += pk->bytes;
  if (q->tail == SIM_NIL) {
    q->head = q->tail = p;
    head_route(n, c, v);
  } else {
    n->pkt[q->tail].next = p;
    q->tail = p;
  }
}

int sim_net_run(sim_net *n, sim_time until, int (*stop)(void *arg), void *arg) {
  sim_event e;
  while (sim_des_pending(&n->des) && sim_des_next_time(&n->des) <= until) {
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
        arbitrate_router(n, e.id);
      break;
    }
    case EV_CC:
      sim_cc_event(n, e.id);
      break;
    case EV_SAMPLE:
      if (n->sample)
        n->sample(n->sample_arg);
      break;
    default:
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
  return 0;
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
  if (!n->cfg.speedup)
    n->cfg.speedup = 1;
  if (hooks)
    n->hooks = *hooks;
  n->t = t;
  n->V = V;
  n->nchan = (uint32_t)t->nports + (uint32_t)t->nnodes;
  n->chan = calloc(n->nchan, sizeof *n->chan);
  n->cvc = calloc((size_t)n->nchan * V, sizeof *n->cvc);
  n->ibuf = malloc(sizeof *n->ibuf * (size_t)n->nchan * V);
  n->in_chan = malloc(sizeof *n->in_chan * (size_t)(t->nports ? t->nports : 1));
  n->words_of = malloc(sizeof *n->words_of * (size_t)(t->nrouters ? t->nrouters : 1));
  n->nic = calloc((size_t)t->nnodes, sizeof *n->nic);
  n->in_busy = calloc(n->nchan, sizeof *n->in_busy);
  if (!n->in_busy || !n->chan || !n->cvc || !n->ibuf || !n->in_chan || !n->words_of || !n->nic)
    contend_fail("out of memory (simulator fabric of %u channels)", n->nchan);
  for (size_t i = 0; i < (size_t)n->nchan * V; i++) {
    n->ibuf[i] = (sim_ibuf){SIM_NIL, SIM_NIL, 0};
    n->cvc[i].credit = cfg->buffer_bytes;
  }
  size_t words = 0;
  for (int r = 0; r < t->nrouters; r++) {
    const uint32_t radix = (uint32_t)(t->port_base[r + 1] - t->port_base[r]);
    n->words_of[r] = (radix * (uint32_t)V + 63) / 64;
    words += (size_t)n->words_of[r] * radix;
  }
  n->waitbits = calloc(words ? words : 1, sizeof *n->waitbits);
  if (!n->waitbits)
    contend_fail("out of memory (simulator arbiters)");
  size_t off = 0;
  for (int r = 0; r < t->nrouters; r++)
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      sim_chan *ch = &n->chan[gp];
      const int cls = t->cls[gp];
      ch->src_router = r;
      ch->wait_off = (uint32_t)off;
      off += n->words_of[r];
      ch->ppb = ppb_of(cfg->gbps[cls]);
      ch->cls = (uint8_t)cls;
      ch->link_lat = cfg->latency[cls];
      const int peer = t->peer[gp];
      if (peer == SIM_UNCONNECTED) {
        ch->dst_router = -1;
        ch->dst_port = -1;
        n->in_chan[gp] = SIM_NIL;
      } else if (peer < 0) {
        const int node = -1 - peer;
        ch->dst_router = -1 - node;
        ch->dst_port = -1;
        ch->head_delay = ch->link_lat;
        n->in_chan[gp] = (uint32_t)t->nports + (uint32_t)node;
      } else {
        ch->dst_router = sim_port_router(t, peer);
        ch->dst_port = peer - t->port_base[ch->dst_router];
        ch->head_delay = ch->link_lat + cfg->router_latency;
        n->in_chan[gp] = (uint32_t)peer;
      }
    }
  for (int node = 0; node < t->nnodes; node++) {
    sim_chan *ch = &n->chan[t->nports + node];
    const int r = t->node_router[node];
    ch->src_router = -1;
    ch->ppb = ppb_of(cfg->gbps[SIM_LINK_NODE]);
    ch->cls = SIM_LINK_NODE;
    ch->link_lat = cfg->latency[SIM_LINK_NODE];
    ch->dst_router = r;
    ch->dst_port = t->node_port[node];
    ch->head_delay = ch->link_lat + cfg->router_latency;
    n->nic[node] = (sim_nic){.q_head = SIM_NIL, .q_tail = SIM_NIL};
  }
  for (uint32_t c = 0; c < n->nchan; c++) {
    sim_chan *ch = &n->chan[c];
    ch->ev_time = SIM_NEVER;
    ch->wire_head = ch->wire_tail = ch->cred_head = ch->cred_tail = SIM_NIL;
  }
  n->free_pkt = n->free_msg = n->free_cred = SIM_NIL;
  sim_des_init(&n->des);
  sim_net_seed(n, cfg->seed);
  if (cfg->cc != SIM_CC_NONE && sim_cc_init(n, err, errlen)) {
    sim_net_free(n);
    return NULL;
  }
  return n;
}

void sim_net_seed(sim_net *n, uint64_t seed) { contend_rng_init(&n->rng, seed, 0x5111, 0, 0, 0); }

void sim_net_free(sim_net *n) {
  if (!n)
    return;
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_free(n);
  sim_des_free(&n->des);
  free(n->chan);
  free(n->cvc);
  free(n->ibuf);
  free(n->in_chan);
  free(n->in_busy);
  free(n->waitbits);
  free(n->words_of);
  free(n->nic);
  free(n->pkt);
  free(n->msg);
  free(n->cred);
  free(n);
}
