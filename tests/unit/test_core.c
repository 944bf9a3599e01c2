/* Unit tests of the MPI-free core: parameters and option parsing, seeded
 * shuffles and rings, histogram statistics, the JSON writer, the node
 * split.  No MPI_Init: these run anywhere. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/core/outbox.h"
#include "../../src/core/pace.h"
#include "../../src/suite/suite.h"
#include "contend/files.h"
#include "contend/json.h"
#include "contend/stats.h"

#include "check.h"

static const contend_param_def defs[] = {
    {"count", CONTEND_P_INT, "5", "count", "a count", 1, 100},
    {"ratio", CONTEND_P_DOUBLE, "0.5", "fraction", "a ratio", 0, 1},
    {"flag", CONTEND_P_BOOL, "0", "", "a flag", 1, 0},
    {"name", CONTEND_P_STRING, "x", "", "a name", 1, 0},
    {"seed", CONTEND_P_SEED, "time", "", "a seed", 1, 0},
    {"bytes", CONTEND_P_INT, "1", "B", "a size", 1, 1e9},
    {"wait", CONTEND_P_DOUBLE, "0", "s", "a time", 0, 10},
    CONTEND_PARAM_END};

static void test_params(void) {
  contend_params p;
  char err[512];
  CHECK(contend_params_init(&p, defs, "", err, sizeof err) == 0);
  CHECK(contend_param_int(&p, "count") == 5);
  CHECK(contend_param_double(&p, "ratio") == 0.5);
  CHECK(!contend_param_bool(&p, "flag"));
  CHECK(!strcmp(contend_param_str(&p, "name"), "x"));
  CHECK(p.v[4].is_time);
  int i = contend_params_find(&p, "count");
  CHECK(contend_params_set(&p, i, "100", err, sizeof err) == 0 &&
        contend_param_int(&p, "count") == 100);
  CHECK(contend_params_set(&p, i, "1e2", err, sizeof err) == 0 &&
        contend_param_int(&p, "count") == 100);
  CHECK(contend_params_set(&p, i, "101", err, sizeof err) != 0);
  CHECK(strstr(err, "--count") && strstr(err, "101") && strstr(err, "[1, 100]"));
  CHECK(contend_params_set(&p, i, "abc", err, sizeof err) != 0);
  CHECK(contend_params_set(&p, i, "2.5", err, sizeof err) != 0);
  CHECK(contend_params_set(&p, i, "", err, sizeof err) != 0);
  i = contend_params_find(&p, "ratio");
  CHECK(contend_params_set(&p, i, "nan", err, sizeof err) != 0);
  CHECK(contend_params_set(&p, i, "1.5", err, sizeof err) != 0);
  CHECK(contend_params_set(&p, i, "0.25", err, sizeof err) == 0 &&
        contend_param_double(&p, "ratio") == 0.25);
  i = contend_params_find(&p, "flag");
  CHECK(contend_params_set(&p, i, "yes", err, sizeof err) == 0 && contend_param_bool(&p, "flag"));
  CHECK(contend_params_set(&p, i, "maybe", err, sizeof err) != 0);
  i = contend_params_find(&p, "seed");
  CHECK(contend_params_set(&p, i, "42", err, sizeof err) == 0 && p.v[i].i == 42 && !p.v[i].is_time);
  CHECK(contend_params_set(&p, i, "-1", err, sizeof err) != 0);
  CHECK(contend_params_find(&p, "no_such") < 0);
  contend_params_free(&p);
  /* key=value items (a spec's tail) */
  CHECK(contend_params_init(&p, defs, "m", err, sizeof err) == 0);
  CHECK(contend_params_set_items(&p, "count=7,name=y", ',', err, sizeof err) == 0 &&
        contend_param_int(&p, "count") == 7 && !strcmp(contend_param_str(&p, "name"), "y") &&
        contend_param_is_set(&p, "count") && !contend_param_is_set(&p, "ratio"));
  CHECK(contend_params_set_items(&p, "", ',', err, sizeof err) == 0);
  CHECK(contend_params_set_items(&p, "colour=1", ',', err, sizeof err) != 0 &&
        strstr(err, "'colour'") && strstr(err, "count, ratio"));
  CHECK(contend_params_set_items(&p, "count", ',', err, sizeof err) != 0 &&
        strstr(err, "key=value"));
  CHECK(contend_params_set_items(&p, "=3", ',', err, sizeof err) != 0 && strstr(err, "key=value"));
  CHECK(contend_params_set_items(&p, "count=2,count=3", ',', err, sizeof err) != 0 &&
        strstr(err, "twice"));
  CHECK(contend_params_set_items(&p, "count=101", ',', err, sizeof err) != 0 &&
        strstr(err, "count='101' is not valid") && strstr(err, "[1, 100]"));
  /* a byte size or a time with a unit, as in job files */
  CHECK(contend_params_set_items(&p, "bytes=64KiB,wait=350us", ',', err, sizeof err) == 0 &&
        contend_param_int(&p, "bytes") == 65536 &&
        fabs(contend_param_double(&p, "wait") - 350e-6) < 1e-12);
  contend_params_free(&p);
}

static int parse(contend_command c, const char *line, contend_config *cfg, char *err, size_t n) {
  static char buf[1024];
  static char *argv[64];
  snprintf(buf, sizeof buf, "%s", line);
  int argc = 0;
  for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
    argv[argc++] = t;
  contend_strbuf out = {0};
  int rc = contend_config_parse(cfg, c, argc, argv, &out, err, n);
  contend_sb_free(&out);
  return rc;
}

static void test_options(void) {
  contend_config cfg;
  char err[1024];
  CHECK(parse(CONTEND_CMD_LOAD, "load", &cfg, err, sizeof err) == 0);
  CHECK(cfg.ncanary == 3 && cfg.ncong == 4);
  CHECK(contend_param_double(&cfg.common, "timeout") == 10);
  CHECK(contend_param_double(&cfg.load, "canary_fraction") == 0.2);
  const contend_motif *m = contend_motif_find("rr_lat");
  CHECK(m && contend_param_int(&cfg.tests[0], "measurements") == 10000 &&
        contend_param_int(&cfg.tests[0], "rings") == 30 &&
        contend_param_int(&cfg.tests[0], "iters") == 200 &&
        contend_param_int(&cfg.tests[0], "warmup") == 200);
  contend_config_free(&cfg);
  /* dashes and underscores, --key=value, per-test options, global overrides */
  CHECK(parse(CONTEND_CMD_LOAD,
              "load --canary-fraction=0.3 --rr-lat.iters 7 --measurements 3 --congestors all "
              "--canaries rr_lat -o out.json --verify -q",
              &cfg, err, sizeof err) == 0);
  CHECK(contend_param_double(&cfg.load, "canary_fraction") == 0.3);
  CHECK(contend_param_int(&cfg.tests[0], "iters") == 7);
  CHECK(contend_param_int(&cfg.tests[0], "measurements") == 3);
  CHECK(cfg.ncanary == 1 && cfg.ncong == 6);
  CHECK(!strcmp(contend_param_str(&cfg.common, "output"), "out.json"));
  CHECK(contend_param_bool(&cfg.common, "verify") && contend_param_bool(&cfg.common, "quiet"));
  contend_config_free(&cfg);
  /* a test's own option wins over the global override */
  CHECK(parse(CONTEND_CMD_NETWORK, "network --iters 3 --rr_lat.iters 9", &cfg, err, sizeof err) ==
        0);
  CHECK(contend_param_int(&cfg.tests[0], "iters") == 9 &&
        contend_param_int(&cfg.tests[1], "iters") == 3);
  CHECK(cfg.ncanary == 8);
  contend_config_free(&cfg);
  /* bad input: each gives a message naming the problem */
  const char *bad[] = {"load --bogus",
                       "load --timeout",
                       "load --timeout x",
                       "load --timeout -1",
                       "load --canaries foo",
                       "load --congestors rr_lat",
                       "load --rr_lat.nope 1",
                       "load --nosuch.iters 1",
                       "load stray",
                       "load --canary-fraction 1.5",
                       "load --nodes 4",
                       "load --dry-run",
                       "network --p2p_incast.iters 3",
                       "load --canaries rr_lat,rr_lat",
                       "load --measurements 0",
                       "load -o",
                       "load --seed abc"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    err[0] = 0;
    contend_command c = strncmp(bad[k], "network", 7) ? CONTEND_CMD_LOAD : CONTEND_CMD_NETWORK;
    int rc = parse(c, bad[k], &cfg, err, sizeof err);
    if (rc >= 0)
      fprintf(stderr, "accepted: %s\n", bad[k]);
    CHECK(rc < 0 && strlen(err) > 10);
    contend_config_free(&cfg);
  }
  CHECK(parse(CONTEND_CMD_LOAD, "load --help", &cfg, err, sizeof err) == 1);
  contend_config_free(&cfg);
}

static void test_rng(void) {
  enum { N = 257 };
  int a[N], b[N], c[N];
  for (int i = 0; i < N; i++)
    a[i] = b[i] = c[i] = i;
  contend_rng r1, r2, r3;
  contend_rng_init(&r1, 99, 2, 0, 5, 1);
  contend_rng_init(&r2, 99, 2, 0, 5, 1);
  contend_rng_init(&r3, 99, 2, 0, 6, 1);
  contend_rng_shuffle(&r1, a, N);
  contend_rng_shuffle(&r2, b, N);
  contend_rng_shuffle(&r3, c, N);
  CHECK(!memcmp(a, b, sizeof a)); /* same seed and tuple: same order */
  CHECK(memcmp(a, c, sizeof a));  /* another measurement: another ring */
  int seen[N] = {0};
  for (int i = 0; i < N; i++)
    seen[a[i]]++;
  int perm = 1;
  for (int i = 0; i < N; i++)
    perm &= seen[i] == 1;
  CHECK(perm);
  /* uniformity of below(): chi-square over 10 bins, 100000 draws */
  contend_rng u;
  contend_rng_init(&u, 1, 0, 0, 0, 0);
  long bins[10] = {0};
  for (int i = 0; i < 100000; i++)
    bins[contend_rng_below(&u, 10)]++;
  double chi = 0;
  for (int i = 0; i < 10; i++)
    chi += (bins[i] - 10000.0) * (bins[i] - 10000.0) / 10000.0;
  CHECK(chi < 27.88); /* p = 0.001, 9 degrees of freedom */
}

/* Ring neighbours agree across ranks: my right's left is me. */
static void test_rings(void) {
  enum { N = 13 };
  int left[N], right[N];
  for (int r = 0; r < N; r++) {
    contend_ctx c = {.rank = r, .size = N};
    contend_rng rng;
    contend_rng_init(&rng, 7, 2, 0, 3, 4);
    contend_ring_neighbours(&c, &rng, &left[r], &right[r]);
  }
  int ok = 1, visited = 0, cur = 0;
  for (int r = 0; r < N; r++)
    ok &= left[right[r]] == r && right[left[r]] == r && left[r] != r;
  do {
    cur = right[cur];
    visited++;
  } while (cur != 0 && visited <= N);
  CHECK(ok);
  CHECK(visited == N); /* one cycle through every rank */
  contend_ctx c = {.rank = 0, .size = N};
  contend_ring_neighbours(&c, NULL, &left[0], &right[0]);
  CHECK(left[0] == N - 1 && right[0] == 1);
}

static void test_hist(void) {
  contend_hist h;
  contend_hist_reset(&h);
  CHECK(isnan(contend_hist_quantile(&h, 0.5)));
  for (int i = 1; i <= 1000; i++)
    contend_hist_add(&h, (double)i);
  CHECK(h.count == 1000 && h.min == 1 && h.max == 1000);
  CHECK(fabs(contend_hist_mean(&h) - 500.5) < 1e-9);
  double p99 = contend_hist_quantile(&h, 0.99);
  CHECK(fabs(p99 - 990) <= 0.01 * 990);
  CHECK(contend_hist_quantile(&h, 1.0) == 1000 && contend_hist_quantile(&h, 0.0) == 1);
  /* bucket bounds contain their values */
  for (double v = 0.0011; v < 1e8; v *= 3.7) {
    int b = contend_hist_index(v);
    CHECK(v > contend_hist_lower(b) && v <= contend_hist_upper(b));
  }
  /* merging equals adding everything to one histogram */
  contend_hist a, b2, all;
  contend_hist_reset(&a);
  contend_hist_reset(&b2);
  contend_hist_reset(&all);
  for (int i = 0; i < 500; i++) {
    double v = 1.0 + i * 0.37;
    contend_hist_add(i % 2 ? &a : &b2, v);
    contend_hist_add(&all, v);
  }
  contend_hist_merge(&a, &b2);
  CHECK(a.count == all.count && a.min == all.min && a.max == all.max);
  int same = 1;
  for (int k = 0; k < CONTEND_HIST_NBUCKETS; k++)
    same &= contend_hist_at(&a, k) == contend_hist_at(&all, k);
  CHECK(same);
  /* the window holds the span of the samples, not every bucket */
  CHECK(all.n < CONTEND_HIST_NBUCKETS / 2 && all.lo > 0);
  /* widening keeps the counts where they were */
  const uint64_t before = contend_hist_at(&all, contend_hist_index(100.0));
  uint64_t *full = contend_hist_buckets(&all);
  CHECK(before > 0 && full[contend_hist_index(100.0)] == before && all.n == CONTEND_HIST_NBUCKETS);
  contend_hist_free(&a);
  contend_hist_free(&b2);
  contend_hist_free(&all);
  /* summaries: tails follow the direction of "better" */
  contend_summary s;
  contend_summarize(&h, 1, &s);
  CHECK(s.tail_99 == s.p1 && s.p1 < s.p50);
  contend_summarize(&h, 0, &s);
  CHECK(s.tail_99 == s.p99);
  /* percentiles stay within [min, max] */
  contend_hist one;
  contend_hist_reset(&one);
  contend_hist_add(&one, 3.3);
  CHECK(contend_hist_quantile(&one, 0.5) == 3.3 && contend_hist_quantile(&one, 0.999) == 3.3);
  /* one sample holds one bucket (every in-process rank keeps a
   * histogram per test); a second one far off widens it, keeping both */
  CHECK(one.n == 1 && one.lo == contend_hist_index(3.3));
  contend_hist_add(&one, 3000.0);
  CHECK(contend_hist_at(&one, contend_hist_index(3.3)) == 1 &&
        contend_hist_at(&one, contend_hist_index(3000.0)) == 1 && one.count == 2 &&
        contend_hist_quantile(&one, 1.0) == 3000.0);
  contend_hist_free(&one);
}

/* One double written alone (as a double, or as a count): the text after "v": . */
static void json_value_text(double v, int count, char *out, size_t len) {
  contend_strbuf b = {0};
  contend_json j;
  contend_json_init(&j, &b);
  contend_json_obj_begin(&j, NULL);
  if (count)
    contend_json_count(&j, "v", v);
  else
    contend_json_double(&j, "v", v);
  contend_json_obj_end(&j);
  const char *t = strstr(b.s, "\"v\": ") + 5;
  snprintf(out, len, "%.*s", (int)strcspn(t, "\n"), t);
  contend_sb_free(&b);
}

static void json_double_text(double v, char *out, size_t len) { json_value_text(v, 0, out, len); }

/* Doubles always read back as doubles (a decimal point or an exponent:
 * a JSON reader takes "1" for an integer) and round-trip exactly. */
static void test_json_doubles(void) {
  const double vals[] = {1.0,      0.0,
                         -0.0,     -3.0,
                         100.0,    1e15,
                         1e16,     1e17,
                         1e300,    1e-300,
                         0.1,      1.0 / 3,
                         2.5e-7,   123456789012345678.0,
                         4.9e-324, 1.7976931348623157e308};
  char t[64];
  for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
    json_double_text(vals[i], t, sizeof t);
    CHECK(strpbrk(t, ".eE") != NULL);
    CHECK(strtod(t, NULL) == vals[i] && signbit(strtod(t, NULL)) == signbit(vals[i]));
  }
  json_double_text(1.0, t, sizeof t);
  CHECK(!strcmp(t, "1.0"));
  json_double_text(-0.0, t, sizeof t);
  CHECK(!strcmp(t, "-0.0"));
  json_double_text(1e300, t, sizeof t);
  CHECK(!strcmp(t, "1e+300"));
  json_double_text(0.1, t, sizeof t);
  CHECK(!strcmp(t, "0.1"));
  /* counts kept in doubles: integers when whole and exact, else doubles */
  const struct {
    double v;
    const char *text;
  } counts[] = {{0.0, "0"},
                {-0.0, "0"},
                {1632.0, "1632"},
                {4194304.0, "4194304"},
                {9007199254740991.0, "9007199254740991"},
                {9007199254740992.0, "9007199254740992.0"},
                {2.5, "2.5"},
                {NAN, "null"}};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
    json_value_text(counts[i].v, 1, t, sizeof t);
    CHECK(!strcmp(t, counts[i].text));
  }
}

static void test_json(void) {
  contend_strbuf b = {0};
  contend_json j;
  contend_json_init(&j, &b);
  contend_json_obj_begin(&j, NULL);
  contend_json_str(&j, "s", "a\"b\\c\n\x01");
  contend_json_double(&j, "nan", NAN);
  contend_json_double(&j, "x", 0.1);
  contend_json_arr_begin(&j, "e");
  contend_json_arr_end(&j);
  contend_json_arr_begin(&j, "a");
  contend_json_int(&j, NULL, -3);
  contend_json_bool(&j, NULL, 1);
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);
  CHECK(strstr(b.s, "\"s\": \"a\\\"b\\\\c\\n\\u0001\""));
  CHECK(strstr(b.s, "\"nan\": null"));
  CHECK(strstr(b.s, "\"x\": 0.1,"));
  CHECK(strstr(b.s, "\"e\": []"));
  CHECK(strstr(b.s, "-3,") && strstr(b.s, "true"));
  contend_sb_free(&b);
  test_json_doubles();
  char err[256];
  CHECK(contend_write_file_atomic("/nonexistent-dir/x.json", "{}", 2, err, sizeof err) != 0);
  CHECK(contend_check_writable("/nonexistent-dir/x.json", err, sizeof err) != 0);
}

/* The files module: conflicts by inode and by resolved path, path limits,
 * messages that abbreviate instead of cutting, no file left behind. */
static void test_files(void) {
  char dir[] = "/tmp/contend-test-files-XXXXXX", a[256], b[256], err[1024];
  CHECK(mkdtemp(dir) != NULL);
  snprintf(a, sizeof a, "%s/in.txt", dir);
  FILE *f = fopen(a, "w");
  CHECK(f && fputs("x\n", f) >= 0 && fclose(f) == 0);
  contend_files fs;
  contend_files_init(&fs);
  contend_files_input(&fs, "the job file", a, 0);
  snprintf(b, sizeof b, "%s/./in.txt", dir);
  contend_files_output(&fs, "-o/--output", b);
  CHECK(contend_files_check(&fs, CONTEND_FILES_CREATE, err, sizeof err) != 0);
  CHECK(strstr(err, "-o/--output") && strstr(err, "the job file") && strstr(err, "same file"));
  contend_files_init(&fs); /* two outputs not created yet, spelled differently */
  snprintf(a, sizeof a, "%s/out.json", dir);
  snprintf(b, sizeof b, "%s//out.json", dir);
  contend_files_output(&fs, "-o/--output", a);
  contend_files_output(&fs, "--counters", b);
  CHECK(contend_files_check(&fs, 0, err, sizeof err) != 0 && strstr(err, "are the same file"));
  contend_files_init(&fs); /* distinct outputs pass, and the check leaves nothing */
  snprintf(b, sizeof b, "%s/c.csv", dir);
  contend_files_output(&fs, "-o/--output", a);
  contend_files_output(&fs, "--counters", b);
  contend_files_input(&fs, "the job file", NULL, 0); /* not given: skipped */
  CHECK(fs.n == 2 && contend_files_check(&fs, CONTEND_FILES_CREATE, err, sizeof err) == 0);
  char *longp = malloc(6001);
  memset(longp, 'a', 6000);
  longp[6000] = 0;
  CHECK(contend_check_writable(longp, err, sizeof err) != 0);
  CHECK(strstr(err, "6000 characters") && strstr(err, "4071") && strlen(err) < 400);
  char show[256];
  CHECK(strstr(contend_path_show(longp, show, sizeof show), "...") && strlen(show) < 160);
  free(longp);
  contend_out o; /* a stream: nothing at the target until commit; abandon leaves nothing */
  CHECK(contend_out_open(&o, "--counters", b, err, sizeof err) == 0);
  CHECK(fputs("h\n", o.f) >= 0 && access(b, F_OK) != 0);
  contend_out_abandon(&o);
  CHECK(contend_out_open(&o, "--counters", b, err, sizeof err) == 0 && fputs("h\n", o.f) >= 0);
  CHECK(contend_out_commit(&o, err, sizeof err) == 0 && access(b, F_OK) == 0);
  snprintf(a, sizeof a, "%s/in.txt", dir);
  CHECK(unlink(b) == 0 && unlink(a) == 0 && rmdir(dir) == 0); /* empty: no temporary left */
}

static void test_plan(void) {
  contend_config cfg;
  char err[1024];
  CHECK(parse(CONTEND_CMD_LOAD, "load", &cfg, err, sizeof err) == 0);
  contend_plan p, q;
  CHECK(contend_plan_make(&cfg, 9, 1, &p, err, sizeof err) != 0 && strstr(err, "at least 10"));
  for (int n = 10; n <= 200; n += 17) {
    CHECK(contend_plan_make(&cfg, n, 5, &p, err, sizeof err) == 0);
    CHECK(contend_plan_make(&cfg, n, 5, &q, err, sizeof err) == 0);
    CHECK(!memcmp(p.order, q.order, sizeof(int) * (size_t)n));
    int count[5] = {0};
    for (int i = 0; i < n; i++)
      count[p.group_of_node[i]]++;
    CHECK(count[0] == (int)floor(0.2 * n + 0.5));
    int mn = n, mx = 0;
    for (int k = 1; k < 5; k++) {
      mn = count[k] < mn ? count[k] : mn;
      mx = count[k] > mx ? count[k] : mx;
      CHECK(count[k] == p.group_nodes[k]);
    }
    CHECK(mn >= 2 && mx - mn <= 1);
    contend_plan_free(&p);
    contend_plan_free(&q);
  }
  contend_plan_make(&cfg, 50, 1, &p, err, sizeof err);
  contend_plan_make(&cfg, 50, 2, &q, err, sizeof err);
  CHECK(memcmp(p.order, q.order, sizeof(int) * 50)); /* another seed, another split */
  contend_plan_free(&p);
  contend_plan_free(&q);
  contend_config_free(&cfg);
}

/* A fake clock for the paced busy waits: 1 us per read, and once a jump
 * of 5 ms (the rank descheduled inside a wait). */
static double fake_t;
static int fake_reads, fake_jump_at;
static double fake_now(void) {
  fake_t += ++fake_reads == fake_jump_at ? 5e-3 : 1e-6;
  return fake_t;
}

/* Replayed compute gaps keep their sum: 200 gaps of 100 us with a 5 ms
 * preemption inside the 10th last exactly as long as their sum (plus the
 * clock's 1 us steps); a wait per gap against its own deadline (the
 * replay before) would add the 5 ms whole. */
static void test_pace(void) {
  contend_pace p = {0};
  fake_t = 0, fake_reads = 0, fake_jump_at = 0;
  double spent = 0;
  for (int i = 0; i < 200; i++) {
    if (i == 10)
      fake_jump_at = fake_reads + 50; /* inside the 10th gap */
    const double t0 = fake_t;
    const double w = contend_pace_busy(&p, 100e-6, fake_now);
    CHECK(w >= 0 && w <= fake_t - t0 + 1e-12);
    spent += fake_t - t0;
  }
  CHECK(fabs(spent - 200 * 100e-6) < 200 * 2e-6); /* the sum, not sum + 5 ms */
  CHECK(p.debt >= 0 && p.debt < 2e-6);
  /* gaps paid by the debt read no clock; zero and negative gaps do nothing */
  p.debt = 1e-3;
  const int reads = fake_reads;
  CHECK(contend_pace_busy(&p, 400e-6, fake_now) == 0 && fabs(p.debt - 600e-6) < 1e-12);
  CHECK(contend_pace_busy(&p, 0, fake_now) == 0 && contend_pace_busy(&p, -1, fake_now) == 0);
  CHECK(fake_reads == reads && fabs(p.debt - 600e-6) < 1e-12);
  /* without an overrun, each gap lasts what it asks */
  contend_pace q = {0};
  fake_jump_at = 0;
  const double t0 = fake_t;
  CHECK(contend_pace_busy(&q, 50e-6, fake_now) >= 50e-6 && fake_t - t0 < 52e-6);
}

/* Records for each process: appended in order per box, emptied by clear
 * (memory kept), nothing outside the range of boxes. */
static void test_outbox(void) {
  contend_outbox o = {0};
  size_t len = 99;
  CHECK(contend_outbox_get(&o, 0, &len) == NULL && len == 0); /* zero: no boxes */
  contend_outbox_init(&o, 3, "test");
  const unsigned long long a = 0x1122334455667788ull, b = 42;
  contend_outbox_put(&o, 2, &a, sizeof a);
  contend_outbox_put(&o, 2, &b, sizeof b);
  contend_outbox_put(&o, 0, "xyz", 3);
  const unsigned char *got = contend_outbox_get(&o, 2, &len);
  unsigned long long back[2];
  CHECK(got && len == 2 * sizeof a);
  if (got && len == sizeof back) {
    memcpy(back, got, len);
    CHECK(back[0] == a && back[1] == b);
  }
  CHECK(contend_outbox_get(&o, 1, &len) == NULL && len == 0);
  got = contend_outbox_get(&o, 0, &len);
  CHECK(got && len == 3 && memcmp(got, "xyz", 3) == 0);
  CHECK(contend_outbox_get(&o, 3, &len) == NULL && len == 0);
  CHECK(contend_outbox_get(&o, -1, &len) == NULL && len == 0);
  contend_outbox_clear(&o);
  CHECK(contend_outbox_get(&o, 2, &len) == NULL && len == 0 && o.box[2].cap > 0);
  contend_outbox_put(&o, 2, &b, sizeof b);
  got = contend_outbox_get(&o, 2, &len);
  CHECK(got && len == sizeof b);
  contend_outbox_init(&o, 2, "test"); /* frees the three boxes first */
  CHECK(o.procs == 2 && contend_outbox_get(&o, 2, &len) == NULL && len == 0);
  contend_outbox_free(&o);
  CHECK(o.box == NULL && o.procs == 0);
}

int main(void) {
  test_params();
  test_options();
  test_rng();
  test_rings();
  test_hist();
  test_json();
  test_files();
  test_plan();
  test_pace();
  test_outbox();
  printf("%d checks, %d failed\n", checks, failures);
  return failures ? 1 : 0;
}
