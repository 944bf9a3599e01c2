/* A part of the fabric simulated alone (net.h, "a part of the fabric"):
 * the packets and credits that cross to another part leave as records in
 * an outbox per part, and the records other parts sent come in through
 * sim_net_inbox.  A packet keeps its message's fields with it across
 * parts; at its destination the packets of one message meet again in an
 * assembly record keyed by where the message was made.
 *
 * Messages, by part (a message is made at its source NIC's part):
 * - its own part keeps it until delivered there (destination in the part:
 *   packets that leave come back with the message's own index) or until
 *   every packet has left (destination elsewhere: `got` counts them);
 * - another part holds a packet's copy (`flow` == GHOST_PACKET) while the
 *   packet is there; at the destination the copies fold into one assembly
 *   message (`flow` == GHOST_ASSEMBLY), delivered when every packet is in. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/outbox.h"
#include "net_impl.h"

#define GHOST_PACKET 0xfffffffeu
#define GHOST_ASSEMBLY 0xfffffffdu

enum { REC_PACKET = 1, REC_CREDIT = 2, REC_NOTE = 3 };

typedef struct rec_packet {
  uint32_t type, c;
  sim_pkt pk;
  uint32_t origin_part, origin_msg;
  uint32_t src, dst, npkts, kind;
  uint64_t bytes, cookie;
  sim_time t_post, t_first;
} rec_packet;

typedef struct rec_credit {
  uint32_t type, c, vc, bytes;
  sim_time t;
} rec_credit;

typedef struct rec_note {
  uint32_t type, pad;
  sim_cc_note x;
} rec_note;

/* assembly messages by (origin part, origin index, t_first): open addressing */
typedef struct slot {
  uint64_t a, b; /* origin part << 32 | index; t_first */
  uint32_t msg;  /* SIM_NIL: empty */
} slot;

struct sim_part_state {
  int32_t *src_part, *dst_part; /* per channel */
  contend_outbox out;           /* records for each part */
  slot *map;
  size_t map_cap, map_n;
};

void sim_net_partition(sim_net *n, const int *part_of_router, int parts, int me) {
  const sim_topo *t = n->t;
  struct sim_part_state *ps = sim_xcalloc(1, sizeof *ps, "partition");
  ps->src_part = sim_xcalloc(n->nchan, sizeof *ps->src_part, "partition");
  ps->dst_part = sim_xcalloc(n->nchan, sizeof *ps->dst_part, "partition");
  contend_outbox_init(&ps->out, parts, "simulator outboxes");
  for (int r = 0; r < t->nrouters; r++)
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      ps->src_part[gp] = part_of_router[r];
      ps->dst_part[gp] =
          t->peer[gp] >= 0 ? part_of_router[sim_port_router(t, t->peer[gp])] : part_of_router[r];
    }
  for (int node = 0; node < t->nnodes; node++)
    ps->src_part[t->nports + node] = ps->dst_part[t->nports + node] =
        part_of_router[t->node_router[node]];
  n->part_of_router = part_of_router;
  n->parts = parts;
  n->me = me;
  n->ps = ps;
}

void sim_net_partition_free(sim_net *n) {
  struct sim_part_state *ps = n->ps;
  if (!ps)
    return;
  contend_outbox_free(&ps->out);
  free(ps->src_part);
  free(ps->dst_part);
  free(ps->map);
  free(ps);
  n->ps = NULL;
}

int sim_net_owns_node(const sim_net *n, int node) {
  return !n->ps || n->part_of_router[n->t->node_router[node]] == n->me;
}

int sim_part_of_channel(const sim_net *n, uint32_t c) { return n->ps ? n->ps->src_part[c] : 0; }

const void *sim_net_outbox(const sim_net *n, int q, size_t *len) {
  if (!n->ps) {
    *len = 0;
    return NULL;
  }
  return contend_outbox_get(&n->ps->out, q, len);
}

void sim_net_outbox_clear(sim_net *n) {
  if (n->ps)
    contend_outbox_clear(&n->ps->out);
}

int sim_part_ship_packet(sim_net *n, uint32_t c, uint32_t p) {
  const int q = n->ps->dst_part[c];
  if (q == n->me)
    return 0;
  sim_pkt *pk = &n->pkt[p];
  const uint32_t mi = pk->msg;
  sim_msg *m = &n->msg[mi];
  rec_packet r = {.type = REC_PACKET,
                  .c = c,
                  .pk = *pk,
                  .src = m->src,
                  .dst = m->dst,
                  .npkts = m->npkts,
                  .kind = m->kind,
                  .bytes = m->bytes,
                  .cookie = m->cookie,
                  .t_post = m->t_post,
                  .t_first = m->t_first};
  if (m->flow == GHOST_PACKET) { /* passing through: its copy goes on with it */
    r.origin_part = (uint32_t)m->left;
    r.origin_msg = m->next;
    sim_msg_release(n, mi);
  } else { /* made here */
    r.origin_part = (uint32_t)n->me;
    r.origin_msg = mi;
    if (!sim_net_owns_node(n, (int)m->dst) && ++m->got == m->npkts && !m->left)
      sim_msg_release(n, mi); /* every packet has left; none comes back */
  }
  contend_outbox_put(&n->ps->out, q, &r, sizeof r);
  sim_pkt_release(n, p);
  return 1;
}

int sim_part_ship_credit(sim_net *n, uint32_t c, uint32_t vc, uint32_t bytes, sim_time t) {
  const int q = n->ps->src_part[c];
  if (q == n->me)
    return 0;
  const rec_credit r = {.type = REC_CREDIT, .c = c, .vc = vc, .bytes = bytes, .t = t};
  contend_outbox_put(&n->ps->out, q, &r, sizeof r);
  return 1;
}

int sim_part_ship_note(sim_net *n, const sim_cc_note *x) {
  const int q = n->part_of_router[n->t->node_router[x->src]];
  if (q == n->me)
    return 0;
  const rec_note r = {.type = REC_NOTE, .x = *x};
  contend_outbox_put(&n->ps->out, q, &r, sizeof r);
  return 1;
}

static size_t hash(uint64_t a, uint64_t b, size_t cap) {
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
  return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static slot *find(struct sim_part_state *ps, uint64_t a, uint64_t b) {
  size_t i = hash(a, b, ps->map_cap);
  while (ps->map[i].msg != SIM_NIL && !(ps->map[i].a == a && ps->map[i].b == b))
    i = (i + 1) & (ps->map_cap - 1);
  return &ps->map[i];
}

static void map_grow(struct sim_part_state *ps) {
  slot *old = ps->map;
  const size_t cap = ps->map_cap;
  ps->map_cap = cap ? 2 * cap : 1024;
  ps->map = malloc(sizeof *ps->map * ps->map_cap);
  if (!ps->map)
    contend_fail("out of memory (simulator message assembly)");
  for (size_t i = 0; i < ps->map_cap; i++)
    ps->map[i].msg = SIM_NIL;
  for (size_t i = 0; i < cap; i++)
    if (old[i].msg != SIM_NIL)
      *find(ps, old[i].a, old[i].b) = old[i];
  free(old);
}

/* Deletes the entry at s (backward-shift deletion of linear probing). */
static void map_erase(struct sim_part_state *ps, slot *s) {
  size_t i = (size_t)(s - ps->map);
  for (;;) {
    ps->map[i].msg = SIM_NIL;
    size_t j = i;
    for (;;) {
      j = (j + 1) & (ps->map_cap - 1);
      if (ps->map[j].msg == SIM_NIL)
        return;
      const size_t k = hash(ps->map[j].a, ps->map[j].b, ps->map_cap);
      /* j's entry may move to i unless its home k lies cyclically in (i, j] */
      if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
        continue;
      ps->map[i] = ps->map[j];
      i = j;
      break;
    }
  }
}

uint32_t sim_part_assemble(sim_net *n, uint32_t mi) {
  struct sim_part_state *ps = n->ps;
  sim_msg *m = &n->msg[mi];
  if (m->flow != GHOST_PACKET)
    return mi;
  if (2 * (ps->map_n + 1) > ps->map_cap)
    map_grow(ps);
  const uint64_t a = m->left << 32 | m->next, b = m->t_first;
  slot *s = find(ps, a, b);
  if (s->msg == SIM_NIL) { /* the first packet in: the packet's copy becomes the assembly */
    *s = (slot){a, b, mi};
    ps->map_n++;
    m->flow = GHOST_ASSEMBLY;
    m->got = 0;
    return mi;
  }
  sim_msg_release(n, mi);
  return s->msg;
}

void sim_part_delivered(sim_net *n, uint32_t mi) {
  sim_msg *m = &n->msg[mi];
  if (!n->ps || m->flow != GHOST_ASSEMBLY)
    return;
  map_erase(n->ps, find(n->ps, m->left << 32 | m->next, m->t_first));
  n->ps->map_n--;
}

void sim_net_inbox(sim_net *n, const void *buf, size_t len) {
  const char *at = buf, *end = at + len;
  while (at < end) {
    uint32_t type;
    memcpy(&type, at, sizeof type);
    if (type == REC_CREDIT) {
      rec_credit r;
      memcpy(&r, at, sizeof r);
      at += sizeof r;
      sim_credit_land(n, r.c, r.vc, r.bytes, r.t);
      continue;
    }
    if (type == REC_NOTE) {
      rec_note r;
      memcpy(&r, at, sizeof r);
      at += sizeof r;
      sim_cc_note_land(n, &r.x);
      continue;
    }
    rec_packet r;
    memcpy(&r, at, sizeof r);
    at += sizeof r;
    uint32_t mi;
    if (r.origin_part == (uint32_t)n->me && sim_net_owns_node(n, (int)r.dst)) {
      /* back where it was made, to be delivered here: the message is still there */
      mi = r.origin_msg;
    } else {
      mi = sim_msg_new(n, (int)r.src, (int)r.dst, r.bytes, r.kind, r.cookie);
      sim_msg *m = &n->msg[mi];
      m->npkts = r.npkts;
      m->t_post = r.t_post;
      m->t_first = r.t_first;
      m->flow = GHOST_PACKET;
      m->next = r.origin_msg;
      m->left = r.origin_part;
    }
    const uint32_t p = sim_pkt_take(n);
    n->pkt[p] = r.pk;
    n->pkt[p].msg = mi;
    sim_wire_append(n, r.c, p);
  }
}
