/* MPI semantics on the simulated fabric: the engine ops of a motif context
 * (contend_engine_ops) performed as messages on the fabric (net.h).
 *
 * - Two-sided: messages below eager_bytes go at once (eager); the send
 *   completes when its last packet has left the NIC.  From eager_bytes on,
 *   rendezvous: an RTS (header-only packet) goes first, the receiver
 *   answers with a CTS once a matching receive is posted, then the data
 *   goes; the send completes when the data has left, the receive when it
 *   has arrived.  Matching is MPI's: by (source, tag) in posting order,
 *   unexpected messages queued.
 * - Receiver-paced rendezvous (rndv_window_bytes, rndv_max_active; both 0
 *   by default: off): the receiver grants a rendezvous message's data one
 *   window at a time (a CTS per window, the next CTS when the window has
 *   landed, as PSM2's expected receives do) and lets at most
 *   rndv_max_active such messages in at once; the others wait for their
 *   first CTS in arrival order.  The receiver's back-pressure: an incast's
 *   senders take turns instead of flooding the fabric, and every window
 *   costs a round trip, and the receiver's host overhead (mpi_overhead_ns:
 *   PSM2's CTSs are the host's).  Messages between ranks of one node are
 *   exempt.
 * - One-sided: put = data, then an ack from the target's NIC when it has
 *   arrived; get = a request, then the target's NIC sends the data back.
 *   flush_all waits for every ack and get response.
 * - Collectives: expanded into point-to-point rounds (src/core/
 *   coll_expand.h, shared with the trace engine) on tags of their own.
 * - compute(s) lets s of simulated time pass; file I/O takes none (its
 *   volume is counted, nothing touches a disk, so files hold no data and
 *   the I/O motifs' content checks are skipped: files_hold_data = 0).
 * - Host overhead (mpi_overhead_ns, LogP's o): a rank's CPU spends o on
 *   every message it sends (isend, put, get request, collective step):
 *   the call returns o later (the rank sleeps), then the message enters
 *   the NIC; and o on every message whose data it receives (two-sided
 *   data, a get's response), charged when the data lands in the receive
 *   (or when the receive is posted, for a message that came first); a wait
 *   returns once the CPU is free.  The CPU handles one message at a time
 *   (cpu_free).  RTS, CTS, put data at the target and acks are the NIC's.
 * - Ranks on the same node exchange through memory: a message there takes
 *   intra_latency + bytes / intra_bandwidth and never enters the fabric.
 * - Payload moves only with --verify (buffers are copied at the MPI
 *   points where data is read and written); otherwise buffers keep what
 *   they held and cost no memory (lazily committed, see core/arena.h).
 * - Traffic accounting (count) counts what the fabric delivered: the
 *   payload of a message is added to the traffic attached when it was
 *   posted (the origin's), for its (source node, destination node), when
 *   it lands: eager and rendezvous data in the receive buffer, a put in
 *   the target window, a get response at the origin.  Steps of the
 *   collective expansion count as estimated pairs, as on the trace engine.
 *   Every message lands before its receiver (or origin) completes, so the
 *   traffic of an iteration is complete when every rank has left it.
 * Waiting (waitall, flush_all, a collective, compute) parks the rank's
 * fiber; the fabric's events wake it (engine_sim.c drives them). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../coop/fiber.h"
#include "../coop/sched.h"
#include "../core/arena.h"
#include "../core/coll_expand.h"
#include "../core/error.h"
#include "../core/keymap.h"
#include "../core/outbox.h"
#include "../core/vgrow.h"
#include "contend/strbuf.h"
#include "contend/traffic.h"
#include "sim_engine.h"

enum { K_EAGER, K_RTS, K_CTS, K_RDATA, K_PUT, K_PUT_ACK, K_GET_REQ, K_GET_RESP };

#define INTRA_LATENCY_PS 200000ull /* 200 ns */
#define INTRA_GBPS 160.0           /* 20 GB/s memory copy */
#define TAG_COLL (-1000000)        /* collective tags: below, one per call */

/* A message of the MPI layer (pool-allocated; the fabric message's cookie). */
typedef struct smsg {
  uint32_t next;
  uint8_t kind;
  uint8_t estimated; /* a step of a collective's expansion */
  uint8_t paced;     /* rendezvous under the receiver's pacing (counts in rndv_active) */
  uint8_t keyed;     /* between processes: known by `key`, traffic counted (sim_mpi_procs) */
  int tag;
  int src_rank, dst_rank;    /* group ranks */
  uint32_t sreq, rreq;       /* requests: the send (rendezvous) / the receive */
  sim_ctx *src;              /* the sender's (origin's) context; NULL: a copy (receiver's side) */
  contend_inproc_comm *comm; /* the group: the receiver's context is found at arrival */
  size_t bytes;
  void *data; /* --verify: the payload (owned), or NULL */
  union {
    contend_traffic *tr; /* attached at posting (not owned), or NULL */
    uint64_t key;        /* keyed: the message's name in both processes */
  };
  union {          /* a message is one-sided or two-sided */
    size_t offset; /* put/get: offset in the target window */
    size_t sent;   /* rendezvous data: bytes granted before this window */
  };
  size_t chunk; /* rendezvous data: bytes granted in this window (0: all) */
} smsg;
_Static_assert(sizeof(smsg) <= 88, "a simulated MPI message is at most 88 B (millions in flight)");

/* A posted receive or a rendezvous send waiting for its CTS. */
typedef struct sreq {
  uint32_t next;
  int peer, tag;
  union {
    void *buf;        /* a receive's (or get's) destination */
    const void *sbuf; /* a rendezvous send's source */
  };
  size_t bytes;
} sreq;
_Static_assert(sizeof(sreq) <= 32, "a simulated MPI request is at most 32 B");

/* One peer's matching queues at a context: receives posted for it and
 * its messages (eager data, RTS) that arrived unmatched, each in order.
 * Motifs name their source, so matching searches that peer's queues only
 * (an incast root holding thousands of unexpected messages from a hundred
 * senders stays O(1) per receive).  peer < 0: a free slot. */
typedef struct peerq {
  int peer;
  uint32_t ph, pt; /* posted receives (sreq) */
  uint32_t uh, ut; /* unexpected messages (smsg) */
} peerq;

struct sim_ctx {
  contend_ctx *c;
  contend_inproc_comm *comm;
  int wrank, node;
  contend_traffic *traffic;
  contend_arena mem;
  void *win;
  size_t win_bytes;
  int pend_send, pend_recv, pend_rma;
  int waiting;           /* parked on its pending counts */
  sim_time cpu_free;     /* host overhead: the CPU is busy until then */
  peerq *pq;             /* open addressing; an entry lives while a queue is */
  uint32_t pq_cap, pq_n; /* non-empty (power-of-2 capacity, entries) */
  long ncoll;            /* collectives called */
  int rndv_active;       /* paced rendezvous messages being received */
  uint32_t cts_h, cts_t; /* matched RTSs waiting for their first CTS (smsg list) */
  int nfiles;
};

/* A free-list pool of records whose first member is `uint32_t next`:
 * indices stay valid when the array grows (in its own mapping, vgrow.h). */
typedef struct pool {
  void *a;
  uint32_t n, cap, free;
  uint32_t used; /* records handed out and not put back */
} pool;

static uint32_t pool_get(pool *p, size_t size, const char *what) {
  p->used++;
  if (p->free != UINT32_MAX) {
    const uint32_t i = p->free;
    memcpy(&p->free, (char *)p->a + i * size, sizeof p->free);
    return i;
  }
  if (p->n == p->cap) {
    size_t cap = p->cap;
    p->a = contend_vgrow(p->a, &cap, (size_t)p->n + 1, size, what);
    p->cap = (uint32_t)cap;
  }
  return p->n++;
}

static void pool_put(pool *p, size_t size, uint32_t i) {
  memcpy((char *)p->a + i * size, &p->free, sizeof p->free);
  p->free = i;
  p->used--;
}

/* ---- over processes ----
 * Each process runs the ranks of its nodes (engine_sim.c).  A message to
 * a node of another process is keyed: its traffic counts when it is made
 * (the count an iteration ends with is the one where it lands), and at
 * every post its MPI fields go to the other process as a record, in the
 * window's swap, before its first packet can get there (the lookahead).
 * There a copy (src NULL) stands for it, found by key when its packets
 * land; the copy's replies (CTS, acks, get responses) come back keyed the
 * same, to the message itself.  The sender frees it when its data is out
 * of the NIC (two-sided) or its reply is in (one-sided); the copy goes
 * when its data has landed or its reply is out. */
#define KEY_BIT (1ull << 63)

typedef struct mrec {
  uint64_t key, comm, bytes, at, chunk; /* at: the offset or bytes granted before */
  int32_t tag, src_rank, dst_rank;
  uint8_t kind, estimated, paced, pad;
} mrec;

static struct {
  int procs, me;
  const int *proc_of_node;
  uint64_t seq;        /* keys made here */
  contend_keymap msgs; /* key -> the message here (its own or a copy) */
  contend_outbox out;  /* records for each process */
} X = {.procs = 1};

void sim_mpi_procs(int procs, int me, const int *proc_of_node) {
  contend_keymap_free(&X.msgs);
  contend_outbox_free(&X.out);
  X = (typeof(X)){.procs = 1};
  if (procs < 2)
    return;
  X.procs = procs;
  X.me = me;
  X.proc_of_node = proc_of_node;
  contend_outbox_init(&X.out, procs, "simulated MPI records");
}

static int elsewhere(int node) { return X.procs > 1 && X.proc_of_node[node] != X.me; }
static int src_node(const smsg *m) { return m->comm->node[m->src_rank]; }

static pool PM = {.free = UINT32_MAX}, PR = {.free = UINT32_MAX}; /* smsg, sreq */
#define MSG(i) (((smsg *)PM.a)[i])
#define REQ(i) (((sreq *)PR.a)[i])

static uint32_t smsg_new(void) { return pool_get(&PM, sizeof(smsg), "simulated MPI messages"); }

static void smsg_free(uint32_t i) {
  if (MSG(i).keyed) {
    uint64_t v;
    contend_keymap_take(&X.msgs, MSG(i).key, &v);
    MSG(i).keyed = 0;
  }
  free(MSG(i).data);
  MSG(i).data = NULL;
  pool_put(&PM, sizeof(smsg), i);
}

static uint32_t sreq_new(void) { return pool_get(&PR, sizeof(sreq), "simulated MPI requests"); }
static void sreq_free(uint32_t i) { pool_put(&PR, sizeof(sreq), i); }

static sim_ctx *S(contend_ctx *c) { return c->impl; }

/* ---- a message's timers, keyed independently of the process ----
 * A timer of message i (through memory on one node, or held for host
 * overhead) is set with the world rank that sets it and that rank's count
 * of timers (sim_engine.h: equal-time timers run in that order); this
 * table finds i again when it fires.  Open addressing on (rank, count),
 * backward-shift deletion; entries live while their timer is pending. */
_Static_assert(COOP_FIBERS_MAX <= (1L << SIM_T_RANK_BITS), "a world rank fits a timer's kind");

typedef struct tslot {
  uint64_t key; /* (rank << 32 | count) + 1; 0: empty */
  uint32_t msg;
} tslot;

static struct {
  tslot *s;
  uint32_t cap, n;
  uint32_t *count; /* per world rank: timers set */
  size_t ncount;
} TM;

static uint32_t tm_home(uint64_t key) {
  return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (TM.cap - 1);
}

static void tm_insert(uint64_t key, uint32_t msg) {
  uint32_t i = tm_home(key);
  while (TM.s[i].key)
    i = (i + 1) & (TM.cap - 1);
  TM.s[i] = (tslot){key, msg};
}

/* Sets message i's timer (kind SIM_T_LOCAL or SIM_T_POST) at t for wrank. */
static void msg_timer(sim_time t, uint32_t kind, int wrank, uint32_t i) {
  if ((size_t)wrank >= TM.ncount) {
    size_t n = TM.ncount ? TM.ncount : 64;
    while (n <= (size_t)wrank)
      n *= 2;
    uint32_t *c = realloc(TM.count, sizeof *c * n);
    if (!c)
      contend_fail("out of memory (simulated MPI timers)");
    memset(c + TM.ncount, 0, sizeof *c * (n - TM.ncount));
    TM.count = c;
    TM.ncount = n;
  }
  if (2 * (TM.n + 1) > TM.cap) {
    const uint32_t old = TM.cap;
    tslot *o = TM.s;
    TM.cap = old ? 2 * old : 256;
    TM.s = calloc(TM.cap, sizeof *TM.s);
    if (!TM.s)
      contend_fail("out of memory (simulated MPI timers)");
    for (uint32_t k = 0; k < old; k++)
      if (o[k].key)
        tm_insert(o[k].key, o[k].msg);
    free(o);
  }
  const uint32_t count = TM.count[wrank]++;
  tm_insert(((uint64_t)wrank << 32 | count) + 1, i);
  TM.n++;
  sim_net_timer(sim_engine_net(), t, kind | (uint32_t)wrank, count);
}

uint32_t sim_mpi_timer_msg(uint32_t kind, uint32_t count) {
  const uint64_t key = ((uint64_t)(kind & SIM_T_RANK_MASK) << 32 | count) + 1;
  const uint32_t mask = TM.cap - 1;
  uint32_t i = TM.cap ? tm_home(key) : 0;
  while (TM.cap && TM.s[i].key && TM.s[i].key != key)
    i = (i + 1) & mask;
  if (!TM.cap || TM.s[i].key != key)
    contend_fail("internal error: a simulated MPI timer with no message");
  const uint32_t msg = TM.s[i].msg;
  for (uint32_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    if (!TM.s[j].key)
      break;
    const uint32_t home = tm_home(TM.s[j].key);
    if (((j - home) & mask) >= ((j - i) & mask)) {
      TM.s[i] = TM.s[j];
      i = j;
    }
  }
  TM.s[i].key = 0;
  TM.n--;
  return msg;
}

/* ---- per-peer matching queues ---- */

static inline uint32_t pq_slot(const sim_ctx *x, int peer) {
  return ((uint32_t)peer * 2654435761u) & (x->pq_cap - 1);
}

/* peer's queues, or NULL when it has none. */
static peerq *pq_find(sim_ctx *x, int peer) {
  if (!x->pq_n)
    return NULL;
  for (uint32_t i = pq_slot(x, peer);; i = (i + 1) & (x->pq_cap - 1)) {
    if (x->pq[i].peer == peer)
      return &x->pq[i];
    if (x->pq[i].peer < 0)
      return NULL;
  }
}

/* peer's queues, created empty if needed (pointers from earlier calls
 * may move). */
static peerq *pq_get(sim_ctx *x, int peer) {
  peerq *e = pq_find(x, peer);
  if (e)
    return e;
  if (2 * (x->pq_n + 1) > x->pq_cap) {
    const uint32_t old = x->pq_cap;
    peerq *o = x->pq;
    x->pq_cap = old ? 2 * old : 16;
    x->pq = malloc(sizeof *x->pq * x->pq_cap);
    if (!x->pq)
      contend_fail("out of memory (simulated MPI matching queues)");
    for (uint32_t i = 0; i < x->pq_cap; i++)
      x->pq[i].peer = -1;
    for (uint32_t i = 0; i < old; i++)
      if (o[i].peer >= 0) {
        uint32_t j = pq_slot(x, o[i].peer);
        while (x->pq[j].peer >= 0)
          j = (j + 1) & (x->pq_cap - 1);
        x->pq[j] = o[i];
      }
    free(o);
  }
  uint32_t i = pq_slot(x, peer);
  while (x->pq[i].peer >= 0)
    i = (i + 1) & (x->pq_cap - 1);
  x->pq[i] = (peerq){peer, UINT32_MAX, UINT32_MAX, UINT32_MAX, UINT32_MAX};
  x->pq_n++;
  return &x->pq[i];
}

/* Drops e if both its queues are empty (backward-shift deletion, so
 * lookups never need tombstones). */
static void pq_tidy(sim_ctx *x, peerq *e) {
  if (e->ph != UINT32_MAX || e->uh != UINT32_MAX)
    return;
  const uint32_t mask = x->pq_cap - 1;
  uint32_t i = (uint32_t)(e - x->pq);
  for (uint32_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    if (x->pq[j].peer < 0)
      break;
    const uint32_t home = pq_slot(x, x->pq[j].peer);
    /* j's entry may fill the hole at i unless its home lies in (i, j] */
    if (((j - home) & mask) >= ((j - i) & mask)) {
      x->pq[i] = x->pq[j];
      i = j;
    }
  }
  x->pq[i].peer = -1;
  x->pq_n--;
}

/* The receiver's (target's) context.  Resolved when needed, not when
 * posted: a member that opened its context together with the sender may
 * not have run its own open yet when the sender's setup starts sending;
 * it has by the time anything arrives (the fabric runs only when every
 * rank is parked). */
static sim_ctx *dst_of(const smsg *m) {
  contend_ctx *c = m->comm->ctx[m->dst_rank];
  if (!c || !c->impl)
    contend_fail("simulated MPI: a message for group rank %d, which has no open context",
                 m->dst_rank);
  return c->impl;
}

/* Wakes x if it waits and everything it waits for is done, once its CPU
 * is free. */
static void wake_if_done(sim_ctx *x) {
  if (x->waiting && !x->pend_send && !x->pend_recv && !x->pend_rma) {
    x->waiting = 0;
    if (x->cpu_free > sim_net_now(sim_engine_net()))
      sim_engine_wake_at(x->wrank, x->cpu_free);
    else
      coop_wake(x->wrank);
  }
}
/* The CPU of x spends the host overhead on one message, from now or when
 * it is next free; returns when it is done. */
static sim_time cpu_spend(sim_ctx *x) {
  const sim_time now = sim_net_now(sim_engine_net());
  x->cpu_free = (x->cpu_free > now ? x->cpu_free : now) + sim_engine_overhead();
  return x->cpu_free;
}

/* Sends MPI message i now: on the fabric, or through memory on one node. */
static void post(uint32_t i) {
  smsg *m = &MSG(i);
  const int dnode = m->comm->node[m->dst_rank];
  const int back = m->kind == K_CTS || m->kind == K_PUT_ACK || m->kind == K_GET_RESP;
  const int from = back ? dnode : src_node(m), to = back ? src_node(m) : dnode;
  const int header_only =
      m->kind == K_RTS || m->kind == K_CTS || m->kind == K_PUT_ACK || m->kind == K_GET_REQ;
  const size_t bytes = header_only ? 0 : m->kind == K_RDATA && m->chunk ? m->chunk : m->bytes;
  if (from == to) {
    const sim_time t = sim_net_now(sim_engine_net()) + INTRA_LATENCY_PS +
                       (sim_time)((double)bytes * 8000.0 / INTRA_GBPS);
    msg_timer(t, SIM_T_LOCAL, m->comm->wrank[back ? m->dst_rank : m->src_rank], i);
    if (m->kind == K_EAGER || m->kind == K_RDATA) { /* copied out at once */
      m->src->pend_send--;
      wake_if_done(m->src);
    }
    return;
  }
  uint64_t cookie = i;
  if (m->keyed) { /* to another process: its fields go ahead of its packets */
    const mrec h = {.key = m->key,
                    .comm = m->comm->id,
                    .bytes = m->bytes,
                    .at = m->sent,
                    .chunk = m->chunk,
                    .tag = m->tag,
                    .src_rank = m->src_rank,
                    .dst_rank = m->dst_rank,
                    .kind = m->kind,
                    .estimated = m->estimated,
                    .paced = m->paced};
    contend_outbox_put(&X.out, X.proc_of_node[to], &h, sizeof h);
    cookie = m->key;
  }
  sim_msg_send(sim_engine_net(), sim_msg_new(sim_engine_net(), from, to, bytes, 0, cookie));
}

/* Message i, new from rank x (called by x's fiber): x first waits the
 * throttle's delay (--throttle), then the call takes the host overhead
 * of x's CPU (x sleeps until it is spent), then i goes. */
static void post_from(sim_ctx *x, uint32_t i) {
  const sim_time hold = sim_engine_throttle_delay(x->node, MSG(i).bytes);
  if (hold)
    sim_engine_sleep_until(sim_net_now(sim_engine_net()) + hold, "throttle delay (simulated)");
  if (sim_engine_overhead()) {
    const sim_time t = cpu_spend(x);
    if (t > sim_net_now(sim_engine_net()))
      sim_engine_sleep_until(t, "MPI send overhead (simulated)");
  }
  post(i);
}
/* Message m's payload has landed: it counts from `from` to `to` (group
 * ranks) in the traffic attached when it was posted. */
static void delivered(const smsg *m, int from_rank, int to_rank) {
  if (m->keyed || !m->tr) /* keyed: counted when it was made */
    return;
  const int *node = m->comm->node;
  contend_flow_add(m->estimated ? &m->tr->estimated : &m->tr->flows, node[from_rank], node[to_rank],
                   (double)m->bytes, 1);
}

/* Message i of this process goes to another's node (from_rank's data to
 * to_rank): counted now, and keyed. */
static void key_home(uint32_t i, int from_rank, int to_rank) {
  smsg *m = &MSG(i);
  delivered(m, from_rank, to_rank);
  m->key = KEY_BIT | (uint64_t)X.me << 40 | ++X.seq;
  m->keyed = 1;
  contend_keymap_put(&X.msgs, m->key, i, "simulated MPI messages");
}

static void *copy_of(const void *buf, size_t n) {
  if (!sim_engine_verify() || !buf || !n)
    return NULL;
  void *d = malloc(n);
  if (!d)
    contend_fail("out of memory (--verify payload of %zu B)", n);
  memcpy(d, buf, n);
  return d;
}

/* ---- two-sided ---- */

static void do_isend(sim_ctx *x, const void *buf, size_t n, int peer, int tag, int estimated) {
  if (peer < 0 || peer >= x->comm->size)
    contend_fail("isend to rank %d of a group of %d", peer, x->comm->size);
  const uint32_t i = smsg_new();
  smsg *m = &MSG(i);
  *m = (smsg){.tag = tag,
              .src_rank = x->c->rank,
              .dst_rank = peer,
              .src = x,
              .comm = x->comm,
              .bytes = n,
              .sreq = UINT32_MAX,
              .rreq = UINT32_MAX,
              .tr = x->traffic,
              .estimated = (uint8_t)estimated};
  x->pend_send++;
  if (n < sim_engine_eager()) {
    m->kind = K_EAGER;
    m->data = copy_of(buf, n);
  } else {
    m->kind = K_RTS;
    const uint32_t r = sreq_new();
    REQ(r) = (sreq){.next = UINT32_MAX, .peer = peer, .tag = tag, .sbuf = buf, .bytes = n};
    m->sreq = r;
  }
  if (elsewhere(x->comm->node[peer]))
    key_home(i, x->c->rank, peer);
  post_from(x, i);
}

/* Data of message m lands in receive r (its buffer); r is done. */
static void land(sim_ctx *x, const smsg *m, uint32_t r) {
  sreq *q = &REQ(r);
  if (m->bytes > q->bytes)
    contend_fail("message of %zu B from rank %d (tag %d) truncated: receive of %zu B", m->bytes,
                 m->src_rank, m->tag, q->bytes);
  if (m->data && q->buf)
    memcpy(q->buf, m->data, m->bytes);
  delivered(m, m->src_rank, m->dst_rank);
  sreq_free(r);
  x->pend_recv--;
  if (sim_engine_overhead())
    cpu_spend(x);
  wake_if_done(x);
}

static void append(const pool *p, size_t size, uint32_t *h, uint32_t *t, uint32_t i);

/* The receiver grants rendezvous message i its next window of data: a
 * CTS (the whole rest when the message is not paced or no window is set). */
static void grant(uint32_t i) {
  smsg *m = &MSG(i);
  const uint64_t w = sim_engine_rndv_window();
  const size_t left = m->bytes - m->sent;
  m->chunk = m->paced && w && w < left ? (size_t)w : left;
  m->kind = K_CTS;
  if (m->paced && sim_engine_overhead()) { /* the receiver's host issues it */
    sim_ctx *x = dst_of(m);
    const sim_time t = cpu_spend(x);
    if (t > sim_net_now(sim_engine_net())) {
      msg_timer(t, SIM_T_POST, x->wrank, i);
      return;
    }
  }
  post(i);
}

void sim_mpi_post_later(uint32_t i) { post(i); }

/* Receiver x answers an RTS (message i, matched by receive r): at once,
 * or after the paced messages it already lets in (rndv_max_active). */
static void send_cts(sim_ctx *x, uint32_t i, uint32_t r) {
  smsg *m = &MSG(i);
  const int max = sim_engine_rndv_max_active();
  m->rreq = r;
  m->paced = (sim_engine_rndv_window() || max) && m->comm->node[m->dst_rank] != src_node(m);
  if (m->paced && max && x->rndv_active >= max) {
    append(&PM, sizeof(smsg), &x->cts_h, &x->cts_t, i);
    return;
  }
  x->rndv_active += m->paced;
  grant(i);
}

/* A paced message has landed at x: the next waiting one gets its CTS. */
static void paced_done(sim_ctx *x) {
  x->rndv_active--;
  const uint32_t j = x->cts_h;
  if (j == UINT32_MAX)
    return;
  x->cts_h = MSG(j).next;
  if (x->cts_h == UINT32_MAX)
    x->cts_t = UINT32_MAX;
  x->rndv_active++;
  grant(j);
}

/* Message i meets receive r: eager data lands, an RTS gets its CTS. */
static void match(sim_ctx *x, uint32_t i, uint32_t r) {
  if (MSG(i).kind == K_EAGER) {
    land(x, &MSG(i), r);
    smsg_free(i);
  } else {
    send_cts(x, i, r);
  }
}

/* Matching queues are lists of pool records (smsg or sreq, both starting
 * with `uint32_t next`) with their tag at tag_off. */
static uint32_t *next_of(const pool *p, size_t size, uint32_t i) {
  return (uint32_t *)((char *)p->a + (size_t)i * size);
}

/* Unlinks and returns the first record of list (*h, *t) whose tag is tag,
 * or UINT32_MAX. */
static uint32_t take(const pool *p, size_t size, size_t tag_off, uint32_t *h, uint32_t *t,
                     int tag) {
  for (uint32_t prev = UINT32_MAX, i = *h; i != UINT32_MAX; prev = i, i = *next_of(p, size, i)) {
    int rtag;
    memcpy(&rtag, (char *)next_of(p, size, i) + tag_off, sizeof rtag);
    if (rtag != tag)
      continue;
    const uint32_t next = *next_of(p, size, i);
    if (prev == UINT32_MAX)
      *h = next;
    else
      *next_of(p, size, prev) = next;
    if (*t == i)
      *t = prev;
    return i;
  }
  return UINT32_MAX;
}

static void append(const pool *p, size_t size, uint32_t *h, uint32_t *t, uint32_t i) {
  *next_of(p, size, i) = UINT32_MAX;
  if (*t == UINT32_MAX)
    *h = i;
  else
    *next_of(p, size, *t) = i;
  *t = i;
}

static void do_irecv(sim_ctx *x, void *buf, size_t n, int peer, int tag) {
  if (peer < 0 || peer >= x->comm->size)
    contend_fail("irecv from rank %d of a group of %d", peer, x->comm->size);
  const uint32_t r = sreq_new();
  REQ(r) = (sreq){.next = UINT32_MAX, .peer = peer, .tag = tag, .buf = buf, .bytes = n};
  x->pend_recv++;
  peerq *e = pq_find(x, peer);
  const uint32_t i =
      e ? take(&PM, sizeof(smsg), offsetof(smsg, tag), &e->uh, &e->ut, tag) : UINT32_MAX;
  if (i != UINT32_MAX) {
    pq_tidy(x, e);
    match(x, i, r);
    return;
  }
  e = pq_get(x, peer);
  append(&PR, sizeof(sreq), &e->ph, &e->pt, r);
}

/* Eager data or an RTS arrived at x: match a posted receive or queue it. */
static void arrive_two_sided(sim_ctx *x, uint32_t i) {
  const int src = MSG(i).src_rank;
  peerq *e = pq_find(x, src);
  const uint32_t r =
      e ? take(&PR, sizeof(sreq), offsetof(sreq, tag), &e->ph, &e->pt, MSG(i).tag) : UINT32_MAX;
  if (r != UINT32_MAX) {
    pq_tidy(x, e);
    match(x, i, r);
    return;
  }
  e = pq_get(x, src);
  append(&PM, sizeof(smsg), &e->uh, &e->ut, i);
}

/* ---- fabric callbacks (engine_sim.c routes them here) ---- */

void sim_mpi_arrived(uint32_t i) {
  smsg *m = &MSG(i);
  switch (m->kind) {
  case K_EAGER:
  case K_RTS:
    arrive_two_sided(dst_of(m), i);
    break;
  case K_CTS: /* at the sender: the granted data goes (the payload is taken at the first) */
    if (m->sreq != UINT32_MAX) {
      m->data = copy_of(REQ(m->sreq).sbuf, m->bytes);
      sreq_free(m->sreq);
      m->sreq = UINT32_MAX;
    }
    m->kind = K_RDATA;
    post(i);
    break;
  case K_RDATA: { /* a window, or the whole data, at the receiver */
    sim_ctx *x = dst_of(m);
    m->sent += m->chunk;
    if (m->sent < m->bytes) {
      grant(i);
      break;
    }
    const int paced = m->paced;
    land(x, m, m->rreq);
    smsg_free(i);
    if (paced)
      paced_done(x);
    break;
  }
  case K_PUT: /* at the target: written, acknowledged */
    if (m->data && dst_of(m)->win)
      memcpy((char *)dst_of(m)->win + m->offset, m->data, m->bytes);
    delivered(m, m->src_rank, m->dst_rank);
    free(m->data);
    m->data = NULL;
    m->kind = K_PUT_ACK;
    post(i);
    if (!m->src) /* a copy: its part is done */
      smsg_free(i);
    break;
  case K_PUT_ACK:
  case K_GET_RESP: {
    sim_ctx *x = m->src;
    if (m->kind == K_GET_RESP && m->data && REQ(m->rreq).buf)
      memcpy(REQ(m->rreq).buf, m->data, m->bytes);
    if (m->kind == K_GET_RESP) {
      delivered(m, m->dst_rank, m->src_rank); /* data flows from the target */
      sreq_free(m->rreq);
      if (sim_engine_overhead())
        cpu_spend(x);
    }
    smsg_free(i);
    x->pend_rma--;
    wake_if_done(x);
    break;
  }
  case K_GET_REQ: /* at the target: its NIC answers */
    m->data = dst_of(m)->win ? copy_of((char *)dst_of(m)->win + m->offset, m->bytes) : NULL;
    m->kind = K_GET_RESP;
    post(i);
    if (!m->src)
      smsg_free(i);
    break;
  }
}

void sim_mpi_injected(uint32_t i, sim_time t) {
  smsg *m = &MSG(i);
  if (m->kind == K_EAGER || (m->kind == K_RDATA && m->sent + m->chunk >= m->bytes)) {
    sim_ctx *x = m->src; /* the send completes with its last window */
    if (--x->pend_send == 0 && !x->pend_recv && !x->pend_rma && x->waiting) {
      x->waiting = 0;
      sim_engine_wake_at(x->wrank, t > x->cpu_free ? t : x->cpu_free); /* out of the NIC at t */
    }
    if (m->keyed) /* its copy in the receiver's process lives on */
      smsg_free(i);
  }
}

/* The message a fabric message's cookie names (an index, or a key), or
 * UINT32_MAX when it is gone (a copy whose reply is out). */
static uint32_t resolve(uint64_t cookie) {
  uint64_t v;
  if (!(cookie & KEY_BIT))
    return (uint32_t)cookie;
  return contend_keymap_get(&X.msgs, cookie, &v) ? (uint32_t)v : UINT32_MAX;
}

void sim_mpi_delivered(uint64_t cookie) {
  const uint32_t i = resolve(cookie);
  if (i == UINT32_MAX)
    contend_fail("internal error: simulated MPI message %#llx landed after it was freed",
                 (unsigned long long)cookie);
  sim_mpi_arrived(i);
}

void sim_mpi_injected_cookie(uint64_t cookie, sim_time t) {
  const uint32_t i = resolve(cookie);
  if (i != UINT32_MAX)
    sim_mpi_injected(i, t);
}

const void *sim_mpi_outbox(int q, size_t *len) { return contend_outbox_get(&X.out, q, len); }

void sim_mpi_outbox_clear(void) { contend_outbox_clear(&X.out); }

void sim_mpi_inbox(const void *buf, size_t len) {
  if (len % sizeof(mrec))
    contend_fail("internal error: simulated MPI records of %zu B", len);
  for (size_t at = 0; at < len; at += sizeof(mrec)) {
    mrec h;
    memcpy(&h, (const char *)buf + at, sizeof h);
    uint64_t v;
    if (contend_keymap_get(&X.msgs, h.key, &v)) { /* its next step: a reply, or data granted */
      smsg *m = &MSG(v);
      m->kind = h.kind;
      m->sent = h.at;
      m->chunk = h.chunk;
      m->paced = h.paced;
      continue;
    }
    if ((int)(h.key >> 40 & 0x7fffff) == X.me)
      contend_fail("internal error: a reply to simulated MPI message %#llx, which is gone",
                   (unsigned long long)h.key);
    contend_inproc_comm *cm = contend_inproc_comm_find(h.comm);
    if (!cm)
      contend_fail("internal error: a simulated MPI message for a group with no member here");
    const uint32_t j = smsg_new();
    MSG(j) = (smsg){.kind = h.kind,
                    .estimated = h.estimated,
                    .paced = h.paced,
                    .keyed = 1,
                    .tag = h.tag,
                    .src_rank = h.src_rank,
                    .dst_rank = h.dst_rank,
                    .sreq = UINT32_MAX,
                    .rreq = UINT32_MAX,
                    .src = NULL,
                    .comm = cm,
                    .bytes = h.bytes,
                    .sent = h.at,
                    .chunk = h.chunk,
                    .key = h.key};
    contend_keymap_put(&X.msgs, h.key, j, "simulated MPI messages");
  }
}

/* ---- engine ops ---- */

static void *s_alloc(contend_ctx *c, size_t n) { return contend_arena_alloc(&S(c)->mem, n); }

static void *s_win_alloc(contend_ctx *c, size_t n) {
  sim_ctx *x = S(c);
  if (x->win)
    contend_fail("win_alloc: one window per context");
  x->win = contend_arena_alloc(&x->mem, n);
  x->win_bytes = n;
  return x->win;
}

static void s_isend(contend_ctx *c, const void *b, size_t n, int peer, int tag) {
  do_isend(S(c), b, n, peer, tag, 0);
}

static void s_irecv(contend_ctx *c, void *b, size_t n, int peer, int tag) {
  do_irecv(S(c), b, n, peer, tag);
}

static void park_until_done(sim_ctx *x, const char *why) {
  while (x->pend_send || x->pend_recv || x->pend_rma) {
    x->waiting = 1;
    coop_park(why);
  }
}

/* A wait returns when the CPU has spent the overheads it owes (data that
 * landed while the rank was busy): the rank's clock never runs ahead of
 * its CPU. */
static void cpu_catch_up(sim_ctx *x) {
  if (x->cpu_free > sim_net_now(sim_engine_net()))
    sim_engine_sleep_until(x->cpu_free, "MPI receive overhead (simulated)");
}

static void s_waitall(contend_ctx *c) {
  sim_ctx *x = S(c);
  while (x->pend_send || x->pend_recv) {
    x->waiting = 1;
    coop_park("waitall (simulated MPI)");
  }
  cpu_catch_up(x);
}

static void s_exchange(contend_ctx *c, const contend_xfer *t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i].send)
      s_isend(c, t[i].buf, t[i].bytes, t[i].peer, t[i].tag);
    else
      s_irecv(c, t[i].buf, t[i].bytes, t[i].peer, t[i].tag);
  s_waitall(c);
}

static void s_repeat(contend_ctx *c, const contend_xfer *t, const int *len, int nsteps,
                     long times) {
  for (long r = 0; r < times; r++)
    for (int k = 0, at = 0; k < nsteps; at += len[k], k++)
      s_exchange(c, t + at, len[k]);
}

/* A one-sided message of rank x to peer (put data or a get request),
 * counted as pending until its ack or response. */
static uint32_t rma_msg(sim_ctx *x, int kind, int peer, size_t n, size_t off, uint32_t rreq) {
  const uint32_t i = smsg_new();
  MSG(i) = (smsg){.kind = (uint8_t)kind,
                  .src_rank = x->c->rank,
                  .dst_rank = peer,
                  .src = x,
                  .comm = x->comm,
                  .bytes = n,
                  .offset = off,
                  .sreq = UINT32_MAX,
                  .rreq = rreq,
                  .tr = x->traffic};
  x->pend_rma++;
  if (elsewhere(x->comm->node[peer])) /* a get's data flows from the target */
    key_home(i, kind == K_GET_REQ ? peer : x->c->rank, kind == K_GET_REQ ? x->c->rank : peer);
  return i;
}

static void s_put(contend_ctx *c, const void *b, size_t n, int peer, size_t off) {
  sim_ctx *x = S(c);
  const uint32_t i = rma_msg(x, K_PUT, peer, n, off, UINT32_MAX);
  MSG(i).data = copy_of(b, n);
  post_from(x, i);
}

static void s_get(contend_ctx *c, void *b, size_t n, int peer, size_t off) {
  sim_ctx *x = S(c);
  const uint32_t r = sreq_new();
  REQ(r) = (sreq){.next = UINT32_MAX, .peer = peer, .buf = b, .bytes = n};
  post_from(x, rma_msg(x, K_GET_REQ, peer, n, off, r));
}

static void s_flush_all(contend_ctx *c) {
  sim_ctx *x = S(c);
  while (x->pend_rma) {
    x->waiting = 1;
    coop_park("flush (simulated MPI)");
  }
  cpu_catch_up(x);
}

/* One collective as point-to-point rounds, on a tag of its own. */
static void coll(contend_ctx *c, contend_coll_kind k, size_t bytes) {
  sim_ctx *x = S(c);
  const int tag = TAG_COLL - (int)(x->ncoll++ % 1000000);
  const int rounds = contend_coll_rounds(k, c->size);
  for (int i = 0; i < rounds; i++) {
    int to, from;
    contend_coll_round(k, c->rank, c->size, i, &to, &from);
    if (from >= 0)
      do_irecv(x, NULL, bytes, from, tag);
    if (to >= 0)
      do_isend(x, NULL, bytes, to, tag, 1);
    s_waitall(c);
  }
}

static void s_barrier(contend_ctx *c) {
  contend_traffic_coll(S(c)->traffic, CONTEND_COLL_BARRIER, 0);
  coll(c, CONTEND_COLL_BARRIER, 0);
}

/* Results are not computed (as on the trace engine): receive buffers keep
 * what they held. */
static void s_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op op) {
  (void)s, (void)r, (void)op;
  const size_t bytes = contend_dtype_bytes(dt) * (size_t)count;
  contend_traffic_coll(S(c)->traffic, CONTEND_COLL_ALLREDUCE, (double)bytes);
  coll(c, CONTEND_COLL_ALLREDUCE, bytes);
}

static void s_alltoall(contend_ctx *c, const void *s, void *r, size_t per) {
  (void)s, (void)r;
  contend_traffic_coll(S(c)->traffic, CONTEND_COLL_ALLTOALL, (double)per * (c->size - 1));
  coll(c, CONTEND_COLL_ALLTOALL, per);
}

static void s_compute(contend_ctx *c, double sec) {
  sim_ctx *x = S(c);
  if (x->traffic)
    x->traffic->compute_s += sec;
  if (sec > 0)
    sim_engine_sleep(sec, "compute (simulated time)");
}

static int s_file_open(contend_ctx *c, const contend_io_spec *s) {
  (void)s;
  return S(c)->nfiles++;
}
static void s_file_write_at(contend_ctx *c, int fh, const void *b, size_t n,
                            unsigned long long off) {
  (void)fh, (void)b, (void)off;
  contend_traffic *t = S(c)->traffic;
  if (t) {
    t->io_write_bytes += (double)n;
    t->io_write_ops += 1;
  }
}
static void s_file_read_at(contend_ctx *c, int fh, void *b, size_t n, unsigned long long off) {
  (void)fh, (void)b, (void)off;
  contend_traffic *t = S(c)->traffic;
  if (t) {
    t->io_read_bytes += (double)n;
    t->io_read_ops += 1;
  }
}
static void s_file_fh(contend_ctx *c, int fh) { (void)c, (void)fh; }
static void s_file_remove(contend_ctx *c, const contend_io_spec *s) { (void)c, (void)s; }
static void s_count(contend_ctx *c, contend_traffic *t) { S(c)->traffic = t; }

static const contend_engine_ops sim_ops = {
    .name = "sim",
    .alloc = s_alloc,
    .win_alloc = s_win_alloc,
    .isend = s_isend,
    .irecv = s_irecv,
    .exchange = s_exchange,
    .repeat = s_repeat,
    .waitall = s_waitall,
    .put = s_put,
    .get = s_get,
    .flush_all = s_flush_all,
    .barrier = s_barrier,
    .allreduce = s_allreduce,
    .alltoall = s_alltoall,
    .compute = s_compute,
    .file_open = s_file_open,
    .file_write_at = s_file_write_at,
    .file_read_at = s_file_read_at,
    .file_sync = s_file_fh,
    .file_close = s_file_fh,
    .file_remove = s_file_remove,
    .count = s_count,
};

int sim_mpi_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p, int rank,
                     contend_inproc_comm *comm, uint64_t seed, const contend_ctx *job) {
  sim_ctx *x = calloc(1, sizeof *x);
  if (!x)
    contend_fail("out of memory (simulated context)");
  contend_ctx_init(c, m, p, rank, comm->size, comm->node, seed, job);
  x->c = c;
  x->comm = comm;
  x->wrank = comm->wrank[rank];
  x->node = comm->node[rank];
  x->cts_h = x->cts_t = UINT32_MAX;
  sim_engine_bind_node(x->node, c->job_name);
  c->ops = &sim_ops;
  c->impl = x;
  return m->setup ? m->setup(c) : 0;
}

/* Collective over the group (the window), as MPI_Win_free: a member
 * finishes what it started, then waits until every member has done the
 * same (a control-plane barrier: it returns the control latency after the
 * last member's close), so that nothing in flight still targets a member
 * that closed (a passive target of a get, whose origin is still waiting
 * for it). */
void sim_mpi_ctx_close(contend_ctx *c) {
  sim_ctx *x = c->impl;
  if (!x)
    return;
  park_until_done(x, "closing a context (simulated MPI)");
  contend_inproc_comm_close_wait(x->comm, c->rank);
  contend_arena_release(&x->mem);
  contend_ctx_free_state(c);
  c->impl = NULL;
  c->node_of = NULL;
  x->comm->ctx[c->rank] = NULL;
  contend_inproc_comm_release(x->comm);
  free(x->pq);
  free(x);
  /* nothing in flight: the pools go back (their size is the busiest
   * moment's, per rank; the results' reduction comes after the last
   * test and would otherwise stack on them) */
  if (!PM.used && !PR.used)
    sim_mpi_reset();
}

void sim_mpi_reset(void) {
  /* payloads of messages still in flight went with an aborted run */
  contend_vgrow_free(PM.a, PM.cap, sizeof(smsg));
  contend_vgrow_free(PR.a, PR.cap, sizeof(sreq));
  PM = PR = (pool){.free = UINT32_MAX};
  free(TM.s);
  free(TM.count);
  memset(&TM, 0, sizeof TM);
}
