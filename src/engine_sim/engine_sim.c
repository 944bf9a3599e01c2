/* The simulated engine (--engine sim): every rank a fiber of this process
 * on the in-process control plane (contend/inproc.h), motif contexts that
 * perform MPI semantics on the simulated fabric (sim_mpi.c), and a clock
 * that is the fabric's simulated time.
 *
 * Time advances only when every rank is parked (waiting on the fabric, in
 * compute, polling a signal): the scheduler's idle hook then runs the
 * fabric's events in time order until one wakes a rank.  A rank reads
 * the current simulated time; a control collective completes the control
 * latency after its last member arrives (control_latency).  Nodes are
 * the topology's (rank r on node r / ranks_per_node; --nodes N uses the
 * first N). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../coop/fiber.h"
#include "../coop/sched.h"
#include "../core/error.h"
#include "../core/proc.h"
#include "../throttle/params.h"
#include "contend/json.h"
#include "counters.h"
#include "engine_par.h"
#include "netparams.h"
#include "router.h"
#include "sim_engine.h"
#include "throttle_sim.h"

#define POLL_PS 1000000ull /* signal_test on an incomplete signal: 1 us */

extern const contend_engine contend_engine_sim;

static struct {
  sim_setup su;
  int have_setup;
  sim_net *net;
  sim_counters *ctr;
  void *totals;           /* the port counters' totals over the parts, at the run's figures */
  ct_config throttle_cfg; /* --throttle*, read by sim_check */
  int throttle_signal;    /* --throttle-signal */
  sim_throttle *throttle; /* NULL: off */
  int verify;
  uint64_t eager;
  sim_time overhead;
  sim_time control; /* the control plane's latency (control_latency) */
  unsigned long watchdog_gen;
  unsigned long long switches0; /* coop_switches() at launch */
  int progress;                 /* not --quiet: a wall-clock progress line */
  double wall0, wall_next;      /* launch, next progress line (wall s) */
  char watchdog_msg[512];
} E;

sim_net *sim_engine_net(void) { return E.net; }
void sim_engine_bind_node(int node, const char *job) { sim_throttle_bind(E.throttle, node, job); }
sim_time sim_engine_throttle_delay(int node, uint64_t bytes) {
  return E.throttle ? sim_throttle_delay(E.throttle, node, bytes) : 0;
}
int sim_engine_verify(void) { return E.verify; }
uint64_t sim_engine_eager(void) { return E.eager; }
uint64_t sim_engine_rndv_window(void) { return E.su.rndv_window; }
int sim_engine_rndv_max_active(void) { return E.su.rndv_max_active; }
sim_time sim_engine_overhead(void) { return E.overhead; }

static double sim_now(void) { return E.net ? (double)sim_net_now(E.net) / SIM_PS_PER_S : 0.0; }

void sim_engine_wake_at(int wrank, sim_time t) {
  sim_net_timer(E.net, t, SIM_T_WAKE, (uint32_t)wrank);
}

void sim_engine_sleep_until(sim_time t, const char *why) {
  sim_engine_wake_at(coop_self(), t);
  coop_park(why);
}

void sim_engine_sleep(double seconds, const char *why) {
  const sim_time dt = (sim_time)(seconds * SIM_PS_PER_S + 0.5);
  sim_engine_wake_at(coop_self(), sim_net_now(E.net) + (dt ? dt : 1));
  coop_park(why);
}

/* The control plane's latency: the largest latency of a link between two
 * routers (0 without one, as a single switch).  A property of the fabric,
 * not of how it is split, and at least the lookahead of any split (the
 * latency of its cut links), so control decided in one part of a
 * simulation over processes reaches the others in the next window's swap
 * before anyone may see it. */
static sim_time control_latency(const sim_topo *t, const sim_time latency[SIM_LINK_NCLASS]) {
  sim_time d = 0;
  for (int p = 0; p < t->nports; p++)
    if (t->peer[p] >= 0 && latency[t->cls[p]] > d)
      d = latency[t->cls[p]];
  return d;
}

static unsigned long long control_delay(void) { return E.control; }
static unsigned long long ticks(void) { return E.net ? sim_net_now(E.net) : 0; }
static void wake_at(int wrank, unsigned long long t) { sim_engine_wake_at(wrank, t); }

static void poll_sleep(void) {
  sim_engine_wake_at(coop_self(), sim_net_now(E.net) + POLL_PS);
  coop_park("polling a signal (simulated time)");
}

/* ---- fabric hooks ---- */

static void on_injected(void *arg, uint32_t msg, sim_time t) {
  (void)arg;
  sim_mpi_injected_cookie(sim_msg_at(E.net, msg)->cookie, t);
}

static void on_delivered(void *arg, uint32_t msg) {
  (void)arg;
  sim_mpi_delivered(sim_msg_at(E.net, msg)->cookie);
}

static void on_timer(void *arg, uint32_t kind, uint32_t id) {
  (void)arg;
  switch (kind & ~SIM_T_RANK_MASK) {
  case SIM_T_WAKE:
    coop_wake((int)id);
    break;
  case SIM_T_LOCAL:
    sim_mpi_arrived(sim_mpi_timer_msg(kind, id));
    break;
  case SIM_T_POST:
    sim_mpi_post_later(sim_mpi_timer_msg(kind, id));
    break;
  case SIM_T_FIGURES:
    sim_engine_figures_timer(id);
    break;
  case SIM_T_THROTTLE:
    sim_throttle_window(E.throttle);
    break;
  case SIM_T_WATCHDOG:
    if (id == (uint32_t)E.watchdog_gen) {
      fprintf(stderr, "%s%s (simulated time %.6f s)\n",
              strncmp(E.watchdog_msg, "contend", 7) ? "contend: " : "", E.watchdog_msg, sim_now());
      contend_die();
    }
    break;
  }
}

/* Stops the fabric when a rank wakes, or when nothing left can wake one
 * (only the watchdog, the throttle's windows or the counters' samples are
 * pending: without the check a deadlocked run went on to the watchdog's
 * hour of simulated time, sampling and throttling all the way). */
static int rank_runnable_or_stuck(void *arg) {
  (void)arg;
  return coop_runnable() > 0 || !sim_net_pending_active(E.net);
}

#define PROGRESS_EVERY_S 15.0 /* wall seconds between progress lines */

/* Long simulations say how far they are: simulated time moves at its own
 * pace, so the runners' progress (on the engine's clock) can be rare. */
static void progress(void) {
  const double w = contend_monotonic_s();
  if (w < E.wall_next)
    return;
  E.wall_next = w + PROGRESS_EVERY_S;
  const sim_net_stats *st = sim_net_stats_get(E.net);
  /* over processes the lead process prints its own part's counts (the
   * run's are summed only at the end): the line says so */
  char part[64] = "";
  if (sim_engine_par_count() > 1)
    snprintf(part, sizeof part, " (part %d of %d: its events and hops)", sim_engine_par_me() + 1,
             sim_engine_par_count());
  fprintf(stderr,
          "[contend] sim%s: %.3f ms simulated, %.1f M events, %.1f M packet hops (%.2f M/s), "
          "wall %.0f s\n",
          part, sim_now() * 1e3, (double)st->events / 1e6, (double)st->packet_hops / 1e6,
          (double)st->packet_hops / 1e6 / (w - E.wall0), w - E.wall0);
}

/* Every rank is parked: run the fabric until one wakes (over processes:
 * in windows, engine_par.c). */
static int idle(void) {
  int woke;
  if (sim_engine_par_count() > 1) {
    woke = sim_engine_par_idle();
  } else {
    if (sim_net_pending_active(E.net)) /* else every rank waits for nothing: a deadlock */
      sim_net_run(E.net, SIM_NEVER, rank_runnable_or_stuck, NULL);
    woke = coop_runnable() > 0;
  }
  if (E.progress)
    progress();
  return woke;
}

static void watchdog(double seconds, const char *msg) {
  E.watchdog_gen++;
  if (seconds <= 0)
    return;
  snprintf(E.watchdog_msg, sizeof E.watchdog_msg, "%s", msg ? msg : "watchdog expired");
  E.watchdog_msg[strcspn(E.watchdog_msg, "\n")] = 0; /* one line with the simulated time */
  sim_net_timer_passive(E.net, sim_net_now(E.net) + (sim_time)(seconds * SIM_PS_PER_S),
                        SIM_T_WATCHDOG, (uint32_t)E.watchdog_gen);
}

/* The run's seed (every rank, before any packet moves): the fabric's
 * random routing choices follow it, so a run replays from its results. */
static void seed(contend_group *world, uint64_t s) {
  (void)world;
  E.su.net.seed = s;
  sim_net_seed(E.net, s);
  sim_engine_par_seed(s);
}

/* This part's figures now, its port counters' totals after them
 * (engine_par.c sums them over the parts, add_figures). */
static void take_figures(uint64_t *f, contend_strbuf *extra) {
  const sim_net_stats *st = sim_net_stats_get(E.net);
  f[SIM_FIG_HOPS] = st->packet_hops;
  f[SIM_FIG_PACKETS] = st->packets;
  f[SIM_FIG_BYTES] = st->bytes_delivered;
  f[SIM_FIG_ECN] = st->ecn_marks;
  f[SIM_FIG_CC] = st->cc_notifications;
  f[SIM_FIG_RESUMES] = coop_switches() - E.switches0;
  f[SIM_FIG_EVENTS] = st->events;
  if (!E.ctr)
    return;
  const size_t len = sim_counters_totals_len(E.ctr);
  void *t = malloc(len);
  if (!t)
    contend_fail("out of memory (port counters, %zu B)", len);
  sim_counters_totals(E.ctr, t);
  contend_sb_append(extra, t, len);
  free(t);
}

static void add_figures(const void *extra, size_t len) {
  if (len != sim_counters_totals_len(E.ctr))
    contend_fail("internal error: port totals of %zu B", len);
  if (!E.totals && !(E.totals = calloc(1, len)))
    contend_fail("out of memory (port counters, %zu B)", len);
  sim_counters_totals_add(E.ctr, E.totals, extra);
}

/* Rank 0 writes the run's results: the figures are taken the control
 * latency later in every part, and rank 0 goes on once they are in
 * (engine_par.c: the same figures at any process count). */
static void results_json(contend_group *g, contend_json *j) {
  (void)g;
  const sim_setup *s = &E.su;
  uint64_t f[SIM_FIGURES];
  const sim_time at = sim_engine_figures(E.control, f);
  contend_json_obj_begin(j, "simulation");
  contend_json_str(j, "topology", s->topo.spec);
  contend_json_int(j, "topology_nodes", s->topo.nnodes);
  contend_json_int(j, "routers", s->topo.nrouters);
  sim_router_json(j, &s->net);
  contend_json_str(j, "routing", sim_routing_name(s->routing));
  contend_json_int(j, "vcs", sim_routing_vcs(s->routing));
  contend_json_int(j, "ugal_threshold_bytes", sim_routing_ugal_threshold(s->routing));
  sim_degrade_json(j, &s->topo, &s->degrade);
  contend_json_str(j, "network_preset", s->preset);
  contend_json_str(j, "cc",
                   s->net.cc == SIM_CC_NONE  ? "none"
                   : s->net.cc == SIM_CC_ECN ? "ecn"
                                             : "perflow");
  contend_json_double(j, "control_latency_ns", (double)E.control / 1e3);
  contend_json_double(j, "sim_time_s", (double)at / SIM_PS_PER_S); /* of the figures */
  contend_json_uint(j, "packet_hops", f[SIM_FIG_HOPS]);
  contend_json_uint(j, "packets", f[SIM_FIG_PACKETS]);
  contend_json_uint(j, "events", f[SIM_FIG_EVENTS]); /* (ghost events over processes) */
  contend_json_uint(j, "rank_resumes", f[SIM_FIG_RESUMES]);
  contend_json_uint(j, "payload_bytes", f[SIM_FIG_BYTES]);
  contend_json_uint(j, "ecn_marks", f[SIM_FIG_ECN]);
  contend_json_uint(j, "cc_notifications", f[SIM_FIG_CC]);
  contend_json_double(j, "setup_wall_s", s->setup_s); /* this process's */
  contend_json_double(j, "deadlock_check_wall_s", s->deadlock_check_s);
  sim_engine_par_json(j);
  if (E.ctr && E.totals)
    sim_counters_summary_json_of(E.ctr, j, 10, at, E.totals);
  free(E.totals);
  E.totals = NULL;
  sim_throttle_json(E.throttle, j);
  contend_json_obj_end(j);
}

static const contend_inproc_backend sim_backend = {
    .engine = &contend_engine_sim,
    .library = "contend simulated fabric",
    .now = sim_now,
    .ctx_open = sim_mpi_ctx_open,
    .ctx_close = sim_mpi_ctx_close,
    .watchdog = watchdog,
    .control_delay = control_delay,
    .ticks = ticks,
    .wake_at = wake_at,
    .poll = poll_sleep,
    .idle = idle,
    .seed = seed,
    .results_json = results_json,
};

/* Builds the fabric from the run options (kept for launch). */
static int sim_check(contend_params *opts, char *err, size_t errlen) {
  if (E.have_setup) {
    sim_setup_free(&E.su);
    E.have_setup = 0;
  }
  /* the fabric's seed: the given one, else 0 until the run envelope draws
   * one from the clock (seed(), before any packet moves) */
  if (sim_setup_from_params(opts, (uint64_t)contend_param_int(opts, "seed"), &E.su, err, errlen))
    return -1;
  E.have_setup = 1;
  const int nodes = (int)contend_param_int(opts, "nodes");
  if (nodes > E.su.topo.nnodes) {
    snprintf(err, errlen, "--nodes %d: the topology %s has %d nodes", nodes, E.su.topo.spec,
             E.su.topo.nnodes);
    return -1;
  }
  if (!nodes && coop_ranks_check("sim", "the topology's", E.su.topo.nnodes,
                                 contend_param_int(opts, "ranks_per_node"), err, errlen))
    return -1;
  if (sim_throttle_config(opts, E.su.net.gbps[SIM_LINK_NODE], &E.throttle_cfg, &E.throttle_signal,
                          err, errlen))
    return -1;
  if (contend_param_bool(opts, "virtual_nodes")) {
    snprintf(err, errlen, "--virtual-nodes: the simulated fabric's nodes come from --topology");
    return -1;
  }
  return 0;
}

/* What a run over processes cannot do yet (exit status 2, the same in
 * every process): NULL, or the reason. */
static const char *not_over_processes(const contend_launch *l) {
  if (E.verify)
    return "--verify (payloads do not cross processes yet)";
  if (E.throttle_cfg.mode != CT_OFF)
    return "--throttle (its controllers are per process)";
  if (E.su.counters && *E.su.counters)
    return "--counters";
  if (l->opts && *contend_param_str(l->opts, "throttle_log"))
    return "--throttle-log";
  return NULL;
}

/* The launch in one process (world NULL) or in one of world's. */
static int launch_on(const contend_launch *l, contend_body body, void *arg, contend_group *world) {
  char err[1024];
  const int lead = !world || world->rank == 0;
  if (!E.have_setup && (!l->opts || sim_check(l->opts, err, sizeof err))) {
    if (lead)
      fprintf(stderr, "contend: error: %s\n", l->opts ? err : "the simulator needs run options");
    return CONTEND_EXIT_USAGE;
  }
  E.verify = l->opts ? contend_param_bool(l->opts, "verify") : 0;
  E.eager = E.su.eager_bytes;
  E.overhead = E.su.mpi_overhead;
  E.control = control_latency(&E.su.topo, E.su.net.latency);
  sim_net_hooks hooks = {.injected = on_injected, .delivered = on_delivered, .timer = on_timer};
  E.net = sim_net_new(&E.su.net, &hooks, err, sizeof err);
  if (!E.net) {
    if (lead)
      fprintf(stderr, "contend: error: %s\n", err);
    return CONTEND_EXIT_USAGE;
  }
  const int nodes = l->nodes > 0 ? l->nodes : E.su.topo.nnodes;
  const char *cannot = world && world->size > 1 ? not_over_processes(l) : NULL;
  if (cannot)
    snprintf(err, sizeof err,
             "%s: not with a simulation over processes (mpirun -n %d); run it in one", cannot,
             world->size);
  if (cannot || sim_engine_par_open(world, &E.su, E.net, take_figures, add_figures,
                                    l->opts ? contend_param_str(l->opts, "partition") : "auto",
                                    l->opts ? (uint64_t)contend_param_int(l->opts, "seed") : 0,
                                    nodes, err, sizeof err)) {
    if (lead)
      fprintf(stderr, "contend: error: %s\n", err);
    sim_net_free(E.net);
    E.net = NULL;
    return CONTEND_EXIT_USAGE;
  }
  if (sim_counters_open(&E.ctr, E.net, NULL, E.su.counters, E.su.counter_interval,
                        E.su.counters_max_bytes, err, sizeof err)) {
    fprintf(stderr, "contend: error: %s\n", err);
    sim_engine_par_close();
    sim_net_free(E.net);
    E.net = NULL;
    return CONTEND_EXIT_USAGE;
  }
  if (sim_throttle_open(&E.throttle, E.net, &E.throttle_cfg, E.throttle_signal,
                        l->opts ? contend_param_str(l->opts, "throttle_ca") : "0",
                        l->opts ? contend_param_str(l->opts, "throttle_log") : "", SIM_T_THROTTLE,
                        err, sizeof err)) {
    fprintf(stderr, "contend: error: %s\n", err);
    sim_counters_abandon(E.ctr);
    E.ctr = NULL;
    sim_engine_par_close();
    sim_net_free(E.net);
    E.net = NULL;
    return CONTEND_EXIT_USAGE;
  }
  E.switches0 = coop_switches();
  E.progress = l->opts && !contend_param_bool(l->opts, "quiet") && lead;
  E.wall0 = contend_monotonic_s();
  E.wall_next = E.wall0 + PROGRESS_EVERY_S;
  const contend_inproc_procs procs = {.count = sim_engine_par_count(),
                                      .me = sim_engine_par_me(),
                                      .proc_of_node = sim_engine_par_proc_of_node(),
                                      .finish = sim_engine_par_finish};
  int rc = contend_inproc_launch_procs(&sim_backend, nodes, l->ranks_per_node,
                                       procs.count > 1 ? &procs : NULL, body, arg);
  /* a run refused or failed leaves neither counters nor log (no header-only files) */
  if (rc)
    sim_counters_abandon(E.ctr);
  else if (sim_counters_close(E.ctr, err, sizeof err)) {
    fprintf(stderr, "contend: %s\n", err);
    rc = CONTEND_EXIT_FAIL;
  }
  E.ctr = NULL;
  if (sim_throttle_close(E.throttle, !rc, err, sizeof err)) {
    fprintf(stderr, "contend: %s\n", err);
    if (!rc)
      rc = CONTEND_EXIT_FAIL;
  }
  E.throttle = NULL;
  sim_engine_par_close();
  sim_net_free(E.net);
  E.net = NULL;
  sim_mpi_reset();
  sim_setup_free(&E.su);
  E.have_setup = 0;
  return rc;
}

typedef struct par_launch {
  const contend_launch *l;
  contend_body body;
  void *arg;
} par_launch;

static int par_body(contend_group *world, void *p) {
  const par_launch *pl = p;
  return launch_on(pl->l, pl->body, pl->arg, world);
}

/* Under mpirun/srun with several processes: one simulation over them
 * (engine_par.c), each process one of MPI's. */
static int sim_launch(const contend_launch *l, contend_body body, void *arg) {
  if (contend_launcher_size() < 2)
    return launch_on(l, body, arg, NULL);
  const contend_engine *mpi = contend_engine_find("mpi");
  if (!mpi || mpi->not_built) {
    fprintf(stderr, "contend: error: a simulation over processes needs the MPI engine\n");
    return CONTEND_EXIT_USAGE;
  }
  contend_launch ml = {.argc = l->argc, .argv = l->argv};
  par_launch pl = {l, body, arg};
  return mpi->launch(&ml, par_body, &pl);
}

/* The files the fabric's options name (topology.conf), for the run's checks. */
static void sim_files(const contend_params *opts, contend_files *fs) {
  if (contend_params_find(opts, "topology") >= 0)
    sim_params_files(opts, fs);
}

static const contend_engine_options sim_options[] = {
    {sim_param_defs, "describes the simulated fabric"},
    {ct_param_defs, CT_PARAM_WHAT},
    {NULL, NULL}};

const contend_engine contend_engine_sim = {
    .name = "sim",
    .help = "every rank a user-level context on a simulated credit-based fabric (--topology, "
            "--network, --routing, --cc; simulated time)",
    .options = sim_options,
    .in_process = 1,
    .over_processes = 1,
    .simulated_time = 1,
    .node_discovery = "simulated",
    .more_nodes = "--topology with more nodes, or --nodes N",
    .machine_option = "topology",
    .file_io_note = "The simulated fabric has no file system: file I/O is counted but takes no "
                    "time\nand holds no data (its checks are skipped).",
    .files = sim_files,
    .check = sim_check,
    .launch = sim_launch,
};
