/* Builds the dragonfly (Kim, Dally et al.): g groups of a routers, p nodes
 * and h global ports per router, the routers of a group all-to-all.
 *
 * Numbering: router r = G * a + i (group G, index i); node n = r * p + k
 * on port k.  Ports of a router: p node ports, then a-1 local ports, then
 * h global ports (the header's order).
 * Local links (a circulant, as caminos-lib): local port p + j of router i
 * leads to router (i + 1 + j) mod a, arriving on its local port
 * p + (a - 2 - j).
 * Global links: the palm-tree arrangement (Marina Garcia; caminos-lib's
 * default `Palmtree`) laid out for the full size a*h+1 groups: global
 * port c of router i of group G is the group's port k = i * h + c and
 * leads to group T = (G - k - 1) mod (a*h + 1), arriving on that group's
 * port a*h - 1 - k (router (a*h-1-k) / h, global port (a*h-1-k) % h).
 * Every pair of groups has exactly one link.  With g < a*h+1 groups the
 * ports whose T >= g stay SIM_UNCONNECTED (every pair of the g groups
 * still has its link).  route.c relies on this arithmetic (the port of
 * group G towards group T is k = (G - T - 1) mod (a*h+1)). */
#include <stdio.h>
#include <stdlib.h>

#include "topo.h"

int sim_topo_parse_dragonfly(const char *spec, const char *args, sim_topo *t, char *err,
                             size_t errlen) {
  sim_topo_key k[] = {{.name = "a"}, {.name = "p"}, {.name = "h"}, {.name = "g"}};
  if (sim_topo_parse_keys(spec, args, k, 4, err, errlen))
    return -1;
  for (int i = 0; i < 3; i++)
    if (!k[i].n) {
      snprintf(err, errlen, "topology '%s': missing %s=", spec, k[i].name);
      return -1;
    }
  const long long a = k[0].v[0], p = k[1].v[0], h = k[2].v[0];
  const long long radix = p + a - 1 + h;
  if (radix > SIM_TOPO_MAX_RADIX) {
    snprintf(err, errlen, "topology '%s': routers of p+a-1+h = %lld ports (max %d)", spec, radix,
             SIM_TOPO_MAX_RADIX);
    return -1;
  }
  const long long gmax = a * h + 1, g = k[3].n ? k[3].v[0] : gmax;
  if (g < 2 || g > gmax) {
    snprintf(err, errlen, "topology '%s': g=%lld must be 2..a*h+1 = %lld", spec, g, gmax);
    return -1;
  }
  const long long nr = g * a, nn = nr * p;
  if (nn > SIM_TOPO_MAX_NODES || nr > SIM_TOPO_MAX_ROUTERS) {
    snprintf(err, errlen, "topology '%s': %lld nodes (max %d)", spec, nn, SIM_TOPO_MAX_NODES);
    return -1;
  }
  t->kind = SIM_TOPO_DRAGONFLY;
  snprintf(t->spec, sizeof t->spec, "dragonfly:a=%lld,p=%lld,h=%lld,g=%lld", a, p, h, g);
  int *nports_of = malloc(sizeof *nports_of * (size_t)nr);
  if (!nports_of) {
    snprintf(err, errlen, "topology '%s': out of memory", spec);
    return -1;
  }
  for (long long r = 0; r < nr; r++)
    nports_of[r] = (int)radix;
  const int rc = sim_topo_alloc(t, (int)nr, (int)nn, nports_of, err, errlen);
  free(nports_of);
  if (rc)
    return -1;
  t->a = (int)a;
  t->p = (int)p;
  t->hg = (int)h;
  t->g = (int)g;
  t->h = 1;
  const int A = (int)a, P = (int)p, Hh = (int)h, AH = A * Hh;
  for (int r = 0; r < (int)nr; r++) {
    const int G = r / A, i = r % A, pb = t->port_base[r];
    t->router_level[r] = 1;
    t->router_group[r] = G;
    for (int x = 0; x < P; x++) {
      const int n = r * P + x;
      t->peer[pb + x] = -1 - n;
      t->cls[pb + x] = SIM_LINK_NODE;
      t->node_router[n] = r;
      t->node_port[n] = x;
    }
    for (int j = 0; j < A - 1; j++) {
      const int q = G * A + (i + 1 + j) % A;
      t->peer[pb + P + j] = t->port_base[q] + P + (A - 2 - j);
      t->cls[pb + P + j] = SIM_LINK_LOCAL;
    }
    for (int c = 0; c < Hh; c++) {
      const int kk = i * Hh + c, T = ((G - kk - 1) % (AH + 1) + (AH + 1)) % (AH + 1);
      const int gp = pb + P + A - 1 + c;
      t->cls[gp] = SIM_LINK_GLOBAL;
      if (T >= (int)g)
        continue; /* stays SIM_UNCONNECTED */
      const int k2 = AH - 1 - kk, q = T * A + k2 / Hh;
      t->peer[gp] = t->port_base[q] + P + A - 1 + k2 % Hh;
    }
  }
  if (sim_topo_validate(t, err, errlen)) {
    snprintf(t->spec, sizeof t->spec, "%s", spec);
    return -1;
  }
  return 0;
}
