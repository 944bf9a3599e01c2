/* Router model iq: input-queued, one FIFO per input port and VC (see
 * net.h's model).  Only the head packet of a VC competes (head-of-line
 * blocking); it is routed when it becomes head.  An output grants,
 * round-robin over the (input port, VC) pairs waiting for it, the first
 * whose input is free and whose packet fits the downstream credits of its
 * output VC; the packet then crosses from the input buffer straight onto
 * the link.  An input feeds the crossbar `speedup` times its link rate.
 * A stall: an output had waiting heads and none had credits. */
#include <stdlib.h>

#include "net_impl.h"

typedef struct iq_state {
  /* per router output channel: the (input port, VC) pairs waiting for it,
   * a bitmap of words_of[router] words: in the output's own entry when
   * one word holds them (radix x VCs <= 64, the usual case: one cache
   * line for the output's count, position and waiters), else from word
   * `off` of waitbits */
  uint64_t *waitbits;
  uint32_t *words_of; /* nrouters */
  struct iq_out {
    uint32_t nwait; /* pairs waiting */
    uint32_t rr;    /* round-robin position */
    union {
      uint64_t w0;  /* the bitmap, when words_of[router] == 1 */
      uint64_t off; /* else its first word in waitbits */
    };
  } * out; /* nports */
  /* per input (router port gp x V + VC), what arbitration reads of its
   * head packet: sim_head_info in the low half, the packet in the high
   * half (beside the input's other state, not in the packet pool: the
   * winner's packet is fetched as soon as it wins, with its input) */
  uint64_t *hinfo;
  int vshift; /* log2 of the VCs when a power of two (else -1): b / V */
} iq_state;

/* Output oc's bitmap of waiting (input port, VC) pairs (r: its router). */
static inline uint64_t *wait_words(iq_state *s, uint32_t oc, int r) {
  return s->words_of[r] == 1 ? &s->out[oc].w0 : &s->waitbits[s->out[oc].off];
}

/* The input port of bit b (port x V + VC). */
static inline uint32_t port_of(const iq_state *s, uint32_t b, uint32_t V) {
  return s->vshift >= 0 ? b >> s->vshift : b / V;
}

static uint32_t iq_occupancy(void *arg, int router, int port) {
  sim_net *n = arg;
  const iq_state *s = n->rm;
  const uint32_t c = (uint32_t)(n->t->port_base[router] + port);
  const sim_chan *ch = &n->chan[c];
  if (ch->dst_router < 0)
    return s->out[c].nwait * (n->cfg.mtu + n->cfg.header);
  int64_t used = sim_downstream_used(n, c);
  used += (int64_t)s->out[c].nwait * (n->cfg.mtu + n->cfg.header);
  return used > 0 ? (uint32_t)used : 0;
}

/* The head of input buffer (c, v) is new: route it and ask for its output. */
static void head_route(sim_net *n, uint32_t c, int v) {
  iq_state *s = n->rm;
  const sim_chan *ch = &n->chan[c];
  const uint32_t p = sim_in_buf(n, c, v)->head;
  sim_route_packet(n, c, p);
  if (c >= (uint32_t)n->t->nports) /* the head of a NIC's first buffer: its wait starts */
    sim_nic_in_start(n, c);
  const int r = ch->dst_router, in_port = ch->dst_port;
  const uint32_t oc = (uint32_t)(n->t->port_base[r] + n->pkt[p].out_port);
  const uint32_t bit = (uint32_t)(in_port * n->V + v);
  wait_words(s, oc, r)[bit / 64] |= 1ull << (bit % 64);
  s->out[oc].nwait++;
  s->hinfo[(size_t)ch->dst_gp * n->V + v] = (uint64_t)p << 32 | sim_head_info(&n->pkt[p]);
  const sim_time in_free = n->in_busy[ch->dst_gp];
  sim_chan_request(n, oc, in_free > n->des.now ? in_free : n->des.now);
}

static void iq_arbitrate(sim_net *n, uint32_t oc) {
  iq_state *iq = n->rm;
  sim_chan *o = &n->chan[oc];
  const sim_time now = n->des.now;
  if (!iq->out[oc].nwait)
    return;
  if (o->busy_until > now) {
    sim_chan_request(n, oc, o->busy_until);
    return;
  }
  sim_drain_credits(n, oc);
  const int V = n->V;
  const int r = o->src_router;
  const int base = n->t->port_base[r];
  const uint32_t words = iq->words_of[r];
  const uint32_t radix = (uint32_t)(n->t->port_base[r + 1] - n->t->port_base[r]);
  const uint32_t nbits = radix * (uint32_t)V;
  uint64_t *w = wait_words(iq, oc, r);
  uint32_t b = iq->out[oc].rr, seen = 0, win = SIM_NIL;
  unsigned blocked = 0;
  sim_time input_free = SIM_NEVER; /* earliest a busy input is free */
  while (seen < iq->out[oc].nwait) {
    b = sim_bits_next(w, words, nbits, b);
    const sim_time in_free = n->in_busy[base + (int)port_of(iq, b, (uint32_t)V)];
    const uint32_t h = (uint32_t)iq->hinfo[(size_t)base * V + b]; /* b = in port x V + VC */
    if (in_free > now) {
      if (in_free < input_free)
        input_free = in_free;
    } else if (o->dst_router < 0 || n->cvc[(size_t)oc * V + (h & 7)].credit >= (h >> 3)) {
      win = b;
      break;
    } else {
      blocked |= 1u << (h & 7);
    }
    seen++;
    b++;
  }
  if (win == SIM_NIL) { /* every waiter lacks credits or its input is busy */
    if (blocked)
      sim_stall_begin(n, o, blocked);
    if (o->ncred_inl)
      sim_chan_request(n, oc, sim_cred_first_t(o));
    if (input_free != SIM_NEVER)
      sim_chan_request(n, oc, input_free);
    return;
  }
  sim_stall_end(n, o, oc);
  w[win / 64] &= ~(1ull << (win % 64));
  iq->out[oc].nwait--;
  iq->out[oc].rr = win + 1;
  const uint32_t p = (uint32_t)(iq->hinfo[(size_t)base * V + win] >> 32);
  sim_pkt *pk = &n->pkt[p];
  sim_prefetch(pk); /* while the input's state is read */
  const int gp = base + (int)port_of(iq, win, (uint32_t)V);
  const uint32_t v = win - (uint32_t)(gp - base) * (uint32_t)V;
  const uint32_t ic = n->in_chan[gp];
  sim_ibuf *q = &n->ibuf[(size_t)gp * V + v];
  const uint32_t occupied = q->bytes;
  if (ic >= (uint32_t)n->t->nports)
    sim_nic_in_leave(n, ic);
  q->head = pk->next;
  if (q->head == SIM_NIL)
    q->tail = SIM_NIL;
  else
    sim_prefetch(&n->pkt[q->head]); /* routed below, after the departure */
  q->bytes -= pk->bytes;
  const sim_time s = sim_chan_ser(o, pk->bytes);
  n->in_busy[gp] = now + s / n->cfg.speedup;
  sim_credit_back(n, ic, v, pk->bytes, now + s + sim_chan_credit_lat(n, ic));
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_departure(n, pk, occupied, n->cfg.buffer_bytes, o->dst_router < 0);
  pk->vc = pk->out_vc;
  sim_transmit(n, oc, p);
  if (q->head != SIM_NIL)
    head_route(n, ic, (int)v);
  if (iq->out[oc].nwait)
    sim_chan_request(n, oc, o->busy_until);
}

static void iq_prefetch(const sim_net *n, uint32_t c, uint32_t kind, int stage) {
  const iq_state *s = n->rm;
  if (kind == EV_ARRIVE && stage == 1 && n->chan[c].dst_router >= 0) {
    /* the input's head word, written if the packet becomes its head */
    sim_prefetch(&s->hinfo[(size_t)n->chan[c].dst_gp * (size_t)n->V]);
    return;
  }
  if (kind != EV_ARB || c >= (uint32_t)n->t->nports)
    return;
  if (!stage)
    sim_prefetch(&s->out[c]);
  else if (s->words_of[n->chan[c].src_router] > 1)
    sim_prefetch(&s->waitbits[s->out[c].off]);
}

static void iq_arrive(sim_net *n, uint32_t c, uint32_t p) {
  sim_pkt *pk = &n->pkt[p];
  const int v = pk->vc;
  sim_ibuf *q = sim_in_buf(n, c, v);
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

static void iq_init(sim_net *n) {
  const sim_topo *t = n->t;
  iq_state *s = sim_xcalloc(1, sizeof *s, "iq router model");
  const size_t np = (size_t)t->nports;
  s->words_of = sim_xcalloc((size_t)t->nrouters, sizeof *s->words_of, "iq router model");
  s->out = sim_xcalloc(np, sizeof *s->out, "iq router model");
  s->hinfo = sim_xcalloc(np * (size_t)n->V, sizeof *s->hinfo, "iq router model");
  size_t words = 0;
  for (int r = 0; r < t->nrouters; r++) {
    const uint32_t radix = sim_radix(n, r);
    s->words_of[r] = (radix * (uint32_t)n->V + 63) / 64;
    if (s->words_of[r] > 1)
      for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
        s->out[gp].off = words;
        words += s->words_of[r];
      }
  }
  s->waitbits = sim_xcalloc(words, sizeof *s->waitbits, "iq router model");
  s->vshift = (n->V & (n->V - 1)) ? -1 : __builtin_ctz((unsigned)n->V);
  n->rm = s;
}

static void iq_free(sim_net *n) {
  iq_state *s = n->rm;
  if (!s)
    return;
  free(s->waitbits);
  free(s->words_of);
  free(s->out);
  free(s->hinfo);
  free(s);
  n->rm = NULL;
}

const sim_router_model sim_router_iq = {
    .name = "iq",
    .help = "input-queued: a FIFO per input port and VC, only its head competes (head-of-line "
            "blocking), outputs grant round-robin; --speedup",
    .speedup = 1,
    .init = iq_init,
    .free = iq_free,
    .arrive = iq_arrive,
    .arbitrate = iq_arbitrate,
    .prefetch = iq_prefetch,
    .occupancy = iq_occupancy,
};
