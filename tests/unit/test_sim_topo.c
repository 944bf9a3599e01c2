/* Unit test of the simulated fabric's graph and routing: topology specs
 * (sizes, wiring, errors), per-hop routing of every algorithm (every
 * source to every destination on small instances), D-mod-k's contention
 * freedom on shifts, adaptive choices, sim_route_guess at every hop, and
 * the deadlock check (passes on every valid combination, fails on
 * dragonfly minimal forced to 1 VC). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/fabric/route.h"
#include "../../src/fabric/topo.h"
#include "check.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int parse(const char *spec, sim_topo *t) {
  char err[256] = "";
  const int rc = sim_topo_parse(spec, t, err, sizeof err);
  if (rc)
    fprintf(stderr, "unexpected error: %s\n", err);
  return rc;
}

/* Wiring invariants: symmetric links of one class, NIC ports naming the
 * right node, port_base consistent with sim_port_router. */
static void check_wiring(const sim_topo *t) {
  int bad = 0;
  for (int r = 0; r < t->nrouters; r++)
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      bad += sim_port_router(t, gp) != r;
      const int q = t->peer[gp];
      if (q == SIM_UNCONNECTED)
        continue;
      if (q >= 0)
        bad += q >= t->nports || t->peer[q] != gp || sim_port_router(t, q) == r ||
               t->cls[q] != t->cls[gp] || t->cls[gp] == SIM_LINK_NODE;
      else {
        const int n = -1 - q;
        bad += n >= t->nnodes || t->node_router[n] != r ||
               t->node_port[n] != gp - t->port_base[r] || t->cls[gp] != SIM_LINK_NODE;
      }
    }
  for (int n = 0; n < t->nnodes; n++)
    bad += t->peer[t->port_base[t->node_router[n]] + t->node_port[n]] != -1 - n;
  CHECK(bad == 0);
  CHECK(t->port_base[t->nrouters] == t->nports);
}

/* ---- occupancy stubs ---- */

typedef struct {
  int router;      /* -1: every router */
  uint32_t v[64];  /* per local port */
  uint32_t others; /* elsewhere */
} occ_table;

static uint32_t occ_lookup(void *arg, int router, int port) {
  const occ_table *o = arg;
  if ((o->router < 0 || o->router == router) && port < 64)
    return o->v[port];
  return o->others;
}

/* ---- hop-by-hop walks ---- */

typedef struct {
  long walks, failures, nonmin, hops;
  int maxhops;
} walk_stats;

/* sim_route_guess (net.c's prefetch hint on large fabrics) at every hop:
 * a connected port of r, and the port taken for the deterministic
 * routings; counts the hops where it is not. */
static long guess_bad;

static int deterministic(const sim_routing *R) {
  return !strcmp(sim_routing_name(R), "minimal") || !strcmp(sim_routing_name(R), "dmodk");
}

/* Routes src -> dst with sim_route; returns hops or -1 (and describes it). */
static int walk(const sim_topo *t, const sim_routing *R, int src, int dst, sim_occ_fn occ,
                void *arg, contend_rng *rng, int *nonmin, int *chan_use) {
  sim_route_state st = {.inter = -1};
  int r = t->node_router[src], in_port = t->node_port[src], in_vc = 0, hops = 0;
  const int vcs = sim_routing_vcs(R), bound = sim_routing_max_hops(R);
  for (;;) {
    int port = -1, vc = -1;
    const int guess = sim_route_guess(R, r, in_port, src, dst, &st);
    sim_route(R, r, in_port, in_vc, src, dst, &st, occ, arg, rng, &port, &vc);
    if (guess < 0 || guess >= t->port_base[r + 1] - t->port_base[r] ||
        t->peer[t->port_base[r] + guess] == SIM_UNCONNECTED || (deterministic(R) && guess != port))
      guess_bad++;
    if (port < 0 || port >= t->port_base[r + 1] - t->port_base[r] || vc < 0 || vc >= vcs) {
      fprintf(stderr, "  %s %s: %d->%d: bad port %d / vc %d at router %d\n", t->spec,
              sim_routing_name(R), src, dst, port, vc, r);
      return -1;
    }
    const int gp = t->port_base[r] + port, q = t->peer[gp];
    if (chan_use)
      chan_use[gp]++;
    if (q == SIM_UNCONNECTED) {
      fprintf(stderr, "  %s %s: %d->%d: unconnected port %d at router %d\n", t->spec,
              sim_routing_name(R), src, dst, port, r);
      return -1;
    }
    if (q < 0) {
      if (-1 - q != dst) {
        fprintf(stderr, "  %s %s: %d->%d: ejected to node %d\n", t->spec, sim_routing_name(R), src,
                dst, -1 - q);
        return -1;
      }
      *nonmin = st.nonmin;
      return hops;
    }
    if (++hops > bound) {
      fprintf(stderr, "  %s %s: %d->%d: more than %d hops\n", t->spec, sim_routing_name(R), src,
              dst, bound);
      return -1;
    }
    r = sim_port_router(t, q);
    in_port = q - t->port_base[r];
    in_vc = vc;
  }
}

static walk_stats walk_all(const sim_topo *t, const sim_routing *R, int reps, sim_occ_fn occ,
                           void *arg, uint64_t seed) {
  walk_stats s = {0};
  contend_rng rng;
  contend_rng_init(&rng, seed, 1, 2, 3, 4);
  for (int k = 0; k < reps; k++)
    for (int src = 0; src < t->nnodes; src++)
      for (int dst = 0; dst < t->nnodes; dst++) {
        int nm = 0;
        const int h = walk(t, R, src, dst, occ, arg, &rng, &nm, NULL);
        s.walks++;
        if (h < 0) {
          if (++s.failures > 5)
            return s;
          continue;
        }
        s.nonmin += nm;
        s.hops += h;
        if (h > s.maxhops)
          s.maxhops = h;
      }
  return s;
}

/* Every routing of t (with its own VCs and with spare lanes): walks and
 * the deadlock check. */
static void check_routings(const char *spec, int reps) {
  sim_topo t;
  if (parse(spec, &t)) {
    CHECK(0);
    return;
  }
  check_wiring(&t);
  char names[64];
  snprintf(names, sizeof names, "%s", sim_routing_names(t.kind));
  occ_table zero = {.router = -1};
  for (char *save = NULL, *nm = strtok_r(names, ",", &save); nm; nm = strtok_r(NULL, ",", &save))
    for (int extra = 0; extra <= 1; extra++) {
      sim_routing *R = NULL;
      char err[512] = "";
      const int vcs = extra ? SIM_MAX_VCS : 0;
      CHECK(sim_routing_new(&t, nm, &(sim_routing_opts){.vcs = vcs}, &R, err, sizeof err) == 0);
      if (!R) {
        fprintf(stderr, "  %s: %s\n", spec, err);
        continue;
      }
      guess_bad = 0;
      const walk_stats s = walk_all(&t, R, reps, occ_lookup, &zero, 7);
      CHECK(s.failures == 0);
      CHECK(guess_bad == 0);
      if (guess_bad)
        fprintf(stderr, "  %s %s: sim_route_guess wrong at %ld hops\n", spec, nm, guess_bad);
      CHECK(s.walks == (long)reps * t.nnodes * t.nnodes);
      CHECK(s.maxhops <= sim_routing_max_hops(R));
      const int dl = sim_routing_check_deadlock(R, err, sizeof err);
      CHECK(dl == 0);
      if (dl)
        fprintf(stderr, "  %s %s vcs %d: %s\n", spec, nm, vcs, err);
      if (!extra)
        printf("  %-50s %-8s vcs %d: %ld walks, max %d hops, mean %.2f, %ld non-minimal\n", spec,
               nm, sim_routing_vcs(R), s.walks, s.maxhops,
               s.walks ? (double)s.hops / (double)s.walks : 0.0, s.nonmin);
      sim_routing_free(R);
    }
  sim_topo_free(&t);
}

/* A partial dragonfly: its canonical spec, `links` links between every
 * pair of groups and `spare` unconnected global ports per group; minimal
 * routes between every pair of routers load every wired global channel
 * equally (on these shapes: a router takes its own link, else a copy by
 * its rank among the group's other routers). */
static void check_partial_dragonfly(const char *spec, const char *canon, int links, int spare) {
  sim_topo t;
  if (parse(spec, &t)) {
    CHECK(0);
    return;
  }
  check_wiring(&t);
  CHECK(!strcmp(t.spec, canon));
  int ok = 1, unconnected = 0;
  int *pair = calloc((size_t)t.g * (size_t)t.g, sizeof *pair);
  const int gp0 = t.p + t.a - 1;
  for (int r = 0; r < t.nrouters; r++)
    for (int c = 0; c < t.hg; c++) {
      const int q = t.peer[t.port_base[r] + gp0 + c];
      if (q == SIM_UNCONNECTED)
        unconnected++;
      else
        pair[r / t.a * t.g + sim_port_router(&t, q) / t.a]++;
    }
  for (int x = 0; x < t.g; x++)
    for (int y = 0; y < t.g; y++)
      ok &= pair[x * t.g + y] == (x != y ? links : 0);
  CHECK(ok && unconnected == spare * t.g);
  free(pair);
  sim_routing *R = NULL;
  char err[256];
  CHECK(sim_routing_new(&t, "minimal", NULL, &R, err, sizeof err) == 0);
  int *use = calloc((size_t)t.nports, sizeof *use);
  if (R && use) {
    int nm = 0, bad = 0;
    for (int x = 0; x < t.nrouters; x++)
      for (int y = 0; y < t.nrouters; y++)
        bad += walk(&t, R, x * t.p, y * t.p, NULL, NULL, NULL, &nm, use) < 0;
    int lo = 1 << 30, hi = 0;
    for (int gp = 0; gp < t.nports; gp++)
      if (t.cls[gp] == SIM_LINK_GLOBAL && t.peer[gp] != SIM_UNCONNECTED) {
        lo = use[gp] < lo ? use[gp] : lo;
        hi = use[gp] > hi ? use[gp] : hi;
      }
    CHECK(bad == 0 && lo > 0 && lo == hi);
    if (bad || !lo || lo != hi)
      fprintf(stderr, "  %s: global channels carry %d to %d minimal routes\n", spec, lo, hi);
  }
  free(use);
  sim_routing_free(R);
  sim_topo_free(&t);
}

/* ---- sizes ---- */

static void test_sizes(void) {
  sim_topo t;
  char lab[64];
  CHECK(parse("switch:nodes=8", &t) == 0);
  CHECK(t.kind == SIM_TOPO_SWITCH && t.nnodes == 8 && t.nrouters == 1 && t.nports == 8);
  check_wiring(&t);
  sim_topo_free(&t);

  CHECK(parse("fattree:leaves=4,nodes=4,uplinks=2", &t) == 0);
  CHECK(t.kind == SIM_TOPO_XGFT && t.nnodes == 16 && t.nrouters == 4 + 2);
  CHECK(t.nports == 4 * (4 + 2) + 2 * 4);
  CHECK(t.h == 2 && t.m[0] == 4 && t.m[1] == 4 && t.w[0] == 1 && t.w[1] == 2);
  CHECK(!strcmp(sim_router_label(&t, 0, lab, sizeof lab), "leaf0"));
  CHECK(!strcmp(sim_router_label(&t, 5, lab, sizeof lab), "spine1"));
  CHECK(t.cls[t.port_base[0] + 4] == SIM_LINK_LOCAL); /* 2 levels: spine links LOCAL */
  check_wiring(&t);
  sim_topo_free(&t);

  /* 3 levels: P=2 pods of L=4 leaves (N=4, U=2), Q=3 pod uplinks, U*Q=6 cores */
  CHECK(parse("fattree:pods=2,leaves=4,nodes=4,uplinks=2,pod_uplinks=3", &t) == 0);
  CHECK(t.nnodes == 32 && t.nrouters == 8 + 4 + 6);
  CHECK(t.nports == 8 * (4 + 2) + 4 * (4 + 3) + 6 * 2);
  check_wiring(&t);
  {
    int ok = 1;
    /* pod spine i of each pod (routers 8 + pod*2 + i) reaches cores i*Q..i*Q+Q-1 */
    for (int pod = 0; pod < 2; pod++)
      for (int i = 0; i < 2; i++) {
        const int r = 8 + pod * 2 + i;
        ok &= t.router_level[r] == 2 && t.router_group[r] == pod;
        for (int q = 0; q < 3; q++) {
          const int gp = t.port_base[r] + 4 + q;
          ok &= sim_port_router(&t, t.peer[gp]) == 12 + i * 3 + q;
          ok &= t.cls[gp] == SIM_LINK_GLOBAL;
        }
        for (int x = 0; x < 4; x++) /* down port x: leaf x of this pod */
          ok &= sim_port_router(&t, t.peer[t.port_base[r] + x]) == pod * 4 + x &&
                t.cls[t.port_base[r] + x] == SIM_LINK_LOCAL;
      }
    CHECK(ok);
    CHECK(t.router_group[5] == 1 && t.router_level[17] == 3);
    CHECK(!strcmp(sim_router_label(&t, 17, lab, sizeof lab), "core5"));
    CHECK(!strcmp(sim_router_label(&t, 9, lab, sizeof lab), "spine1"));
  }
  sim_topo_free(&t);

  /* caminos-lib's XGFT example of the issue: 512 nodes, 2:1 taper */
  CHECK(parse("xgft:h=2,down=8,8,up=4,8", &t) == 0);
  CHECK(t.nnodes == 512 && t.nrouters == 64 + 32 + 32);
  CHECK(t.h == 3 && t.m[0] == 8 && t.m[1] == 8 && t.m[2] == 8);
  CHECK(t.w[0] == 1 && t.w[1] == 4 && t.w[2] == 8);
  CHECK(t.port_base[1] - t.port_base[0] == 8 + 4);   /* leaf: 8 nodes, 4 up */
  CHECK(t.port_base[65] - t.port_base[64] == 8 + 8); /* level 2: 8 down, 8 up */
  CHECK(t.port_base[128] - t.port_base[127] == 8);   /* top: 8 down */
  CHECK(!strcmp(t.spec, "xgft:h=2,down=8,8,up=4,8,servers=8"));
  check_wiring(&t);
  sim_topo_free(&t);
  CHECK(parse("xgft:h=2,down=8,8,up=4,8,servers=4", &t) == 0);
  CHECK(t.nnodes == 256 && t.nrouters == 128);
  sim_topo_free(&t);
  CHECK(parse("xgft:h=3,down=4,4,8,up=4,4,4,servers=4", &t) == 0); /* caminos doc example */
  CHECK(t.nnodes == 4 * 128 && t.nrouters == 128 + 4 * 32 + 16 * 8 + 64);
  check_wiring(&t);
  sim_topo_free(&t);

  CHECK(parse("dragonfly:a=4,p=2,h=2", &t) == 0);
  CHECK(t.kind == SIM_TOPO_DRAGONFLY && t.g == 9 && t.nrouters == 36 && t.nnodes == 72);
  CHECK(t.nports == 36 * (2 + 3 + 2));
  CHECK(!strcmp(sim_router_label(&t, 2 * 4 + 1, lab, sizeof lab), "g2.r1"));
  check_wiring(&t);
  {
    /* exactly one link per pair of groups, no unconnected port; port order */
    int links[9][9] = {{0}}, unconnected = 0, order_ok = 1;
    for (int r = 0; r < 36; r++)
      for (int p = 0; p < 7; p++) {
        const int gp = t.port_base[r] + p, q = t.peer[gp];
        order_ok &= t.cls[gp] == (p < 2 ? SIM_LINK_NODE : p < 5 ? SIM_LINK_LOCAL : SIM_LINK_GLOBAL);
        if (q == SIM_UNCONNECTED)
          unconnected++;
        else if (p >= 5)
          links[r / 4][sim_port_router(&t, q) / 4]++;
        else if (p >= 2)
          order_ok &= sim_port_router(&t, q) / 4 == r / 4;
      }
    int ok = 1;
    for (int a = 0; a < 9; a++)
      for (int b = 0; b < 9; b++)
        ok &= links[a][b] == (a != b);
    CHECK(ok && order_ok && unconnected == 0);
  }
  sim_topo_free(&t);

  /* partial dragonflies: links= parallel links per pair of groups (by
   * default the most the a*h global ports allow), the rest unconnected */
  check_partial_dragonfly("dragonfly:a=4,p=2,h=2,g=5", "dragonfly:a=4,p=2,h=2,g=5,links=2", 2, 0);
  check_partial_dragonfly("dragonfly:a=4,p=2,h=2,g=5,links=1", "dragonfly:a=4,p=2,h=2,g=5,links=1",
                          1, 4);
  check_partial_dragonfly("dragonfly:a=4,p=2,h=2,g=4", "dragonfly:a=4,p=2,h=2,g=4,links=2", 2, 2);
  check_partial_dragonfly("dragonfly:a=2,p=1,h=3,g=3", "dragonfly:a=2,p=1,h=3,g=3,links=2", 2, 2);
  check_partial_dragonfly("dragonfly:a=4,p=2,h=3,g=5,links=2", "dragonfly:a=4,p=2,h=3,g=5,links=2",
                          2, 4);

  CHECK(parse("dragonfly:a=16,p=8,h=8", &t) == 0);
  CHECK(t.g == 129 && t.nrouters == 2064 && t.nnodes == 16512);
  CHECK(t.nports == 2064 * (8 + 15 + 8));
  check_wiring(&t);
  sim_topo_free(&t);
}

/* ---- slurm ---- */

static char tmpdir[] = "/tmp/test_sim_topo.XXXXXX";

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static char *conf(const char *name, const char *text) {
  static char spec[4][300];
  static int k;
  char *s = spec[k++ % 4];
  snprintf(s, 300, "slurm:%s/%s", tmpdir, name);
  write_file(s + 6, text);
  return s;
}

static void test_slurm(void) {
  sim_topo t;
  char lab[64];
  const char *tree = conf("tree.conf", "# a 3-level tree\n"
                                       "SwitchName=l0 Nodes=n[1-4]\n"
                                       "SwitchName=l1 Nodes=n[5-8]\n"
                                       "switchname=l2 nodes=n[09-12],x1   # zero padded\n"
                                       "SwitchName=l3 Nodes=n[13-16] LinkSpeed=100\n"
                                       "SwitchName=a0 Switches=l[0-1]\n"
                                       "\n"
                                       "SwitchName=a1 Switches=l[2-3]\n"
                                       "SwitchName=top Switches=a[0-1]\n");
  CHECK(parse(tree, &t) == 0);
  CHECK(t.kind == SIM_TOPO_TREE && t.nnodes == 17 && t.nrouters == 7 && t.h == 3);
  CHECK(t.nports == 17 + 4 * 1 + 2 * 3 + 2);
  CHECK(t.node_router[12] == 2 && t.node_port[12] == 4); /* x1: 13th node seen, on l2 */
  CHECK(t.node_router[8] == 2 && t.node_port[8] == 0);   /* n09 */
  CHECK(t.router_level[0] == 1 && t.router_level[4] == 2 && t.router_level[6] == 3);
  CHECK(!strcmp(sim_router_label(&t, 6, lab, sizeof lab), "top"));
  CHECK(t.cls[t.port_base[6]] == SIM_LINK_GLOBAL && t.cls[t.port_base[4]] == SIM_LINK_LOCAL);
  check_wiring(&t);
  sim_topo_free(&t);
  check_routings(tree, 3);

  /* two spines over three leaves (several up candidates) */
  check_routings(conf("dag.conf", "SwitchName=l0 Nodes=a[01-02]\n"
                                  "SwitchName=l1 Nodes=a[03-04]\n"
                                  "SwitchName=l2 Nodes=a[05-06]\n"
                                  "SwitchName=s0 Switches=l[0-2]\n"
                                  "SwitchName=s1 Switches=l[0-2]\n"),
                 3);
  /* a leaf directly under the top, another two levels down */
  check_routings(conf("lop.conf", "SwitchName=l0 Nodes=n[1-2]\n"
                                  "SwitchName=l1 Nodes=n[3-4]\n"
                                  "SwitchName=m0 Switches=l[0-1]\n"
                                  "SwitchName=l2 Nodes=n[5-6]\n"
                                  "SwitchName=top Switches=m0,l2\n"),
                 3);
  /* a single switch */
  check_routings(conf("one.conf", "SwitchName=s Nodes=r[1-2]n[1-3]\n"), 1);
}

/* ---- parse errors ---- */

static void expect_error(const char *spec, const char *want) {
  sim_topo t;
  char err[512] = "";
  const int rc = sim_topo_parse(spec, &t, err, sizeof err);
  const int ok = rc == -1 && strstr(err, want) && !strchr(err, '\n');
  CHECK(ok);
  if (!ok)
    fprintf(stderr, "  spec '%s': rc %d, err '%s' (wanted '%s')\n", spec, rc, err, want);
  if (!rc)
    sim_topo_free(&t);
}

static void test_errors(void) {
  expect_error("dragonfly:a=4,p=2", "topology 'dragonfly:a=4,p=2': missing h=");
  expect_error("dragonfly:a=0,p=2,h=2", "a= must be at least 1");
  expect_error("dragonfly:a=4,p=2,h=2,x=3", "unknown key 'x'");
  expect_error("dragonfly:a=4,p=2,h=abc", "positive integer");
  expect_error("dragonfly:a=4,p=2,h=2,g=10", "g=10 must be 2..a*h+1 = 9");
  expect_error("dragonfly:a=4,p=2,h=2,g=1", "must be 2..a*h+1");
  expect_error("dragonfly:a=4,p=2,h=2,g=5,links=3", "links=3 must be 1..2 (global links per pair");
  expect_error("dragonfly:a=4,p=2,h=2,links=0", "links= must be at least 1");
  expect_error("dragonfly:a=2,p=1,h=3,g=3,links=3", "links=3 must be 1..2");
  expect_error("dragonfly:a=4,p=2,h=2,h=3", "h= given twice");
  expect_error("dragonfly:a=600,p=300,h=300", "ports (max 1024)");
  expect_error("dragonfly:a=64,p=64,h=64", "nodes (max 1000000)");
  expect_error("torus:sides=4,4", "unknown topology kind 'torus' (known: switch, fattree, xgft, "
                                  "dragonfly, slurm)");
  expect_error("", "empty topology spec");
  expect_error("switch", "missing nodes=");
  expect_error("switch:nodes=0", "at least 1");
  expect_error("switch:nodes=2000", "radix limit 1024");
  expect_error("switch:nodes=4,", "trailing comma");
  expect_error("fattree:leaves=4,nodes=4", "missing uplinks=");
  expect_error("fattree:pods=2,leaves=4,nodes=4,uplinks=4", "missing pod_uplinks=");
  expect_error("fattree:leaves=4,nodes=4,uplinks=4,pod_uplinks=2", "needs pods=");
  expect_error("fattree:leaves=1000,nodes=1000,uplinks=1000", "ports (max 1024)");
  expect_error("fattree:pods=100,leaves=100,nodes=500,uplinks=100,pod_uplinks=1", "max 1000000");
  expect_error("xgft:h=2,down=8,up=4,8", "down= has 1 value, h=2 needs 2");
  expect_error("xgft:h=2,down=8,8,up=4,8,9", "up= has 3 values");
  expect_error("xgft:down=8,8,up=4,8", "missing h=");
  expect_error("xgft:h=2,down=1000,1000,up=1,1,servers=2", "nodes (max");
  expect_error("xgft:h=9,down=2,2,2,2,2,2,2,2,2,up=1,1,1,1,1,1,1,1,1", "too many values");
  expect_error("xgft:h=2,down=8,8,up=4,8,servers=4,servers_per_leaf=4", "not both");
  expect_error("slurm:", "missing the topology.conf path");
  expect_error("slurm:/nonexistent/topology.conf", "cannot read '/nonexistent/topology.conf'");
  expect_error(conf("e1.conf", "SwitchName=s0 Nodes=n[1-4]\nSwitchName=s1 Switches=s0,s9\n"),
               "switch 's9' (under 's1') is not defined");
  expect_error(conf("e2.conf", "SwitchName=s0 Nodes=n[1-4]\nSwitchName=s1 Nodes=n4\n"),
               "line 2: node 'n4' is listed under switches 's0' and 's1'");
  expect_error(conf("e3.conf", "SwitchName=s0 Nodes=n[1-4]\nSwitchName=s1 Nodes=m1\n"),
               "no common ancestor");
  expect_error(conf("e4.conf", "SwitchName=l Nodes=n1\nSwitchName=s0 Switches=s1,l\n"
                               "SwitchName=s1 Switches=s0\n"),
               "the switches form a cycle: 's0' -> 's1' -> 's0'");
  /* a cycle of switches without nodes is named, not reported as "no Nodes=" */
  expect_error(conf("e4b.conf", "SwitchName=a Switches=b\nSwitchName=b Switches=c\n"
                                "SwitchName=c Switches=a\n"),
               "cycle: 'a' -> 'b' -> 'c' -> 'a' (each lists the next under Switches=)");
  expect_error(conf("e4c.conf", "SwitchName=a Switches=b\nSwitchName=b\n"), "no Nodes=");
  expect_error(conf("e5.conf", "SwitchName=s0 Node=n1\n"), "line 1: unknown key 'Node'");
  expect_error(conf("e6.conf", "SwitchName=s0 Nodes=n[4-1]\n"), "bad range");
  expect_error(conf("e7.conf", "SwitchName=s0 Nodes=n[1-4\n"), "unbalanced");
  expect_error(conf("e8.conf", "# nothing\n"), "no SwitchName= lines");
  expect_error(conf("e9.conf", "SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n"),
               "defined twice");
  expect_error(conf("e10.conf", "Nodes=n1\n"), "expected SwitchName=");

  /* routing errors */
  sim_topo t;
  sim_routing *R = NULL;
  char err[512] = "";
  CHECK(parse("dragonfly:a=4,p=2,h=2", &t) == 0);
  CHECK(sim_routing_new(&t, "dmodk", NULL, &R, err, sizeof err) == -1 && !R &&
        strstr(err, "unknown routing 'dmodk'") && strstr(err, "minimal,valiant,ugal"));
  CHECK(sim_routing_new(&t, "valiant", &(sim_routing_opts){.vcs = 2}, &R, err, sizeof err) == -1 &&
        strstr(err, "needs at least 3 VCs (got 2)"));
  CHECK(sim_routing_new(&t, "minimal", &(sim_routing_opts){.vcs = 9}, &R, err, sizeof err) == -1 &&
        strstr(err, "1..8"));
  CHECK(sim_routing_new(&t, NULL, NULL, &R, err, sizeof err) == 0 &&
        !strcmp(sim_routing_name(R), "minimal") && sim_routing_vcs(R) == 2);
  sim_routing_free(R);
  CHECK(sim_routing_new(&t, "ugal", NULL, &R, err, sizeof err) == 0 && sim_routing_vcs(R) == 3 &&
        sim_routing_max_hops(R) == 5);
  sim_routing_free(R);
  sim_topo_free(&t);
  CHECK(parse("fattree:leaves=4,nodes=4,uplinks=4", &t) == 0);
  CHECK(sim_routing_new(&t, "", NULL, &R, err, sizeof err) == 0 &&
        !strcmp(sim_routing_name(R), "dmodk") && sim_routing_vcs(R) == 1 &&
        sim_routing_max_hops(R) == 2);
  sim_routing_free(R);
  CHECK(sim_routing_new(&t, "ugal", NULL, &R, err, sizeof err) == -1 &&
        strstr(err, "dmodk,random,adaptive"));
  sim_topo_free(&t);
  CHECK(strcmp(sim_routing_names(SIM_TOPO_SWITCH), "minimal") == 0);
}

/* ---- D-mod-k and adaptive ---- */

/* Max flows on one channel for the shift src -> src + k, over k. */
static int shift_contention(const char *spec, const char *routing, int *worst_k) {
  sim_topo t;
  if (parse(spec, &t))
    return -1;
  sim_routing *R = NULL;
  char err[256];
  if (sim_routing_new(&t, routing, NULL, &R, err, sizeof err)) {
    sim_topo_free(&t);
    return -1;
  }
  int *use = malloc(sizeof *use * (size_t)t.nports), worst = 0;
  contend_rng rng;
  contend_rng_init(&rng, 3, 0, 0, 0, 0);
  for (int k = 1; k < t.nnodes; k++) {
    memset(use, 0, sizeof *use * (size_t)t.nports);
    for (int s = 0; s < t.nnodes; s++) {
      int nm;
      if (walk(&t, R, s, (s + k) % t.nnodes, NULL, NULL, &rng, &nm, use) < 0)
        worst = 1000;
    }
    for (int c = 0; c < t.nports; c++)
      if (use[c] > worst) {
        worst = use[c];
        *worst_k = k;
      }
  }
  free(use);
  sim_routing_free(R);
  sim_topo_free(&t);
  return worst;
}

static void test_dmodk_adaptive(void) {
  int k = 0;
  CHECK(shift_contention("fattree:leaves=8,nodes=4,uplinks=4", "dmodk", &k) == 1);
  CHECK(shift_contention("fattree:pods=4,leaves=4,nodes=4,uplinks=4,pod_uplinks=4", "dmodk", &k) ==
        1);
  CHECK(shift_contention("xgft:h=2,down=4,4,up=4,4", "dmodk", &k) == 1);
  /* the measure can fail: random up ports collide, tapered trees share */
  CHECK(shift_contention("fattree:pods=4,leaves=4,nodes=4,uplinks=4,pod_uplinks=4", "random", &k) >
        1);
  CHECK(shift_contention("fattree:leaves=8,nodes=4,uplinks=2", "dmodk", &k) >= 2);

  /* dst 9 from leaf 0: D-mod-k's up port is 4 + 9 mod 4 = 5 */
  sim_topo t;
  sim_routing *R = NULL;
  char err[256];
  contend_rng rng;
  contend_rng_init(&rng, 3, 0, 0, 0, 0);
  CHECK(parse("fattree:leaves=4,nodes=4,uplinks=4", &t) == 0);
  occ_table o = {.router = 0, .v = {0, 0, 0, 0, 50000, 14000, 10000, 20000}, .others = 0};
  sim_route_state st = {.inter = -1};
  int port = -1, vc = -1;
  /* adaptive: the least occupied up port, ties broken at random */
  CHECK(sim_routing_new(&t, "adaptive", NULL, &R, err, sizeof err) == 0);
  sim_route(R, 0, 0, 0, 0, 9, &st, occ_lookup, &o, &rng, &port, &vc);
  CHECK(port == 6 && vc == 0);
  o.v[7] = 10000; /* a tie between up ports 6 and 7: each drawn, never another */
  int seen[8] = {0};
  for (int i = 0; i < 200; i++) {
    st = (sim_route_state){.inter = -1};
    sim_route(R, 0, 0, 0, 0, 9, &st, occ_lookup, &o, &rng, &port, &vc);
    seen[port & 7]++;
  }
  CHECK(seen[6] > 50 && seen[7] > 50 && seen[6] + seen[7] == 200);
  st = (sim_route_state){.inter = -1};
  sim_route(R, 0, 0, 0, 0, 2, &st, occ_lookup, &o, &rng, &port, &vc); /* same leaf */
  CHECK(port == 2);
  sim_routing_free(R);
  /* dmodk-adaptive: D-mod-k's up port while it is within a packet (4096 B)
   * of the least occupied, else a random one of the up ports that are */
  CHECK(sim_routing_new(&t, "dmodk-adaptive", NULL, &R, err, sizeof err) == 0);
  o.v[7] = 20000;
  st = (sim_route_state){.inter = -1};
  sim_route(R, 0, 0, 0, 0, 9, &st, occ_lookup, &o, &rng, &port, &vc);
  CHECK(port == 5 && vc == 0); /* 14000 <= 10000 + 4096 */
  o.v[5] = 30000;
  st = (sim_route_state){.inter = -1};
  sim_route(R, 0, 0, 0, 0, 9, &st, occ_lookup, &o, &rng, &port, &vc);
  CHECK(port == 6); /* the only one within 4096 of the least */
  o.v[7] = 13000;   /* ports 6 and 7 within the slack, 5 not */
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < 200; i++) {
    st = (sim_route_state){.inter = -1};
    sim_route(R, 0, 0, 0, 0, 9, &st, occ_lookup, &o, &rng, &port, &vc);
    seen[port & 7]++;
  }
  CHECK(seen[6] > 50 && seen[7] > 50 && seen[6] + seen[7] == 200);
  sim_routing_free(R);
  /* dmodk: up port = dst mod 4 at the leaf, whatever the occupancy */
  CHECK(sim_routing_new(&t, "dmodk", NULL, &R, err, sizeof err) == 0);
  st = (sim_route_state){.inter = -1};
  sim_route(R, 0, 0, 0, 0, 13, &st, occ_lookup, &o, NULL, &port, &vc);
  CHECK(port == 4 + 13 % 4);
  sim_routing_free(R);
  /* lanes: 3 VCs on a tree = 3 lanes, lane = src mod 3 */
  CHECK(sim_routing_new(&t, "random", &(sim_routing_opts){.vcs = 3}, &R, err, sizeof err) == 0);
  st = (sim_route_state){.inter = -1};
  sim_route(R, 1, 1, 0, 5, 13, &st, occ_lookup, &o, NULL, &port, &vc);
  CHECK(vc == 5 % 3);
  sim_routing_free(R);
  sim_topo_free(&t);

  /* UGAL: idle network -> minimal; minimal port congested -> non-minimal */
  CHECK(parse("dragonfly:a=4,p=2,h=2", &t) == 0);
  CHECK(sim_routing_new(&t, "ugal", &(sim_routing_opts){.ugal_threshold = 1000}, &R, err,
                        sizeof err) == 0);
  occ_table idle = {.router = -1};
  walk_stats s = walk_all(&t, R, 1, occ_lookup, &idle, 5);
  CHECK(s.failures == 0 && s.nonmin == 0 && s.maxhops <= 3);
  /* only router 0's global ports busy: its packets to other groups leave non-minimally
   * when the candidate's first hop is a local port */
  occ_table hot = {.router = 0};
  hot.v[5] = hot.v[6] = 1000000;
  long nonmin = 0;
  contend_rng_init(&rng, 9, 0, 0, 0, 0);
  for (int dst = 8; dst < 72; dst++) {
    int nm = 0;
    CHECK(walk(&t, R, 0, dst, occ_lookup, &hot, &rng, &nm, NULL) >= 0);
    nonmin += nm;
  }
  CHECK(nonmin > 0);
  sim_routing_free(R);
  sim_topo_free(&t);
}

/* par: node 0 (g0.r0) to node 40 (g5.r0): the minimal path leaves g0 by
 * g0.r1's global port 6 (k = (0 - 5 - 1) mod 9 = 3: router 3 / 2 = 1,
 * port p + a - 1 + 3 mod 2).  That port busy and nothing else: the source
 * router sees nothing and goes minimally; g0.r1 turns the packet. */
static void test_par_turns_at_the_second_router(void) {
  sim_topo t;
  sim_routing *R = NULL;
  char err[256];
  CHECK(parse("dragonfly:a=4,p=2,h=2", &t) == 0);
  CHECK(sim_routing_new(&t, "par", NULL, &R, err, sizeof err) == 0 && sim_routing_vcs(R) == 4 &&
        sim_routing_max_hops(R) == 6);
  occ_table hot = {.router = 1};
  hot.v[6] = 1000000;
  contend_rng rng;
  contend_rng_init(&rng, 5, 0, 0, 0, 0);
  for (int i = 0; i < 20; i++) {
    sim_route_state st = {.inter = -1};
    int port, vc;
    sim_route(R, 0, t.node_port[0], 0, 0, 40, &st, occ_lookup, &hot, &rng, &port, &vc);
    CHECK(port == 2 + (1 - 0 - 1 + 4) % 4 && vc == 0 && st.pending && st.inter < 0);
    sim_route(R, 1, 2 + (0 - 1 - 1 + 4) % 4, 0, 0, 40, &st, occ_lookup, &hot, &rng, &port, &vc);
    CHECK(port != 6 && vc == 1 && !st.pending && st.divert && st.nonmin && st.inter >= 0 &&
          st.inter / 4 != 0 && st.inter / 4 != 5);
  }
  /* and it arrives, within 6 hops, on VCs that never decrease */
  int nm = 0;
  CHECK(walk(&t, R, 0, 40, occ_lookup, &hot, &rng, &nm, NULL) >= 4 && nm == 1);
  /* idle: minimal, no turn */
  occ_table idle = {.router = -1};
  CHECK(walk(&t, R, 0, 40, occ_lookup, &idle, &rng, &nm, NULL) == 3 && nm == 0);
  sim_routing_free(R);
  sim_topo_free(&t);
}

/* ---- deadlock ---- */

/* The check walks 64 destinations at once and computes a router's choices
 * once per destination class (the routing's dclass): its graph must equal
 * the one of a walk per destination without classes, for every routing,
 * with spare lanes, and with too few VCs (graphs with cycles). */
static void test_deadlock_reduction_exact(void) {
  const char *specs[] = {"fattree:leaves=4,nodes=4,uplinks=2",
                         "fattree:pods=2,leaves=4,nodes=4,uplinks=2,pod_uplinks=3",
                         "xgft:h=3,down=4,4,4,up=1,2,2", "xgft:h=2,down=8,8,up=4,8",
                         "dragonfly:a=4,p=2,h=2", "dragonfly:a=4,p=2,h=2,g=5",
                         "dragonfly:a=4,p=2,h=2,g=4", "dragonfly:a=2,p=1,h=3,g=3",
                         "dragonfly:a=2,p=1,h=1,g=2", "dragonfly:a=1,p=2,h=3",
                         /* Slurm trees: table-driven, several up and down candidates */
                         conf("exact2.conf", "SwitchName=l0 Nodes=a[01-03]\n"
                                             "SwitchName=l1 Nodes=a[04-06]\n"
                                             "SwitchName=l2 Nodes=a[07-09]\n"
                                             "SwitchName=s0 Switches=l[0-2]\n"
                                             "SwitchName=s1 Switches=l[0-2]\n"),
                         conf("exact3.conf", "SwitchName=l0 Nodes=b[1-2]\n"
                                             "SwitchName=l1 Nodes=b[3-4]\n"
                                             "SwitchName=l2 Nodes=b[5-6]\n"
                                             "SwitchName=l3 Nodes=b[7-8]\n"
                                             "SwitchName=a0 Switches=l[0-1]\n"
                                             "SwitchName=a1 Switches=l[0-1]\n"
                                             "SwitchName=a2 Switches=l[2-3]\n"
                                             "SwitchName=a3 Switches=l[2-3]\n"
                                             "SwitchName=t0 Switches=a0,a2\n"
                                             "SwitchName=t1 Switches=a1,a3\n"
                                             "SwitchName=t2 Switches=a0,a1,a2,a3\n")};
  int compared = 0;
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    sim_topo t;
    if (parse(specs[i], &t)) {
      CHECK(0);
      continue;
    }
    char names[64];
    snprintf(names, sizeof names, "%s", sim_routing_names(t.kind));
    for (char *save = NULL, *nm = strtok_r(names, ",", &save); nm; nm = strtok_r(NULL, ",", &save))
      for (int vcs = 1; vcs <= 5; vcs++) {
        sim_routing *R = NULL;
        char err[512] = "", err_ref[512] = "";
        if (sim_routing_new_unchecked(&t, nm, &(sim_routing_opts){.vcs = vcs}, &R, err, sizeof err))
          continue;
        uint64_t d = 0, d_ref = 1;
        const int rc = sim_routing_check_deadlock_ref(R, 64, 1, &d, err, sizeof err);
        const int rc_ref = sim_routing_check_deadlock_ref(R, 1, 0, &d_ref, err_ref, sizeof err_ref);
        CHECK(rc == rc_ref);
        CHECK(d == d_ref);
        CHECK(rc == sim_routing_check_deadlock(R, err, sizeof err));
        if (rc != rc_ref || d != d_ref)
          fprintf(stderr, "  %s %s vcs %d: reduced %d %016llx, reference %d %016llx\n", specs[i],
                  nm, vcs, rc, (unsigned long long)d, rc_ref, (unsigned long long)d_ref);
        compared++;
        sim_routing_free(R);
      }
    sim_topo_free(&t);
  }
  CHECK(compared > 80);
  printf("  deadlock check: reduced graph equals the per-destination one in %d cases\n", compared);
}

/* The deadlock check settles a routing through its cover when the cover
 * is acyclic: sound only if the cover's alternatives include the
 * routing's at every router for every destination, which is checked
 * here on trees of each kind (D-mod-k under random). */
static void test_deadlock_cover(void) {
  const char *specs[] = {"fattree:pods=2,leaves=4,nodes=4,uplinks=2,pod_uplinks=3",
                         "xgft:h=3,down=4,4,4,up=1,2,2", "xgft:h=2,down=8,8,up=4,8",
                         conf("cover.conf", "SwitchName=l0 Nodes=c[1-2]\n"
                                            "SwitchName=l1 Nodes=c[3-4]\n"
                                            "SwitchName=a0 Switches=l[0-1]\n"
                                            "SwitchName=a1 Switches=l[0-1]\n")};
  int covered = 0, pairs = 0, missing = 0;
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    sim_topo t;
    if (parse(specs[i], &t)) {
      CHECK(0);
      continue;
    }
    char names[64], err[512] = "";
    snprintf(names, sizeof names, "%s", sim_routing_names(t.kind));
    for (char *save = NULL, *nm = strtok_r(names, ",", &save); nm;
         nm = strtok_r(NULL, ",", &save)) {
      sim_routing *R = NULL, *C = NULL;
      CHECK(sim_routing_new(&t, nm, NULL, &R, err, sizeof err) == 0);
      const char *cov = R ? sim_routing_cover(R) : NULL;
      if (!cov) {
        sim_routing_free(R);
        continue;
      }
      covered++;
      CHECK(sim_routing_new(&t, cov, NULL, &C, err, sizeof err) == 0);
      const sim_route_state st0 = {.inter = -1};
      for (int r = 0; C && r < t.nrouters; r++)
        for (int dst = 0; dst < t.nnodes; dst++) {
          sim_route_alt a[64], b[64];
          const int na = sim_route_alternatives(R, r, 0, 0, dst, &st0, SIM_ALT_ALL, a, 64);
          const int nb = sim_route_alternatives(C, r, 0, 0, dst, &st0, SIM_ALT_ALL, b, 64);
          for (int x = 0; x < na && x < 64; x++) {
            int found = 0;
            for (int y = 0; y < nb && y < 64; y++)
              found |= a[x].port == b[y].port && a[x].vc == b[y].vc;
            missing += !found;
            pairs++;
          }
        }
      CHECK(sim_routing_check_deadlock(R, err, sizeof err) == 0);
      sim_routing_free(C);
      sim_routing_free(R);
    }
    sim_topo_free(&t);
  }
  CHECK(covered >= 4 && pairs > 1000);
  CHECK(missing == 0);
  printf("  deadlock check: %d routings with a cover, %d of their choices all in it\n", covered,
         pairs);
}

static void test_deadlock(void) {
  sim_topo t;
  sim_routing *R = NULL;
  char err[1024] = "";
  CHECK(parse("dragonfly:a=4,p=2,h=2", &t) == 0);
  CHECK(sim_routing_new(&t, "minimal", &(sim_routing_opts){.vcs = 1}, &R, err, sizeof err) == -1);
  CHECK(sim_routing_new_unchecked(&t, "minimal", &(sim_routing_opts){.vcs = 1}, &R, err,
                                  sizeof err) == 0);
  if (R) {
    const int rc = sim_routing_check_deadlock(R, err, sizeof err);
    CHECK(rc == -1);
    CHECK(strstr(err, "can deadlock") && strstr(err, " port ") && strstr(err, " vc 0 -> g") &&
          !strchr(err, '\n'));
    printf("  expected failure: %s\n", err);
    /* the walks still arrive: only the VCs are short */
    const walk_stats s = walk_all(&t, R, 1, NULL, NULL, 1);
    CHECK(s.failures == 0);
    sim_routing_free(R);
  }
  /* par's turns at the second router are in the graph: with 3 VCs (its
   * last class folded onto the third) the turned packets' local hops in
   * their intermediate group close a cycle through the third class */
  CHECK(sim_routing_new_unchecked(&t, "par", &(sim_routing_opts){.vcs = 3}, &R, err, sizeof err) ==
        0);
  if (R) {
    CHECK(sim_routing_check_deadlock(R, err, sizeof err) == -1 && strstr(err, "vc 2"));
    printf("  expected failure: %s\n", err);
    sim_routing_free(R);
  }
  CHECK(sim_routing_new_unchecked(&t, "valiant", &(sim_routing_opts){.vcs = 2}, &R, err,
                                  sizeof err) == 0);
  if (R) {
    CHECK(sim_routing_check_deadlock(R, err, sizeof err) == -1);
    sim_routing_free(R);
  }
  sim_topo_free(&t);

  /* speed at scale */
  const char *big[] = {"dragonfly:a=16,p=8,h=8",
                       "fattree:pods=16,leaves=32,nodes=32,uplinks=32,"
                       "pod_uplinks=16",
                       "xgft:h=2,down=32,32,up=16,32,servers=16"};
  for (int b = 0; b < 3; b++) {
    if (parse(big[b], &t)) {
      CHECK(0);
      continue;
    }
    char names[64];
    snprintf(names, sizeof names, "%s", sim_routing_names(t.kind));
    for (char *save = NULL, *nm = strtok_r(names, ",", &save); nm;
         nm = strtok_r(NULL, ",", &save)) {
      CHECK(sim_routing_new(&t, nm, NULL, &R, err, sizeof err) == 0);
      if (!R)
        continue;
      const double t0 = now_s();
      const int rc = sim_routing_check_deadlock(R, err, sizeof err);
      const double dt = now_s() - t0;
      CHECK(rc == 0);
      CHECK(dt < 20); /* ~1 s expected; generous for loaded machines */
      printf("  deadlock check %-60s %-8s %d nodes %d routers: %.2f s\n", t.spec, nm, t.nnodes,
             t.nrouters, dt);
      sim_routing_free(R);
    }
    sim_topo_free(&t);
  }
}

int main(void) {
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_sizes();
  test_errors();
  check_routings("switch:nodes=6", 1);
  check_routings("fattree:leaves=4,nodes=4,uplinks=2", 2);
  check_routings("fattree:pods=2,leaves=4,nodes=4,uplinks=2,pod_uplinks=3", 2);
  check_routings("xgft:h=2,down=8,8,up=4,8", 1);
  check_routings("dragonfly:a=4,p=2,h=2", 3);
  check_routings("dragonfly:a=4,p=2,h=2,g=5", 3);
  check_routings("dragonfly:a=4,p=2,h=2,g=4", 3);
  check_routings("dragonfly:a=2,p=1,h=3,g=3", 3);
  check_routings("dragonfly:a=2,p=1,h=1,g=2", 3);
  check_routings("dragonfly:a=1,p=2,h=3", 3);
  test_slurm();
  test_dmodk_adaptive();
  test_par_turns_at_the_second_router();
  test_deadlock();
  test_deadlock_cover();
  test_deadlock_reduction_exact();
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd)) {
  }
  printf("test_sim_topo: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
