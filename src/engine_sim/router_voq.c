/* Router model voq: virtual output queues at each input, an iSLIP
 * allocator, crossbar speedup and small output buffers.
 *
 * - An input port keeps `buffer_bytes` per VC (the credits its upstream
 *   sees, as in iq); inside that buffer each VC holds one FIFO per output
 *   (the VOQs).  A packet is routed when it arrives and joins the VOQ of
 *   its output: no head-of-line blocking between outputs.
 * - Allocation (McKeown's iSLIP, `islip_iterations` rounds of request,
 *   grant, accept) runs per router whenever an input or a crossbar output
 *   becomes free or a packet arrives.  An input requests every output for
 *   which one of its VOQs (VCs taken round-robin) has a head that fits the
 *   output buffer and the downstream credits of its output VC; an output
 *   grants the requesting input next after its pointer, an input accepts
 *   the granting output next after its pointer; pointers move one past
 *   the match on the first round only.
 * - A match crosses the crossbar in ser / speedup: the input and the
 *   crossbar output are busy that long; the input's credits go back once
 *   the tail has crossed (plus the link latency).  The downstream credits
 *   are taken at the crossing, so a packet in an output buffer only waits
 *   for the link (no VC blocks another there: the routing's deadlock
 *   freedom holds).  The output buffer (`output_buffer_bytes`) holds the
 *   packets waiting for the link; the link sends them in FIFO order.
 * - A stall of an output: VOQ heads for it were waiting and none had the
 *   downstream credits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "net_impl.h"

/* Per router output port, one cache line: what an allocation reads of an
 * output it considers, and the output buffer. */
typedef struct __attribute__((aligned(64))) voq_out {
  sim_time xbar_busy; /* crossbar output busy until */
  uint64_t qbytes;    /* bytes in VOQs for the output */
  uint64_t hver;      /* its VOQ heads' version (pair_sum counts; 64 bits never wrap) */
  sim_ibuf fifo;      /* the output buffer */
  uint32_t gptr;      /* the grant pointer */
  uint8_t full;       /* a request found the output buffer full */
  /* The last request scan that found nothing to request, with what it
   * read (the candidate inputs: memo_cand; the output buffer's bytes; the
   * output VCs' credits: memo_cred; the version of the output's VOQ
   * heads), and what it found (the VCs blocked, the output buffer full).
   * A scan of the same inputs would find the same, whatever order it took
   * them in, so an allocation reuses it rather than reading every head
   * again (a saturated output is scanned at each cell of its router). */
  struct voq_memo {
    uint64_t hver;
    uint32_t ofifo;
    uint8_t valid, blocked, ofull;
  } memo;
} voq_out;

typedef struct voq_state {
  uint32_t W;        /* 64-bit words of a port bitmask (the largest radix) */
  uint32_t maxradix; /* of any router */
  uint32_t *coff;    /* nchan: the input's first (input, output) slot; SIM_NIL: feeds no router */
  sim_ibuf *q;       /* VOQs: slot x V + VC ... see qidx */
  uint32_t *ooff;    /* nports: the output's first (output, input) slot */
  uint32_t *head;    /* per (output, input) slot, output-major, `ps` words: per VC its VOQ's
                      * head's sim_head_info, 0 when empty (the allocation reads
                      * this, not the packet); then the heads' summary (pair_sum) */
  uint32_t ps;       /* words per slot of head: V + 2 */
  uint32_t *npk;     /* per (input, output) slot: packets in its VOQs (all VCs) */
  uint64_t *imask;   /* nports x W: inputs with a non-empty VOQ for the output */
  uint8_t *vptr;     /* nports: the VC an input port tries first */
  uint32_t *aptr;    /* nchan: the input's accept pointer */
  voq_out *out;      /* nports */
  /* Per router, RS words (one cache line while W is 1: radix <= 64),
   * read together by every allocation: */
  uint64_t *rs;
  uint32_t RS;
  uint32_t *nin; /* nchan: packets in the input's VOQs */
  /* scratch of one allocation: masks of W words over ports, arrays over ports */
  uint64_t *reqT;   /* output x W: inputs requesting it (valid for touched outputs) */
  uint64_t *grants; /* input x W: outputs granting it (kept zero between uses) */
  uint64_t *in_free, *cand, *oreq, *otouch, *ook, *omatched, *ginp, *in_ok;
  uint8_t *reqv;                  /* input x maxradix: the VC of the request */
  unsigned *blocked;              /* output: VCs whose heads lacked credits */
  uint32_t *match_in, *match_out; /* the matches of the round */
  uint64_t *memo_cand;            /* nports x W */
  int64_t *memo_cred;             /* nports x V */
} voq_state;

/* Every set bit of the W-word mask m, lowest first, as uint32_t var (each
 * word is read once, when its bits start).  In the body `continue` goes to
 * the next bit, and so would `break`: do not use it. */
#define FOR_BITS(var, m, W)                                                                        \
  for (uint32_t w_ = 0; w_ < (W); w_++)                                                            \
    for (uint64_t b_ = (m)[w_]; b_; b_ &= b_ - 1)                                                  \
      for (uint32_t var = w_ * 64 + (uint32_t)__builtin_ctzll(b_), once_ = 1; once_; once_ = 0)

static inline void bit_set(uint64_t *m, uint32_t i) { m[i / 64] |= 1ull << (i % 64); }
static inline void bit_clear(uint64_t *m, uint32_t i) { m[i / 64] &= ~(1ull << (i % 64)); }
static inline int bit_get(const uint64_t *m, uint32_t i) {
  return (int)((m[i / 64] >> (i % 64)) & 1);
}

/* The words of router r's record (rs): */
static inline uint64_t *rrec(const voq_state *s, int r) { return &s->rs[(size_t)r * s->RS]; }
/* its pending allocation's time, or SIM_NEVER */
static inline sim_time *alloc_t(const voq_state *s, int r) { return &rrec(s, r)[0]; }
/* the times of up to two of its events in the event queue (SIM_NEVER:
 * none), so a request at such a time pushes no other */
static inline sim_time *inheap(const voq_state *s, int r) { return &rrec(s, r)[1]; }
/* W words: input ports with packets */
static inline uint64_t *iact(const voq_state *s, int r) { return &rrec(s, r)[3]; }
/* W words: input ports that may still be crossing (in_busy > now); every
 * other port of the router is free */
static inline uint64_t *ibusy(const voq_state *s, int r) { return &rrec(s, r)[3 + s->W]; }
/* W words: outputs some input has packets for */
static inline uint64_t *oact(const voq_state *s, int r) { return &rrec(s, r)[3 + 2 * s->W]; }

static inline size_t qidx(const sim_net *n, const voq_state *s, uint32_t c, int v, uint32_t o) {
  return ((size_t)s->coff[c] + o) * (size_t)n->V + (size_t)v;
}

/* The head word of VOQ (input port i, VC v) of output channel oc: the heads
 * of one output are together, so an allocation reads an output's requests
 * from adjacent words rather than one line per input. */
static inline size_t hidx(const voq_state *s, uint32_t oc, uint32_t i, int v) {
  return ((size_t)s->ooff[oc] + i) * s->ps + (size_t)v;
}

/* Refreshes the summary of the heads of (output oc, input port i), the
 * two words after them, after one of them changed: their output VCs (bits
 * 0-7) and least bytes (from bit 8), then their most bytes.  What lets an
 * allocation see at once that none of them can cross. */
static void pair_sum(const sim_net *n, voq_state *s, uint32_t oc, uint32_t i) {
  uint32_t *h = &s->head[hidx(s, oc, i, 0)];
  uint32_t vcs = 0, lo = 0xffffff, hi = 0;
  for (int v = 0; v < n->V; v++)
    if (h[v]) {
      const uint32_t bytes = h[v] >> 3;
      vcs |= 1u << (h[v] & 7);
      lo = bytes < lo ? bytes : lo;
      hi = bytes > hi ? bytes : hi;
    }
  h[n->V] = vcs ? vcs | lo << 8 : 0;
  h[n->V + 1] = hi;
  s->out[oc].hver++;
}

static void request_alloc(sim_net *n, int r, sim_time t) {
  voq_state *s = n->rm;
  sim_time *const at = alloc_t(s, r);
  if (*at <= t)
    return;
  *at = t;
  sim_time *h = inheap(s, r);
  if (h[0] == t || h[1] == t)
    return; /* an event of an earlier request is due then */
  sim_des_push(&n->des, t, EV_ROUTER, (uint32_t)r);
  if (h[0] == SIM_NEVER)
    h[0] = t;
  else if (h[1] == SIM_NEVER)
    h[1] = t;
}

static uint32_t voq_occupancy(void *arg, int router, int port) {
  sim_net *n = arg;
  const voq_state *s = n->rm;
  const uint32_t c = (uint32_t)(n->t->port_base[router] + port);
  const sim_chan *ch = &n->chan[c];
  int64_t used = (int64_t)s->out[c].qbytes;
  if (ch->dst_router < 0)
    used += s->out[c].fifo.bytes;
  else /* the downstream buffer and this output buffer (its credits are taken) */
    used += sim_downstream_used(n, c);
  return used > 0 ? (uint32_t)(used > UINT32_MAX ? UINT32_MAX : used) : 0;
}

/* The link of output oc sends the head of its output buffer if it is free. */
static void link_send(sim_net *n, uint32_t oc) {
  voq_state *s = n->rm;
  sim_chan *ch = &n->chan[oc];
  sim_ibuf *f = &s->out[oc].fifo;
  if (f->head == SIM_NIL)
    return;
  if (ch->busy_until > n->des.now) {
    sim_chan_request(n, oc, ch->busy_until);
    return;
  }
  sim_transmit_reserved(n, oc, sim_fifo_pop(n, f));
  if (s->out[oc].full) { /* a request waits for this room */
    s->out[oc].full = 0;
    request_alloc(n, ch->src_router, n->des.now);
  }
  if (f->head != SIM_NIL)
    sim_chan_request(n, oc, ch->busy_until);
}

static void voq_arbitrate(sim_net *n, uint32_t oc) {
  sim_chan *ch = &n->chan[oc];
  if (ch->stalled) { /* woken by credits: the blocked VOQs may go */
    sim_drain_credits(n, oc);
    request_alloc(n, ch->src_router, n->des.now);
  }
  link_send(n, oc);
}

static void voq_prefetch(const sim_net *n, uint32_t id, uint32_t kind, int stage) {
  const voq_state *s = n->rm;
  if (kind == EV_ROUTER) { /* an allocation: its router's words, its inputs' busy times */
    sim_prefetch(rrec(s, (int)id));
    sim_prefetch(&n->in_busy[n->t->port_base[id]]);
  } else if (kind == EV_ARB && id < (uint32_t)n->t->nports) { /* a link: its output buffer's head */
    if (!stage)
      sim_prefetch(&s->out[id]);
    else if (s->out[id].fifo.head != SIM_NIL)
      sim_prefetch(&n->pkt[s->out[id].fifo.head]);
  }
}

static void voq_prefetch_arrival(const sim_net *n, uint32_t c, uint32_t p, int op) {
  const voq_state *s = n->rm;
  const int r = n->chan[c].dst_router, v = n->pkt[p].vc;
  if (op < 0 || (uint32_t)op >= sim_radix(n, r)) /* a guess: the indexes below must hold */
    return;
  const uint32_t o = (uint32_t)op, i = (uint32_t)n->chan[c].dst_port;
  const uint32_t oc = (uint32_t)(n->t->port_base[r] + op);
  sim_prefetch(&s->q[qidx(n, s, c, v, o)]);
  sim_prefetch(&s->head[hidx(s, oc, i, v)]);
  sim_prefetch(&s->npk[s->coff[c] + o]);
  sim_prefetch(&s->out[oc]);
}

static void voq_arrive(sim_net *n, uint32_t c, uint32_t p) {
  voq_state *s = n->rm;
  sim_route_packet(n, c, p);
  const sim_pkt *pk = &n->pkt[p];
  const int r = n->chan[c].dst_router, v = pk->vc;
  const uint32_t o = pk->out_port;
  sim_ibuf *ib = sim_in_buf(n, c, v);
  if (c >= (uint32_t)n->t->nports && !ib->bytes)
    sim_nic_in_start(n, c);
  ib->bytes += pk->bytes;
  s->out[n->t->port_base[r] + (int)o].qbytes += pk->bytes;
  const size_t qi = qidx(n, s, c, v, o);
  if (s->q[qi].tail != SIM_NIL) /* off the wire: next_t_arr is read and done with */
    n->pkt[s->q[qi].tail].next_hinfo = sim_head_info(pk);
  sim_fifo_push(n, &s->q[qi], p);
  const uint32_t oc = (uint32_t)(n->t->port_base[r] + (int)o), i = (uint32_t)n->chan[c].dst_port;
  const size_t hi = hidx(s, oc, i, v);
  if (!s->head[hi]) {
    s->head[hi] = sim_head_info(pk);
    pair_sum(n, s, oc, i);
  }
  if (s->npk[s->coff[c] + o]++ == 0) {
    bit_set(&s->imask[(size_t)oc * s->W], i);
    bit_set(oact(s, r), o);
  }
  if (s->nin[c]++ == 0)
    bit_set(iact(s, r), (uint32_t)n->chan[c].dst_port);
  const sim_time in_free = n->in_busy[n->chan[c].dst_gp];
  request_alloc(n, r, in_free > n->des.now ? in_free : n->des.now);
}

/* Moves the head of VOQ (input port i, VC v, output o) of router r across
 * the crossbar into o's output buffer. */
static void cross(sim_net *n, int r, uint32_t i, int v, uint32_t o) {
  voq_state *s = n->rm;
  const sim_time now = n->des.now;
  const int gp = n->t->port_base[r] + (int)i;
  const uint32_t ic = n->in_chan[gp];
  const uint32_t oc = (uint32_t)(n->t->port_base[r] + (int)o);
  sim_chan *och = &n->chan[oc];
  const size_t qi = qidx(n, s, ic, v, o);
  const uint32_t p = sim_fifo_pop(n, &s->q[qi]);
  sim_pkt *pk = &n->pkt[p];
  s->head[hidx(s, oc, i, v)] = s->q[qi].head == SIM_NIL ? 0 : pk->next_hinfo;
  pair_sum(n, s, oc, i);
  if (--s->npk[s->coff[ic] + o] == 0) {
    uint64_t *im = &s->imask[(size_t)oc * s->W], left = 0;
    bit_clear(im, i);
    for (uint32_t w = 0; w < s->W; w++)
      left |= im[w];
    if (!left)
      bit_clear(oact(s, r), o);
  }
  if (--s->nin[ic] == 0)
    bit_clear(iact(s, r), i);
  sim_ibuf *ib = &n->ibuf[(size_t)gp * n->V + v];
  const uint32_t occupied = ib->bytes;
  ib->bytes -= pk->bytes;
  if (ic >= (uint32_t)n->t->nports)
    sim_nic_in_leave(n, ic);
  s->out[oc].qbytes -= pk->bytes;
  const sim_time x = sim_chan_ser(och, pk->bytes) / n->cfg.speedup;
  n->in_busy[gp] = now + x;
  bit_set(ibusy(s, r), i);
  s->out[oc].xbar_busy = now + x;
  s->vptr[gp] = (uint8_t)((v + 1) % n->V);
  sim_credit_back(n, ic, (uint32_t)v, pk->bytes, now + x + sim_chan_credit_lat(n, ic));
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_departure(n, pk, occupied, n->cfg.buffer_bytes, och->dst_router < 0);
  if (och->dst_router >= 0)
    sim_take_credit(n, oc, pk->out_vc, pk->bytes);
  pk->vc = pk->out_vc;
  sim_fifo_push(n, &s->out[oc].fifo, p);
  link_send(n, oc);
}

/* One allocation round of router r (iSLIP over the free inputs and
 * crossbar outputs); asks for the next one.  W: s->W, a constant where
 * voq_alloc calls it for radix <= 64, so that the masks' loops vanish. */
static inline __attribute__((always_inline)) void alloc_w(sim_net *n, int r, const uint32_t W) {
  voq_state *s = n->rm;
  const sim_time now = n->des.now;
  const uint32_t R = sim_radix(n, r);
  const int base = n->t->port_base[r];
  const int V = n->V;
  sim_time next = SIM_NEVER;
  uint64_t *ifree = s->in_free, *oreq = s->oreq, *otouch = s->otouch, *ook = s->ook;
  uint64_t *omatched = s->omatched, *ginp = s->ginp;
  for (uint32_t w = 0; w < W; w++)
    ifree[w] = oreq[w] = otouch[w] = ook[w] = omatched[w] = 0;
  /* requests: each free input, for each output it has packets for, the
   * first VC (round-robin) whose head may cross now; taken output by
   * output (the outcome of an (input, output) pair depends on neither
   * order), so an output's VOQ heads are read together */
  FOR_BITS(o, oact(s, r), W) { /* the outputs' lines, their misses overlapped */
    sim_prefetch(&s->out[base + (int)o]);
  }
  uint64_t *in_ok = s->in_ok, *cand = s->cand;
  const uint64_t *const ia = iact(s, r);
  uint64_t *const ib = ibusy(s, r);
  for (uint32_t w = 0; w < W; w++)
    in_ok[w] = ia[w] & ~ib[w];
  FOR_BITS(i, ib, W) { /* the few ports that crossed lately: busy still, or free again */
    const sim_time until = n->in_busy[base + (int)i];
    if (until <= now) {
      bit_clear(ib, i);
      if (bit_get(ia, i))
        bit_set(in_ok, i);
    } else if (until < next && bit_get(ia, i))
      next = until;
  }
  const uint32_t obuf = n->cfg.output_buffer_bytes;
  FOR_BITS(o, oact(s, r), W) {
    const uint32_t oc = (uint32_t)base + o;
    uint64_t any = 0;
    for (uint32_t w = 0; w < W; w++)
      any |= cand[w] = s->imask[(size_t)oc * W + w] & in_ok[w];
    if (!any)
      continue;
    const sim_time xbusy = s->out[oc].xbar_busy;
    if (xbusy > now) {
      if (xbusy < next)
        next = xbusy;
      continue;
    }
    const int to_router = n->chan[oc].dst_router >= 0;
    bit_set(otouch, o);
    s->blocked[o] = 0;
    for (uint32_t w = 0; w < W; w++) /* W is 1 or 2: no call */
      s->reqT[(size_t)o * W + w] = 0;
    if (to_router)
      sim_drain_credits(n, oc);
    const uint32_t ofifo_bytes = s->out[oc].fifo.bytes;
    const sim_cvc *const ocvc = &n->cvc[(size_t)oc * (size_t)V];
    const uint32_t *const oheads = &s->head[hidx(s, oc, 0, 0)];
    struct voq_memo *const memo = &s->out[oc].memo;
    uint64_t *const mcand = &s->memo_cand[(size_t)oc * W];
    int64_t *const mcred = &s->memo_cred[(size_t)oc * (size_t)V];
    if (memo->valid && memo->hver == s->out[oc].hver && memo->ofifo == ofifo_bytes) {
      int same = 1;
      for (uint32_t w = 0; same && w < W; w++)
        same = mcand[w] == cand[w];
      for (int v = 0; same && to_router && v < V; v++)
        same = mcred[v] == ocvc[v].credit;
      if (same) { /* as the scan below would find: nothing to request */
        s->blocked[o] = memo->blocked;
        if (memo->ofull)
          s->out[oc].full = 1;
        continue;
      }
    }
    FOR_BITS(i, cand, W) { /* the heads read below, their misses overlapped */
      sim_prefetch(&oheads[(size_t)i * s->ps]);
    }
    int set_full = 0;
    FOR_BITS(i, cand, W) {
      const uint32_t *const heads = &oheads[(size_t)i * s->ps];
      if (to_router) { /* every head short of its VC's credits: blocked, as the loop below finds */
        const uint32_t vcs = heads[V] & 0xff, lo = heads[V] >> 8, hi = heads[V + 1];
        int short_all = ofifo_bytes + hi <= obuf;
        for (uint32_t b = vcs; short_all && b; b &= b - 1)
          short_all = ocvc[__builtin_ctz(b)].credit < lo;
        if (short_all) {
          s->blocked[o] |= vcs;
          continue;
        }
      }
      const int v0 = s->vptr[base + (int)i];
      for (int k = 0, v = v0; k < V; k++, v = v + 1 == V ? 0 : v + 1) {
        const uint32_t h = heads[v];
        if (!h)
          continue;
        const uint32_t bytes = h >> 3, ovc = h & 7;
        if (ofifo_bytes + bytes > obuf) {
          s->out[oc].full = 1;
          set_full = 1;
          continue;
        }
        if (to_router && ocvc[ovc].credit < bytes) {
          s->blocked[o] |= 1u << ovc;
          continue;
        }
        bit_set(ook, o);
        bit_set(oreq, o);
        bit_set(ifree, i);
        bit_set(&s->reqT[(size_t)o * W], i);
        s->reqv[(size_t)i * s->maxradix + o] = (uint8_t)v;
        sim_prefetch(&s->q[qidx(n, s, n->in_chan[base + (int)i], v, o)]); /* crossed if matched */
        break;
      }
    }
    memo->valid = !bit_get(ook, o);
    if (memo->valid) {
      memo->hver = s->out[oc].hver;
      memo->ofifo = ofifo_bytes;
      memo->blocked = (uint8_t)s->blocked[o];
      memo->ofull = (uint8_t)set_full;
      for (uint32_t w = 0; w < W; w++)
        mcand[w] = cand[w];
      for (int v = 0; to_router && v < V; v++)
        mcred[v] = ocvc[v].credit;
    }
  }
  /* iSLIP rounds: each unmatched output grants the requesting unmatched
   * input next after its pointer; each input accepts the granting output
   * next after its pointer; pointers move on the first round only */
  uint32_t nm = 0;
  for (uint32_t it = 0; it < n->cfg.islip_iterations; it++) {
    int granted = 0;
    for (uint32_t w = 0; w < W; w++)
      ginp[w] = 0;
    FOR_BITS(o, oreq, W) {
      if (bit_get(omatched, o))
        continue;
      uint64_t any = 0;
      for (uint32_t w = 0; w < W; w++)
        any |= s->cand[w] = s->reqT[(size_t)o * W + w] & ifree[w];
      if (!any)
        continue;
      const uint32_t g = sim_bits_next(s->cand, W, R, s->out[base + (int)o].gptr);
      bit_set(&s->grants[(size_t)g * W], o);
      bit_set(ginp, g);
      granted = 1;
    }
    if (!granted)
      break;
    FOR_BITS(i, ginp, W) {
      uint64_t *gm = &s->grants[(size_t)i * W];
      const uint32_t ic = n->in_chan[base + (int)i];
      const uint32_t o = sim_bits_next(gm, W, R, s->aptr[ic]);
      for (uint32_t w = 0; w < W; w++)
        gm[w] = 0;
      s->match_in[nm] = i;
      s->match_out[nm++] = o;
      bit_clear(ifree, i);
      bit_set(omatched, o);
      if (it == 0) {
        s->out[base + (int)o].gptr = (i + 1) % R;
        s->aptr[ic] = (o + 1) % R;
      }
    }
  }
  for (uint32_t k = 0; k < nm; k++) { /* the packets about to cross */
    const uint32_t i = s->match_in[k], o = s->match_out[k];
    const uint32_t ic = n->in_chan[base + (int)i];
    sim_prefetch(&n->pkt[s->q[qidx(n, s, ic, s->reqv[(size_t)i * s->maxradix + o], o)].head]);
    const uint32_t tail = s->out[base + (int)o].fifo.tail; /* linked to it */
    if (tail != SIM_NIL)
      sim_prefetch(&n->pkt[tail]);
  }
  for (uint32_t k = 0; k < nm; k++) {
    const uint32_t i = s->match_in[k], o = s->match_out[k];
    cross(n, r, i, s->reqv[(size_t)i * s->maxradix + o], o);
  }
  /* the crossed ports free again: only worth a round if packets wait (an
   * arrival at an idle router asks for its own) */
  uint64_t waiting = 0;
  for (uint32_t w = 0; w < W; w++)
    waiting |= ia[w];
  for (uint32_t k = 0; waiting && k < nm; k++) {
    const sim_time x = s->out[base + (int)s->match_out[k]].xbar_busy;
    if (x < next)
      next = x;
  }
  FOR_BITS(o, otouch, W) {
    const uint32_t oc = (uint32_t)base + o;
    sim_chan *och = &n->chan[oc];
    if (bit_get(ook, o)) {
      sim_stall_end(n, och, oc);
      if (!bit_get(omatched, o)) { /* left unmatched by the rounds: again a cell later */
        const sim_time cell = sim_chan_ser(och, n->cfg.mtu + n->cfg.header) / n->cfg.speedup;
        if (now + cell < next)
          next = now + cell;
      }
    } else if (s->blocked[o]) {
      sim_stall_begin(n, och, s->blocked[o]);
      if (och->ncred_inl)
        sim_chan_request(n, oc, sim_cred_first_t(och));
    }
  }
  if (next != SIM_NEVER)
    request_alloc(n, r, next);
}

static void voq_alloc(sim_net *n, int r) {
  const voq_state *s = n->rm;
  if (s->W == 1)
    alloc_w(n, r, 1);
  else
    alloc_w(n, r, s->W);
}

static void voq_event(sim_net *n, uint32_t r) {
  voq_state *s = n->rm;
  sim_time *h = inheap(s, (int)r);
  if (h[0] == n->des.now)
    h[0] = SIM_NEVER;
  else if (h[1] == n->des.now)
    h[1] = SIM_NEVER;
  if (*alloc_t(s, (int)r) != n->des.now)
    return; /* superseded by an earlier request */
  *alloc_t(s, (int)r) = SIM_NEVER;
  voq_alloc(n, (int)r);
}

static int voq_check(const sim_net_config *cfg, char *err, size_t errlen) {
  const uint32_t pkt = cfg->mtu + cfg->header;
  if (cfg->output_buffer_bytes < pkt) {
    snprintf(err, errlen,
             "--output-buffer-bytes %u B holds less than one packet (mtu %u B + header %u B)",
             cfg->output_buffer_bytes, cfg->mtu, cfg->header);
    return -1;
  }
  if (cfg->output_buffer_bytes / pkt > SIM_BUFFER_PACKETS_MAX) {
    snprintf(err, errlen,
             "--output-buffer-bytes %u B holds %u packets, more than the limit of %d (packets in "
             "flight are memory)",
             cfg->output_buffer_bytes, cfg->output_buffer_bytes / pkt, SIM_BUFFER_PACKETS_MAX);
    return -1;
  }
  return 0;
}

static void voq_init(sim_net *n) {
  voq_state *s = sim_xcalloc(1, sizeof *s, "voq router model");
  const sim_topo *t = n->t;
  for (int r = 0; r < t->nrouters; r++)
    if (sim_radix(n, r) > s->maxradix)
      s->maxradix = sim_radix(n, r);
  s->W = (s->maxradix + 63) / 64;
  if (!s->W)
    s->W = 1;
  s->coff = sim_xcalloc(n->nchan, sizeof *s->coff, "voq router model");
  size_t slots = 0;
  for (uint32_t c = 0; c < n->nchan; c++) {
    const int dr = n->chan[c].dst_router;
    s->coff[c] = dr >= 0 ? (uint32_t)slots : SIM_NIL;
    if (dr >= 0)
      slots += sim_radix(n, dr);
  }
  s->q = sim_xcalloc(slots * (size_t)n->V, sizeof *s->q, "voq router model");
  for (size_t i = 0; i < slots * (size_t)n->V; i++)
    s->q[i] = (sim_ibuf){SIM_NIL, SIM_NIL, 0};
  s->ooff = sim_xcalloc((size_t)t->nports, sizeof *s->ooff, "voq router model");
  size_t oslots = 0;
  for (int r = 0; r < t->nrouters; r++)
    for (uint32_t o = 0; o < sim_radix(n, r); o++) {
      s->ooff[t->port_base[r] + (int)o] = (uint32_t)oslots;
      oslots += sim_radix(n, r);
    }
  s->ps = (uint32_t)n->V + 2;
  s->head = sim_xcalloc(oslots * s->ps, sizeof *s->head, "voq router model");
  s->npk = sim_xcalloc(slots, sizeof *s->npk, "voq router model");
  s->imask = sim_xcalloc((size_t)t->nports * s->W, sizeof *s->imask, "voq router model");
  s->vptr = sim_xcalloc((size_t)t->nports, sizeof *s->vptr, "voq router model");
  s->aptr = sim_xcalloc(n->nchan, sizeof *s->aptr, "voq router model");
  const size_t np = (size_t)t->nports;
  s->out = sim_xcalloc_aligned(np, sizeof *s->out, "voq router model");
  for (size_t i = 0; i < np; i++)
    s->out[i].fifo = (sim_ibuf){SIM_NIL, SIM_NIL, 0};
  s->RS = (3 + 3 * s->W + 7) / 8 * 8; /* whole cache lines */
  s->rs = sim_xcalloc_aligned((size_t)t->nrouters * s->RS, sizeof *s->rs, "voq router model");
  for (int r = 0; r < t->nrouters; r++)
    *alloc_t(s, r) = inheap(s, r)[0] = inheap(s, r)[1] = SIM_NEVER;
  const size_t R = s->maxradix ? s->maxradix : 1;
  s->reqT = sim_xcalloc(R * s->W, sizeof *s->reqT, "voq router model");
  s->grants = sim_xcalloc(R * s->W, sizeof *s->grants, "voq router model");
  s->in_free = sim_xcalloc(s->W, sizeof *s->in_free, "voq router model");
  s->cand = sim_xcalloc(s->W, sizeof *s->cand, "voq router model");
  s->oreq = sim_xcalloc(s->W, sizeof *s->oreq, "voq router model");
  s->otouch = sim_xcalloc(s->W, sizeof *s->otouch, "voq router model");
  s->ook = sim_xcalloc(s->W, sizeof *s->ook, "voq router model");
  s->omatched = sim_xcalloc(s->W, sizeof *s->omatched, "voq router model");
  s->ginp = sim_xcalloc(s->W, sizeof *s->ginp, "voq router model");
  s->in_ok = sim_xcalloc(s->W, sizeof *s->in_ok, "voq router model");
  s->reqv = sim_xcalloc(R * R, sizeof *s->reqv, "voq router model");
  s->blocked = sim_xcalloc(R, sizeof *s->blocked, "voq router model");
  s->match_in = sim_xcalloc(R, sizeof *s->match_in, "voq router model");
  s->match_out = sim_xcalloc(R, sizeof *s->match_out, "voq router model");
  s->nin = sim_xcalloc(n->nchan, sizeof *s->nin, "voq router model");
  s->memo_cand = sim_xcalloc(np * s->W, sizeof *s->memo_cand, "voq router model");
  s->memo_cred = sim_xcalloc(np * (size_t)n->V, sizeof *s->memo_cred, "voq router model");
  n->rm = s;
}

static void voq_free(sim_net *n) {
  voq_state *s = n->rm;
  if (!s)
    return;
  free(s->coff);
  free(s->q);
  free(s->head);
  free(s->npk);
  free(s->ooff);
  free(s->imask);
  free(s->in_ok);
  free(s->vptr);
  free(s->aptr);
  free(s->out);
  free(s->rs);
  free(s->reqT);
  free(s->grants);
  free(s->in_free);
  free(s->cand);
  free(s->oreq);
  free(s->otouch);
  free(s->ook);
  free(s->omatched);
  free(s->ginp);
  free(s->reqv);
  free(s->blocked);
  free(s->match_in);
  free(s->match_out);
  free(s->nin);
  free(s->memo_cand);
  free(s->memo_cred);
  free(s);
  n->rm = NULL;
}

const sim_router_model sim_router_voq = {
    .name = "voq",
    .help = "virtual output queues per input port and VC within its credits, iSLIP allocator "
            "(--islip-iterations), crossbar --speedup, output buffers (--output-buffer-bytes)",
    /* a combined input/output-queued crossbar: speedup 2 is the least at
     * which one can behave as an output-queued switch (Chuang, Goel,
     * McKeown, Prabhakar, IEEE JSAC 1999); at speedup 1 the VOQs of an
     * input's 8 default credits hold few outputs, the matchings stay
     * sparse and one 32-port switch saturates near 0.88 */
    .speedup = 2,
    .output_packets = 16,
    /* its VOQs and output buffers hold many packets per output: without a
     * bias UGAL reads their noise under uniform load as congestion and
     * takes 0.88x minimal's throughput (dragonfly a=6,p=3,h=3) */
    .ugal_bias_buffers = 4,
    .check = voq_check,
    .init = voq_init,
    .free = voq_free,
    .arrive = voq_arrive,
    .arbitrate = voq_arbitrate,
    .event = voq_event,
    .occupancy = voq_occupancy,
    .prefetch = voq_prefetch,
    .prefetch_arrival = voq_prefetch_arrival,
};
