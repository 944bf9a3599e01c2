/* The in-process control plane over processes (contend/inproc.h,
 * contend_inproc_launch_procs): each process runs the fibers of its nodes'
 * ranks and keeps a replica of every group with a member here, named alike
 * in every process; a member's control call is applied to its own
 * process's replica at once and recorded for the other processes with
 * members, which the backend swaps at every window's end and hands in
 * here (world_inproc.c completes the collectives and signals). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/keymap.h"
#include "../core/outbox.h"
#include "contend/strbuf.h"
#include "contend/traffic.h"
#include "inproc_impl.h"

static struct {
  int procs, me;         /* processes (1: this one alone), this one */
  int *proc_of_rank;     /* the process of every world rank (NULL in one process) */
  contend_outbox out;    /* control records for each process */
  contend_keymap groups; /* gid -> the replica here (tshared *) */
  contend_keymap comms;  /* id -> a context group here (contend_inproc_comm *) */
} P = {.procs = 1};

void inproc_procs_open(const contend_inproc_procs *procs, int n, int ppn, unsigned char **mine) {
  *mine = NULL;
  P.procs = procs ? procs->count : 1;
  P.me = procs ? procs->me : 0;
  if (P.procs < 2)
    return;
  if (P.me < 0 || P.me >= P.procs || !procs->finish)
    contend_fail("internal error: process %d of %d", P.me, P.procs);
  P.proc_of_rank = inproc_xmalloc(sizeof(int) * (size_t)n);
  *mine = inproc_xmalloc((size_t)n);
  for (int r = 0; r < n; r++) {
    const int q = procs->proc_of_node[r / ppn];
    if (q < 0 || q >= P.procs)
      contend_fail("internal error: node %d in process %d of %d", r / ppn, q, P.procs);
    P.proc_of_rank[r] = q;
    (*mine)[r] = q == P.me;
  }
  contend_outbox_init(&P.out, P.procs, "control records");
}

void inproc_procs_close(void) {
  free(P.proc_of_rank);
  contend_outbox_free(&P.out);
  contend_keymap_free(&P.groups); /* a group a body never freed stays allocated */
  contend_keymap_free(&P.comms);
  memset(&P, 0, sizeof P);
  P.procs = 1;
}

int inproc_procs_count(void) { return P.procs; }

void inproc_comm_placed(contend_inproc_comm *v) {
  if (P.procs > 1)
    contend_keymap_put(&P.comms, v->id, (uint64_t)(uintptr_t)v, "context groups");
}

void inproc_comm_released(contend_inproc_comm *v) {
  uint64_t x;
  if (P.procs > 1)
    contend_keymap_take(&P.comms, v->id, &x);
}

int inproc_here(int wrank) { return !P.proc_of_rank || P.proc_of_rank[wrank] == P.me; }

/* Alike in every process, whatever order it learns of the group in. */
uint64_t inproc_group_id(uint64_t parent, unsigned long gen, int color) {
  uint64_t x = parent * 0x9e3779b97f4a7c15ull ^ ((uint64_t)gen << 32 | (uint32_t)color);
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x ? x : 1;
}

static void group_put(tshared *s) {
  contend_keymap_put(&P.groups, s->gid, (uint64_t)(uintptr_t)s, "control plane groups");
}

static void group_drop(tshared *s) {
  uint64_t v;
  contend_keymap_take(&P.groups, s->gid, &v);
}

int inproc_placed(tshared *s, uint64_t gid) {
  if (P.procs == 1)
    return s->size;
  s->gid = gid;
  s->local = 0;
  unsigned char *has = calloc((size_t)P.procs, 1);
  if (!has)
    contend_fail("out of memory (control plane group)");
  for (int i = 0; i < s->size; i++) {
    s->local += inproc_here(s->wrank[i]);
    has[P.proc_of_rank[s->wrank[i]]] = 1;
  }
  s->handles = s->local;
  s->procs = inproc_xmalloc(sizeof *s->procs * (size_t)P.procs);
  for (int q = 0; q < P.procs; q++)
    if (has[q])
      s->procs[s->nprocs++] = q;
  free(has);
  if (s->local)
    group_put(s);
  return s->local;
}

void inproc_unplaced(tshared *s) {
  if (P.procs > 1 && s->local)
    group_drop(s);
}

/* Over processes: what each process tells the others of its members'
 * control calls, swapped at every window's end by the backend
 * (contend_inproc_outbox, contend_inproc_inbox, below).  A record names its
 * group by gid, its collective by number (or its signal by sequence) and
 * carries the member's time and arguments, and its data when the
 * receiving process needs it (an allreduce's everywhere, a gather's at the
 * root's process only). */
enum { R_SIGNAL = C_N }; /* a record's `what`: a coll_kind, or a signal's post */

typedef struct crec {
  uint64_t gid, gen, t, bytes;
  uint64_t data; /* bytes of data after the record (then padding to 8) */
  int32_t what, rank, count, dt, op, color, key, pad;
} crec;

/* To every other process with members of s; the data only to process
 * `to` (-1: to all of them). */
static void send_record(const tshared *s, crec h, const void *data, size_t len, int to) {
  static const char zero[8];
  for (int i = 0; i < s->nprocs; i++) {
    const int q = s->procs[i];
    if (q == P.me)
      continue;
    h.data = to < 0 || to == q ? len : 0;
    contend_outbox_put(&P.out, q, &h, sizeof h);
    if (h.data) {
      contend_outbox_put(&P.out, q, data, len);
      contend_outbox_put(&P.out, q, zero, (8 - len % 8) % 8);
    }
  }
}

void inproc_send_arrival(const tshared *s, const round *r, int grank, const member *a,
                         unsigned long long t) {
  const crec h = {.gid = s->gid,
                  .gen = r->gen,
                  .t = t,
                  .bytes = a->bytes,
                  .what = (int)r->kind,
                  .rank = grank,
                  .count = a->count,
                  .dt = (int)a->dt,
                  .op = (int)a->op,
                  .color = a->color,
                  .key = a->key};
  const int root = P.proc_of_rank[s->wrank[0]];
  switch (r->kind) {
  case C_ALLREDUCE:
  case C_REDUCE: {
    const size_t len = a->count > 0 ? contend_dtype_bytes(a->dt) * (size_t)a->count : 0;
    send_record(s, h, a->in, len, r->kind == C_REDUCE ? root : -1);
    break;
  }
  case C_BCAST:
    send_record(s, h, a->in, grank == 0 ? a->bytes : 0, -1);
    break;
  case C_GATHER:
  case C_GATHERV:
    send_record(s, h, a->in, a->bytes, root);
    break;
  case C_ALLGATHER:
    send_record(s, h, a->in, a->bytes, -1);
    break;
  default:
    send_record(s, h, NULL, 0, -1);
    break;
  }
}

void inproc_send_post(const tshared *s, unsigned long seq, int grank, unsigned long long t) {
  send_record(s, (crec){.gid = s->gid, .gen = seq, .t = t, .what = R_SIGNAL, .rank = grank}, NULL,
              0, -1);
}

/* ---- the swap ---- */

const void *contend_inproc_outbox(int q, size_t *len) { return contend_outbox_get(&P.out, q, len); }

void contend_inproc_outbox_clear(void) { contend_outbox_clear(&P.out); }

contend_inproc_comm *contend_inproc_comm_find(unsigned long long id) {
  uint64_t v;
  return contend_keymap_get(&P.comms, id, &v) ? (contend_inproc_comm *)(uintptr_t)v : NULL;
}

static tshared *group_named(uint64_t gid, const char *what, unsigned long gen) {
  uint64_t v;
  tshared *s = contend_keymap_get(&P.groups, gid, &v) ? (tshared *)(uintptr_t)v : NULL;
  if (!s)
    contend_fail("another process's rank calls %s #%lu on a group no rank of this process is in "
                 "any more (group_free before the others' last call?)",
                 what, gen);
  return s;
}

static void apply(const crec *h, const char *data) {
  if (h->what == R_SIGNAL) {
    tshared *s = group_named(h->gid, "signal", (unsigned long)h->gen);
    inproc_signal_posted(inproc_signal_at(s, (unsigned long)h->gen), h->t);
    return;
  }
  if (h->what < 0 || h->what >= C_N)
    contend_fail("internal error: control record of kind %d", h->what);
  const coll_kind k = (coll_kind)h->what;
  tshared *s = group_named(h->gid, inproc_coll_names[k], (unsigned long)h->gen);
  round *r = s->open ? s->open : inproc_round_new(s, k);
  if (r->kind != k || r->gen != h->gen)
    contend_fail("collective mismatch on a group of %d ranks: group rank %d (in another process) "
                 "calls %s #%llu while %d rank%s wait in %s #%lu",
                 s->size, h->rank, inproc_coll_names[k], (unsigned long long)h->gen, r->arrived,
                 r->arrived == 1 ? "" : "s", inproc_coll_names[r->kind], r->gen);
  member *a = calloc(1, sizeof *a + h->data);
  if (!a)
    contend_fail("out of memory (control record, %llu B)", (unsigned long long)h->data);
  *a = (member){.bytes = h->bytes,
                .count = h->count,
                .dt = (contend_dtype)h->dt,
                .op = (contend_op)h->op,
                .color = h->color,
                .key = h->key,
                .remote = 1};
  if (h->data) {
    memcpy(a + 1, data, h->data);
    a->in = a + 1;
  }
  inproc_arrive(s, r, h->rank, a, h->t);
}

void contend_inproc_inbox(const void *buf, size_t len) {
  const char *at = buf, *end = at + len;
  while (at < end) {
    crec h;
    if ((size_t)(end - at) < sizeof h)
      contend_fail("internal error: a control record cut short (%zu B)", (size_t)(end - at));
    memcpy(&h, at, sizeof h);
    at += sizeof h;
    const size_t padded = h.data + (8 - h.data % 8) % 8;
    if (padded > (size_t)(end - at))
      contend_fail("internal error: a control record's data cut short");
    apply(&h, at);
    at += padded;
  }
}
