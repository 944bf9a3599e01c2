/* `contend pairs`: every ordered pair of ranks measured with LLNL's
 * mpiGraph shifts.  In round k every rank r sends to (r + k) mod P and
 * receives from (r - k) mod P: `iters` messages of `bytes`, then `lat_iters`
 * ping-pongs of 8 B; the receiving rank records the pair (r - k) -> r:
 * bandwidth (bytes x iters over the time their arrival took at the
 * receiver) and latency (half the mean round trip).  Unlike mpiGraph, whose
 * ranks send and receive at once (a rank's time then includes its own
 * send), a round runs in two or three phases in which every rank only
 * sends, only receives or waits (phase_of), so that a pair's time depends
 * on its own path and on the other flows of the phase only.  Rounds are
 * the P - 1 shifts, or --rounds N of them drawn with the run's seed: every
 * rank takes part in every round, with memory O(rounds) per rank (rank 0
 * gathers rounds x P values of each matrix).  Every phase starts after a
 * barrier of the control plane.  With --bully (beside.c) a motif loads
 * the fabric from some nodes while the pairs are measured among the
 * others, or beside them with --bully-share (ranks, barriers and the
 * gather are then the pairs' group's).
 * Runs on every engine through the run envelope (src/run/envelope.h); the
 * results are schema contend-pairs (schemas/contend-pairs.schema.json). */
#include "pairs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../run/envelope.h"
#include "beside.h"
#include "contend/json.h"
#include "contend/rng.h"
#include "contend/strbuf.h"
#include "contend/world.h"

#define PAIRS_SCHEMA_VERSION "1.0"
#define CELLS_MAX (1L << 24) /* rounds x ranks: pairs one run measures at most */

static const contend_param_def pairs_defs[] = {
    {"bytes", CONTEND_P_INT, "131072", "B", "message size of the bandwidth rounds", 1, 1 << 30},
    {"iters", CONTEND_P_INT, "8", "count", "messages per pair and round (bandwidth)", 1, 1e6},
    {"lat_iters", CONTEND_P_INT, "20", "count", "8 B messages per pair and round (latency)", 1,
     1e6},
    {"warmup", CONTEND_P_INT, "1", "count", "untimed exchanges per round before each timing", 0,
     1e6},
    {"rounds", CONTEND_P_INT, "0", "count",
     "shifts measured, drawn with the seed among the P - 1 (0: all; every rank takes part in "
     "every round)",
     0, 1e9},
    {"bully", CONTEND_P_STRING, "", "",
     "a job-file motif run beside the pairs on --bully-nodes nodes until the last round ends: "
     "NAME[:key=value,...], e.g. bully_incast:receivers=1,msg_bytes=65536 (contend jobs --list)",
     0, 0},
    {"bully_nodes", CONTEND_P_INT, "0", "nodes",
     "nodes the --bully runs on; the pairs are measured among the others (among all with "
     "--bully-share)",
     0, 1e7},
    {"bully_place", CONTEND_P_STRING, "last", "",
     "the --bully's nodes: last (the run's last nodes) or random (drawn with the seed)", 0, 0},
    {"bully_share", CONTEND_P_BOOL, "0", "",
     "the pairs on every node, the --bully on the other ranks of its nodes (needs "
     "--ranks-per-node 2 or more; ranks of other nodes beyond the first wait): the links the "
     "bully stalls at its own NICs are then measured too",
     0, 0},
    CONTEND_PARAM_END};

typedef struct pairs_state {
  void *sbuf, *rbuf, *slat, *rlat;
} pairs_state;

static int pairs_setup(contend_ctx *c) {
  pairs_state *s = c->state;
  const size_t b = (size_t)contend_param_int(c->params, "bytes");
  s->sbuf = c->ops->alloc(c, b);
  s->rbuf = c->ops->alloc(c, b);
  s->slat = c->ops->alloc(c, 8);
  s->rlat = c->ops->alloc(c, 8);
  c->msg_bytes = b;
  c->metric_scale = 1;
  return 0;
}

/* The context the exchanges run on (not in the motif registry). */
static const contend_param_def no_params[] = {CONTEND_PARAM_END};
static const contend_motif pairs_motif = {
    .name = "pairs",
    .label = "Pairs",
    .help = "all-pairs shifts (contend pairs)",
    .role = CONTEND_ROLE_CANARY,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = no_params,
    .state_size = sizeof(pairs_state),
    .setup = pairs_setup,
};

static void help(const contend_params *p) {
  contend_strbuf o = {0};
  contend_sb_printf(
      &o,
      "usage: mpirun -np P contend pairs [--bytes B] [--iters N] [--rounds N] [-o FILE]\n"
      "       contend pairs --engine sim --topology SPEC [--degrade C:P=F] [--rounds N] -o F\n"
      "       contend pairs ... --bully MOTIF[:k=v,...] --bully-nodes N [--bully-place random]\n\n"
      "Measures every ordered pair of ranks, as mpiGraph does: in round k (1 .. P-1) every\n"
      "rank sends to rank + k and receives from rank - k (mod P), --iters messages of\n"
      "--bytes, then ping-pongs 8 B --lat-iters times; the receiver records the pair's\n"
      "bandwidth and latency (half the round trip).  A round runs in two or three phases in\n"
      "which a rank only sends or only receives, so a pair's time is its own path's.\n"
      "--rounds N measures N of the P-1 shifts, drawn with the seed.\n"
      "--bully runs a job-file motif on --bully-nodes nodes (warmed up before the first\n"
      "round, stopped after the last) and measures the pairs among the other nodes only:\n"
      "P is then their ranks, and the JSON's bully object names the bully's nodes.\n"
      "One rank per node is the usual set-up (--ranks-per-node on in-process engines,\n"
      "the launcher's on MPI).  `contend locate` infers slow links from the results.\n\n"
      "JSON (schema contend-pairs): ranks, rank_node, shifts, bw_mib_s and lat_us with\n"
      "one row per shift and one column per source rank: row i, column s is the pair\n"
      "s -> (s + shifts[i]) mod P.  At most %ld pairs (rounds x ranks) per run.\n\n"
      "Options:\n",
      CELLS_MAX);
  contend_params_help(p, "", &o);
  fputs(o.s ? o.s : "", stdout);
  contend_sb_free(&o);
}

typedef struct pairs_args {
  contend_params *opts;
  const pairs_bully *bully;
  int argc;
  char **argv;
} pairs_args;

static int cmp_long(const void *a, const void *b) {
  const long x = *(const long *)a, y = *(const long *)b;
  return (x > y) - (x < y);
}

/* The shifts of the run (every rank draws the same from the seed). */
static long *draw_shifts(long P, long rounds, uint64_t seed, long *n) {
  const long all = P - 1;
  long *k = malloc(sizeof *k * (size_t)all);
  if (!k)
    contend_fail("out of memory (%ld shifts)", all);
  for (long i = 0; i < all; i++)
    k[i] = i + 1;
  if (rounds <= 0 || rounds >= all) {
    *n = all;
    return k;
  }
  contend_rng r;
  contend_rng_init(&r, seed, 0x70616972, 0, 0, 0);
  for (long i = 0; i < rounds; i++) { /* partial Fisher-Yates */
    const long j = i + (long)contend_rng_below(&r, (uint64_t)(all - i));
    const long t = k[i];
    k[i] = k[j];
    k[j] = t;
  }
  qsort(k, (size_t)rounds, sizeof *k, cmp_long);
  *n = rounds;
  return k;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The table's ranges and its five slowest pairs (bw, lat: [receiver][shift]). */
static void report_values(contend_strbuf *table, long P, const long *shift, long ns,
                          const double *bw, const double *lat) {
  const long cells = P * ns;
  double *sorted = malloc(sizeof *sorted * (size_t)cells);
  if (!sorted)
    contend_fail("out of memory");
  memcpy(sorted, bw, sizeof *sorted * (size_t)cells);
  qsort(sorted, (size_t)cells, sizeof *sorted, cmp_double);
  const double bmin = sorted[0], bmed = sorted[cells / 2], bmax = sorted[cells - 1];
  memcpy(sorted, lat, sizeof *sorted * (size_t)cells);
  qsort(sorted, (size_t)cells, sizeof *sorted, cmp_double);
  const double lmin = sorted[0], lmed = sorted[cells / 2], lmax = sorted[cells - 1];
  free(sorted);
  contend_sb_printf(table, "  bandwidth MiB/s: min %.1f  median %.1f  max %.1f\n", bmin, bmed,
                    bmax);
  contend_sb_printf(table, "  latency us:      min %.3f  median %.3f  max %.3f\n", lmin, lmed,
                    lmax);
  contend_sb_printf(table, "  slowest pairs (bandwidth):\n");
  long shown[5] = {-1, -1, -1, -1, -1};
  for (int s = 0; s < 5 && s < cells; s++) {
    long best = -1;
    for (long c = 0; c < cells; c++) {
      int seen = 0;
      for (int q = 0; q < s; q++)
        seen |= shown[q] == c;
      if (!seen && (best < 0 || bw[c] < bw[best]))
        best = c;
    }
    shown[s] = best;
    const long r = best / ns, k = shift[best % ns];
    contend_sb_printf(table, "    %ld -> %ld  %.1f MiB/s  %.3f us\n", (r - k + P) % P, r, bw[best],
                      lat[best]);
  }
}

/* Where the pairs ran: their ranks' nodes, and the bully beside them. */
typedef struct pairs_place {
  long P;                   /* the pairs' ranks */
  const int *node;          /* the node of each (P entries) */
  int nodes;                /* distinct nodes among them */
  const pairs_bully *bully; /* bully->m NULL: none */
  const char *is_bully;     /* per node of the run */
  long bully_ranks;
  pairs_bully_stats bully_stats;
} pairs_place;

/* Rank 0: the table (summary and the slowest pairs) and the JSON. */
static void report(const contend_envelope *env, const contend_params *opts, const pairs_place *pl,
                   const long *shift, long ns, const double *bw, const double *lat,
                   contend_strbuf *table, contend_strbuf *js) {
  const long P = pl->P;
  /* bw, lat: [receiver r][shift i], the pair (r - k) -> r */
  contend_sb_printf(table,
                    "contend pairs: %ld ranks on %d nodes, %ld of %ld shifts, %ld pairs, %lld B x "
                    "%lld, seed %llu\n",
                    P, pl->nodes, ns, P - 1, P * ns, (long long)contend_param_int(opts, "bytes"),
                    (long long)contend_param_int(opts, "iters"), (unsigned long long)env->seed);
  if (env->dry_run) /* a plan: the rounds ran on the trace engine, nothing was timed */
    contend_sb_printf(table, "  a plan (--dry-run): no pair was timed, the matrices hold 0\n");
  else
    report_values(table, P, shift, ns, bw, lat);
  if (pl->bully->m)
    contend_sb_printf(table,
                      "  beside a bully: %s on %ld nodes (%ld ranks, --bully-place %s%s), %.0f "
                      "invocations, %.1f MiB/s per rank\n",
                      pl->bully->m->name, pl->bully->nodes, pl->bully_ranks,
                      pl->bully->random ? "random" : "last",
                      pl->bully->share ? ", sharing the pairs' nodes" : "",
                      pl->bully_stats.invocations, pairs_bully_mib_s(&pl->bully_stats));

  contend_json j;
  contend_json_init(&j, js);
  contend_json_obj_begin(&j, NULL);
  contend_envelope_json_head(&j, env, "contend-pairs", PAIRS_SCHEMA_VERSION);
  contend_json_obj_begin(&j, "config");
  contend_params_json(&j, "options", opts, env->seed);
  contend_json_obj_end(&j);
  contend_json_obj_begin(&j, "environment");
  contend_envelope_json_environment(&j, env);
  contend_json_obj_end(&j);
  contend_json_int(&j, "ranks", P);
  contend_json_arr_begin(&j, "rank_node");
  for (long r = 0; r < P; r++)
    contend_json_int(&j, NULL, pl->node[r]);
  contend_json_arr_end(&j);
  if (pl->bully->m)
    pairs_bully_json(&j, pl->bully, pl->is_bully, env->nodes.nnodes, pl->bully_ranks,
                     &pl->bully_stats, env->seed);
  contend_json_int(&j, "bytes", contend_param_int(opts, "bytes"));
  contend_json_int(&j, "rounds_total", P - 1);
  contend_json_arr_begin(&j, "shifts");
  for (long i = 0; i < ns; i++)
    contend_json_int(&j, NULL, shift[i]);
  contend_json_arr_end(&j);
  for (int m = 0; m < 2; m++) {
    const double *v = m ? lat : bw;
    contend_json_arr_begin(&j, m ? "lat_us" : "bw_mib_s");
    for (long i = 0; i < ns; i++) {
      contend_json_arr_begin(&j, NULL);
      for (long s = 0; s < P; s++) /* source s, receiver s + k */
        contend_json_double(&j, NULL, v[((s + shift[i]) % P) * ns + i]);
      contend_json_arr_end(&j);
    }
    contend_json_arr_end(&j);
  }
  contend_json_obj_end(&j);
}

/* The phase (0, 1 or 2) in which rank r sends in the round of shift k:
 * the ranks form gcd(P, k) cycles r -> r + k -> ...; along a cycle the
 * phases alternate 0, 1, 0, 1, ... and the last rank of an odd cycle
 * takes 2, so that a sender's receiver never sends in the same phase and
 * every rank either sends, receives or waits. */
static int phase_of(long P, long k, long r) {
  long a = P, b = k; /* g = gcd(P, k) */
  while (b) {
    const long t = a % b;
    a = b;
    b = t;
  }
  const long g = a, L = P / g, c = r % g, step = (k / g) % L;
  /* position j with r = c + j k (mod P): j = ((r - c) / g) x step^-1 (mod L) */
  long inv = 0, t1 = 1, r0 = L, r1 = step; /* extended Euclid: inv x step = 1 (mod L) */
  while (r1) {
    const long q = r0 / r1, t2 = inv - q * t1, r2 = r0 - q * r1;
    inv = t1, t1 = t2, r0 = r1, r1 = r2;
  }
  inv = ((inv % L) + L) % L;
  const long j = (long)(((__int128)((r - c) / g) * inv) % L);
  return (L % 2 && j == L - 1) ? 2 : (int)(j % 2);
}

/* One phase of a round on c: a sender streams `times` messages of `bytes`
 * to `to`, its receiver times their arrival (s on its clock, returned;
 * -1 on other ranks); with pingpong each message is answered (the time is
 * then the round trips'). */
static double phase(contend_ctx *c, contend_group *world, const pairs_state *st, size_t bytes,
                    int role, int peer, long warm, long times, int pingpong) {
  void *sb = bytes == 8 ? st->slat : st->sbuf, *rb = bytes == 8 ? st->rlat : st->rbuf;
  const contend_xfer snd = {sb, bytes, peer, 7, 1}, rcv = {rb, bytes, peer, 7, 0};
  contend_xfer x[2];
  int len[2] = {1, 1}, n = 0;
  if (role == 1) /* sender */
    x[n++] = snd, pingpong ? (void)(x[n++] = rcv) : (void)0;
  else if (role == 2) /* receiver */
    x[n++] = rcv, pingpong ? (void)(x[n++] = snd) : (void)0;
  if (n && warm)
    c->ops->repeat(c, x, len, n, warm);
  contend_gbarrier(world);
  const double t0 = contend_now(world);
  if (n)
    c->ops->repeat(c, x, len, n, times);
  const double t = contend_now(world) - t0;
  return role == 2 ? t : -1;
}

/* The pairs' rounds on their group g (every rank of g): the receiver's
 * bandwidth and latency of every shift into mine (2 per shift). */
static void measure(contend_envelope *env, contend_group *g, contend_ctx *c,
                    const contend_params *opts, const long *shift, long ns, double *mine) {
  const pairs_state *st = c->state;
  const long P = g->size;
  const size_t bytes = (size_t)contend_param_int(opts, "bytes");
  const long iters = (long)contend_param_int(opts, "iters"),
             liters = (long)contend_param_int(opts, "lat_iters"),
             warm = (long)contend_param_int(opts, "warmup");
  contend_progress(env, g, "pairs: %ld ranks, %ld of %ld shifts, %zu B x %ld, seed %llu", P, ns,
                   P - 1, bytes, iters, (unsigned long long)env->seed);
  const int r = g->rank;
  for (long i = 0; i < ns; i++) {
    const long k = shift[i];
    const int to = (int)((r + k) % P), from = (int)((r - k + P) % P);
    const int mine_ph = phase_of(P, k, r), from_ph = phase_of(P, k, from);
    for (int ph = 0; ph < 3; ph++) { /* every rank runs every phase (barriers) */
      const int role = mine_ph == ph ? 1 : from_ph == ph ? 2 : 0;
      const int peer = role == 1 ? to : from;
      const double tb = phase(c, g, st, bytes, role, peer, warm, iters, 0);
      const double tl = phase(c, g, st, 8, role, peer, warm, liters, 1);
      if (role == 2) {
        mine[2 * i] = tb > 0 ? (double)bytes * (double)iters / tb / 1048576.0 : 0.0;
        mine[2 * i + 1] = tl / (double)liters / 2 * 1e6;
      }
    }
    if ((i + 1) % 64 == 0)
      contend_progress(env, g, "pairs: %ld of %ld shifts", i + 1, ns);
  }
}

/* The refusal of the run's counts (the same on every rank), or "". */
static void check_counts(long P, long rounds, char *msg, size_t len) {
  if (P < 2)
    snprintf(msg, len, "one rank has no pairs: run at least 2 ranks");
  else if (rounds > P - 1)
    snprintf(msg, len, "--rounds %ld: %ld ranks have %ld shifts", rounds, P, P - 1);
  else if ((rounds ? rounds : P - 1) * P > CELLS_MAX)
    snprintf(msg, len,
             "%ld ranks x %ld rounds = %ld pairs, more than the limit of %ld: give --rounds %ld "
             "or fewer",
             P, rounds ? rounds : P - 1, (rounds ? rounds : P - 1) * P, CELLS_MAX, CELLS_MAX / P);
}

static int pairs_body(contend_group *world, void *arg) {
  pairs_args *a = arg;
  const contend_params *opts = a->opts;
  const pairs_bully *bully = a->bully;
  contend_envelope env;
  int status = contend_envelope_begin(&env, world, opts, "pairs", a->argc, a->argv);
  if (status) {
    contend_envelope_free(&env);
    return status;
  }
  const int W = world->size, nn = env.nodes.nnodes;
  const int *node_of = env.nodes.node_of_rank;
  char *is_bully = calloc((size_t)nn, 1), *role = malloc((size_t)W);
  int *pnode = malloc(sizeof *pnode * (size_t)W); /* the pairs' ranks' nodes */
  char *pnode_seen = calloc((size_t)nn, 1);
  if (!is_bully || !role || !pnode || !pnode_seen)
    contend_fail("out of memory (%d nodes)", nn);
  char msg[512] = "";
  pairs_bully_place(bully, &env.nodes, W, env.seed, is_bully, role, msg, sizeof msg);
  pairs_place pl = {.node = pnode, .bully = bully, .is_bully = is_bully};
  for (int r = 0; r < W; r++) {
    pl.bully_ranks += role[r] == PAIRS_ROLE_BULLY;
    if (role[r] != PAIRS_ROLE_PAIRS)
      continue;
    pnode[pl.P++] = node_of[r];
    pl.nodes += !pnode_seen[node_of[r]];
    pnode_seen[node_of[r]] = 1;
  }
  free(pnode_seen);
  const int my_role = role[world->rank];
  free(role);
  const long P = pl.P, rounds = (long)contend_param_int(opts, "rounds");
  if (!*msg)
    check_counts(P, rounds, msg, sizeof msg);
  if (*msg) { /* the same on every rank */
    contend_envelope_error(&env, world, msg);
    contend_envelope_free(&env);
    free(is_bully);
    free(pnode);
    return CONTEND_EXIT_USAGE;
  }
  const int measures = my_role == PAIRS_ROLE_PAIRS;
  /* my group: the pairs' ranks, the bully's or the waiting ones, in world order */
  contend_group *g = bully->m ? contend_split(world, my_role, world->rank) : world;
  long ns;
  long *shift = draw_shifts(P, rounds, env.seed, &ns);
  double *mine = measures ? malloc(sizeof *mine * (size_t)ns * 2) : NULL;
  if (measures && !mine)
    contend_fail("out of memory");
  contend_ctx c;
  if (measures &&
      world->ops->ctx_open(&c, &pairs_motif, opts, g, env.nodes.my_node, env.seed, NULL))
    contend_fail("contend pairs: setup failed: %s", c.error);
  if (bully->m) /* the bully's context opens after the pairs' (RMA windows, one at a time) */
    contend_gbarrier(world);
  world->ops->watchdog(world, contend_envelope_watchdog(opts, 3600),
                       "contend pairs: watchdog: the run took longer than --watchdog; aborting\n");
  pairs_bully_stats bst = {0};
  contend_ctx bc;
  if (my_role == PAIRS_ROLE_BULLY) {
    bst = pairs_bully_run(bully, &bc, world, g, env.nodes.my_node, env.seed);
  } else if (bully->m) { /* the bully's signals: ready (warm) before, stop after the rounds */
    contend_signal *ready = contend_signal_post(world);
    contend_signal_wait(world, ready, 0);
    if (measures)
      measure(&env, g, &c, opts, shift, ns, mine);
    contend_signal *stop = contend_signal_post(world);
    contend_signal_wait(world, stop, 0);
    contend_signal_free(world, ready);
    contend_signal_free(world, stop);
  } else {
    measure(&env, g, &c, opts, shift, ns, mine);
  }
  if (measures)
    world->ops->ctx_close(&c);
  if (bully->m) {
    contend_gbarrier(world); /* one context closes at a time, as they opened */
    if (my_role == PAIRS_ROLE_BULLY)
      world->ops->ctx_close(&bc);
    pl.bully_stats = pairs_bully_stats_sum(world, bst);
    contend_group_free(g);
  }
  world->ops->watchdog(world, 0, NULL);
  /* rank 0 of the world gets the pairs' rows in their rank order (the other ranks give none) */
  double *all = contend_ggatherv(world, mine, measures ? sizeof *mine * (size_t)ns * 2 : 0, NULL);
  contend_envelope_finish(&env, world);
  contend_strbuf table = {0}, js = {0};
  if (world->rank == 0) {
    double *bw = malloc(sizeof *bw * (size_t)(ns * P)),
           *lat = malloc(sizeof *lat * (size_t)(ns * P));
    if (!bw || !lat)
      contend_fail("out of memory");
    for (long q = 0; q < ns * P; q++)
      bw[q] = all[2 * q], lat[q] = all[2 * q + 1];
    report(&env, opts, &pl, shift, ns, bw, lat, &table, &js);
    free(bw);
    free(lat);
  }
  status = contend_envelope_output(&env, world, opts, &table, &js, 0, NULL);
  contend_sb_free(&table);
  contend_sb_free(&js);
  free(all);
  free(mine);
  free(shift);
  free(is_bully);
  free(pnode);
  contend_envelope_free(&env);
  return status;
}

int contend_pairs_main(int argc, char **argv, int print) {
  contend_param_def *defs = contend_run_defs_with(pairs_defs);
  contend_params p;
  char err[1024];
  if (contend_params_init(&p, defs, "", err, sizeof err))
    contend_fail("internal error: %s", err);
  int rc = contend_params_parse_argv(&p, argc, argv, 1, err, sizeof err);
  const contend_engine *e = NULL;
  pairs_bully bully = {0};
  if (rc == 0)
    e = contend_run_engine(&p, NULL, err, sizeof err);
  if (e && pairs_bully_parse(&bully, &p, err, sizeof err))
    e = NULL;
  if (rc == 1) {
    if (print)
      help(&p);
    rc = CONTEND_EXIT_OK;
  } else if (rc < 0 || !e) {
    if (print)
      fprintf(stderr, "contend pairs: error: %s (see contend pairs --help)\n", err);
    rc = CONTEND_EXIT_USAGE;
  } else {
    pairs_args a = {&p, &bully, argc, argv};
    contend_launch l = {.argc = &argc,
                        .argv = &argv,
                        .nodes = (int)contend_param_int(&p, "nodes"),
                        .ranks_per_node = (int)contend_param_int(&p, "ranks_per_node"),
                        .opts = &p};
    rc = e->launch(&l, pairs_body, &a);
  }
  pairs_bully_free(&bully);
  contend_params_free(&p);
  free(defs);
  return rc;
}
