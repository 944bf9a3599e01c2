/* Partitions of a fabric's routers (partition.h): the fabric's groups
 * handed out in contiguous blocks, or METIS's k-way partition of the
 * router graph; then what the partition cuts. */
#include "partition.h"

#include <metis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p)
    contend_fail("out of memory (partition, %zu x %zu B)", n, size);
  return p;
}

/* The unit (group) of every router, or -1 for a router spread over the
 * parts on its own (a tree's top level, which joins every pod); returns
 * the number of units (0: the fabric has none). */
static int units_of(const sim_topo *t, int *unit) {
  int top = 0, n = 0;
  for (int r = 0; r < t->nrouters; r++)
    top = t->router_level[r] > top ? t->router_level[r] : top;
  for (int r = 0; r < t->nrouters; r++) {
    const int spread = t->kind != SIM_TOPO_DRAGONFLY && t->router_level[r] == top;
    unit[r] = spread ? -1 : t->router_group[r];
    n = !spread && unit[r] + 1 > n ? unit[r] + 1 : n;
  }
  return n >= 2 ? n : 0;
}

/* Groups: part k takes groups [k G / P, (k+1) G / P); routers outside the
 * groups (a tree's top level) go in contiguous blocks, in id order. */
static int by_groups(const sim_topo *t, int parts, int *part, char *err, size_t errlen) {
  const int G = units_of(t, part);
  if (!G) {
    snprintf(err, errlen,
             "--partition groups: %s has no groups or pods (a dragonfly's groups, a tree's pods "
             "from 3 levels on): use --partition graph",
             t->spec);
    return -1;
  }
  if (G < parts) {
    snprintf(err, errlen,
             "--partition groups: %s has %d %s, fewer than %d parts (processes): give at most "
             "%d, or --partition graph",
             t->spec, G, t->kind == SIM_TOPO_DRAGONFLY ? "groups" : "pods", parts, G);
    return -1;
  }
  int spread = 0, seen = 0;
  for (int r = 0; r < t->nrouters; r++)
    spread += part[r] < 0;
  for (int r = 0; r < t->nrouters; r++)
    part[r] = part[r] < 0 ? (int)((long long)seen++ * parts / spread)
                          : (int)((long long)part[r] * parts / G);
  return 0;
}

/* METIS k-way on the router graph: a vertex per router weighted by its
 * ports, an edge per pair of linked routers weighted by their links. */
static int by_graph(const sim_topo *t, int parts, uint64_t seed, int *part, char *err,
                    size_t errlen) {
  const int R = t->nrouters;
  idx_t *xadj = xcalloc((size_t)R + 1, sizeof *xadj);
  idx_t *adj = xcalloc((size_t)t->nports, sizeof *adj),
        *wgt = xcalloc((size_t)t->nports, sizeof *wgt);
  idx_t *vwgt = xcalloc((size_t)R, sizeof *vwgt);
  int *last = xcalloc((size_t)R, sizeof *last); /* the edge slot of neighbour q seen from r */
  for (int q = 0; q < R; q++)
    last[q] = -1;
  idx_t m = 0;
  for (int r = 0; r < R; r++) {
    xadj[r] = m;
    vwgt[r] = t->port_base[r + 1] - t->port_base[r];
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      if (t->peer[gp] < 0) /* a NIC or no link */
        continue;
      const int q = sim_port_router(t, t->peer[gp]);
      if (q == r)
        continue;
      if (last[q] >= xadj[r]) { /* parallel links: one edge, heavier */
        wgt[last[q]]++;
        continue;
      }
      last[q] = m;
      adj[m] = q, wgt[m] = 1, m++;
    }
  }
  xadj[R] = m;
  idx_t nv = R, ncon = 1, np = parts, obj = 0, opt[METIS_NOPTIONS];
  METIS_SetDefaultOptions(opt);
  opt[METIS_OPTION_SEED] = (idx_t)(seed % 2147483647u);
  idx_t *where = xcalloc((size_t)R, sizeof *where);
  const int rc = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vwgt, NULL, wgt, &np, NULL, NULL, opt,
                                     &obj, where);
  for (int r = 0; r < R; r++)
    part[r] = (int)where[r];
  free(xadj), free(adj), free(wgt), free(vwgt), free(last), free(where);
  if (rc != METIS_OK) {
    snprintf(err, errlen, "--partition graph: METIS could not partition %s into %d parts (%s)",
             t->spec, parts, rc == METIS_ERROR_MEMORY ? "out of memory" : "error");
    return -1;
  }
  return 0;
}

int sim_partition_make(const sim_topo *t, int parts, const char *method, uint64_t seed,
                       sim_partition *p, char *err, size_t errlen) {
  memset(p, 0, sizeof *p);
  if (parts < 1 || parts > t->nrouters) {
    snprintf(err, errlen,
             "%d parts (processes): %s has %d router%s, and a part needs one: at most %d parts",
             parts, t->spec, t->nrouters, t->nrouters == 1 ? "" : "s", t->nrouters);
    return -1;
  }
  if (strcmp(method, "auto") && strcmp(method, "groups") && strcmp(method, "graph")) {
    snprintf(err, errlen, "--partition %s: expected one of %s", method, SIM_PARTITION_METHODS);
    return -1;
  }
  p->parts = parts;
  p->part_of_router = xcalloc((size_t)t->nrouters, sizeof *p->part_of_router);
  int *unit = p->part_of_router;
  const int G = units_of(t, unit);
  const int groups = !strcmp(method, "groups") || (!strcmp(method, "auto") && G >= parts);
  p->method = groups ? "groups" : "graph";
  int rc = 0;
  if (parts == 1)
    memset(p->part_of_router, 0, sizeof *p->part_of_router * (size_t)t->nrouters);
  else
    rc = groups ? by_groups(t, parts, p->part_of_router, err, errlen)
                : by_graph(t, parts, seed, p->part_of_router, err, errlen);
  if (rc) {
    sim_partition_free(p);
    return -1;
  }
  p->routers = xcalloc((size_t)parts, sizeof *p->routers);
  p->nodes = xcalloc((size_t)parts, sizeof *p->nodes);
  p->ports = xcalloc((size_t)parts, sizeof *p->ports);
  p->cut_ports = xcalloc((size_t)parts, sizeof *p->cut_ports);
  for (int r = 0; r < t->nrouters; r++) {
    const int k = p->part_of_router[r];
    p->routers[k]++;
    for (int gp = t->port_base[r]; gp < t->port_base[r + 1]; gp++) {
      p->ports[k]++;
      if (t->peer[gp] < 0) {
        p->nodes[k] += t->peer[gp] != SIM_UNCONNECTED;
        continue;
      }
      const int q = sim_port_router(t, t->peer[gp]);
      p->links += gp < t->peer[gp];
      if (p->part_of_router[q] == k)
        continue;
      p->cut_ports[k]++;
      if (gp < t->peer[gp]) {
        p->cut_links++;
        p->cut_by_class[t->cls[gp]]++;
      }
    }
  }
  for (int k = 0; k < parts; k++)
    if (!p->routers[k]) {
      snprintf(err, errlen,
               "--partition %s: the partition of %s into %d parts leaves part %d without a "
               "router: give fewer parts (processes)",
               p->method, t->spec, parts, k);
      sim_partition_free(p);
      return -1;
    }
  return 0;
}

void sim_partition_free(sim_partition *p) {
  free(p->part_of_router);
  free(p->routers);
  free(p->nodes);
  free(p->ports);
  free(p->cut_ports);
  memset(p, 0, sizeof *p);
}

uint64_t sim_partition_lookahead(const sim_partition *p, const uint64_t latency[SIM_LINK_NCLASS],
                                 int *cls) {
  uint64_t best = UINT64_MAX;
  for (int c = 0; c < SIM_LINK_NCLASS; c++)
    if (p->cut_by_class[c] && latency[c] < best)
      best = latency[c], *cls = c;
  return best;
}
