/* Router model oq: a shared-buffer output-queued switch, as commodity
 * switch ASICs are built.
 *
 * - Each switch has one pool of `shared_buffer_bytes`.  Every output port
 *   has one queue per VC in it; each queue is guaranteed one packet
 *   (the per-queue minimum ASICs reserve), the rest of the pool is shared.
 * - A packet is routed when it arrives and enters its output queue at
 *   once (the crossbar has unbounded speedup) if the queue is empty (its
 *   reserved packet) or, by the dynamic threshold of Choudhury and Hahne,
 *   while the queue's bytes are below `dt_alpha` x the free shared pool
 *   and the packet fits that free pool.  Otherwise the packet waits at its
 *   input (FIFO per input port and VC) and is admitted, input VCs taken
 *   round-robin, when packets leave the switch; while any input of the
 *   switch waits, a newcomer waits its turn with them (so the inputs of an
 *   incast share the room fairly).
 * - An input's credits (`buffer_bytes` per VC, as in every model, the
 *   headroom) are taken by its upstream sender.  The input itself is
 *   accounted in the shared pool as ASICs do for lossless traffic: a
 *   packet admitted through the shared pool while the bytes its input
 *   (port and VC) has there are below `dt_alpha` x the free shared pool
 *   gives its credits back at once (the pool holds it); any other packet
 *   gives them back only when it has left the switch.  An input whose
 *   packets are not admitted, or whose share of a filling pool is used
 *   up, runs out of credits and its upstream port stops (credit/PFC-like
 *   back-pressure), so congestion trees form.
 * - An output link sends, VCs round-robin, the head of the first queue
 *   whose packet fits the downstream credits of its VC.  A stall of an
 *   output: it had queued packets and none had the downstream credits.
 * The routing's deadlock freedom holds: an empty queue always admits, so
 * a queue depends only on its own downstream credits. */
#include <stdio.h>
#include <stdlib.h>

#include "net_impl.h"

typedef struct oq_state {
  sim_ibuf *q;        /* nports x V: the output queues */
  uint64_t *qbytes;   /* nports: bytes queued for the output (all VCs) */
  uint8_t *vrr;       /* nports: the VC an output serves first */
  int64_t *free_pool; /* nrouters: free bytes of the shared part of the pool */
  uint64_t *ing;      /* nchan x V: bytes of the input VC in the pool, credits given back */
  uint32_t *nheld;    /* nrouters: input VCs holding packets not admitted */
  uint32_t *hrr;      /* nrouters: where the next admission retry starts */
  sim_time *retry_t;  /* nrouters: pending admission retry, or SIM_NEVER */
} oq_state;

static uint32_t oq_occupancy(void *arg, int router, int port) {
  sim_net *n = arg;
  const oq_state *s = n->rm;
  const uint32_t c = (uint32_t)(n->t->port_base[router] + port);
  int64_t used = (int64_t)s->qbytes[c];
  if (n->chan[c].dst_router >= 0)
    used += sim_downstream_used(n, c);
  return used > 0 ? (uint32_t)(used > UINT32_MAX ? UINT32_MAX : used) : 0;
}

static void oq_output(sim_net *n, uint32_t oc);

/* Admits packet p (routed, at router r) into its output queue if the
 * reserve or the dynamic threshold lets it: 1, or 0 (nothing changed). */
static int admit(sim_net *n, int r, uint32_t p) {
  oq_state *s = n->rm;
  sim_pkt *pk = &n->pkt[p];
  const uint32_t oc = (uint32_t)(n->t->port_base[r] + pk->out_port);
  sim_ibuf *q = &s->q[(size_t)oc * n->V + pk->out_vc];
  if (q->head == SIM_NIL) {
    pk->flags = (uint8_t)((pk->flags | PKT_RSV) & ~PKT_CRED);
  } else {
    const int64_t fr = s->free_pool[r];
    if (!((double)q->bytes < n->cfg.dt_alpha * (double)fr && (int64_t)pk->bytes <= fr))
      return 0;
    pk->flags &= (uint8_t) ~(PKT_RSV | PKT_CRED);
    s->free_pool[r] -= pk->bytes;
    const size_t iv = (size_t)pk->in_ch * n->V + pk->vc;
    if ((double)s->ing[iv] < n->cfg.dt_alpha * (double)fr) { /* within the input's share */
      s->ing[iv] += pk->bytes;
      pk->flags |= PKT_CRED;
      sim_credit_back(n, pk->in_ch, pk->vc, pk->bytes,
                      n->des.now + sim_chan_credit_lat(n, pk->in_ch));
    }
  }
  sim_fifo_push(n, q, p);
  s->qbytes[oc] += pk->bytes;
  oq_output(n, oc);
  return 1;
}

static void request_retry(sim_net *n, int r, sim_time t) {
  oq_state *s = n->rm;
  if (s->retry_t[r] <= t)
    return;
  s->retry_t[r] = t;
  sim_des_push(&n->des, t, EV_ROUTER, (uint32_t)r);
}

/* Output oc's link sends the next packet it may. */
static void oq_output(sim_net *n, uint32_t oc) {
  oq_state *s = n->rm;
  sim_chan *ch = &n->chan[oc];
  const sim_time now = n->des.now;
  if (!s->qbytes[oc])
    return;
  if (ch->busy_until > now) {
    sim_chan_request(n, oc, ch->busy_until);
    return;
  }
  const int V = n->V, to_nic = ch->dst_router < 0;
  if (!to_nic)
    sim_drain_credits(n, oc);
  unsigned blocked = 0;
  int win = -1;
  for (int k = 0; k < V; k++) {
    const int v = (s->vrr[oc] + k) % V;
    const sim_ibuf *q = &s->q[(size_t)oc * V + v];
    if (q->head == SIM_NIL)
      continue;
    if (to_nic || n->cvc[(size_t)oc * V + v].credit >= n->pkt[q->head].bytes) {
      win = v;
      break;
    }
    blocked |= 1u << v;
  }
  if (win < 0) {
    sim_stall_begin(n, ch, blocked);
    if (ch->ncred_inl)
      sim_chan_request(n, oc, sim_cred_first_t(ch));
    return;
  }
  sim_stall_end(n, ch, oc);
  s->vrr[oc] = (uint8_t)((win + 1) % V);
  sim_ibuf *q = &s->q[(size_t)oc * V + win];
  const uint32_t occupied = q->bytes;
  const uint32_t p = sim_fifo_pop(n, q);
  sim_pkt *pk = &n->pkt[p];
  const int r = ch->src_router;
  s->qbytes[oc] -= pk->bytes;
  if (!(pk->flags & PKT_RSV))
    s->free_pool[r] += pk->bytes;
  const uint32_t ic = pk->in_ch;
  if (pk->flags & PKT_CRED)
    s->ing[(size_t)ic * V + pk->vc] -= pk->bytes;
  else
    sim_credit_back(n, ic, pk->vc, pk->bytes,
                    now + sim_chan_ser(ch, pk->bytes) + sim_chan_credit_lat(n, ic));
  if (n->cfg.cc != SIM_CC_NONE)
    sim_cc_departure(n, pk, occupied, n->cfg.buffer_bytes, to_nic);
  pk->vc = pk->out_vc;
  sim_transmit(n, oc, p);
  if (s->qbytes[oc])
    sim_chan_request(n, oc, ch->busy_until);
  if (s->nheld[r])
    request_retry(n, r, now);
}

static void oq_arbitrate(sim_net *n, uint32_t oc) { oq_output(n, oc); }

static void oq_arrive(sim_net *n, uint32_t c, uint32_t p) {
  oq_state *s = n->rm;
  sim_route_packet(n, c, p);
  sim_pkt *pk = &n->pkt[p];
  pk->in_ch = c;
  const int r = n->chan[c].dst_router;
  sim_ibuf *ib = sim_in_buf(n, c, pk->vc);
  if (ib->head == SIM_NIL) {
    /* while inputs wait for room, a newcomer waits its turn with them */
    if (!s->nheld[r] && admit(n, r, p))
      return;
    if (s->nheld[r]++)
      request_retry(n, r, n->des.now);
    if (c >= (uint32_t)n->t->nports)
      sim_nic_in_start(n, c);
  }
  sim_fifo_push(n, ib, p);
}

/* Room may have come at router r: admit what now fits, input VCs
 * round-robin from the one after the last admitted. */
static void oq_event(sim_net *n, uint32_t r) {
  oq_state *s = n->rm;
  if (s->retry_t[r] != n->des.now)
    return; /* superseded by an earlier request */
  s->retry_t[r] = SIM_NEVER;
  const uint32_t slots = sim_radix(n, (int)r) * (uint32_t)n->V;
  const int base = n->t->port_base[r];
  const uint32_t start = s->hrr[r];
  for (uint32_t k = 0; k < slots && s->nheld[r]; k++) {
    const uint32_t slot = (start + k) % slots;
    const uint32_t ic = n->in_chan[base + (int)(slot / (uint32_t)n->V)];
    if (ic == SIM_NIL)
      continue;
    sim_ibuf *ib = &n->ibuf[(size_t)base * n->V + slot]; /* slot = port x V + VC */
    if (ib->head == SIM_NIL)
      continue;
    int any = 0;
    while (ib->head != SIM_NIL) {
      const uint32_t p = ib->head;
      const uint32_t after = n->pkt[p].next;
      const uint32_t bytes = n->pkt[p].bytes;
      if (!admit(n, (int)r, p))
        break;
      /* admit linked p into its queue: unlink it from the input */
      ib->head = after;
      if (after == SIM_NIL)
        ib->tail = SIM_NIL;
      ib->bytes -= bytes;
      if (ic >= (uint32_t)n->t->nports)
        sim_nic_in_leave(n, ic);
      any = 1;
    }
    if (any)
      s->hrr[r] = (slot + 1) % slots;
    if (ib->head == SIM_NIL)
      s->nheld[r]--;
  }
}

static int oq_check(const sim_net_config *cfg, char *err, size_t errlen) {
  const sim_topo *t = cfg->topo;
  const uint64_t pkt = (uint64_t)cfg->mtu + cfg->header;
  const uint64_t V = (uint64_t)sim_routing_vcs(cfg->routing);
  uint64_t radix = 0;
  for (int r = 0; r < t->nrouters; r++) {
    const uint64_t k = (uint64_t)(t->port_base[r + 1] - t->port_base[r]);
    if (k > radix)
      radix = k;
  }
  const uint64_t need = (radix * V + 1) * pkt;
  if (cfg->shared_buffer_bytes < need) {
    snprintf(err, errlen,
             "--shared-buffer-bytes %llu B is too small: a switch of %llu ports x %llu VCs "
             "guarantees each output queue one packet of %llu B and needs one more to share: at "
             "least %llu B",
             (unsigned long long)cfg->shared_buffer_bytes, (unsigned long long)radix,
             (unsigned long long)V, (unsigned long long)pkt, (unsigned long long)need);
    return -1;
  }
  return 0;
}

static void oq_init(sim_net *n) {
  oq_state *s = sim_xcalloc(1, sizeof *s, "oq router model");
  const sim_topo *t = n->t;
  const size_t np = (size_t)t->nports;
  s->q = sim_xcalloc(np * (size_t)n->V, sizeof *s->q, "oq router model");
  for (size_t i = 0; i < np * (size_t)n->V; i++)
    s->q[i] = (sim_ibuf){SIM_NIL, SIM_NIL, 0};
  s->qbytes = sim_xcalloc(np, sizeof *s->qbytes, "oq router model");
  s->vrr = sim_xcalloc(np, sizeof *s->vrr, "oq router model");
  const size_t nr = (size_t)t->nrouters;
  s->free_pool = sim_xcalloc(nr, sizeof *s->free_pool, "oq router model");
  s->nheld = sim_xcalloc(nr, sizeof *s->nheld, "oq router model");
  s->hrr = sim_xcalloc(nr, sizeof *s->hrr, "oq router model");
  s->retry_t = sim_xcalloc(nr, sizeof *s->retry_t, "oq router model");
  s->ing = sim_xcalloc((size_t)n->nchan * n->V, sizeof *s->ing, "oq router model");
  const int64_t pkt = (int64_t)n->cfg.mtu + n->cfg.header;
  for (int r = 0; r < t->nrouters; r++) {
    s->free_pool[r] = (int64_t)n->cfg.shared_buffer_bytes - (int64_t)sim_radix(n, r) * n->V * pkt;
    s->retry_t[r] = SIM_NEVER;
  }
  n->rm = s;
}

static void oq_free(sim_net *n) {
  oq_state *s = n->rm;
  if (!s)
    return;
  free(s->q);
  free(s->qbytes);
  free(s->vrr);
  free(s->free_pool);
  free(s->nheld);
  free(s->hrr);
  free(s->retry_t);
  free(s->ing);
  free(s);
  n->rm = NULL;
}

const sim_router_model sim_router_oq = {
    .name = "oq",
    .help = "shared-buffer output-queued switch: a pool per switch (--shared-buffer-bytes), "
            "dynamic-threshold admission (--dt-alpha), credits back when a packet leaves",
    .ugal_bias_buffers = 4, /* as voq: its queues are deep (0.80-0.86x minimal without) */
    .check = oq_check,
    .init = oq_init,
    .free = oq_free,
    .arrive = oq_arrive,
    .arbitrate = oq_arbitrate,
    .event = oq_event,
    .occupancy = oq_occupancy,
};
