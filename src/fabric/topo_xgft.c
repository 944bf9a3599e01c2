/* Builds extended generalized fat trees: `xgft:` specs (caminos-lib's
 * XGFT meaning, see topo.h) and the two `fattree:` forms, which are XGFTs.
 *
 * Labels and wiring follow Ohring et al. with the nodes as level 0 and
 * router levels 1..R (R = t->h, 1 = leaf): m_l = t->m[l-1] children per
 * level-l router, w_l = t->w[l-1] parents per level-(l-1) element (w_1 = 1:
 * one NIC per node).  A level-l router is the pair (X, Y):
 *   X in [0, prod_{i>l} m_i)  which subtree it serves: the nodes n with
 *                            n / prod_{i<=l} m_i == X (node numbering is
 *                            the mixed radix of the m's, leaf-major);
 *   Y in [0, W_l), W_l = prod_{i<=l} w_i: which of the W_l routers
 *                            serving that subtree (y_1 most significant).
 * Its index in the level is X * W_l + Y; levels are numbered one after the
 * other from the leaves up.  Up port j (0 <= j < w_{l+1}) leads to the
 * level-(l+1) router (X / m_{l+1}, Y * w_{l+1} + j), arriving on its down
 * port X % m_{l+1}.  Ports of a level-l router: down ports 0..m_l-1 (node
 * ports at the leaves), then up ports m_l..m_l+w_{l+1}-1.  So for
 * fattree:pods=P,... pod spine i connects to cores i*Q .. i*Q+Q-1.
 * Link classes: NIC links NODE; links into the top level of a tree of 3
 * or more levels GLOBAL; all other router links LOCAL.  router_group: the
 * top-level subtree ("pod") of a router below the top when R >= 3, else 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define BIG 4000000000000LL /* saturation for size products */

static long long mul_cap(long long a, long long b) { return a > BIG / b ? BIG : a * b; }

static int fail(char *err, size_t errlen, const char *spec, const char *what) {
  snprintf(err, errlen, "topology '%s': %s", spec, what);
  return -1;
}

/* M[1..R], W[1..R] with W[1] = 1; t->spec and t->kind already set. */
static int build_xgft(sim_topo *t, const char *spec, int R, const long long *M, const long long *W,
                      char *err, size_t errlen) {
  char msg[160];
  long long cnt[SIM_MAX_LEVELS + 1], Wp[SIM_MAX_LEVELS + 1], total = 0, nodes = 1;
  for (int i = 1; i <= R; i++)
    nodes = mul_cap(nodes, M[i]);
  if (nodes > SIM_TOPO_MAX_NODES) {
    snprintf(msg, sizeof msg, "%s%lld nodes (max %d)", nodes >= BIG ? "over " : "", nodes,
             SIM_TOPO_MAX_NODES);
    return fail(err, errlen, spec, msg);
  }
  Wp[0] = 1;
  for (int l = 1; l <= R; l++) {
    Wp[l] = mul_cap(Wp[l - 1], W[l]);
    long long c = Wp[l];
    for (int i = l + 1; i <= R; i++)
      c = mul_cap(c, M[i]);
    cnt[l] = c;
    total = total + c > BIG ? BIG : total + c;
    const long long radix = M[l] + (l < R ? W[l + 1] : 0);
    if (radix > SIM_TOPO_MAX_RADIX) {
      snprintf(msg, sizeof msg, "level-%d routers have %lld ports (max %d)", l, radix,
               SIM_TOPO_MAX_RADIX);
      return fail(err, errlen, spec, msg);
    }
  }
  if (total > SIM_TOPO_MAX_ROUTERS) {
    snprintf(msg, sizeof msg, "%s%lld routers (max %d)", total >= BIG ? "over " : "", total,
             SIM_TOPO_MAX_ROUTERS);
    return fail(err, errlen, spec, msg);
  }
  const int nr = (int)total;
  int *nports_of = calloc((size_t)nr, sizeof *nports_of);
  if (!nports_of)
    return fail(err, errlen, spec, "out of memory");
  int base[SIM_MAX_LEVELS + 2];
  base[1] = 0;
  for (int l = 1; l <= R; l++) {
    base[l + 1] = base[l] + (int)cnt[l];
    for (int i = base[l]; i < base[l + 1]; i++)
      nports_of[i] = (int)(M[l] + (l < R ? W[l + 1] : 0));
  }
  const int rc = sim_topo_alloc(t, nr, (int)nodes, nports_of, err, errlen);
  free(nports_of);
  if (rc)
    return -1;
  t->h = R;
  for (int l = 1; l <= R; l++) {
    t->m[l - 1] = (int)M[l];
    t->w[l - 1] = (int)W[l];
  }
  for (int l = 1; l <= R; l++) {
    long long below_top = 1; /* prod_{l<i<R} m_i: routers per pod at this level's X */
    for (int i = l + 1; i < R; i++)
      below_top *= M[i];
    const sim_link_class up_cls = (R >= 3 && l + 1 == R) ? SIM_LINK_GLOBAL : SIM_LINK_LOCAL;
    for (long long idx = 0; idx < cnt[l]; idx++) {
      const int r = base[l] + (int)idx;
      const long long X = idx / Wp[l], Y = idx % Wp[l];
      t->router_level[r] = l;
      t->router_group[r] = (R >= 3 && l < R) ? (int)(X / below_top) : 0;
      const int pb = t->port_base[r];
      if (l == 1) {
        for (int x = 0; x < M[1]; x++) {
          const int n = (int)(X * M[1] + x);
          t->peer[pb + x] = -1 - n;
          t->cls[pb + x] = SIM_LINK_NODE;
          t->node_router[n] = r;
          t->node_port[n] = x;
        }
      }
      if (l == R)
        continue;
      for (int j = 0; j < W[l + 1]; j++) {
        const long long pidx = (X / M[l + 1]) * Wp[l + 1] + Y * W[l + 1] + j;
        const int parent = base[l + 1] + (int)pidx;
        const int down = t->port_base[parent] + (int)(X % M[l + 1]);
        const int up = pb + (int)M[l] + j;
        t->peer[up] = down;
        t->peer[down] = up;
        t->cls[up] = t->cls[down] = (unsigned char)up_cls;
      }
    }
  }
  return sim_topo_validate(t, err, errlen);
}

int sim_topo_parse_xgft(const char *spec, const char *args, sim_topo *t, char *err, size_t errlen) {
  sim_topo_key k[] = {{.name = "h"},
                      {.name = "down", .list = 1},
                      {.name = "up", .list = 1},
                      {.name = "servers"},
                      {.name = "servers_per_leaf"}};
  if (sim_topo_parse_keys(spec, args, k, 5, err, errlen))
    return -1;
  char msg[160];
  for (int i = 0; i < 3; i++)
    if (!k[i].n) {
      snprintf(msg, sizeof msg, "missing %s=", k[i].name);
      return fail(err, errlen, spec, msg);
    }
  if (k[3].n && k[4].n)
    return fail(err, errlen, spec, "give servers= or servers_per_leaf=, not both");
  const long long H = k[0].v[0];
  if (H > SIM_MAX_LEVELS - 1) {
    snprintf(msg, sizeof msg, "h=%lld: at most %d stages", H, SIM_MAX_LEVELS - 1);
    return fail(err, errlen, spec, msg);
  }
  for (int i = 1; i <= 2; i++)
    if (k[i].n != H) {
      snprintf(msg, sizeof msg, "%s= has %d value%s, h=%lld needs %lld", k[i].name, k[i].n,
               k[i].n == 1 ? "" : "s", H, H);
      return fail(err, errlen, spec, msg);
    }
  long long M[SIM_MAX_LEVELS + 1], W[SIM_MAX_LEVELS + 1];
  const int R = (int)H + 1;
  M[1] = k[3].n ? k[3].v[0] : k[4].n ? k[4].v[0] : k[1].v[0];
  W[1] = 1;
  for (int i = 0; i < H; i++) {
    M[i + 2] = k[1].v[i];
    W[i + 2] = k[2].v[i];
  }
  t->kind = SIM_TOPO_XGFT;
  int off = snprintf(t->spec, sizeof t->spec, "xgft:h=%d,down=", (int)H);
  for (int i = 0; i < H; i++)
    off += snprintf(t->spec + off, sizeof t->spec - (size_t)off, "%s%lld", i ? "," : "", M[i + 2]);
  off += snprintf(t->spec + off, sizeof t->spec - (size_t)off, ",up=");
  for (int i = 0; i < H; i++)
    off += snprintf(t->spec + off, sizeof t->spec - (size_t)off, "%s%lld", i ? "," : "", W[i + 2]);
  snprintf(t->spec + off, sizeof t->spec - (size_t)off, ",servers=%lld", M[1]);
  if (build_xgft(t, spec, R, M, W, err, errlen)) {
    snprintf(t->spec, sizeof t->spec, "%s", spec); /* errors name what the user wrote */
    return -1;
  }
  return 0;
}

int sim_topo_parse_fattree(const char *spec, const char *args, sim_topo *t, char *err,
                           size_t errlen) {
  enum { PODS, LEAVES, NODES, UPLINKS, POD_UPLINKS };
  sim_topo_key k[] = {{.name = "pods"},
                      {.name = "leaves"},
                      {.name = "nodes"},
                      {.name = "uplinks"},
                      {.name = "pod_uplinks"}};
  if (sim_topo_parse_keys(spec, args, k, 5, err, errlen))
    return -1;
  char msg[160];
  for (int i = LEAVES; i <= UPLINKS; i++)
    if (!k[i].n) {
      snprintf(msg, sizeof msg, "missing %s=", k[i].name);
      return fail(err, errlen, spec, msg);
    }
  if (k[PODS].n && !k[POD_UPLINKS].n)
    return fail(err, errlen, spec, "missing pod_uplinks= (3 levels: pods= needs it)");
  if (!k[PODS].n && k[POD_UPLINKS].n)
    return fail(err, errlen, spec, "pod_uplinks= needs pods= (3 levels)");
  long long M[SIM_MAX_LEVELS + 1], W[SIM_MAX_LEVELS + 1];
  M[1] = k[NODES].v[0];
  W[1] = 1;
  M[2] = k[LEAVES].v[0];
  W[2] = k[UPLINKS].v[0];
  int R = 2;
  t->kind = SIM_TOPO_XGFT;
  if (k[PODS].n) {
    R = 3;
    M[3] = k[PODS].v[0];
    W[3] = k[POD_UPLINKS].v[0];
    snprintf(t->spec, sizeof t->spec,
             "fattree:pods=%lld,leaves=%lld,nodes=%lld,uplinks=%lld,"
             "pod_uplinks=%lld",
             M[3], M[2], M[1], W[2], W[3]);
  } else
    snprintf(t->spec, sizeof t->spec, "fattree:leaves=%lld,nodes=%lld,uplinks=%lld", M[2], M[1],
             W[2]);
  if (build_xgft(t, spec, R, M, W, err, errlen)) {
    snprintf(t->spec, sizeof t->spec, "%s", spec);
    return -1;
  }
  return 0;
}
