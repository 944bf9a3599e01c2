/* The tree placements of job files (place_tree.h, docs/jobfile.md):
 *
 *   compact    nodes=N [per_leaf=M] [pod=I]   one pod: leaves in order, M each
 *   spread     nodes=N pods=K [per_leaf=M]    N/K nodes in each of K pods
 *   every_leaf per_leaf=M [pods=K] [pod=I]    M nodes on every leaf
 *   pairs      pairs=P [across=leaf|pod] [pods=K] [pod=I]
 *                                             pair i = ranks 2i, 2i+1
 *   incast     per_leaf=M [senders=S] [receivers=R] [pod=I]
 *                                             ranks 0..R-1 receive (one
 *                                             leaf), then M per sender leaf
 *
 * Without seed= pods, leaves and nodes are taken in ascending order; with
 * seed=S each of those orders is shuffled from S (the job's own stream).
 * Only free nodes are taken.  A per_leaf count is strict: a leaf with fewer
 * free nodes is skipped (compact, spread) or refuses the placement
 * (every_leaf). */
#include "place_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contend/rng.h"

enum { STREAM_TREE = 0x74726565 };

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    abort();
  return p;
}

void place_tree_view_init(place_tree_view *v, const contend_tree *t, const int *tree_node,
                          int nnodes) {
  memset(v, 0, sizeof *v);
  v->t = t;
  v->nnodes = nnodes;
  v->leaf_of = xmalloc(sizeof(int) * (size_t)nnodes);
  v->lfirst = calloc((size_t)t->nleaves + 1, sizeof(int));
  v->lnode = xmalloc(sizeof(int) * (size_t)nnodes);
  v->pod_has = calloc((size_t)t->npods + 1, sizeof(int));
  if (!v->lfirst || !v->pod_has)
    abort();
  for (int i = 0; i < nnodes; i++) {
    const int l = t->node_leaf[tree_node ? tree_node[i] : i];
    v->leaf_of[i] = l;
    v->lfirst[l + 1]++;
    v->pod_has[t->leaf_pod[l]]++;
  }
  for (int l = 0; l < t->nleaves; l++)
    v->lfirst[l + 1] += v->lfirst[l];
  int *fill = xmalloc(sizeof(int) * (size_t)(t->nleaves + 1));
  memcpy(fill, v->lfirst, sizeof(int) * (size_t)(t->nleaves + 1));
  for (int i = 0; i < nnodes; i++)
    v->lnode[fill[v->leaf_of[i]]++] = i;
  free(fill);
}

void place_tree_view_free(place_tree_view *v) {
  free(v->leaf_of);
  free(v->lfirst);
  free(v->lnode);
  free(v->pod_has);
  memset(v, 0, sizeof *v);
}

/* One job's placement in progress. */
typedef struct st {
  const place_tree_view *v;
  const contend_jobfile *jf;
  contend_job *j;
  int k;
  int *owner;
  contend_rng rng;
  int shuffled;
  int *out, nout; /* the job's nodes, in rank order */
  int *buf;       /* scratch, nnodes */
  char *err;
  size_t errlen;
} st;

static int nofit(st *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int nofit(st *s, const char *fmt, ...) {
  char why[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  snprintf(s->err, s->errlen, "%s:%d: job '%s': placement %s does not fit: %s", s->jf->path,
           s->j->nodes_line, s->j->name, contend_nodes_kind_name(s->j->kind), why);
  return -1;
}

static int leaf_nfree(const st *s, int l) {
  int n = 0;
  for (int x = s->v->lfirst[l]; x < s->v->lfirst[l + 1]; x++)
    n += s->owner[s->v->lnode[x]] < 0;
  return n;
}

/* Free nodes of leaf l into b (ascending, or shuffled); returns the count. */
static int leaf_free(st *s, int l, int *b) {
  int n = 0;
  for (int x = s->v->lfirst[l]; x < s->v->lfirst[l + 1]; x++)
    if (s->owner[s->v->lnode[x]] < 0)
      b[n++] = s->v->lnode[x];
  if (s->shuffled)
    contend_rng_shuffle(&s->rng, b, n);
  return n;
}

static void take(st *s, int node) {
  s->out[s->nout++] = node;
  s->owner[node] = s->k;
}

static void take_leaf(st *s, int l, int c) {
  const int n = leaf_free(s, l, s->buf);
  for (int i = 0; i < c && i < n; i++)
    take(s, s->buf[i]);
}

/* Candidate pods into pods[]: from pod= in index order, else every pod
 * with run nodes (shuffled when seeded).  Returns the count or -1. */
static int pods_of(st *s, int *pods) {
  const contend_tree *t = s->v->t;
  int n = 0;
  if (s->j->pod >= 0) {
    if (s->j->pod >= t->npods || !s->v->pod_has[s->j->pod])
      return nofit(s, "pod=%d, but the run's nodes are in pods %s%d", s->j->pod,
                   t->npods > 1 ? "0-" : "", t->npods - 1);
    for (int p = s->j->pod; p < t->npods; p++)
      if (s->v->pod_has[p])
        pods[n++] = p;
    return n;
  }
  for (int p = 0; p < t->npods; p++)
    if (s->v->pod_has[p])
      pods[n++] = p;
  if (s->shuffled)
    contend_rng_shuffle(&s->rng, pods, n);
  return n;
}

/* Leaves of pod p with run nodes (shuffled when seeded); returns the count. */
static int leaves_of(st *s, int p, int *leaves) {
  const contend_tree *t = s->v->t;
  int n = 0;
  for (int l = t->pod_first[p]; l < t->pod_first[p + 1]; l++)
    if (s->v->lfirst[l + 1] > s->v->lfirst[l])
      leaves[n++] = l;
  if (s->shuffled)
    contend_rng_shuffle(&s->rng, leaves, n);
  return n;
}

/* Nodes a leaf gives: m each (strict) or all its free nodes (m = 0). */
static int leaf_gives(const st *s, int l, int m) {
  const int nf = leaf_nfree(s, l);
  return m ? (nf >= m ? m : 0) : nf;
}

static int pod_capacity(const st *s, const int *leaves, int nl, int m) {
  int c = 0;
  for (int i = 0; i < nl; i++)
    c += leaf_gives(s, leaves[i], m);
  return c;
}

static void take_pod(st *s, const int *leaves, int nl, int m, int want) {
  for (int i = 0; i < nl && want > 0; i++) {
    int c = leaf_gives(s, leaves[i], m);
    c = c < want ? c : want;
    take_leaf(s, leaves[i], c);
    want -= c;
  }
}

static int compact(st *s, int *pods, int *leaves) {
  const int m = s->j->per_leaf, want = s->j->want;
  int np = pods_of(s, pods);
  if (np < 0)
    return -1;
  if (s->j->pod >= 0)
    np = 1;
  int best = -1, best_pod = -1;
  for (int i = 0; i < np; i++) {
    const int nl = leaves_of(s, pods[i], leaves);
    const int cap = pod_capacity(s, leaves, nl, m);
    if (cap >= want) {
      take_pod(s, leaves, nl, m, want);
      return 0;
    }
    if (cap > best)
      best = cap, best_pod = pods[i];
  }
  char per[64] = "";
  if (m)
    snprintf(per, sizeof per, " (%d on each leaf with that many free)", m);
  return nofit(s, "%s has %d free nodes%s: the most is %d, in pod %d",
               s->j->pod >= 0 ? "the pod" : "no pod", want, per, best < 0 ? 0 : best, best_pod);
}

static int spread(st *s, int *pods, int *leaves) {
  const int k = s->j->pods, want = s->j->want, m = s->j->per_leaf;
  if (want < k)
    return nofit(s, "nodes=%d over pods=%d leaves a pod empty", want, k);
  int np = pods_of(s, pods);
  if (np < 0)
    return -1;
  if (s->j->pod >= 0 && np > k)
    np = k;
  int done = 0;
  for (int i = 0; i < np && done < k; i++) {
    const int share = want / k + (done < want % k);
    const int nl = leaves_of(s, pods[i], leaves);
    const int mi = m ? m : (nl ? (share + nl - 1) / nl : 0);
    if (nl && pod_capacity(s, leaves, nl, mi) >= share) {
      take_pod(s, leaves, nl, mi, share);
      done++;
    } else if (s->j->pod >= 0) {
      break;
    }
  }
  if (done < k) {
    char per[64] = "";
    if (m)
      snprintf(per, sizeof per, ", %d per leaf", m);
    return nofit(s, "only %d of the %d pods %s can hold their share (%d nodes%s)", done, k,
                 s->j->pod >= 0 ? "from pod= on" : "asked for", want / k, per);
  }
  return 0;
}

static int every_leaf(st *s, int *pods, int *leaves) {
  const contend_tree *t = s->v->t;
  const int m = s->j->per_leaf, k = s->j->pods;
  int np = pods_of(s, pods);
  if (np < 0)
    return -1;
  if (k && s->j->pod >= 0 && np > k)
    np = k;
  int done = 0;
  for (int i = 0; i < np && (!k || done < k); i++) {
    const int nl = leaves_of(s, pods[i], leaves);
    int bad = -1;
    for (int q = 0; q < nl && bad < 0; q++)
      if (leaf_nfree(s, leaves[q]) < m)
        bad = leaves[q];
    if (bad >= 0) {
      if (k && s->j->pod < 0)
        continue; /* look for another pod */
      return nofit(s, "leaf %s (pod %d) has %d free node%s, per_leaf=%d", t->leaf_name[bad],
                   pods[i], leaf_nfree(s, bad), leaf_nfree(s, bad) == 1 ? "" : "s", m);
    }
    for (int q = 0; q < nl; q++)
      take_leaf(s, leaves[q], m);
    done++;
  }
  if (k && done < k)
    return nofit(s, "only %d pod%s %s %d free nodes on every leaf, pods=%d", done,
                 done == 1 ? " has" : "s have", "at least", m, k);
  return 0;
}

static int pairs(st *s, int *pods, int *leaves) {
  const contend_tree *t = s->v->t;
  const int want = s->j->want / 2, k = s->j->pods;
  int np = pods_of(s, pods);
  if (np < 0)
    return -1;
  if (k) {
    if (np < k)
      return nofit(s, "pods=%d but only %d pod%s available", k, np, np == 1 ? " is" : "s are");
    np = k;
  }
  /* leaf pairs (a[q], b[q]) */
  int *a = xmalloc(sizeof(int) * (size_t)(t->nleaves + 1));
  int *b = xmalloc(sizeof(int) * (size_t)(t->nleaves + 1));
  int *lb = xmalloc(sizeof(int) * (size_t)(t->nleaves + 1));
  int npairs = 0;
  if (!s->j->across_pods) {
    for (int i = 0; i < np; i++) {
      const int nl = leaves_of(s, pods[i], leaves);
      for (int q = 0; q + 1 < nl; q += 2)
        a[npairs] = leaves[q], b[npairs++] = leaves[q + 1];
    }
  } else {
    for (int i = 0; i + 1 < np; i += 2) {
      const int na = leaves_of(s, pods[i], leaves), nb = leaves_of(s, pods[i + 1], lb);
      for (int q = 0; q < na && q < nb; q++)
        a[npairs] = leaves[q], b[npairs++] = lb[q];
    }
  }
  free(lb);
  int rc = 0;
  if (!npairs) {
    rc = nofit(s, "%s",
               s->j->across_pods ? "across=pod needs two pods with nodes"
                                 : "across=leaf needs a pod with two leaves");
  } else {
    /* every leaf's free nodes, once (the leaves of the pairs are distinct) */
    int *fa = xmalloc(sizeof(int) * (size_t)s->v->nnodes);
    int *fb = xmalloc(sizeof(int) * (size_t)s->v->nnodes);
    int *oa = xmalloc(sizeof(int) * (size_t)(npairs + 1)),
        *ob = xmalloc(sizeof(int) * (size_t)(npairs + 1));
    int *ca = calloc((size_t)npairs, sizeof(int)), *cb = calloc((size_t)npairs, sizeof(int));
    if (!ca || !cb)
      abort();
    oa[0] = ob[0] = 0;
    for (int q = 0; q < npairs; q++) {
      oa[q + 1] = oa[q] + leaf_free(s, a[q], fa + oa[q]);
      ob[q + 1] = ob[q] + leaf_free(s, b[q], fb + ob[q]);
    }
    int got = 0, progress = 1;
    while (got < want && progress) {
      progress = 0;
      for (int q = 0; q < npairs && got < want; q++)
        if (oa[q] + ca[q] < oa[q + 1] && ob[q] + cb[q] < ob[q + 1]) {
          take(s, fa[oa[q] + ca[q]++]);
          take(s, fb[ob[q] + cb[q]++]);
          got++;
          progress = 1;
        }
    }
    if (got < want)
      rc = nofit(s,
                 "only %d of the %d pairs fit (%d leaf pair%s %s, free nodes on both sides "
                 "needed)",
                 got, want, npairs, npairs == 1 ? "" : "s",
                 s->j->across_pods ? "across pods" : "within pods");
    free(fa);
    free(fb);
    free(oa);
    free(ob);
    free(ca);
    free(cb);
  }
  free(a);
  free(b);
  return rc;
}

static int incast(st *s, int *pods, int *leaves) {
  const int m = s->j->per_leaf, ns = s->j->sender_leaves, r = s->j->receivers;
  int np = pods_of(s, pods);
  if (np < 0)
    return -1;
  if (s->j->pod >= 0)
    np = 1;
  int *senders = xmalloc(sizeof(int) * (size_t)(ns + 1));
  for (int i = 0; i < np; i++) {
    const int nl = leaves_of(s, pods[i], leaves);
    int got = 0, recv = -1;
    for (int q = 0; q < nl; q++) {
      const int nf = leaf_nfree(s, leaves[q]);
      if (got < ns && nf >= m)
        senders[got++] = leaves[q];
      else if (got == ns && recv < 0 && nf >= r)
        recv = leaves[q];
    }
    if (got == ns && recv >= 0) {
      take_leaf(s, recv, r); /* ranks 0..r-1: the receivers */
      for (int q = 0; q < ns; q++)
        take_leaf(s, senders[q], m);
      free(senders);
      return 0;
    }
  }
  free(senders);
  return nofit(s, "%s has %d leaves with %d free nodes followed by one with %d",
               s->j->pod >= 0 ? "the pod" : "no pod", ns, m, r);
}

int place_tree_job(const place_tree_view *v, contend_jobfile *jf, int k, int *owner, char *err,
                   size_t errlen) {
  contend_job *j = &jf->jobs[k];
  st s = {.v = v, .jf = jf, .j = j, .k = k, .owner = owner, .err = err, .errlen = errlen};
  s.shuffled = j->seed_set;
  j->placement_seed = j->seed_set ? j->seed : 0;
  if (s.shuffled)
    contend_rng_init(&s.rng, j->seed, STREAM_TREE, (uint64_t)k, 0, 0);
  s.out = xmalloc(sizeof(int) * (size_t)(v->nnodes + 1));
  s.buf = xmalloc(sizeof(int) * (size_t)(v->nnodes + 1));
  int *pods = xmalloc(sizeof(int) * (size_t)(v->t->npods + 1));
  int *leaves = xmalloc(sizeof(int) * (size_t)(v->t->nleaves + 1));
  int rc;
  switch (j->kind) {
  case CONTEND_NODES_COMPACT:
    rc = compact(&s, pods, leaves);
    break;
  case CONTEND_NODES_SPREAD:
    rc = spread(&s, pods, leaves);
    break;
  case CONTEND_NODES_EVERY_LEAF:
    rc = every_leaf(&s, pods, leaves);
    break;
  case CONTEND_NODES_PAIRS:
    rc = pairs(&s, pods, leaves);
    break;
  case CONTEND_NODES_INCAST:
    rc = incast(&s, pods, leaves);
    break;
  default:
    rc = nofit(&s, "not a tree placement");
  }
  if (!rc && !s.nout)
    rc = nofit(&s, "it gets no node");
  free(pods);
  free(leaves);
  free(s.buf);
  if (rc) {
    free(s.out);
    return -1;
  }
  j->nodes = s.out;
  j->nnodes = s.nout;
  return 0;
}
