/* The simulated engine over processes, and the run's figures taken alike
 * at any process count (engine_par.h).
 *
 * Over processes (mpirun -n P contend load|network|jobs --engine sim),
 * each process simulates a part of the fabric (src/fabric/partition.h)
 * and runs the ranks of the nodes attached to its routers
 * (contend_inproc_launch_procs).  Its idle hook runs sim_par's windows
 * (conservative, a window the lookahead long: the smallest latency of a
 * cut link), whose swaps carry the fabric's records, the control plane's
 * (src/run/world_inproc.c), the MPI layer's (sim_mpi.c) and this file's;
 * a process whose ranks have all returned keeps running windows (its
 * routers still carry the others' packets) until every process's have.
 * The window loop runs in the scheduler's idle hook, so a rank runs at
 * its own simulated time inside a window; all it does is at least a
 * window away from any other part (a packet crosses a cut link, control
 * takes the control latency D, at least the lookahead).
 *
 * The run's figures (packet hops, packets and bytes delivered, marks,
 * notifications, rank resumes) are taken at one simulated time in every
 * part: rank 0 asks at t (results_json), every part takes its figures at
 * a timer at t + D (the request, swapped at t's window's end, is in every
 * part by then) and sends them to rank 0's process, where they are in by
 * t + 2D, when rank 0 goes on.  In one process too, so that the figures
 * do not depend on P (with D = 0, only possible in one process: at once). */
#include "engine_par.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coop/sched.h"
#include "../core/error.h"
#include "../core/outbox.h"
#include "../fabric/partition.h"
#include "contend/inproc.h"
#include "contend/strbuf.h"
#include "sim_engine.h"
#include "sim_par.h"

enum { R_ASK = 1, R_FIGURES = 2, R_SEED = 3 };

typedef struct erec {
  uint32_t type, from; /* from: the asking process (R_ASK), the part (R_FIGURES) */
  uint64_t t;          /* R_ASK: when to take the figures; R_SEED: the seed */
  uint64_t fig[SIM_FIGURES];
  uint64_t extra; /* R_FIGURES: bytes of more figures after the record (a multiple of 8) */
} erec;

static struct {
  sim_net *net;
  contend_group *world; /* the processes; NULL: one */
  sim_partition pt;
  int *proc_of_node;
  sim_par par;
  int win_open, seeded;
  sim_time win_end;
  contend_outbox out; /* this file's records for each process */
  uint64_t fig[SIM_FIGURES];
  uint64_t *events; /* per part: its events when it took its figures */
  int got;          /* parts whose figures are in */
  void (*take)(uint64_t *fig, contend_strbuf *extra); /* this part's figures now */
  void (*add)(const void *extra, size_t len);         /* at the asker: a part's extra */
  contend_strbuf extra;
} PX;

static const void *e_outbox(int q, size_t *len) { return contend_outbox_get(&PX.out, q, len); }

static void e_clear(void) { contend_outbox_clear(&PX.out); }

static void add_figures(int part, const uint64_t *fig, const void *extra, size_t len) {
  for (int k = 0; k < SIM_FIGURES; k++)
    PX.fig[k] += fig[k];
  if (PX.events && part >= 0 && part < PX.par.parts)
    PX.events[part] = fig[SIM_FIG_EVENTS];
  if (len)
    PX.add(extra, len);
  PX.got++;
}

static void e_inbox(const void *buf, size_t len) {
  for (size_t at = 0; at < len;) {
    erec r;
    if (len - at < sizeof r)
      contend_fail("internal error: an engine record cut short");
    memcpy(&r, (const char *)buf + at, sizeof r);
    at += sizeof r;
    if (r.extra > len - at)
      contend_fail("internal error: an engine record's figures cut short");
    if (r.type == R_ASK)
      sim_net_timer(PX.net, r.t, SIM_T_FIGURES, r.from);
    else if (r.type == R_FIGURES)
      add_figures((int)r.from, r.fig, (const char *)buf + at, r.extra);
    else if (r.type == R_SEED && !PX.seeded) {
      PX.seeded = 1;
      sim_net_seed(PX.net, r.t);
    }
    at += r.extra;
  }
}

static const sim_par_channel control = {contend_inproc_outbox, contend_inproc_outbox_clear,
                                        contend_inproc_inbox};
static const sim_par_channel mpi = {sim_mpi_outbox, sim_mpi_outbox_clear, sim_mpi_inbox};
static const sim_par_channel engine = {e_outbox, e_clear, e_inbox};

static void to_all(const erec *r) {
  for (int q = 0; q < PX.par.parts; q++)
    if (q != PX.par.me)
      contend_outbox_put(&PX.out, q, r, sizeof *r);
}

int sim_engine_par_open(contend_group *world, const sim_setup *su, sim_net *net,
                        void (*take)(uint64_t *fig, contend_strbuf *extra),
                        void (*add)(const void *extra, size_t len), const char *partition,
                        uint64_t seed, int nodes, char *err, size_t errlen) {
  memset(&PX, 0, sizeof PX);
  PX.net = net;
  PX.take = take;
  PX.add = add;
  if (!world || world->size < 2)
    return 0;
  const int P = world->size;
  if (sim_partition_make(&su->topo, P, partition, seed, &PX.pt, err, errlen))
    return -1;
  int cls;
  const sim_time look = sim_partition_lookahead(&PX.pt, su->net.latency, &cls);
  if (look == 0) {
    snprintf(err, errlen,
             "the partition over %d processes cuts links of latency 0 ns: no lookahead (give the "
             "links a latency, or fewer processes)",
             P);
    sim_partition_free(&PX.pt);
    return -1;
  }
  PX.world = world;
  PX.proc_of_node = malloc(sizeof *PX.proc_of_node * (size_t)nodes);
  contend_outbox_init(&PX.out, P, "simulation over processes");
  PX.events = calloc((size_t)P, sizeof *PX.events);
  if (!PX.proc_of_node || !PX.events)
    contend_fail("out of memory (simulation over %d processes)", P);
  for (int n = 0; n < nodes; n++)
    PX.proc_of_node[n] = PX.pt.part_of_router[su->topo.node_router[n]];
  PX.par = (sim_par){.world = world,
                     .part_of_router = PX.pt.part_of_router,
                     .parts = P,
                     .me = world->rank,
                     .lookahead = look,
                     .channel = {&control, &mpi, &engine}};
  sim_net_partition(net, PX.pt.part_of_router, P, world->rank);
  sim_mpi_procs(P, world->rank, PX.proc_of_node);
  return 0;
}

const int *sim_engine_par_proc_of_node(void) { return PX.proc_of_node; }
int sim_engine_par_count(void) { return PX.world ? PX.par.parts : 1; }
int sim_engine_par_me(void) { return PX.world ? PX.par.me : 0; }

void sim_engine_par_seed(uint64_t seed) {
  if (PX.seeded)
    return;
  PX.seeded = 1;
  if (PX.world) /* to the parts without ranks, before any packet reaches them */
    to_all(&(erec){.type = R_SEED, .t = seed});
}

static int some_rank_runnable(void *arg) {
  (void)arg;
  return coop_runnable() > 0;
}

static sim_time mine(void) {
  return sim_net_pending(PX.net) ? sim_net_next_time(PX.net) : SIM_NEVER;
}

/* Runs what is left of the window (stopping when a rank here wakes:
 * returns 1), then swaps, agrees on the next window and opens it;
 * returns 0 when nothing left anywhere can wake a rank (no event but
 * passive timers and samples, nothing sent), -1 when no rank is left
 * anywhere either (busy: this process has ranks). */
static int window(int busy) {
  for (;;) {
    if (PX.win_open) {
      sim_net_run(PX.net, PX.win_end, busy ? some_rank_runnable : NULL, NULL);
      if (busy && coop_runnable() > 0)
        return 1;
      PX.win_open = 0;
    }
    int anywhere, live;
    const sim_time next = sim_par_swap(PX.net, &PX.par, mine(), busy, &anywhere, &live);
    if (!anywhere)
      return -1;
    if (next == SIM_NEVER || !live)
      return 0;
    PX.win_end = sim_par_window_end(&PX.par, next, SIM_NEVER);
    PX.win_open = 1;
  }
}

int sim_engine_par_idle(void) { return window(1) == 1; }

int sim_engine_par_finish(int status) {
  const int w = window(0);
  if (w == 0) {
    fprintf(stderr, "contend: deadlock: the ranks of other processes are parked and nothing "
                    "can wake them\n");
    contend_die();
  }
  int64_t st = status;
  contend_gallreduce(PX.world, &st, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
  return (int)st;
}

void sim_engine_figures_timer(uint32_t asker) {
  erec r = {.type = R_FIGURES, .from = (uint32_t)sim_engine_par_me()};
  PX.extra.len = 0;
  PX.take(r.fig, &PX.extra);
  if (PX.extra.len % 8)
    contend_fail("internal error: extra figures of %zu B", PX.extra.len);
  if (!PX.world || (int)asker == PX.par.me) {
    add_figures((int)r.from, r.fig, PX.extra.s, PX.extra.len);
    return;
  }
  r.extra = PX.extra.len;
  contend_outbox_put(&PX.out, (int)asker, &r, sizeof r);
  contend_outbox_put(&PX.out, (int)asker, PX.extra.s, PX.extra.len);
}

sim_time sim_engine_figures(sim_time control, uint64_t *fig) {
  const sim_time now = sim_net_now(PX.net);
  memset(PX.fig, 0, sizeof PX.fig);
  PX.got = 0;
  if (!control) { /* one process (no lookahead is possible without a latency) */
    sim_engine_figures_timer(0);
    memcpy(fig, PX.fig, sizeof PX.fig);
    return now;
  }
  const int me = sim_engine_par_me();
  sim_net_timer(PX.net, now + control, SIM_T_FIGURES, (uint32_t)me);
  if (PX.world)
    to_all(&(erec){.type = R_ASK, .from = (uint32_t)me, .t = now + control});
  sim_engine_sleep_until(now + 2 * control, "the run's figures from every part (simulated time)");
  if (PX.got != sim_engine_par_count())
    contend_fail("internal error: the figures of %d of %d parts", PX.got, sim_engine_par_count());
  memcpy(fig, PX.fig, sizeof PX.fig);
  return now + control;
}

void sim_engine_par_json(contend_json *j) {
  contend_json_obj_begin(j, "processes");
  contend_json_int(j, "count", sim_engine_par_count());
  if (PX.world) {
    contend_json_str(j, "partition", PX.pt.method);
    contend_json_int(j, "cut_links", PX.pt.cut_links);
    contend_json_double(j, "lookahead_ns", (double)PX.par.lookahead / 1e3);
    contend_json_uint(j, "windows", PX.par.windows);
    contend_json_double(j, "sync_wait_s", PX.par.wait_s); /* rank 0's process */
    contend_json_arr_begin(j, "events_per_process");      /* at the run's figures */
    for (int q = 0; q < PX.par.parts; q++)
      contend_json_uint(j, NULL, PX.events[q]);
    contend_json_arr_end(j);
  }
  contend_json_obj_end(j);
}

void sim_engine_par_close(void) {
  contend_sb_free(&PX.extra);
  if (PX.world) {
    sim_mpi_procs(1, 0, NULL);
    contend_outbox_free(&PX.out);
    free(PX.events);
    free(PX.proc_of_node);
    sim_partition_free(&PX.pt);
  }
  memset(&PX, 0, sizeof PX);
}
