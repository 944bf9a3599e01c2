/* The in-process engines' control plane (contend/inproc.h): every rank of
 * nodes x ranks_per_node is a fiber of this process (src/coop/), rank r on
 * node r / ranks_per_node; the backend's motif contexts record traffic
 * (the trace engine, dry runs) or move it on the simulated fabric.  Over
 * processes (contend_inproc_launch_procs: the simulator spread by mpirun),
 * a process runs the fibers of its nodes' ranks and keeps a replica of
 * every group with a member here; the members' calls travel between the
 * replicas as records ("over processes" below).
 *
 * Control collectives are rendezvous on an object shared by the members
 * of a group: each member deposits a pointer to its arguments (they live
 * on its stack, which stays put while it is parked) and parks; the last to
 * arrive computes the result straight into every member's buffers and
 * wakes them.  A collective is therefore complete before anyone returns
 * from it, so successive collectives cannot mix; each is numbered (the
 * group's generation counter) and its kind checked, so ranks calling
 * different collectives in the same slot end the run with a message
 * rather than a wrong answer.  Memory per collective: one pointer per
 * member, freed when it completes (allgather, as its contract asks, also
 * copies size x bytes into every member: quadratic in the group size).
 *
 * Time: the backend's.  The trace engine models none (every clock stays
 * at 0.0, the watchdog does nothing, a dry run takes no timed samples);
 * the simulator's clock is simulated time, and a control collective
 * completes the backend's control latency after its last member arrives
 * (every member returns then; a signal is seen that long after its last
 * post; contend/inproc.h says why).  Deadlocks (every rank parked) end the
 * run with exit status 3 and the parked ranks' collectives named (src/coop/sched.h). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../coop/sched.h"
#include "../core/error.h"
#include "../core/proc.h"
#include "contend/inproc.h"
#include "contend/traffic.h"
#include "contend/world.h"
#include "inproc_impl.h"

/* ---- groups ---- */

const char *const inproc_coll_names[C_N] = {"barrier",   "allreduce", "reduce", "bcast",   "gather",
                                            "allgather", "gatherv",   "split",  "ctx_open"};

/* One member's handle: what the contend_group it was given points to. */
typedef struct thandle {
  contend_group g; /* g.impl = this */
  tshared *s;
  unsigned long nsig; /* signals this member posted on the group */
  int world;          /* the engine's: freed when the rank's body returns */
} thandle;

static struct {
  int nodes, ppn, n;
  int *node_of_rank; /* shared by every rank's contend_nodes */
  const contend_inproc_backend *b;
} W;

static contend_world_ops inproc_world_ops;

/* The backend's clock and control latency (contend/inproc.h); 0 without. */
static unsigned long long ticks(void) { return W.b->ticks ? W.b->ticks() : 0; }
static unsigned long long control_delay(void) {
  return W.b->control_delay ? W.b->control_delay() : 0;
}

void *inproc_xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    contend_fail("out of memory (trace engine, %zu B)", n);
  return p;
}

static tshared *shared_new(int size) {
  tshared *s = calloc(1, sizeof *s);
  if (!s)
    contend_fail("out of memory (trace engine group)");
  s->size = size;
  s->local = s->handles = size;
  s->wrank = inproc_xmalloc(sizeof *s->wrank * (size_t)size);
  return s;
}

static void shared_free(tshared *s) {
  inproc_unplaced(s);
  free(s->procs);
  free(s->wrank);
  free(s);
}

static thandle *handle_new(tshared *s, int rank) {
  thandle *h = calloc(1, sizeof *h);
  if (!h)
    contend_fail("out of memory (trace engine group)");
  h->g = (contend_group){
      .ops = &inproc_world_ops, .rank = rank, .size = s->size, .now = W.b->now, .impl = h};
  h->s = s;
  return h;
}

/* Drops one member's handle; the last one frees the group.  Signals still
 * incomplete stay with whoever holds them. */
static void handle_release(thandle *h, const char *what) {
  tshared *s = h->s;
  if (s->open)
    contend_fail("%s while %d of the %d ranks of the group wait in %s #%lu (collective calls in "
                 "a different order on different ranks?)",
                 what, s->open->arrived, s->size, inproc_coll_names[s->open->kind], s->open->gen);
  free(h);
  if (--s->handles == 0) {
    for (struct contend_signal *x = s->sigs, *next; x; x = next) {
      next = x->next;
      x->next = NULL;
    }
    shared_free(s);
  }
}

static thandle *H(contend_group *g) { return g->impl; }

/* ---- the rendezvous ---- */

/* Appends the decimal digits of v at *at (bounded by end). */
static void put_num(char **at, char *end, unsigned long v) {
  char d[24];
  int n = 0;
  do
    d[n++] = (char)('0' + v % 10);
  while ((v /= 10) && n < (int)sizeof d);
  while (n && *at < end)
    *(*at)++ = d[--n];
}

/* "<what> #<gen> on a group of <size>" into buf (len >= 1): what a parked
 * member waits on.  Not printf: the member formatting it is deep in its
 * stack, where printf's 2 KiB of frames would take one more page of it
 * for every in-process rank. */
static void why_of(char *buf, size_t len, const char *what, unsigned long gen, int size) {
  char *at = buf, *end = buf + len - 1;
  for (const char *w = what; *w && at < end; w++)
    *at++ = *w;
  for (const char *w = " #"; *w && at < end; w++)
    *at++ = *w;
  put_num(&at, end, gen);
  for (const char *w = " on a group of "; *w && at < end; w++)
    *at++ = *w;
  put_num(&at, end, (unsigned long)size);
  *at = 0;
}

static void complete(tshared *s, round *r);

#define CONTROL_WAIT "a collective's completion (control latency)"

round *inproc_round_new(tshared *s, coll_kind k) {
  round *r = calloc(1, sizeof *r + sizeof(member *) * (size_t)s->size);
  if (!r)
    contend_fail("out of memory (trace engine collective over %d ranks)", s->size);
  r->kind = k;
  r->gen = s->ncoll++;
  why_of(r->why, sizeof r->why, inproc_coll_names[k], r->gen, s->size);
  s->open = r;
  return r;
}

/* Every member is in: the outputs of the members here are written, and
 * they return the control latency after the last arrival. */
static void finish(tshared *s, round *r) {
  complete(s, r);
  const unsigned long long d = control_delay(), until = r->tlast + d;
  for (int i = 0; i < s->size; i++) {
    member *m = r->m[i];
    if (m->remote) {
      free(m);
      continue;
    }
    m->done = 1;
    m->until = until;
    if (d) /* every member, this one too, returns D later (in time order, by world rank) */
      W.b->wake_at(s->wrank[i], until);
    else if (s->wrank[i] != coop_self())
      coop_wake(s->wrank[i]);
  }
  free(r);
}

/* Member `grank` (a: its part) arrived at time t; the last completes r. */
void inproc_arrive(tshared *s, round *r, int grank, member *a, unsigned long long t) {
  if (grank < 0 || grank >= s->size || r->m[grank])
    contend_fail("%s #%lu on a group of %d ranks: group rank %d arrives twice",
                 inproc_coll_names[r->kind], r->gen, s->size, grank);
  r->m[grank] = a;
  if (t > r->tlast)
    r->tlast = t;
  if (++r->arrived == s->size) {
    s->open = NULL;
    finish(s, r);
  }
}

/* Deposits a (kind k) and returns once the collective is complete and
 * its completion seen: the member's outputs (and a->result) are filled. */
static void rendezvous_on(tshared *s, int grank, coll_kind k, member *a) {
  round *r = s->open ? s->open : inproc_round_new(s, k);
  if (r->kind != k)
    contend_fail("collective mismatch on a group of %d ranks: group rank %d calls %s while "
                 "%d rank%s wait in %s #%lu",
                 s->size, grank, inproc_coll_names[k], r->arrived, r->arrived == 1 ? "" : "s",
                 inproc_coll_names[r->kind], r->gen);
  char why[sizeof r->why]; /* r is freed at completion, maybe while this member is parked */
  memcpy(why, r->why, sizeof why);
  const unsigned long long t = ticks();
  if (inproc_procs_count() > 1)
    inproc_send_arrival(s, r, grank, a, t);
  inproc_arrive(s, r, grank, a, t);
  while (!a->done) /* a wake for another reason: park again */
    coop_park(why);
  while (ticks() < a->until)
    coop_park(CONTROL_WAIT);
}

static void rendezvous(contend_group *g, coll_kind k, member *a) {
  rendezvous_on(H(g)->s, g->rank, k, a);
}

#define COMBINE(T, SUM)                                                                            \
  do {                                                                                             \
    T *x = acc;                                                                                    \
    const T *y = in;                                                                               \
    for (int i = 0; i < count; i++)                                                                \
      x[i] = op == CONTEND_OP_SUM   ? SUM(x[i], y[i])                                              \
             : op == CONTEND_OP_MIN ? (y[i] < x[i] ? y[i] : x[i])                                  \
                                    : (y[i] > x[i] ? y[i] : x[i]);                                 \
  } while (0)
#define SUM_U8(a, b) (uint8_t)((a) + (b))                      /* as MPI_BYTE: modulo 256 */
#define SUM_I64(a, b) (int64_t)((uint64_t)(a) + (uint64_t)(b)) /* wraps, no UB */
#define SUM_F64(a, b) ((a) + (b))

static void combine(void *acc, const void *in, int count, contend_dtype dt, contend_op op) {
  switch (dt) {
  case CONTEND_DT_BYTE:
    COMBINE(uint8_t, SUM_U8);
    break;
  case CONTEND_DT_INT64:
    COMBINE(int64_t, SUM_I64);
    break;
  case CONTEND_DT_DOUBLE:
    COMBINE(double, SUM_F64);
    break;
  }
}

static void same_args(tshared *s, round *r) {
  const member *a = r->m[0];
  for (int i = 1; i < s->size; i++) {
    const member *b = r->m[i];
    const int bad = r->kind == C_ALLREDUCE || r->kind == C_REDUCE
                        ? b->count != a->count || b->dt != a->dt || b->op != a->op
                        : b->bytes != a->bytes;
    if (bad)
      contend_fail("%s #%lu on a group of %d ranks: group ranks 0 and %d pass different "
                   "arguments",
                   inproc_coll_names[r->kind], r->gen, s->size, i);
  }
}

typedef struct split_entry {
  int color, key, rank;
} split_entry;

static int cmp_split(const void *p, const void *q) {
  const split_entry *a = p, *b = q;
  if (a->color != b->color)
    return a->color < b->color ? -1 : 1;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return (a->rank > b->rank) - (a->rank < b->rank);
}

static void complete_split(tshared *s, round *r) {
  split_entry *e = inproc_xmalloc(sizeof *e * (size_t)s->size);
  int n = 0;
  for (int i = 0; i < s->size; i++)
    if (r->m[i]->color >= 0)
      e[n++] = (split_entry){r->m[i]->color, r->m[i]->key, i};
  qsort(e, (size_t)n, sizeof *e, cmp_split);
  for (int lo = 0; lo < n;) {
    int hi = lo;
    while (hi < n && e[hi].color == e[lo].color)
      hi++;
    tshared *ns = shared_new(hi - lo);
    for (int j = lo; j < hi; j++)
      ns->wrank[j - lo] = s->wrank[e[j].rank];
    if (!inproc_placed(ns, inproc_group_id(s->gid, r->gen, e[lo].color))) {
      shared_free(ns); /* no member here: no replica */
      lo = hi;
      continue;
    }
    for (int j = lo; j < hi; j++)
      if (!r->m[e[j].rank]->remote)
        r->m[e[j].rank]->result = &handle_new(ns, j - lo)->g;
    lo = hi;
  }
  free(e);
}

/* Runs in the last member to arrive: every member's arguments are in r. */
static void complete(tshared *s, round *r) {
  member **m = r->m;
  const int n = s->size;
  switch (r->kind) {
  case C_BARRIER:
    break;
  case C_ALLREDUCE:
  case C_REDUCE: {
    same_args(s, r);
    const size_t bytes = contend_dtype_bytes(m[0]->dt) * (size_t)m[0]->count;
    if (m[0]->count <= 0 || (r->kind == C_REDUCE && m[0]->remote))
      break; /* (a reduce's data is at its root's process only) */
    void *acc = inproc_xmalloc(bytes);
    memcpy(acc, m[0]->in, bytes);
    for (int i = 1; i < n; i++) /* in rank order: the same sum on every run */
      combine(acc, m[i]->in, m[0]->count, m[0]->dt, m[0]->op);
    for (int i = 0; i < (r->kind == C_REDUCE ? 1 : n); i++)
      if (!m[i]->remote)
        memcpy(m[i]->out, acc, bytes);
    free(acc);
    break;
  }
  case C_BCAST:
    same_args(s, r);
    for (int i = 1; i < n && m[0]->bytes; i++)
      if (!m[i]->remote)
        memmove(m[i]->out, m[0]->in, m[0]->bytes);
    break;
  case C_GATHER:
  case C_ALLGATHER: {
    same_args(s, r);
    const size_t b = m[0]->bytes;
    /* assembled at the first member here (rank 0 in one process; a
     * gather's data is at its root's process only) */
    int at = 0;
    while (r->kind == C_ALLGATHER && at < n && m[at]->remote)
      at++;
    if (!b || at == n || m[at]->remote)
      break;
    if (!m[at]->out)
      contend_fail("%s #%lu: group rank %d passed no buffer", inproc_coll_names[r->kind], r->gen,
                   at);
    for (int i = 0; i < n; i++)
      memcpy((char *)m[at]->out + (size_t)i * b, m[i]->in, b);
    if (r->kind == C_ALLGATHER)
      for (int i = at + 1; i < n; i++)
        if (!m[i]->remote)
          memcpy(m[i]->out, m[at]->out, (size_t)n * b);
    break;
  }
  case C_GATHERV: {
    if (m[0]->remote) /* the data is at the root's process only */
      break;
    size_t total = 0;
    for (int i = 0; i < n; i++)
      total += m[i]->bytes;
    char *all = inproc_xmalloc(total); /* never NULL, even when empty */
    size_t at = 0;
    for (int i = 0; i < n; i++) {
      if (m[i]->bytes)
        memcpy(all + at, m[i]->in, m[i]->bytes);
      at += m[i]->bytes;
      if (m[0]->counts)
        m[0]->counts[i] = m[i]->bytes;
    }
    m[0]->result = all;
    break;
  }
  case C_SPLIT:
    complete_split(s, r);
    break;
  case C_NODE_OF: {
    contend_inproc_comm *v = inproc_xmalloc(sizeof *v);
    v->refs = s->local;
    v->size = n;
    v->id = inproc_group_id(s->gid, r->gen, -2);
    tshared *cs = shared_new(n); /* the close barrier's: the same members */
    memcpy(cs->wrank, s->wrank, sizeof *cs->wrank * (size_t)n);
    inproc_placed(cs, v->id);
    v->close = cs;
    if (s->local)
      inproc_comm_placed(v);
    v->node = inproc_xmalloc(sizeof(int) * (size_t)n);
    v->wrank = inproc_xmalloc(sizeof(int) * (size_t)n);
    v->ctx = inproc_xmalloc(sizeof(contend_ctx *) * (size_t)n);
    for (int i = 0; i < n; i++) {
      v->node[i] = m[i]->count;
      v->wrank[i] = s->wrank[i];
      v->ctx[i] = m[i]->remote ? NULL : m[i]->out; /* another process's: not here */
      m[i]->result = v;
    }
    break;
  }
  case C_N:
    break;
  }
}

/* ---- control collectives ---- */

static contend_group *w_split(contend_group *g, int color, int key) {
  member a = {.color = color < 0 ? -1 : color, .key = key};
  rendezvous(g, C_SPLIT, &a);
  return a.result;
}

static void w_group_free(contend_group *g) {
  if (g && H(g)->world)
    contend_fail("group_free of the world group (the engine frees it)");
  if (g)
    handle_release(H(g), "group_free");
}

static void w_barrier(contend_group *g) {
  member a = {0};
  rendezvous(g, C_BARRIER, &a);
}

static void w_allreduce(contend_group *g, void *buf, int count, contend_dtype dt, contend_op op) {
  member a = {.in = buf, .out = buf, .count = count, .dt = dt, .op = op};
  rendezvous(g, C_ALLREDUCE, &a);
}

static void w_reduce(contend_group *g, void *buf, int count, contend_dtype dt, contend_op op) {
  member a = {.in = buf, .out = buf, .count = count, .dt = dt, .op = op};
  rendezvous(g, C_REDUCE, &a);
}

static void w_bcast(contend_group *g, void *buf, size_t bytes) {
  member a = {.in = buf, .out = buf, .bytes = bytes};
  rendezvous(g, C_BCAST, &a);
}

static void w_gather(contend_group *g, const void *mine, size_t bytes, void *all) {
  member a = {.in = mine, .out = all, .bytes = bytes};
  rendezvous(g, C_GATHER, &a);
}

static void w_allgather(contend_group *g, const void *mine, size_t bytes, void *all) {
  member a = {.in = mine, .out = all, .bytes = bytes};
  rendezvous(g, C_ALLGATHER, &a);
}

static void *w_gatherv(contend_group *g, const void *mine, size_t bytes, size_t *counts) {
  member a = {.in = mine, .bytes = bytes, .counts = counts};
  rendezvous(g, C_GATHERV, &a);
  return a.result;
}

/* ---- signals: the k-th post of every member forms the k-th signal ---- */

/* The link to signal seq of s, which is made (appended, so the list stays
 * in seq order) by its first post here. */
struct contend_signal **inproc_signal_at(tshared *s, unsigned long seq) {
  struct contend_signal **p = &s->sigs;
  while (*p && (*p)->seq != seq)
    p = &(*p)->next;
  if (!*p) {
    struct contend_signal *x = calloc(1, sizeof *x);
    if (!x)
      contend_fail("out of memory (trace engine signal)");
    x->seq = seq;
    x->size = s->size;
    x->refs = s->local;
    why_of(x->why, sizeof x->why, "signal", seq, s->size);
    *p = x;
  }
  return p;
}

/* A member posted *p at time t; the last post completes it: out of the
 * list, its waiters woken when it is seen (the control latency later). */
void inproc_signal_posted(struct contend_signal **p, unsigned long long t) {
  struct contend_signal *x = *p;
  if (t > x->tlast)
    x->tlast = t;
  if (++x->posted < x->size)
    return;
  *p = x->next;
  x->next = NULL;
  const unsigned long long d = control_delay();
  x->visible = x->tlast + d;
  for (int i = 0; i < x->nwait; i++)
    if (d)
      W.b->wake_at(x->waiters[i], x->visible);
    else
      coop_wake(x->waiters[i]);
  free(x->waiters);
  x->waiters = NULL;
  x->nwait = x->capwait = 0;
}

static contend_signal *w_signal_post(contend_group *g) {
  thandle *h = H(g);
  tshared *s = h->s;
  const unsigned long seq = h->nsig++;
  struct contend_signal **p = inproc_signal_at(s, seq), *x = *p;
  const unsigned long long t = ticks();
  if (inproc_procs_count() > 1)
    inproc_send_post(s, seq, g->rank, t);
  inproc_signal_posted(p, t);
  return x;
}

/* Complete, and its completion seen (the control latency has passed). */
static int seen(const struct contend_signal *x) {
  return x->posted == x->size && ticks() >= x->visible;
}

/* Not seen: lets the others progress first (the backend's poll: a
 * yield, or simulated time passing), then answers. */
static int w_signal_test(contend_group *g, contend_signal *x) {
  (void)g;
  if (seen(x))
    return 1;
  W.b->poll();
  return seen(x);
}

/* Parks until the last member's post is seen (rather than polling: no cost
 * while waiting, and a wait that can never end shows up as a deadlock).
 * One wake is armed per wait: a waiter listed before completion is woken
 * by it; one that comes after, while the completion is not seen yet, arms
 * its own. */
static void w_signal_wait(contend_group *g, contend_signal *x, int idle) {
  (void)g, (void)idle;
  int armed = 0;
  while (!seen(x)) {
    if (armed) {
      coop_park(x->why);
      continue;
    }
    armed = 1;
    if (x->posted == x->size) {
      W.b->wake_at(coop_self(), x->visible);
      coop_park(x->why);
      continue;
    }
    if (x->nwait == x->capwait) {
      const int cap = x->capwait ? 2 * x->capwait : 8;
      int *w = realloc(x->waiters, sizeof *w * (size_t)cap);
      if (!w)
        contend_fail("out of memory (trace engine signal)");
      x->waiters = w;
      x->capwait = cap;
    }
    x->waiters[x->nwait++] = coop_self();
    coop_park(x->why);
  }
}

static void w_signal_free(contend_group *g, contend_signal *x) {
  (void)g;
  if (!x)
    return;
  if (x->posted < x->size)
    contend_fail("signal #%lu freed before completion (%d of %d posted)", x->seq, x->posted,
                 x->size);
  if (--x->refs == 0)
    free(x);
}

/* ---- nodes, names ---- */

static int my_world_rank(void) {
  const int r = coop_self();
  if (r < 0)
    contend_fail("internal error: %s engine call outside its ranks", W.b->engine->name);
  return r;
}

/* The nodes given at launch (nodes x ranks_per_node); virtual_nodes is
 * ignored.  Needs no communication, so it is not synchronising. */
static int w_nodes(contend_group *world, int virtual_nodes, contend_nodes *out, char *err,
                   size_t errlen) {
  (void)world, (void)virtual_nodes, (void)err, (void)errlen;
  const int r = my_world_rank();
  out->nnodes = W.nodes;
  out->my_node = r / W.ppn;
  out->local_rank = r % W.ppn;
  out->local_size = out->ppn_min = out->ppn_max = W.ppn;
  out->node_of_rank = W.node_of_rank;
  return 0;
}

static void w_host_name(contend_group *g, char *buf, size_t len) {
  (void)g;
  if (len)
    snprintf(buf, len, "node%d", my_world_rank() / W.ppn);
}

static void w_library(contend_group *g, char *buf, size_t len, int *version, int *subversion) {
  (void)g;
  if (len)
    snprintf(buf, len, "%s", W.b->library);
  if (version)
    *version = 0;
  if (subversion)
    *subversion = 0;
}

/* ---- motif contexts ---- */

void contend_inproc_comm_close_wait(contend_inproc_comm *v, int rank) {
  tshared *s = v->close;
  member a = {0};
  rendezvous_on(s, rank, C_BARRIER, &a);
  if (--s->handles == 0) {
    shared_free(s);
    v->close = NULL;
  }
}

void contend_inproc_comm_release(void *p) {
  contend_inproc_comm *v = p;
  if (--v->refs == 0) {
    inproc_comm_released(v);
    if (v->close) /* an engine without a close barrier (the trace engine) */
      shared_free(v->close);
    free(v->node);
    free(v->wrank);
    free(v->ctx);
    free(v);
  }
}

static int w_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                      contend_group *g, int my_node, uint64_t seed, const contend_ctx *job) {
  member a = {.count = my_node, .out = c};
  rendezvous(g, C_NODE_OF, &a);
  const int rc = W.b->ctx_open(c, m, p, g->rank, a.result, seed, job);
  int64_t failed = rc != 0;
  w_allreduce(g, &failed, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
  return failed ? -1 : 0;
}

static void w_ctx_close(contend_ctx *c) { W.b->ctx_close(c); }

static void w_watchdog(contend_group *world, double seconds, const char *msg) {
  (void)world;
  if (W.b->watchdog)
    W.b->watchdog(seconds, msg);
}

static double w_peak_rss_mib(contend_group *g) {
  (void)g;
  return contend_peak_rss_mib();
}

static contend_world_ops inproc_world_ops = {
    .engine = NULL, /* the backend's, set at launch */
    .split = w_split,
    .group_free = w_group_free,
    .barrier = w_barrier,
    .allreduce = w_allreduce,
    .reduce = w_reduce,
    .bcast = w_bcast,
    .gather = w_gather,
    .allgather = w_allgather,
    .gatherv = w_gatherv,
    .signal_post = w_signal_post,
    .signal_test = w_signal_test,
    .signal_wait = w_signal_wait,
    .signal_free = w_signal_free,
    .nodes = w_nodes,
    .host_name = w_host_name,
    .library = w_library,
    .ctx_open = w_ctx_open,
    .ctx_close = w_ctx_close,
    .watchdog = w_watchdog,
    .peak_rss_mib = w_peak_rss_mib,
    .seed = NULL,         /* the backend's, set at launch */
    .results_json = NULL, /* the backend's, set at launch */
};

/* ---- launch ---- */

typedef struct launch_arg {
  tshared *world;
  contend_body body;
  void *arg;
} launch_arg;

static int rank_main(int rank, void *p) {
  launch_arg *la = p;
  thandle *h = handle_new(la->world, rank);
  h->world = 1;
  const int status = la->body(&h->g, la->arg);
  handle_release(h, "a rank returned from the run");
  return status;
}

static void end_exit(int status) { exit(status); }

int contend_inproc_launch(const contend_inproc_backend *b, int nodes, int ppn, contend_body body,
                          void *arg) {
  return contend_inproc_launch_procs(b, nodes, ppn, NULL, body, arg);
}

int contend_inproc_launch_procs(const contend_inproc_backend *b, int nodes, int ppn,
                                const contend_inproc_procs *procs, contend_body body, void *arg) {
  if (nodes < 1 || ppn < 1 || (long long)nodes * ppn > INT_MAX) {
    fprintf(stderr,
            "contend: the %s engine plays nodes x ranks per node in this process: needs "
            "--nodes N >= 1 and --ranks-per-node P >= 1 (got %d x %d)\n",
            b->engine->name, nodes, ppn);
    return CONTEND_EXIT_USAGE;
  }
  W.b = b;
  inproc_world_ops.engine = b->engine;
  inproc_world_ops.seed = b->seed;
  inproc_world_ops.results_json = b->results_json;
  W.nodes = nodes;
  W.ppn = ppn;
  W.n = nodes * ppn;
  W.node_of_rank = inproc_xmalloc(sizeof(int) * (size_t)W.n);
  for (int i = 0; i < W.n; i++)
    W.node_of_rank[i] = i / W.ppn;
  unsigned char *mine;
  inproc_procs_open(procs, W.n, W.ppn, &mine);
  launch_arg la = {.world = shared_new(W.n), .body = body, .arg = arg};
  for (int r = 0; r < W.n; r++)
    la.world->wrank[r] = r;
  if (!inproc_placed(la.world, 1)) /* no rank here */
    shared_free(la.world);
  contend_set_fail_handler(coop_self, end_exit);
  coop_set_idle(b->idle);
  int rc = coop_run_some(W.n, mine, rank_main, &la, NULL);
  coop_set_idle(NULL);
  if (inproc_procs_count() > 1) /* the others' ranks may still run: until they are done */
    rc = procs->finish(mine[0] ? rc : -1);
  contend_set_fail_handler(NULL, NULL);
  free(W.node_of_rank);
  W.node_of_rank = NULL;
  free(mine);
  inproc_procs_close();
  return rc;
}
