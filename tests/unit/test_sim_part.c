/* A fabric simulated as P parts (src/engine_sim/net_part.c), stepped in
 * windows of the lookahead with the parts' outboxes exchanged in between,
 * against the same fabric simulated whole: every message is delivered at
 * the same time, and every channel moves the same bytes, is busy and
 * stalls as long, for P = 2, 3, 4, dragonfly groups and METIS parts,
 * minimal, Valiant and UGAL routing, messages of one and of several
 * packets, under a load that makes the fabric stall. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/engine_sim/net_impl.h"
#include "../../src/engine_sim/netparams.h"
#include "../../src/fabric/partition.h"
#include "check.h"

#define MSGS 40 /* per node */

typedef struct delivery {
  uint64_t cookie; /* src << 32 | sequence at the source */
  sim_time t;
} delivery;

typedef struct traffic {
  sim_net *net;
  const sim_topo *t;
  uint64_t seed;
  int *sent;
  delivery *got;
  size_t ngot;
} traffic;

static uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* node `id` sends its next message: to a destination and of a size drawn
 * from (seed, node, sequence) alone, then again a little later */
static void on_timer(void *arg, uint32_t kind, uint32_t id) {
  traffic *tr = arg;
  (void)kind;
  const int k = tr->sent[id]++;
  const uint64_t r = mix(tr->seed ^ (uint64_t)id << 20 ^ (uint64_t)k);
  int dst = (int)(r % (uint64_t)(tr->t->nnodes - 1));
  dst += dst >= (int)id;
  const uint64_t bytes = (r >> 32) % 4 == 0 ? 3 * 4096 + 100 : 2048; /* 4 or 1 packets */
  const uint32_t m = sim_msg_new(tr->net, (int)id, dst, bytes, 0, (uint64_t)id << 32 | (uint64_t)k);
  sim_msg_send(tr->net, m);
  if (k + 1 < MSGS)
    sim_net_timer(tr->net, sim_net_now(tr->net) + 20000 + (r >> 40) % 200000, 0, id);
}

static void on_delivered(void *arg, uint32_t mi) {
  traffic *tr = arg;
  tr->got[tr->ngot++] = (delivery){sim_msg_at(tr->net, mi)->cookie, sim_net_now(tr->net)};
}

static int by_cookie(const void *a, const void *b) {
  const uint64_t x = ((const delivery *)a)->cookie, y = ((const delivery *)b)->cookie;
  return (x > y) - (x < y);
}

typedef struct outcome {
  delivery *got; /* sorted by cookie */
  size_t ngot;
  uint64_t *chan; /* per channel: bytes, busy, stall */
} outcome;

static int setup(sim_setup *su, const char *topo, const char *routing) {
  contend_params p;
  char err[512];
  if (contend_params_init(&p, sim_param_defs, "", err, sizeof err))
    return -1;
  int rc =
      contend_params_set(&p, contend_params_find(&p, "topology"), topo, err, sizeof err) ||
      contend_params_set(&p, contend_params_find(&p, "routing"), routing, err, sizeof err) ||
      contend_params_set(&p, contend_params_find(&p, "buffer_bytes"), "16384", err, sizeof err) ||
      sim_setup_from_params(&p, 7, su, err, sizeof err);
  if (rc)
    fprintf(stderr, "setup: %s\n", err);
  contend_params_free(&p);
  return rc;
}

/* The fabric as `parts` parts (1: whole). */
static outcome run(const sim_setup *su, const sim_partition *pt, int parts) {
  const sim_topo *t = &su->topo;
  traffic *tr = calloc((size_t)parts, sizeof *tr);
  delivery *all = calloc((size_t)t->nnodes * MSGS, sizeof *all);
  int cls;
  const sim_time look = pt ? sim_partition_lookahead(pt, su->net.latency, &cls) : SIM_NEVER;
  for (int k = 0; k < parts; k++) {
    traffic *x = &tr[k];
    sim_net_hooks h = {.arg = x, .delivered = on_delivered, .timer = on_timer};
    char err[256];
    x->net = sim_net_new(&su->net, &h, err, sizeof err);
    x->t = t;
    x->seed = 99;
    x->sent = calloc((size_t)t->nnodes, sizeof *x->sent);
    x->got = calloc((size_t)t->nnodes * MSGS, sizeof *x->got);
    if (parts > 1)
      sim_net_partition(x->net, pt->part_of_router, parts, k);
    for (int node = 0; node < t->nnodes; node++)
      if (sim_net_owns_node(x->net, node))
        sim_net_timer(x->net, (sim_time)(mix((uint64_t)node) % 50000), 0, (uint32_t)node);
  }
  for (;;) {
    sim_time next = SIM_NEVER;
    for (int k = 0; k < parts; k++) {
      const sim_time x =
          sim_net_pending(tr[k].net) ? sim_des_next_time(&tr[k].net->des) : SIM_NEVER;
      next = x < next ? x : next;
    }
    if (next == SIM_NEVER)
      break;
    const sim_time end = parts > 1 ? next + look - 1 : SIM_NEVER;
    for (int k = 0; k < parts; k++)
      sim_net_run(tr[k].net, end, NULL, NULL);
    for (int q = 0; q < parts; q++)
      for (int k = 0; k < parts; k++) {
        size_t len;
        const void *b = sim_net_outbox(tr[k].net, q, &len);
        if (len)
          sim_net_inbox(tr[q].net, b, len);
      }
    for (int k = 0; k < parts; k++)
      sim_net_outbox_clear(tr[k].net);
  }
  outcome o = {.got = all, .chan = calloc((size_t)(t->nports + t->nnodes) * 3, sizeof(uint64_t))};
  for (int k = 0; k < parts; k++) {
    memcpy(all + o.ngot, tr[k].got, tr[k].ngot * sizeof *all);
    o.ngot += tr[k].ngot;
    const sim_net *n = tr[k].net;
    for (uint32_t c = 0; c < n->nchan; c++) {
      const int src = c < (uint32_t)t->nports ? sim_port_router(t, (int)c)
                                              : t->node_router[c - (uint32_t)t->nports];
      if (parts > 1 && pt->part_of_router[src] != k)
        continue;
      uint64_t bytes = 0;
      for (int v = 0; v < n->V; v++)
        bytes += n->cvc[(size_t)c * n->V + v].bytes;
      o.chan[3 * c] = bytes;
      o.chan[3 * c + 1] = n->chan[c].busy;
      o.chan[3 * c + 2] = n->chan[c].stall;
    }
    free(tr[k].sent);
    free(tr[k].got);
    sim_net_free(tr[k].net);
  }
  qsort(all, o.ngot, sizeof *all, by_cookie);
  free(tr);
  return o;
}

static void compare(const char *topo, const char *routing, const char *method, int parts) {
  sim_setup su;
  CHECK(setup(&su, topo, routing) == 0);
  sim_partition pt;
  char err[256];
  CHECK(sim_partition_make(&su.topo, parts, method, 3, &pt, err, sizeof err) == 0);
  outcome whole = run(&su, NULL, 1), split = run(&su, &pt, parts);
  const size_t nchan = (size_t)su.topo.nports + (size_t)su.topo.nnodes;
  int same = whole.ngot == (size_t)su.topo.nnodes * MSGS && split.ngot == whole.ngot;
  for (size_t i = 0; same && i < whole.ngot; i++)
    same = whole.got[i].cookie == split.got[i].cookie && whole.got[i].t == split.got[i].t;
  size_t differ = 0;
  uint64_t stall = 0;
  for (size_t i = 0; i < 3 * nchan; i++) {
    differ += whole.chan[i] != split.chan[i];
    stall += i % 3 == 2 ? whole.chan[i] : 0;
  }
  if (!same || differ)
    fprintf(stderr, "%s %s %s P=%d: deliveries %s, %zu channel figures differ\n", topo, routing,
            method, parts, same ? "same" : "DIFFER", differ);
  CHECK(same && differ == 0);
  CHECK(stall > 0); /* the load made the fabric stall: the credits crossed parts too */
  free(whole.got), free(whole.chan), free(split.got), free(split.chan);
  sim_partition_free(&pt);
  sim_setup_free(&su);
}

int main(void) {
  const char *df = "dragonfly:a=4,p=2,h=2";
  compare(df, "minimal", "groups", 2);
  compare(df, "minimal", "groups", 3);
  compare(df, "valiant", "groups", 4);
  compare(df, "ugal", "groups", 3);
  compare(df, "minimal", "graph", 3);
  compare("fattree:pods=4,leaves=4,nodes=2,uplinks=2,pod_uplinks=2", "dmodk", "groups", 2);
  compare("fattree:leaves=8,nodes=4,uplinks=4", "random", "graph", 3);
  printf("test_sim_part: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
