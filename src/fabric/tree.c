/* The tree view of a machine (tree.h): leaves, pods and tapers derived
 * from a simulator topology's router graph. */
#include "tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p)
    abort();
  return p;
}

static char *xstrdup(const char *s) {
  char *d = strdup(s);
  if (!d)
    abort();
  return d;
}

static int uf_find(int *parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

void contend_tree_free(contend_tree *t) {
  for (int l = 0; t->leaf_name && l < t->nleaves; l++)
    free(t->leaf_name[l]);
  for (int n = 0; t->node_name && n < t->nnodes; n++)
    free(t->node_name[n]);
  free(t->leaf_name);
  free(t->node_name);
  free(t->node_leaf);
  free(t->leaf_pod);
  free(t->leaf_first);
  free(t->leaf_node);
  free(t->pod_first);
  memset(t, 0, sizeof *t);
}

int contend_tree_from_topo(const sim_topo *topo, contend_tree *t, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  snprintf(t->source, sizeof t->source, "%s", topo->spec);
  const char *colon = strchr(topo->spec, ':');
  snprintf(t->kind, sizeof t->kind, "%.*s", colon ? (int)(colon - topo->spec) : 15, topo->spec);
  if (topo->kind == SIM_TOPO_TREE)
    snprintf(t->kind, sizeof t->kind, "slurm");
  else if (topo->kind == SIM_TOPO_XGFT && strcmp(t->kind, "fattree"))
    snprintf(t->kind, sizeof t->kind, "xgft");
  const int nr = topo->nrouters, nn = topo->nnodes;
  t->nnodes = nn;
  if (topo->kind == SIM_TOPO_DRAGONFLY)
    for (int gp = 0; gp < topo->nports; gp++)
      if (topo->cls[gp] == SIM_LINK_GLOBAL) {
        t->global_ports++;
        t->global_wired += topo->peer[gp] != SIM_UNCONNECTED;
      }
  /* levels and switches per level */
  t->levels = 1;
  for (int r = 0; r < nr; r++) {
    const int lv = topo->kind == SIM_TOPO_DRAGONFLY ? 1 : topo->router_level[r];
    if (lv < 1 || lv > SIM_MAX_LEVELS) {
      snprintf(err, errlen, "topology '%s': router %d has level %d", topo->spec, r, lv);
      return -1;
    }
    t->switches[lv - 1]++;
    if (lv > t->levels)
      t->levels = lv;
  }
  /* leaves: routers with nodes; pods: union of leaves under level-2 switches */
  int *leaf_of_router = xmalloc(sizeof(int) * (size_t)nr);
  int *parent = xmalloc(sizeof(int) * (size_t)nr);
  for (int r = 0; r < nr; r++) {
    leaf_of_router[r] = -1;
    parent[r] = r;
  }
  for (int n = 0; n < nn; n++)
    leaf_of_router[topo->node_router[n]] = 0;
  int *group_first = xmalloc(sizeof(int) * (size_t)nr);
  for (int r = 0; r < nr; r++)
    group_first[r] = -1;
  for (int r = 0; r < nr; r++) {
    if (topo->kind == SIM_TOPO_DRAGONFLY) {
      /* one pod per group: every router joins its group's first */
      const int g = topo->router_group[r];
      if (g >= 0 && g < nr) {
        if (group_first[g] < 0)
          group_first[g] = r;
        else
          parent[r] = group_first[g];
      }
      continue;
    }
    if (topo->router_level[r] != 2)
      continue;
    for (int gp = topo->port_base[r]; gp < topo->port_base[r + 1]; gp++) {
      const int pe = topo->peer[gp];
      if (pe < 0)
        continue;
      const int q = sim_port_router(topo, pe);
      if (topo->router_level[q] == 1) {
        const int a = uf_find(parent, q), b = uf_find(parent, r);
        if (a != b)
          parent[a] = b;
      }
    }
  }
  free(group_first);
  /* pods numbered in order of their first leaf router, leaves pod by pod */
  int *pod_of_root = xmalloc(sizeof(int) * (size_t)nr);
  for (int r = 0; r < nr; r++)
    pod_of_root[r] = -1;
  int npods = 0, nleaves = 0;
  for (int r = 0; r < nr; r++)
    if (leaf_of_router[r] >= 0) {
      const int root = uf_find(parent, r);
      if (pod_of_root[root] < 0)
        pod_of_root[root] = npods++;
      nleaves++;
    }
  t->npods = npods;
  t->nleaves = nleaves;
  t->pod_first = calloc((size_t)npods + 1, sizeof(int));
  t->leaf_pod = xmalloc(sizeof(int) * (size_t)nleaves);
  t->leaf_name = calloc((size_t)nleaves + 1, sizeof(char *));
  if (!t->pod_first || !t->leaf_name)
    abort();
  for (int r = 0; r < nr; r++)
    if (leaf_of_router[r] >= 0)
      t->pod_first[pod_of_root[uf_find(parent, r)] + 1]++;
  for (int p = 0; p < npods; p++)
    t->pod_first[p + 1] += t->pod_first[p];
  int *fill = xmalloc(sizeof(int) * (size_t)(npods ? npods : 1));
  for (int p = 0; p < npods; p++)
    fill[p] = t->pod_first[p];
  for (int r = 0; r < nr; r++)
    if (leaf_of_router[r] >= 0) {
      const int p = pod_of_root[uf_find(parent, r)];
      const int l = fill[p]++;
      leaf_of_router[r] = l;
      t->leaf_pod[l] = p;
      char label[128];
      const char *name = sim_topo_slurm_name(topo, r);
      t->leaf_name[l] = xstrdup(name ? name : sim_router_label(topo, r, label, sizeof label));
    }
  free(fill);
  free(pod_of_root);
  free(parent);
  /* nodes per leaf (ascending node numbers) */
  t->node_leaf = xmalloc(sizeof(int) * (size_t)nn);
  t->leaf_first = calloc((size_t)nleaves + 1, sizeof(int));
  t->leaf_node = xmalloc(sizeof(int) * (size_t)nn);
  if (!t->leaf_first)
    abort();
  for (int n = 0; n < nn; n++) {
    t->node_leaf[n] = leaf_of_router[topo->node_router[n]];
    t->leaf_first[t->node_leaf[n] + 1]++;
  }
  for (int l = 0; l < nleaves; l++)
    t->leaf_first[l + 1] += t->leaf_first[l];
  int *lf = xmalloc(sizeof(int) * (size_t)(nleaves ? nleaves : 1));
  memcpy(lf, t->leaf_first, sizeof(int) * (size_t)nleaves);
  for (int n = 0; n < nn; n++)
    t->leaf_node[lf[t->node_leaf[n]]++] = n;
  free(lf);
  free(leaf_of_router);
  /* host names (topology.conf) */
  if (topo->kind == SIM_TOPO_TREE && sim_topo_slurm_node_name(topo, 0)) {
    t->node_name = calloc((size_t)nn + 1, sizeof(char *));
    if (!t->node_name)
      abort();
    for (int n = 0; n < nn; n++)
      t->node_name[n] = xstrdup(sim_topo_slurm_node_name(topo, n));
  }
  /* links down and up per level, and the taper (spec topologies) */
  t->links_known = topo->kind != SIM_TOPO_TREE;
  if (t->links_known) {
    for (int r = 0; r < nr; r++) {
      const int lv = topo->kind == SIM_TOPO_DRAGONFLY ? 1 : topo->router_level[r];
      for (int gp = topo->port_base[r]; gp < topo->port_base[r + 1]; gp++) {
        const int pe = topo->peer[gp];
        if (pe == SIM_UNCONNECTED)
          continue;
        if (pe < 0) {
          t->node_links[lv - 1]++;
          continue;
        }
        const int q = sim_port_router(topo, pe);
        const int ql = topo->kind == SIM_TOPO_DRAGONFLY ? 1 : topo->router_level[q];
        if (ql < lv)
          t->node_links[lv - 1]++;
        else if (ql > lv)
          t->up_links[lv - 1]++;
      }
    }
    for (int l = 0; l < t->levels; l++)
      t->taper[l] = t->up_links[l] ? (double)t->node_links[l] / t->up_links[l] : 0;
  }
  (void)err;
  (void)errlen;
  return 0;
}

static int is_spec(const char *s) {
  static const char *const kinds[] = {"switch:", "fattree:", "xgft:", "dragonfly:", "slurm:"};
  for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++)
    if (!strncmp(s, kinds[i], strlen(kinds[i])))
      return 1;
  return 0;
}

const char *contend_tree_file(const char *spec) {
  if (!spec || !*spec)
    return NULL;
  return !strncmp(spec, "slurm:", 6) ? spec + 6 : is_spec(spec) ? NULL : spec;
}

int contend_tree_load(const char *spec, contend_tree *t, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (!spec || !*spec) {
    snprintf(err, errlen,
             "empty topology (expected a topology.conf path or a spec such as "
             "fattree:pods=2,leaves=4,nodes=4,uplinks=2,pod_uplinks=2)");
    return -1;
  }
  sim_topo topo;
  memset(&topo, 0, sizeof topo);
  char *full = malloc(strlen(spec) + 8);
  if (!full) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  sprintf(full, "%s%s", is_spec(spec) ? "" : "slurm:", spec);
  const int bad = sim_topo_parse(full, &topo, err, errlen);
  free(full);
  if (bad) {
    sim_topo_free(&topo);
    return -1;
  }
  const int rc = contend_tree_from_topo(&topo, t, err, errlen);
  sim_topo_free(&topo);
  return rc;
}

static int short_eq(const char *a, const char *b) {
  const size_t la = strcspn(a, "."), lb = strcspn(b, ".");
  return la == lb && !strncmp(a, b, la);
}

int contend_tree_find_node(const contend_tree *t, const char *name) {
  if (!t->node_name || !name)
    return -1;
  for (int n = 0; n < t->nnodes; n++)
    if (!strcmp(t->node_name[n], name))
      return n;
  for (int n = 0; n < t->nnodes; n++)
    if (short_eq(t->node_name[n], name))
      return n;
  return -1;
}

void contend_tree_ranges(const contend_tree *t, int *npl_min, int *npl_max, int *lpp_min,
                         int *lpp_max) {
  *npl_min = *lpp_min = t->nnodes + 1;
  *npl_max = *lpp_max = 0;
  for (int l = 0; l < t->nleaves; l++) {
    const int k = t->leaf_first[l + 1] - t->leaf_first[l];
    *npl_min = k < *npl_min ? k : *npl_min;
    *npl_max = k > *npl_max ? k : *npl_max;
  }
  for (int p = 0; p < t->npods; p++) {
    const int k = t->pod_first[p + 1] - t->pod_first[p];
    *lpp_min = k < *lpp_min ? k : *lpp_min;
    *lpp_max = k > *lpp_max ? k : *lpp_max;
  }
  if (!t->nleaves)
    *npl_min = *lpp_min = 0;
}
