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
 * default `Palmtree`), repeated links= times.  A group has a*h global
 * ports, k = i * h + c for global port c of its router i; copy j holds
 * ports j * M .. j * M + M - 1, M = floor(a*h / links), and its port
 * k = j * M + e leads to group T = (G - e - 1) mod (M + 1), arriving on
 * that group's port j * M + (M - 1 - e): the palm tree of M + 1 groups,
 * its ports towards groups >= g SIM_UNCONNECTED, as are the ports past
 * links * M.  Every pair of groups then has `links` parallel links, as
 * machines with fewer than a*h+1 groups are cabled.  links= defaults to
 * the most: floor(a*h / (g-1)) (M >= g - 1 reaches every group), at most
 * a (M >= h: no router holds two copies of one link).  With one copy
 * (the full g = a*h+1, or links=1) this is the palm tree of a*h+1 groups
 * truncated to g.  routing_dragonfly.c relies on this arithmetic. */
#include <stdio.h>
#include <stdlib.h>

#include "topo.h"

int sim_topo_parse_dragonfly(const char *spec, const char *args, sim_topo *t, char *err,
                             size_t errlen) {
  sim_topo_key k[] = {
      {.name = "a"}, {.name = "p"}, {.name = "h"}, {.name = "g"}, {.name = "links"}};
  if (sim_topo_parse_keys(spec, args, k, 5, err, errlen))
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
  /* copies: each must reach every other group (M >= g - 1) and hold at
   * most one port of a router towards a group (M >= h: links <= a) */
  long long lmax = a * h / (g - 1);
  if (lmax > a)
    lmax = a;
  const long long links = k[4].n ? k[4].v[0] : lmax;
  if (links < 1 || links > lmax) {
    snprintf(err, errlen,
             "topology '%s': links=%lld must be 1..%lld (global links per pair of groups: at "
             "most a*h/(g-1), and at most a)",
             spec, links, lmax);
    return -1;
  }
  const long long nr = g * a, nn = nr * p;
  if (nn > SIM_TOPO_MAX_NODES || nr > SIM_TOPO_MAX_ROUTERS) {
    snprintf(err, errlen, "topology '%s': %lld nodes (max %d)", spec, nn, SIM_TOPO_MAX_NODES);
    return -1;
  }
  t->kind = SIM_TOPO_DRAGONFLY;
  if (links == 1 && lmax == 1) /* one copy, the only one possible: as before links= */
    snprintf(t->spec, sizeof t->spec, "dragonfly:a=%lld,p=%lld,h=%lld,g=%lld", a, p, h, g);
  else
    snprintf(t->spec, sizeof t->spec, "dragonfly:a=%lld,p=%lld,h=%lld,g=%lld,links=%lld", a, p, h,
             g, links);
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
  t->gl = (int)links;
  t->h = 1;
  const int A = (int)a, P = (int)p, Hh = (int)h, M = (int)(a * h / links), NL = (int)links * M;
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
      const int kk = i * Hh + c, gp = pb + P + A - 1 + c;
      t->cls[gp] = SIM_LINK_GLOBAL;
      if (kk >= NL)
        continue; /* stays SIM_UNCONNECTED */
      const int j = kk / M, e = kk % M, T = (G - e - 1 + M + 1) % (M + 1);
      if (T >= (int)g)
        continue; /* a group of the palm tree beyond g: stays SIM_UNCONNECTED */
      const int k2 = j * M + (M - 1 - e), q = T * A + k2 / Hh;
      t->peer[gp] = t->port_base[q] + P + A - 1 + k2 % Hh;
    }
  }
  if (sim_topo_validate(t, err, errlen)) {
    snprintf(t->spec, sizeof t->spec, "%s", spec);
    return -1;
  }
  return 0;
}
