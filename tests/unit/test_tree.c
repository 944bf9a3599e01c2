/* Unit tests of the tree view (src/fabric/tree.c) and the tree placements
 * (src/jobs/place_tree.c) on a Quartz-like machine: 2,688 nodes, 32 per
 * leaf, pods of 8 leaves (256 nodes; the 11th pod has 4 leaves), one top
 * switch.  Checks counts per leaf and pod, disjointness, seeded
 * reproducibility and the refusals (file:line named). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/fabric/tree.h"
#include "../../src/jobs/jobs.h"
#include "contend/strbuf.h"

#include "check.h"

static char err[2048];

/* The same text as tests/fixtures/topology/make_quartz_conf.py writes. */
static char *quartz_conf(void) {
  contend_strbuf o = {0};
  contend_sb_printf(&o, "# Quartz-like\n");
  for (int l = 0; l < 84; l++)
    contend_sb_printf(&o, "SwitchName=leaf%02d Nodes=quartz[%d-%d]\n", l + 1, l * 32 + 1,
                      l * 32 + 32);
  for (int p = 0; p < 11; p++)
    contend_sb_printf(&o, "SwitchName=pod%02d Switches=leaf[%02d-%02d]\n", p + 1, p * 8 + 1,
                      p * 8 + 8 < 84 ? p * 8 + 8 : 84);
  contend_sb_printf(&o, "SwitchName=top Switches=pod[01-11]\n");
  return o.s;
}

static int load_text(const char *conf, contend_tree *t) {
  sim_topo topo;
  memset(&topo, 0, sizeof topo);
  err[0] = 0;
  int rc = sim_topo_parse_slurm_text("slurm:t.conf", conf, &topo, err, sizeof err);
  if (!rc)
    rc = contend_tree_from_topo(&topo, t, err, sizeof err);
  sim_topo_free(&topo);
  return rc;
}

static void test_quartz_tree(const contend_tree *t) {
  CHECK(t->nnodes == 2688 && t->nleaves == 84 && t->npods == 11 && t->levels == 3);
  CHECK(t->switches[0] == 84 && t->switches[1] == 11 && t->switches[2] == 1);
  CHECK(!t->links_known && t->taper[0] == 0);
  int a, b, c, d;
  contend_tree_ranges(t, &a, &b, &c, &d);
  CHECK(a == 32 && b == 32 && c == 4 && d == 8);
  CHECK(t->node_leaf[0] == 0 && t->node_leaf[31] == 0 && t->node_leaf[32] == 1);
  CHECK(t->leaf_pod[7] == 0 && t->leaf_pod[8] == 1 && t->leaf_pod[83] == 10);
  CHECK(!strcmp(t->leaf_name[83], "leaf84") && !strcmp(t->node_name[2687], "quartz2688"));
  CHECK(contend_tree_find_node(t, "quartz33") == 32);
  CHECK(contend_tree_find_node(t, "quartz33.llnl.gov") == 32); /* short names compared */
  CHECK(contend_tree_find_node(t, "quartz9999") == -1);
}

static void test_specs(void) {
  contend_tree t;
  /* 4 pods of 8 leaves, 32 nodes and 16 uplinks per leaf: 2:1 at the leaves */
  CHECK(contend_tree_load("fattree:pods=4,leaves=8,nodes=32,uplinks=16,pod_uplinks=8", &t, err,
                          sizeof err) == 0);
  CHECK(t.nnodes == 1024 && t.nleaves == 32 && t.npods == 4 && t.levels == 3);
  CHECK(t.links_known && t.taper[0] == 2.0 && t.taper[1] == 1.0 && t.taper[2] == 0);
  CHECK(t.leaf_pod[7] == 0 && t.leaf_pod[8] == 1);
  contend_tree_free(&t);
  /* 2 levels: one pod */
  CHECK(contend_tree_load("fattree:leaves=4,nodes=4,uplinks=2", &t, err, sizeof err) == 0);
  CHECK(t.nleaves == 4 && t.npods == 1 && t.levels == 2 && t.taper[0] == 2.0);
  contend_tree_free(&t);
  CHECK(contend_tree_load("switch:nodes=8", &t, err, sizeof err) == 0);
  CHECK(t.nleaves == 1 && t.npods == 1 && t.levels == 1);
  contend_tree_free(&t);
  CHECK(contend_tree_load("dragonfly:a=4,p=2,h=2", &t, err, sizeof err) == 0);
  CHECK(t.nleaves == 36 && t.npods == 9);
  contend_tree_free(&t);
}

static void test_malformed(void) {
  static const struct {
    const char *text, *what;
  } cases[] = {
      {"SwitchName=a Nodes=n[1-4]\nSwitchName=b Nodes=n[3-5]\n", "line 2:"},
      {"SwitchName=a Nodes=n[1-4]\n\nSwitchName=b Nodez=n5\n", "line 3:"},
      {"SwitchName=a Nodes=n[1-4]\nNodes=n5\n", "line 2:"},
      {"SwitchName=a Nodes=n[4-1]\n", "line 1:"},
      {"# nothing\n", "no SwitchName"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    contend_tree t;
    memset(&t, 0, sizeof t);
    CHECK(load_text(cases[i].text, &t) == -1);
    CHECK(strstr(err, cases[i].what) != NULL);
    if (!strstr(err, cases[i].what))
      fprintf(stderr, "  case %zu: got '%s'\n", i, err);
  }
}

static int place(contend_jobfile *jf, const char *text, const contend_tree *t, int nnodes,
                 uint64_t seed) {
  err[0] = 0;
  if (contend_jobfile_parse(jf, "t.job", text, NULL, 0, err, sizeof err)) {
    fprintf(stderr, "  parse: %s\n", err);
    return -2;
  }
  return contend_jobs_place_tree(jf, nnodes, t, NULL, seed, err, sizeof err);
}

/* Nodes of job j per leaf (counts[nleaves]) and the pods used. */
static int per_leaf(const contend_job *j, const contend_tree *t, int *counts) {
  memset(counts, 0, sizeof(int) * (size_t)t->nleaves);
  int pods = 0;
  char seen[64] = {0};
  for (int i = 0; i < j->nnodes; i++) {
    counts[t->node_leaf[j->nodes[i]]]++;
    CHECK(j->node_leaf[i] == t->node_leaf[j->nodes[i]]);
    CHECK(j->node_pod[i] == t->leaf_pod[t->node_leaf[j->nodes[i]]]);
    pods += !seen[j->node_pod[i]];
    seen[j->node_pod[i]] = 1;
  }
  return pods;
}

static int disjoint(const contend_jobfile *jf, int nnodes) {
  char *used = calloc((size_t)nnodes, 1);
  int ok = 1;
  for (int k = 0; k < jf->njobs; k++)
    for (int i = 0; i < jf->jobs[k].nnodes; i++) {
      ok &= !used[jf->jobs[k].nodes[i]];
      used[jf->jobs[k].nodes[i]] = 1;
    }
  free(used);
  return ok;
}

#define M "[MOTIF] barrier\n"

static void test_poster(const contend_tree *t) {
  contend_jobfile jf;
  int cnt[84];
  /* the poster's control: one pod, 28 per leaf; the rest: 2 pods, 14 per leaf, 3 per leaf
   * kept for the bully on those 16 leaves */
  const char *text = "[JOB_NAME] ctl\n[PLACEMENT] compact nodes=224 per_leaf=28\n" M
                     "[JOB_NAME] app\n[PLACEMENT] spread nodes=224 pods=2 per_leaf=14\n" M
                     "[JOB_NAME] bully\n[PLACEMENT] every_leaf per_leaf=3 pods=2\n" M
                     "[JOB_NAME] many1\n[PLACEMENT] random nodes=100 seed=5\n" M
                     "[JOB_NAME] many2\n[PLACEMENT] random nodes=100 seed=6\n" M;
  CHECK(place(&jf, text, t, 2688, 1) == 0);
  const contend_job *ctl = &jf.jobs[0], *app = &jf.jobs[1], *bully = &jf.jobs[2];
  CHECK(ctl->nnodes == 224 && per_leaf(ctl, t, cnt) == 1);
  for (int l = 0; l < 84; l++)
    CHECK(cnt[l] == (l < 8 ? 28 : 0));
  CHECK(app->nnodes == 224 && per_leaf(app, t, cnt) == 2);
  int used = 0;
  for (int l = 0; l < 84; l++) {
    CHECK(cnt[l] == 0 || cnt[l] == 14);
    used += cnt[l] == 14;
  }
  CHECK(used == 16);
  /* every_leaf pods=2: the first two pods with 3 free on every leaf: pod 0 (4 left after
   * ctl), then pod 1 (18 left after app) */
  CHECK(bully->nnodes == 48 && per_leaf(bully, t, cnt) == 2);
  for (int l = 0; l < 16; l++)
    CHECK(cnt[l] == 3);
  CHECK(disjoint(&jf, 2688));
  contend_jobfile_free(&jf);
}

static void test_pairs_incast(const contend_tree *t) {
  contend_jobfile jf;
  const char *text = "[JOB_NAME] adj\n[PLACEMENT] pairs pairs=17 pods=2\n" M
                     "[JOB_NAME] bis\n[PLACEMENT] pairs pairs=17 across=pod pods=2 pod=2\n" M
                     "[JOB_NAME] inc\n[PLACEMENT] incast per_leaf=3 senders=7 pod=4\n" M;
  CHECK(place(&jf, text, t, 2688, 1) == 0);
  const contend_job *adj = &jf.jobs[0], *bis = &jf.jobs[1], *inc = &jf.jobs[2];
  CHECK(adj->nnodes == 34 && bis->nnodes == 34);
  for (int i = 0; i < 17; i++) {
    const int la = t->node_leaf[adj->nodes[2 * i]], lb = t->node_leaf[adj->nodes[2 * i + 1]];
    CHECK(la != lb && t->leaf_pod[la] == t->leaf_pod[lb] && t->leaf_pod[la] < 2);
    CHECK(lb == la + 1 && la % 2 == 0); /* pair i: leaves 2q, 2q+1 */
    const int pa = bis->node_pod[2 * i], pb = bis->node_pod[2 * i + 1];
    CHECK(pa == 2 && pb == 3); /* bisection: partner in the other pod */
    CHECK(bis->node_leaf[2 * i] % 8 == bis->node_leaf[2 * i + 1] % 8);
  }
  /* pair i (i < 8 leaf pairs) is on leaf pair i: 2i and 2i+1 */
  CHECK(t->node_leaf[adj->nodes[0]] == 0 && t->node_leaf[adj->nodes[2]] == 2);
  CHECK(t->node_leaf[adj->nodes[16]] == 0); /* the 9th pair goes round again */
  /* incast: 1 receiving leaf (3 nodes, ranks 0-2) then 7 sender leaves x 3, all in pod 4 */
  CHECK(inc->nnodes == 24);
  int cnt[84];
  CHECK(per_leaf(inc, t, cnt) == 1 && inc->node_pod[0] == 4);
  CHECK(inc->node_leaf[0] == 39 && inc->node_leaf[2] == 39 && inc->node_leaf[3] == 32);
  for (int l = 32; l < 40; l++)
    CHECK(cnt[l] == 3);
  CHECK(disjoint(&jf, 2688));
  contend_jobfile_free(&jf);
}

static void test_seeds(const contend_tree *t) {
  contend_jobfile a, b, c;
  const char *text = "[JOB_NAME] x\n[PLACEMENT] spread nodes=64 pods=2 per_leaf=4 seed=7\n" M
                     "[JOB_NAME] y\n[PLACEMENT] pairs pairs=20 across=pod seed=7\n" M;
  const char *other = "[JOB_NAME] x\n[PLACEMENT] spread nodes=64 pods=2 per_leaf=4 seed=8\n" M
                      "[JOB_NAME] y\n[PLACEMENT] pairs pairs=20 across=pod seed=8\n" M;
  CHECK(place(&a, text, t, 2688, 1) == 0);
  CHECK(place(&b, text, t, 2688, 99) == 0); /* the run seed does not matter */
  CHECK(place(&c, other, t, 2688, 1) == 0);
  for (int k = 0; k < 2; k++) {
    CHECK(a.jobs[k].nnodes == b.jobs[k].nnodes);
    CHECK(!memcmp(a.jobs[k].nodes, b.jobs[k].nodes, sizeof(int) * (size_t)a.jobs[k].nnodes));
    CHECK(memcmp(a.jobs[k].nodes, c.jobs[k].nodes, sizeof(int) * (size_t)a.jobs[k].nnodes));
    CHECK(a.jobs[k].placement_seed == 7);
  }
  int cnt[84];
  CHECK(per_leaf(&a.jobs[0], t, cnt) == 2 && per_leaf(&c.jobs[0], t, cnt) == 2);
  for (int l = 0; l < 84; l++)
    CHECK(cnt[l] == 0 || cnt[l] == 4);
  for (int i = 0; i < 20; i++)
    CHECK(a.jobs[1].node_pod[2 * i] != a.jobs[1].node_pod[2 * i + 1]);
  CHECK(disjoint(&a, 2688) && disjoint(&c, 2688));
  contend_jobfile_free(&a);
  contend_jobfile_free(&b);
  contend_jobfile_free(&c);
}

static void refused(const contend_tree *t, int nnodes, const char *text, int line,
                    const char *what) {
  contend_jobfile jf;
  char where[32];
  snprintf(where, sizeof where, line ? "t.job:%d:" : "t.job", line);
  const int rc = place(&jf, text, t, nnodes, 1);
  CHECK(rc == -1 && strstr(err, where) == err && strstr(err, what));
  if (rc != -1 || strstr(err, where) != err || !strstr(err, what))
    fprintf(stderr, "  text: %s\n  got (%d): %s\n  want: %s ... %s\n", text, rc, err, where, what);
  contend_jobfile_free(&jf);
}

static void test_refusals(const contend_tree *t) {
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] compact nodes=257\n" M, 2, "no pod has 257");
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] compact nodes=225 per_leaf=28\n" M, 2,
          "does not fit");
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] spread nodes=300 pods=12\n" M, 2, "of the 12 pods");
  refused(t, 2688,
          "[JOB_NAME] a\n[PLACEMENT] compact nodes=250\n" M
          "[JOB_NAME] b\n[PLACEMENT] every_leaf per_leaf=7\n" M,
          5, "leaf leaf01 (pod 0) has 0 free nodes");
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] pairs pairs=1 across=pod pod=10\n" M, 2, "two pods");
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] pairs pairs=700 pods=1\n" M, 2,
          "only 128 of the 700 pairs");
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] incast per_leaf=3 pod=10\n" M, 2,
          "7 leaves with 3 free nodes");
  refused(t, 2688, "[JOB_NAME] a\n[PLACEMENT] compact nodes=8 pod=11\n" M, 2, "pod=11");
  refused(t, 3000, "[JOB_NAME] a\n[PLACEMENT] linear nodes=8\n" M, 0, "has 2688");
  refused(NULL, 64,
          "[JOB_NAME] a\n[NID_LIST] 0\n" M "[JOB_NAME] b\n[PLACEMENT] compact nodes=8\n" M, 5,
          "needs the machine's tree");
  /* a dry run on fewer nodes than the file: the missing ones are not used */
  contend_jobfile jf;
  CHECK(place(&jf, "[JOB_NAME] a\n[PLACEMENT] every_leaf per_leaf=2\n" M, t, 100, 1) == 0);
  CHECK(jf.jobs[0].nnodes == 8); /* leaves 0-3 (100 nodes: 32+32+32+4) */
  contend_jobfile_free(&jf);
}

static void test_parse_errors(void) {
  static const struct {
    const char *text, *what;
  } cases[] = {
      {"[JOB_NAME] a\n[PLACEMENT] spread nodes=4\n" M, "needs pods=K"},
      {"[JOB_NAME] a\n[PLACEMENT] pairs across=pod\n" M, "needs pairs=P"},
      {"[JOB_NAME] a\n[PLACEMENT] pairs pairs=2 across=rack\n" M, "across='rack'"},
      {"[JOB_NAME] a\n[PLACEMENT] compact nodes=4 pods=2\n" M, "has no option 'pods'"},
      {"[JOB_NAME] a\n[PLACEMENT] every_leaf per_leaf=0\n" M, "per_leaf='0'"},
      {"[JOB_NAME] a\n[PLACEMENT] compact nodes=4 nodes=5\n" M, "given twice"},
      {"[JOB_NAME] a\n[PLACEMENT] bunched nodes=4\n" M, "every_leaf, pairs or incast"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    contend_jobfile jf;
    const int rc = contend_jobfile_parse(&jf, "t.job", cases[i].text, NULL, 0, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "t.job:2:") == err && strstr(err, cases[i].what));
    if (rc != -1 || !strstr(err, cases[i].what))
      fprintf(stderr, "  case %zu: got '%s'\n", i, err);
    contend_jobfile_free(&jf);
  }
}

int main(void) {
  char *conf = quartz_conf();
  contend_tree t;
  CHECK(load_text(conf, &t) == 0);
  free(conf);
  test_quartz_tree(&t);
  test_specs();
  test_malformed();
  test_poster(&t);
  test_pairs_incast(&t);
  test_seeds(&t);
  test_refusals(&t);
  test_parse_errors();
  contend_tree_free(&t);
  printf("test_tree: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
