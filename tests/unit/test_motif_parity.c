/* Motif parity between the trace engine's plan and the simulated fabric:
 * every registered motif (canaries, congestors and job-file motifs) runs
 * through the measurement driver on the trace engine and then on the
 * simulated fabric, with the same seed, loop counts and node layout.  The
 * trace engine records each step as it is posted; the simulator counts
 * the payload its fabric delivered (sim_mpi.c).  For every motif the
 * bytes and messages per (source node, destination node), exact and
 * estimated (collective expansion), and the collective, I/O and compute
 * totals must be equal.  A motif whose setup fails must fail on both.
 *
 *   test_motif_parity [--nodes N] [--ranks-per-node P] [--topology SPEC]
 *
 * Exit status 0 when every motif matches, 1 naming the first difference,
 * 2 on bad arguments. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/error.h"
#include "../../src/run/driver.h"
#include "../../src/run/envelope.h"
#include "contend/motif.h"
#include "contend/traffic.h"
#include "contend/world.h"

#define MAXM 64

typedef struct run {
  const contend_motif *m[MAXM];
  int nm;
  contend_traffic tr[MAXM]; /* every rank's traffic, merged */
  int failed[MAXM];         /* setup failed (any rank) */
  char why[MAXM][256];
} run;

static void *xcalloc(size_t n) {
  void *p = calloc(1, n ? n : 1);
  if (!p)
    contend_fail("out of memory");
  return p;
}

/* One rank: every motif on the world group, one after the other. */
static int body(contend_group *world, void *arg) {
  run *R = arg;
  contend_nodes nd;
  memset(&nd, 0, sizeof nd);
  char err[512];
  if (world->ops->nodes(world, 0, &nd, err, sizeof err))
    contend_fail("nodes: %s", err);
  const contend_ctx job = {.job_name = "parity", .job_index = 0, .run_id = "parity", .stream = 1};
  for (int k = 0; k < R->nm; k++) {
    const contend_motif *m = R->m[k];
    contend_params p;
    if (contend_params_init(&p, m->params, m->name, err, sizeof err))
      contend_fail("%s", err);
    contend_ctx c;
    memset(&c, 0, sizeof c);
    const int rc = world->ops->ctx_open(&c, m, &p, world, nd.my_node, 12345 + (uint64_t)k, &job);
    if (rc) {
      R->failed[k] = 1;
      if (*c.error)
        snprintf(R->why[k], sizeof R->why[k], "%s", c.error);
    } else {
      contend_traffic t;
      contend_traffic_init(&t);
      contend_drive d = {.clock = world,
                         .measurements = 1,
                         .rounds = 2,
                         .warmup = 1,
                         .iters = 2,
                         .rng_kind = 2,
                         .rng_id = (uint64_t)k,
                         .traffic = &t};
      contend_drive_run(&c, m, &d);
      /* every message of the last iteration has landed once all ranks
       * are past it: the barrier is on the control plane */
      contend_gbarrier(world);
      contend_traffic_merge(&R->tr[k], &t);
      contend_traffic_free(&t);
    }
    world->ops->ctx_close(&c);
    contend_params_free(&p);
    contend_gbarrier(world);
  }
  return 0;
}

static int launch(const char *engine, int nodes, int ppn, const char *topo, run *R) {
  const contend_engine *e = contend_engine_find(engine);
  if (!e)
    contend_fail("engine %s is not built", engine);
  contend_param_def *defs = contend_run_defs_with(NULL);
  contend_params opts;
  char err[1024];
  if (contend_params_init(&opts, defs, "run", err, sizeof err))
    contend_fail("%s", err);
  char nodes_s[16], ppn_s[16];
  snprintf(nodes_s, sizeof nodes_s, "%d", nodes);
  snprintf(ppn_s, sizeof ppn_s, "%d", ppn);
  const char *set[][2] = {
      {"engine", engine},        {"seed", "7"},     {"quiet", "1"}, {"nodes", nodes_s},
      {"ranks_per_node", ppn_s}, {"topology", topo}};
  const int nset = strcmp(engine, "sim") ? 5 : 6;
  for (int i = 0; i < nset; i++)
    if (contend_params_set(&opts, contend_params_find(&opts, set[i][0]), set[i][1], err,
                           sizeof err))
      contend_fail("--%s: %s", set[i][0], err);
  if (e->check && e->check(&opts, err, sizeof err)) {
    fprintf(stderr, "test_motif_parity: %s\n", err);
    exit(2);
  }
  int argc = 1;
  char *argv0[] = {"test_motif_parity", NULL}, **argv = argv0;
  contend_launch l = {
      .argc = &argc, .argv = &argv, .nodes = nodes, .ranks_per_node = ppn, .opts = &opts};
  const int rc = e->launch(&l, body, R);
  contend_params_free(&opts);
  free(defs);
  return rc;
}

/* Compares one map; returns 0 or prints the first difference. */
static int same_map(const char *motif, const char *what, const contend_flowmap *a,
                    const contend_flowmap *b, long *pairs) {
  size_t na, nb;
  contend_flow *fa = contend_flows_sorted(a, &na), *fb = contend_flows_sorted(b, &nb);
  int bad = 0;
  for (size_t i = 0; !bad && i < (na > nb ? na : nb); i++) {
    const contend_flow *x = i < na ? &fa[i] : NULL, *y = i < nb ? &fb[i] : NULL;
    if (!x || !y || x->src != y->src || x->dst != y->dst || x->bytes != y->bytes ||
        x->msgs != y->msgs) {
      printf("FAIL %s (%s pairs): trace ", motif, what);
      if (x)
        printf("%d->%d %.0f B in %.0f msgs", x->src, x->dst, x->bytes, x->msgs);
      else
        printf("nothing");
      printf(", sim ");
      if (y)
        printf("%d->%d %.0f B in %.0f msgs\n", y->src, y->dst, y->bytes, y->msgs);
      else
        printf("nothing\n");
      bad = 1;
    }
  }
  *pairs += (long)na;
  free(fa);
  free(fb);
  return bad;
}

static int usage(const char *why) {
  fprintf(stderr,
          "test_motif_parity: %s\nusage: test_motif_parity [--nodes N] [--ranks-per-node P] "
          "[--topology SPEC]\n",
          why);
  return 2;
}

int main(int argc, char **argv) {
  int nodes = 8, ppn = 2;
  const char *topo = "fattree:leaves=4,nodes=2,uplinks=2";
  for (int i = 1; i < argc; i++) {
    const int more = i + 1 < argc;
    if (!strcmp(argv[i], "--nodes") && more)
      nodes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--ranks-per-node") && more)
      ppn = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--topology") && more)
      topo = argv[++i];
    else
      return usage("bad arguments");
  }
  if (nodes < 2 || ppn < 1)
    return usage("--nodes must be >= 2 and --ranks-per-node >= 1");
  run *R[2] = {xcalloc(sizeof(run)), xcalloc(sizeof(run))};
  for (int e = 0; e < 2; e++) {
    for (int i = 0; contend_motifs[i]; i++)
      R[e]->m[R[e]->nm++] = contend_motifs[i];
    for (int i = 0; contend_workload_motifs[i]; i++)
      if (!contend_motif_find(contend_workload_motifs[i]->name))
        R[e]->m[R[e]->nm++] = contend_workload_motifs[i];
    for (int k = 0; k < R[e]->nm; k++)
      contend_traffic_init(&R[e]->tr[k]);
  }
  const char *engines[2] = {"trace", "sim"};
  for (int e = 0; e < 2; e++)
    if (launch(engines[e], nodes, ppn, topo, R[e])) {
      printf("FAIL: the %s engine's run failed\n", engines[e]);
      return 1;
    }
  int bad = 0, compared = 0;
  long pairs = 0;
  for (int k = 0; k < R[0]->nm; k++) {
    const char *name = R[0]->m[k]->name;
    const contend_traffic *a = &R[0]->tr[k], *b = &R[1]->tr[k];
    if (R[0]->failed[k] || R[1]->failed[k]) {
      if (R[0]->failed[k] != R[1]->failed[k]) {
        printf("FAIL %s: setup failed on %s only (%s)\n", name, R[0]->failed[k] ? "trace" : "sim",
               R[0]->failed[k] ? R[0]->why[k] : R[1]->why[k]);
        bad = 1;
      } else {
        printf("skip %s: setup fails on both engines (%s)\n", name, R[0]->why[k]);
      }
      continue;
    }
    int b1 = same_map(name, "exact", &a->flows, &b->flows, &pairs);
    b1 |= same_map(name, "estimated", &a->estimated, &b->estimated, &pairs);
    for (int i = 0; i < CONTEND_COLL_N; i++)
      if (a->coll_calls[i] != b->coll_calls[i] || a->coll_bytes[i] != b->coll_bytes[i]) {
        printf("FAIL %s: %s calls %g/%g, bytes %g/%g (trace/sim)\n", name, contend_coll_names[i],
               a->coll_calls[i], b->coll_calls[i], a->coll_bytes[i], b->coll_bytes[i]);
        b1 = 1;
      }
    if (a->io_write_bytes != b->io_write_bytes || a->io_read_bytes != b->io_read_bytes ||
        a->io_write_ops != b->io_write_ops || a->io_read_ops != b->io_read_ops ||
        a->compute_s != b->compute_s) {
      printf("FAIL %s: I/O or compute totals differ\n", name);
      b1 = 1;
    }
    double by, ms;
    contend_flows_total(&a->flows, &by, &ms);
    double eby, ems;
    contend_flows_total(&a->estimated, &eby, &ems);
    if (!b1)
      printf("ok   %-20s %6zu exact pairs %12.0f B, %6zu estimated pairs %12.0f B\n", name,
             a->flows.n, by, a->estimated.n, eby);
    bad |= b1;
    compared++;
  }
  printf("motif parity: %d motifs compared, %ld node pairs, %s\n", compared, pairs,
         bad ? "DIFFERENCES" : "trace plan == simulated fabric");
  for (int e = 0; e < 2; e++) {
    for (int k = 0; k < R[e]->nm; k++)
      contend_traffic_free(&R[e]->tr[k]);
    free(R[e]);
  }
  return bad || compared == 0;
}
