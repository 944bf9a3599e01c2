/* Congestion control on the simulated fabric (--cc): per-flow rate state
 * at the source NICs, driven by marks taken in the routers.
 *
 * ecn (DCQCN-like): a packet leaving an input buffer whose VC holds at
 * least ecn_threshold x buffer bytes is marked; the destination returns a
 * congestion notification (CNP, at most one per flow per cc_period / 8)
 * that reaches the source one notification delay later (modelled as an
 * event, not as a packet: it costs no bandwidth).  The source flow then
 * sets target = rate, rate *= 1 - alpha / 2, alpha = (1 - g) alpha + g;
 * every cc_period without a CNP: alpha *= 1 - g and rate = (rate +
 * target) / 2, after five such periods target also grows by 5 % of the
 * link (additive increase).
 *
 * perflow (Slingshot-like endpoint congestion control): the destination
 * keeps the sources it heard from during the last PERFLOW_SOURCE_PERIODS
 * cc_periods and how busy
 * its own link was; while that link runs at least PERFLOW_BUSY busy with
 * two or more sources (an endpoint congestion, not one in the fabric), it
 * tells every recent source (at most once per cc_period / 8) to send at
 * PERFLOW_SHARE / N of the link, N being their number (under the fair
 * share, so that the queues behind the endpoint drain).  Flows to other
 * destinations (victims) are never told anything.  A told flow holds its
 * rate for cc_period, then doubles it every cc_period up to the link.
 *
 * Rates are fractions of the source NIC's link; a flow is paced by
 * spacing its packets ser / rate apart.  Flow state is per (source NIC,
 * destination node), created on first use. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "net_impl.h"

/* perflow: the endpoint is congested when its link ran at least
 * PERFLOW_BUSY busy over the last period; its sources then share
 * PERFLOW_SHARE of it (below 1 so that the queues behind it drain). */
#define PERFLOW_BUSY (0.9 * PERFLOW_SHARE)
#define PERFLOW_SHARE 0.75
/* perflow: a source counts as contributing for this many periods after its
 * last packet arrived.  Throttled sources of a large incast each deliver a
 * packet only every N packet times, far more than one period: counting the
 * sources of the last period alone would find a fraction of them and give
 * each a rate N / (that fraction) times too high. */
#define PERFLOW_SOURCE_PERIODS 16

typedef struct flow {
  int32_t dst;
  double rate, target, alpha;
  sim_time next_ok, last_change, hold_until, last_cnp;
  int increases;
} flow;

typedef struct nic_cc {
  flow *f; /* open addressing on dst */
  uint32_t n, cap;
  /* perflow, at this node as a destination: recent sources */
  int32_t *src;
  sim_time *seen;
  uint32_t nsrc, capsrc;
  sim_time last_notify;
  sim_time win_start; /* ejection utilization: current window */
  uint64_t win_bytes;
  double util; /* of the last complete window (fraction) */
} nic_cc;

typedef sim_cc_note note;

/* Notifications in flight: a binary heap on (t, c, i), the order in which
 * one process makes notes of equal delay (deliveries of one time in
 * channel order, a delivery's notes in turn), so that notes made in other
 * parts of the fabric (sim_cc_note_land) take effect in the same order. */
typedef struct cc_state {
  nic_cc *nic;
  note *q;
  uint32_t qlen, qcap;
  sim_time delay; /* notification delay */
} cc_state;

static int note_before(const note *x, const note *y) {
  if (x->t != y->t)
    return x->t < y->t;
  return x->c != y->c ? x->c < y->c : x->i < y->i;
}

static void note_push(cc_state *s, const note *x) {
  if (s->qlen == s->qcap) {
    s->qcap = s->qcap ? 2 * s->qcap : 256;
    s->q = realloc(s->q, sizeof *s->q * s->qcap);
    if (!s->q)
      contend_fail("out of memory (congestion notifications)");
  }
  uint32_t i = s->qlen++;
  while (i && note_before(x, &s->q[(i - 1) / 2])) {
    s->q[i] = s->q[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  s->q[i] = *x;
}

static note note_pop(cc_state *s) {
  const note top = s->q[0];
  const note last = s->q[--s->qlen];
  uint32_t i = 0;
  for (;;) {
    uint32_t k = 2 * i + 1;
    if (k >= s->qlen)
      break;
    if (k + 1 < s->qlen && note_before(&s->q[k + 1], &s->q[k]))
      k++;
    if (!note_before(&s->q[k], &last))
      break;
    s->q[i] = s->q[k];
    i = k;
  }
  if (s->qlen)
    s->q[i] = last;
  return top;
}

sim_time sim_cc_delay(const sim_net_config *c) {
  /* one-way delay of a notification: across a tree of two levels of
   * routers (node, local, global, local, node links) */
  return 2 * c->latency[SIM_LINK_NODE] + 2 * c->latency[SIM_LINK_LOCAL] +
         c->latency[SIM_LINK_GLOBAL] + 4 * c->router_latency;
}

static cc_state *CC(sim_net *n) { return n->cc; }

int sim_cc_init(sim_net *n, char *err, size_t errlen) {
  (void)err, (void)errlen;
  cc_state *s = calloc(1, sizeof *s);
  if (!s)
    contend_fail("out of memory (congestion control)");
  s->nic = calloc((size_t)n->t->nnodes, sizeof *s->nic);
  if (!s->nic)
    contend_fail("out of memory (congestion control)");
  s->delay = sim_cc_delay(&n->cfg);
  n->cc = s;
  return 0;
}

void sim_cc_free(sim_net *n) {
  cc_state *s = CC(n);
  if (!s)
    return;
  for (int i = 0; i < n->t->nnodes; i++) {
    free(s->nic[i].f);
    free(s->nic[i].src);
    free(s->nic[i].seen);
  }
  free(s->nic);
  free(s->q);
  free(s);
  n->cc = NULL;
}

static flow *flow_of(nic_cc *x, int dst, sim_time now) {
  if (x->n * 2 >= x->cap) {
    const uint32_t cap = x->cap ? 2 * x->cap : 16;
    flow *f = malloc(sizeof *f * cap);
    if (!f)
      contend_fail("out of memory (congestion control flows)");
    for (uint32_t i = 0; i < cap; i++)
      f[i].dst = -1;
    for (uint32_t i = 0; i < x->cap; i++)
      if (x->f[i].dst >= 0) {
        uint32_t k = (uint32_t)x->f[i].dst * 2654435761u & (cap - 1);
        while (f[k].dst >= 0)
          k = (k + 1) & (cap - 1);
        f[k] = x->f[i];
      }
    free(x->f);
    x->f = f;
    x->cap = cap;
  }
  uint32_t k = (uint32_t)dst * 2654435761u & (x->cap - 1);
  while (x->f[k].dst >= 0 && x->f[k].dst != dst)
    k = (k + 1) & (x->cap - 1);
  if (x->f[k].dst < 0) {
    x->f[k] = (flow){.dst = dst, .rate = 1, .target = 1, .alpha = 1, .last_change = now};
    x->n++;
  }
  return &x->f[k];
}

/* Rate recovery for the periods elapsed since the last change. */
static void recover(const sim_net *n, flow *f, sim_time now) {
  const sim_time T = n->cfg.cc_period;
  if (f->rate >= 1.0 || !T)
    return;
  if (n->cfg.cc == SIM_CC_PERFLOW) {
    if (now < f->hold_until)
      return;
    while (f->rate < 1.0 && f->last_change + T <= now) {
      f->rate *= 2;
      f->last_change += T;
    }
  } else {
    const double g = n->cfg.cc_gain;
    while (f->rate < 1.0 && f->last_change + T <= now) {
      f->alpha *= 1 - g;
      if (++f->increases > 5)
        f->target = f->target + 0.05 < 1.0 ? f->target + 0.05 : 1.0;
      f->rate = (f->rate + f->target) / 2;
      f->last_change += T;
    }
  }
  if (f->rate > 1.0)
    f->rate = 1.0;
}

sim_time sim_cc_allowed(sim_net *n, int node, sim_msg *m) {
  flow *f = flow_of(&CC(n)->nic[node], (int)m->dst, n->des.now);
  recover(n, f, n->des.now);
  return f->next_ok;
}

void sim_cc_sent(sim_net *n, int node, sim_msg *m, sim_time s) {
  flow *f = flow_of(&CC(n)->nic[node], (int)m->dst, n->des.now);
  f->next_ok = n->des.now + (f->rate >= 1.0 ? 0 : (sim_time)((double)s / f->rate));
}

void sim_cc_departure(sim_net *n, sim_pkt *p, uint32_t occupied, uint32_t capacity, int to_nic) {
  (void)to_nic;
  if ((double)occupied >= n->cfg.ecn_threshold * capacity) {
    if (!(p->flags & PKT_ECN))
      n->stats.ecn_marks++;
    p->flags |= PKT_ECN;
  }
}

/* A note for source src, made by the delivery over channel c (its i-th):
 * it takes effect one notification delay from now, in src's part. */
static void notify(sim_net *n, uint32_t c, uint32_t i, int src, int dst, double rate) {
  cc_state *s = CC(n);
  const note x = {.t = n->des.now + s->delay, .c = c, .i = i, .src = src, .dst = dst, .rate = rate};
  n->stats.cc_notifications++;
  if (n->ps && sim_part_ship_note(n, &x))
    return;
  sim_cc_note_land(n, &x);
}

void sim_cc_note_land(sim_net *n, const sim_cc_note *x) {
  note_push(CC(n), x);
  sim_des_push(&n->des, x->t, EV_CC, 0);
}

/* Remembers that src sent to this destination now; drops stale sources. */
static void saw_source(nic_cc *x, int src, sim_time now, sim_time window) {
  uint32_t k = 0;
  for (uint32_t i = 0; i < x->nsrc; i++) {
    if (x->src[i] == src) {
      x->seen[i] = now;
      return;
    }
  }
  for (uint32_t i = 0; i < x->nsrc; i++)
    if (x->seen[i] + window >= now) {
      x->src[k] = x->src[i];
      x->seen[k++] = x->seen[i];
    }
  x->nsrc = k;
  if (x->nsrc == x->capsrc) {
    x->capsrc = x->capsrc ? 2 * x->capsrc : 8;
    x->src = realloc(x->src, sizeof *x->src * x->capsrc);
    x->seen = realloc(x->seen, sizeof *x->seen * x->capsrc);
    if (!x->src || !x->seen)
      contend_fail("out of memory (congestion control sources)");
  }
  x->src[x->nsrc] = src;
  x->seen[x->nsrc++] = now;
}

void sim_cc_delivered(sim_net *n, const sim_pkt *p, uint32_t c) {
  cc_state *s = CC(n);
  const sim_time now = n->des.now, T = n->cfg.cc_period;
  nic_cc *d = &s->nic[p->dst];
  if (n->cfg.cc == SIM_CC_PERFLOW) {
    const sim_time W = PERFLOW_SOURCE_PERIODS * T;
    saw_source(d, (int)p->src, now, W);
    if (now >= d->win_start + T) { /* close the utilization window */
      const double cap = n->cfg.gbps[SIM_LINK_NODE] / 8000.0 * (double)(now - d->win_start);
      d->util = cap > 0 ? (double)d->win_bytes / cap : 0;
      d->win_start = now;
      d->win_bytes = 0;
    }
    d->win_bytes += p->bytes;
    if (d->util < PERFLOW_BUSY || (d->last_notify && now < d->last_notify + T / 8))
      return;
    d->last_notify = now;
    uint32_t active = 0;
    for (uint32_t i = 0; i < d->nsrc; i++)
      active += d->seen[i] + W >= now;
    if (active < 2)
      return; /* one sender cannot congest its own destination */
    for (uint32_t i = 0, k = 0; i < d->nsrc; i++)
      if (d->seen[i] + W >= now)
        notify(n, c, k++, d->src[i], (int)p->dst, PERFLOW_SHARE / active);
    return;
  }
  if (!(p->flags & PKT_ECN))
    return;
  flow *f = flow_of(&s->nic[p->src], (int)p->dst, now); /* the CNP pacing is the NP's */
  if (f->last_cnp && now < f->last_cnp + T / 8)
    return;
  f->last_cnp = now;
  notify(n, c, 0, (int)p->src, (int)p->dst, -1);
}

void sim_cc_event(sim_net *n, uint32_t id) {
  (void)id;
  cc_state *s = CC(n);
  const note x = note_pop(s); /* the earliest: its time is now */
  const sim_time now = n->des.now;
  flow *f = flow_of(&s->nic[x.src], x.dst, now);
  if (x.rate >= 0) { /* perflow */
    recover(n, f, now);
    if (x.rate < f->rate)
      f->rate = x.rate;
    f->hold_until = now + n->cfg.cc_period;
    f->last_change = f->hold_until;
  } else { /* ecn: DCQCN reaction point */
    recover(n, f, now);
    const double g = n->cfg.cc_gain;
    f->target = f->rate;
    f->rate *= 1 - f->alpha / 2;
    if (f->rate < 0.001)
      f->rate = 0.001;
    f->alpha = (1 - g) * f->alpha + g;
    f->increases = 0;
    f->last_change = now;
  }
  sim_net_kick_nic(n, x.src, now);
}
