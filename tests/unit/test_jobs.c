/* Unit tests of `contend jobs` without MPI: the job-file grammar (every
 * feature and the malformed cases, each with file:line), placement,
 * validation against job sizes, the flow map, and a trace-engine run of
 * a halo exchange against the counts expected by hand. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/jobs/jobs.h"
#include "../../src/motifs/workload.h"
#include "contend/traffic.h"

#include "check.h"

static char err[2048];

static int wl_grid_for_test(int n, int nd, const long *ext, int *dims) {
  return wl_grid(n, nd, ext, dims, err, sizeof err);
}

static int parse(contend_jobfile *jf, const char *text) {
  err[0] = 0;
  return contend_jobfile_parse(jf, "t.job", text, NULL, 0, err, sizeof err);
}

/* A malformed file: -1, and the message names t.job:LINE and contains what. */
static void bad(const char *text, int line, const char *what) {
  contend_jobfile jf;
  char where[32];
  int rc = parse(&jf, text);
  snprintf(where, sizeof where, "t.job:%d:", line);
  CHECK(rc == -1);
  CHECK(strstr(err, where) == err);
  CHECK(strstr(err, what) != NULL);
  if (rc != -1 || strstr(err, where) != err || !strstr(err, what))
    fprintf(stderr, "  text: %s\n  got:  %s\n  want: %s ... %s\n", text, err, where, what);
  contend_jobfile_free(&jf);
}

static void test_grammar(void) {
  contend_jobfile jf;
  const char *text = "# a comment\n"
                     "[VAR] N=64   # trailing comment\n"
                     "[VAR] SIZE=4KiB\n"
                     "\n"
                     "[JOB_NAME] first\n"
                     "[NID_LIST] 0-2,\n"
                     "           5,7\n"
                     "[REPEAT] 3\n"
                     "[MOTIF] halo2d nx={N} ny={N} \\\n"
                     "        depth=2\n"
                     "[MOTIF] incast msg_bytes={SIZE}\n"
                     "[MOTIF] compute dist=gaussian mean=350us stddev=10us\n"
                     "[MOTIF] io_write path=\"/tmp/a b/{job}.dat\"\n"
                     "[job_id] second   # Ember spelling\n"
                     "[PLACEMENT] random nodes=2 seed=9\n"
                     "[MOTIF] rr-lat iters=5\n";
  CHECK(parse(&jf, text) == 0);
  CHECK(jf.njobs == 2);
  const contend_job *a = &jf.jobs[0], *b = &jf.jobs[1];
  CHECK(!strcmp(a->name, "first") && a->line == 5 && a->nodes_line == 6);
  CHECK(a->kind == CONTEND_NODES_LIST && a->nlist == 5 && a->list[3] == 5 && a->list[4] == 7);
  CHECK(a->repeat == 3 && a->nmotifs == 4);
  CHECK(!strcmp(a->motifs[0].motif->name, "halo2d") && a->motifs[0].line == 9);
  CHECK(contend_param_int(&a->motifs[0].params, "nx") == 64);
  CHECK(contend_param_int(&a->motifs[0].params, "depth") == 2);
  CHECK(contend_param_int(&a->motifs[1].params, "msg_bytes") == 4096);
  CHECK(fabs(contend_param_double(&a->motifs[2].params, "mean") - 350e-6) < 1e-15);
  CHECK(!strcmp(contend_param_str(&a->motifs[3].params, "path"), "/tmp/a b/{job}.dat"));
  CHECK(b->kind == CONTEND_NODES_RANDOM && b->want == 2 && b->seed == 9 && b->seed_set);
  CHECK(!strcmp(b->motifs[0].motif->name, "rr_lat") && b->repeat == 1);
  contend_jobfile_free(&jf);

  /* -D overrides [VAR] */
  char *defs[] = {"N=32"};
  CHECK(contend_jobfile_parse(&jf, "t.job",
                              "[VAR] N=64\n[JOB_NAME] j\n[NID_LIST] 0\n"
                              "[MOTIF] barrier iters={N}\n",
                              defs, 1, err, sizeof err) == 0);
  CHECK(contend_param_int(&jf.jobs[0].motifs[0].params, "iters") == 32);
  contend_jobfile_free(&jf);
}

static void test_malformed(void) {
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] nosuch\n", 3, "unknown motif 'nosuch'");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] halo2d nz=3\n", 3, "no parameter 'nz'");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] halo2d nx=abc\n", 3, "nx='abc' is not valid");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] halo2d \\\n  nx=1.5\n", 4, "nx='1.5'");
  bad("[JOB_NAME] a\n[NID_LIST] 0-3\n[MOTIF] barrier\n[JOB_NAME] b\n[NID_LIST] 3-4\n"
      "[MOTIF] barrier\n",
      5, "node 3 of job 'b' is also in job 'a' (line 2)");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier \\\n", 3, "unterminated continuation");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier \\\n[MOTIF] barrier\n", 3,
      "unterminated continuation");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier iters={X}\n", 3, "undefined variable '{X}'");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier iters\n", 3, "expected key=value");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] rr_lat measurements=2\n", 3, "measurements");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] compute dist=cauchy\n", 3, "dist='cauchy'");
  bad("[JOB_NAME] a\n[NID_LIST] 0,0\n[MOTIF] barrier\n", 2, "listed twice");
  bad("[JOB_NAME] a\n[NID_LIST] 4-2\n[MOTIF] barrier\n", 2, "not a node range");
  bad("[JOB_NAME] a\n[NID_LIST] x\n[MOTIF] barrier\n", 2, "not a node number");
  bad("[JOB_NAME] a\n[JOB_NAME] a\n", 2, "already used");
  bad("[JOB_NAME] a/b\n", 1, "not valid");
  bad("[MOTIF] barrier\n", 1, "before any [JOB_NAME]");
  bad("[JOB_NAME] a\n[MOTIF] barrier\n", 1, "has no nodes");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n", 1, "has no [MOTIF]");
  bad("[JOB_NAME] a\n[PLACEMENT] spiral nodes=2\n", 2, "placement 'spiral'");
  bad("[JOB_NAME] a\n[PLACEMENT] linear\n", 2, "needs nodes=N");
  bad("[JOB_NAME] a\n[PLACEMENT] linear nodes=2 seed=1\n", 2, "only applies to random");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[PLACEMENT] linear nodes=1\n", 3, "already has its nodes");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[REPEAT] 0\n", 3, "[REPEAT]");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[REPEAT] 2\n[REPEAT] 3\n", 4, "already has [REPEAT]");
  bad("[VAR] job=x\n", 1, "reserved");
  bad("[VAR] 9x=1\n", 1, "not a variable name");
  bad("[NOPE] 1\n", 1, "unknown directive '[NOPE]'");
  bad("text\n", 1, "expected a directive");
  bad("  indented=1\n", 1, "continues a directive");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] io_write path=\"/tmp/x\n", 3, "double quote");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] io_write api=nfs\n", 3, "api='nfs'");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] io_write layout=per_rank path=/tmp/x\n", 3, "{rank}");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] io_write api=posix collective=1\n", 3, "collective=1");
  bad("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier iters=2 iters=3\n", 3, "given twice");

  contend_jobfile jf;
  CHECK(parse(&jf, "") == -1 && strstr(err, "no jobs"));
  contend_jobfile_free(&jf);
}

static void test_placement(void) {
  contend_jobfile jf;
  const char *text = "[JOB_NAME] fixed\n[NID_LIST] 2,3\n[MOTIF] barrier\n"
                     "[JOB_NAME] lin\n[PLACEMENT] linear nodes=2\n[MOTIF] barrier\n"
                     "[JOB_NAME] i1\n[PLACEMENT] interleaved nodes=2\n[MOTIF] barrier\n"
                     "[JOB_NAME] i2\n[PLACEMENT] interleaved nodes=2\n[MOTIF] barrier\n"
                     "[JOB_NAME] rnd\n[PLACEMENT] random nodes=2 seed=4\n[MOTIF] barrier\n";
  CHECK(parse(&jf, text) == 0);
  CHECK(contend_jobs_place(&jf, 10, 1, err, sizeof err) == 0);
  const contend_job *j = jf.jobs;
  CHECK(j[0].nnodes == 2 && j[0].nodes[0] == 2 && j[0].nodes[1] == 3);
  CHECK(j[1].nnodes == 2 && j[1].nodes[0] == 0 && j[1].nodes[1] == 1);
  CHECK(j[2].nnodes == 2 && j[2].nodes[0] == 4 && j[2].nodes[1] == 6);
  CHECK(j[3].nnodes == 2 && j[3].nodes[0] == 5 && j[3].nodes[1] == 7);
  CHECK(j[4].nnodes == 2 && j[4].nodes[0] >= 8 && j[4].nodes[1] == 9 - (j[4].nodes[0] == 9));
  /* every node once */
  int seen[10] = {0};
  for (int k = 0; k < 5; k++)
    for (int i = 0; i < j[k].nnodes; i++)
      seen[j[k].nodes[i]]++;
  for (int i = 0; i < 10; i++)
    CHECK(seen[i] == 1);
  /* the same seed gives the same random nodes; too few nodes is an error with the line */
  int first = j[4].nodes[0];
  CHECK(contend_jobs_place(&jf, 10, 77, err, sizeof err) == 0 && j[4].nodes[0] == first);
  CHECK(contend_jobs_place(&jf, 9, 1, err, sizeof err) == -1);
  CHECK(strstr(err, "t.job:14:") == err && strstr(err, "'rnd' needs 2 nodes"));
  CHECK(contend_jobs_place(&jf, 3, 1, err, sizeof err) == -1);
  CHECK(strstr(err, "t.job:2:") == err && strstr(err, "node 3"));
  contend_jobfile_free(&jf);

  /* random without seed= draws from the run seed */
  CHECK(parse(&jf, "[JOB_NAME] r\n[PLACEMENT] random nodes=3\n[MOTIF] barrier\n") == 0);
  int a[3], b[3], differs = 0;
  CHECK(contend_jobs_place(&jf, 64, 1, err, sizeof err) == 0);
  memcpy(a, jf.jobs[0].nodes, sizeof a);
  CHECK(contend_jobs_place(&jf, 64, 1, err, sizeof err) == 0);
  CHECK(!memcmp(a, jf.jobs[0].nodes, sizeof a));
  CHECK(contend_jobs_place(&jf, 64, 2, err, sizeof err) == 0);
  memcpy(b, jf.jobs[0].nodes, sizeof b);
  differs = memcmp(a, b, sizeof a) != 0;
  CHECK(differs);
  contend_jobfile_free(&jf);
}

static void test_validate(void) {
  contend_jobfile jf;
  CHECK(parse(&jf, "[JOB_NAME] a\n[NID_LIST] 0-2\n[MOTIF] barrier\n"
                   "[MOTIF] halo2d px=2 py=2\n") == 0);
  int ranks[1] = {3};
  CHECK(contend_jobs_validate(&jf, ranks, err, sizeof err) == -1);
  CHECK(strstr(err, "t.job:4:") == err && strstr(err, "3-rank process grid"));
  ranks[0] = 4;
  CHECK(contend_jobs_validate(&jf, ranks, err, sizeof err) == 0);
  contend_jobfile_free(&jf);
}

static void test_flowmap(void) {
  contend_flowmap m = {0};
  for (int i = 0; i < 1000; i++)
    contend_flow_add(&m, i % 37, i % 11, 10, 1);
  double bytes, msgs;
  contend_flows_total(&m, &bytes, &msgs);
  CHECK(bytes == 10000 && msgs == 1000);
  size_t n;
  contend_flow *f = contend_flows_sorted(&m, &n);
  CHECK(n == 37 * 11 && n == m.n); /* gcd(37, 11) = 1: every pair occurs */
  for (size_t i = 1; i < n; i++)
    CHECK(f[i - 1].src < f[i].src || (f[i - 1].src == f[i].src && f[i - 1].dst < f[i].dst));
  free(f);
  free(m.slot);
}

/* A 2 x 2 halo2d on 4 nodes, traced: each rank sends one face to each of
 * its 2 neighbours per iteration; and the grid chosen for a square domain. */
static void test_trace_halo(void) {
  contend_jobfile jf;
  CHECK(parse(&jf, "[JOB_NAME] h\n[NID_LIST] 0-3\n[REPEAT] 2\n"
                   "[MOTIF] halo2d nx=10 ny=6 px=2 iters=3 elem_bytes=8 depth=1\n") == 0);
  CHECK(contend_jobs_place(&jf, 4, 1, err, sizeof err) == 0);
  /* the orchestrator itself, on the trace engine (a dry run) */
  contend_param_def *defs = contend_jobs_option_defs();
  contend_params opts;
  CHECK(contend_params_init(&opts, defs, "", err, sizeof err) == 0);
  CHECK(contend_params_set(&opts, contend_params_find(&opts, "dry_run"), "1", err, sizeof err) ==
        0);
  CHECK(contend_params_set(&opts, contend_params_find(&opts, "nodes"), "4", err, sizeof err) == 0);
  CHECK(contend_params_set(&opts, contend_params_find(&opts, "seed"), "1", err, sizeof err) == 0);
  contend_jobs_run r;
  memset(&r, 0, sizeof r);
  char *argv[] = {"jobs", NULL};
  int argc = 1;
  char **av = argv;
  contend_jobs_args args = {.jf = &jf, .opts = &opts, .argc = 1, .argv = argv, .keep = &r};
  FILE *saved = stdout; /* the dry run prints its plan: keep the test output short */
  stdout = fopen("/dev/null", "w");
  CHECK(contend_jobs_launch(&args, &argc, &av) == 0);
  fclose(stdout);
  stdout = saved;
  const contend_traffic *t = &r.mi[0].traffic;
  /* grid 2 x 2 (px = 2 for the wider domain): lx = 5, ly = 3; x faces 3 x 8 B, y faces 5 x 8 B */
  double bytes, msgs;
  contend_flows_total(&t->flows, &bytes, &msgs);
  CHECK(msgs == 4 * 2 * 3 * 2);
  CHECK(bytes == 2 * 3 * (4 * 24 + 4 * 40));
  CHECK(t->flows.n == 8);
  contend_jobs_run_free(&r);
  contend_params_free(&opts);
  free(defs);
  contend_jobfile_free(&jf);
  long ext[3] = {4000, 4000, 4000};
  int dims[3] = {0, 0, 0};
  CHECK(wl_grid_for_test(16, 2, ext, dims) == 0 && dims[0] == 4 && dims[1] == 4);
  dims[0] = dims[1] = 0;
  CHECK(wl_grid_for_test(8, 3, ext, dims) == 0 && dims[0] == 2 && dims[1] == 2 && dims[2] == 2);
  dims[0] = 3, dims[1] = dims[2] = 0;
  CHECK(wl_grid_for_test(8, 3, ext, dims) == -1);
}

/* The compute motif's draws, recorded by a stub engine: one-sample
 * Kolmogorov-Smirnov distance to the requested distribution below the 1 %
 * critical value (1.63 / sqrt(n)); fixed seed, so the check is exact. */
static double *g_draw;
static int g_ndraw;
static void rec_compute(contend_ctx *c, double s) {
  (void)c;
  g_draw[g_ndraw++] = s;
}
static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double ks(double (*cdf)(double, const double *), const double *arg) {
  qsort(g_draw, (size_t)g_ndraw, sizeof(double), cmp_d);
  double d = 0;
  for (int i = 0; i < g_ndraw; i++) {
    double f = cdf(g_draw[i], arg);
    double lo = fabs(f - (double)i / g_ndraw), hi = fabs((double)(i + 1) / g_ndraw - f);
    d = fmax(d, fmax(lo, hi));
  }
  return d;
}
static double cdf_normal(double x, const double *a) {
  return 0.5 * (1 + erf((x - a[0]) / (a[1] * sqrt(2.0))));
}
static double cdf_uniform(double x, const double *a) {
  return x < a[0] ? 0 : x > a[1] ? 1 : (x - a[0]) / (a[1] - a[0]);
}
static double cdf_exponential(double x, const double *a) { return x < 0 ? 0 : 1 - exp(-x / a[0]); }

static void draws(const char *params, int ranks, int iters) {
  contend_jobfile jf;
  char text[256];
  snprintf(text, sizeof text, "[JOB_NAME] c\n[NID_LIST] 0\n[MOTIF] compute %s\n", params);
  CHECK(parse(&jf, text) == 0);
  const contend_motif *m = jf.jobs[0].motifs[0].motif;
  contend_engine_ops ops = {.name = "stub", .compute = rec_compute};
  g_ndraw = 0;
  for (int r = 0; r < ranks; r++) {
    contend_ctx c;
    memset(&c, 0, sizeof c);
    c.rank = r;
    c.size = ranks;
    c.params = &jf.jobs[0].motifs[0].params;
    c.ops = &ops;
    c.seed = 12345;
    c.stream = contend_jobs_stream(0, 0);
    c.state = calloc(1, m->state_size);
    CHECK(m->setup(&c) == 0);
    for (int i = 0; i < iters; i++) {
      c.round = i / 7;
      c.iter = i % 7;
      m->iterate(&c);
    }
    free(c.state);
  }
  contend_jobfile_free(&jf);
}

static void test_compute_draws(void) {
  const int ranks = 8, iters = 700, n = ranks * iters;
  g_draw = malloc(sizeof(double) * (size_t)n);
  const double crit = 1.63 / sqrt((double)n);
  draws("dist=gaussian mean=1 stddev=0.1", ranks, iters);
  const double g[2] = {1, 0.1};
  CHECK(g_ndraw == n && ks(cdf_normal, g) < crit);
  draws("dist=uniform low=0.5 high=2", ranks, iters);
  const double u[2] = {0.5, 2};
  CHECK(ks(cdf_uniform, u) < crit && g_draw[0] >= 0.5 && g_draw[n - 1] <= 2);
  draws("dist=exponential mean=0.25", ranks, iters);
  const double e[1] = {0.25};
  CHECK(ks(cdf_exponential, e) < crit);
  /* and a wrong distribution is rejected by the same test */
  draws("dist=uniform low=0.8 high=1.2", ranks, iters);
  CHECK(ks(cdf_normal, g) > crit);
  draws("dist=fixed mean=0.002", 2, 5);
  CHECK(g_ndraw == 10 && g_draw[0] == 0.002 && g_draw[9] == 0.002);
  free(g_draw);
}

int main(void) {
  test_compute_draws();
  test_grammar();
  test_malformed();
  test_placement();
  test_validate();
  test_flowmap();
  test_trace_halo();
  printf("test_jobs: %d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
