/* Topology specs: the "kind:..." dispatch, the helpers every builder
 * shares (key=value parsing, allocation, validation), router labels and
 * the one-router `switch` topology.  The other kinds live in
 * topo_xgft.c, topo_dragonfly.c and topo_slurm.c. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---- key=value lists ---- */

static sim_topo_key *find_key(sim_topo_key *keys, int nkeys, const char *name, size_t len) {
  for (int i = 0; i < nkeys; i++)
    if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
      return &keys[i];
  return NULL;
}

/* Parses one positive decimal integer of text[0..len). */
static int parse_count(const char *text, size_t len, long long *out) {
  if (len == 0 || len > 12)
    return -1;
  long long v = 0;
  for (size_t i = 0; i < len; i++) {
    if (!isdigit((unsigned char)text[i]))
      return -1;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return 0;
}

int sim_topo_parse_keys(const char *spec, const char *args, sim_topo_key *keys, int nkeys,
                        char *err, size_t errlen) {
  for (int i = 0; i < nkeys; i++)
    keys[i].n = 0;
  sim_topo_key *cur = NULL; /* the list key the next bare value extends */
  const char *s = args;
  while (*s) {
    const char *end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    const char *eq = memchr(s, '=', len);
    const char *val;
    size_t vlen;
    if (eq) {
      cur = find_key(keys, nkeys, s, (size_t)(eq - s));
      if (!cur) {
        char known[160] = "";
        for (int i = 0; i < nkeys; i++) {
          size_t k = strlen(known);
          snprintf(known + k, sizeof known - k, "%s%s=", i ? ", " : "", keys[i].name);
        }
        return fail(err, errlen, "topology '%s': unknown key '%.*s' (known: %s)", spec,
                    (int)(eq - s), s, known);
      }
      if (cur->n)
        return fail(err, errlen, "topology '%s': %s= given twice", spec, cur->name);
      val = eq + 1;
      vlen = len - (size_t)(eq - s) - 1;
    } else {
      if (!cur || !cur->list)
        return fail(err, errlen, "topology '%s': expected key=value, got '%.*s'", spec, (int)len,
                    s);
      val = s;
      vlen = len;
    }
    if (cur->n >= (cur->list ? SIM_MAX_LEVELS : 1))
      return fail(err, errlen, "topology '%s': too many values for %s= (at most %d)", spec,
                  cur->name, cur->list ? SIM_MAX_LEVELS : 1);
    long long v;
    if (parse_count(val, vlen, &v))
      return fail(err, errlen, "topology '%s': %s= needs a positive integer, got '%.*s'", spec,
                  cur->name, (int)vlen, val);
    if (v < 1)
      return fail(err, errlen, "topology '%s': %s= must be at least 1", spec, cur->name);
    cur->v[cur->n++] = v;
    if (!cur->list)
      cur = NULL;
    s = end ? end + 1 : s + len;
    if (end && !*s)
      return fail(err, errlen, "topology '%s': trailing comma", spec);
  }
  return 0;
}

/* ---- allocation and checks ---- */

sim_topo_limits sim_topo_max = {.nodes = 1000000, .routers = 1000000, .ports = 1 << 24};

int sim_topo_alloc(sim_topo *t, int nrouters, int nnodes, const int *nports_of, char *err,
                   size_t errlen) {
  if (nrouters < 1 || nrouters > SIM_TOPO_MAX_ROUTERS)
    return fail(err, errlen, "topology '%s': %d routers (must be 1..%d)", t->spec, nrouters,
                SIM_TOPO_MAX_ROUTERS);
  if (nnodes < 1 || nnodes > SIM_TOPO_MAX_NODES)
    return fail(err, errlen, "topology '%s': %d nodes (must be 1..%d)", t->spec, nnodes,
                SIM_TOPO_MAX_NODES);
  long long nports = 0;
  for (int r = 0; r < nrouters; r++) {
    if (nports_of[r] > SIM_TOPO_MAX_RADIX)
      return fail(err, errlen, "topology '%s': a router has %d ports (max %d)", t->spec,
                  nports_of[r], SIM_TOPO_MAX_RADIX);
    nports += nports_of[r];
  }
  if (nports > SIM_TOPO_MAX_PORTS)
    return fail(err, errlen, "topology '%s': %lld router ports in all (max %d)", t->spec, nports,
                SIM_TOPO_MAX_PORTS);
  t->nrouters = nrouters;
  t->nnodes = nnodes;
  t->nports = (int)nports;
  t->port_base = malloc(sizeof *t->port_base * ((size_t)nrouters + 1));
  t->peer = malloc(sizeof *t->peer * (size_t)(nports ? nports : 1));
  t->cls = calloc((size_t)(nports ? nports : 1), 1);
  t->router_level = calloc((size_t)nrouters, sizeof *t->router_level);
  t->router_group = calloc((size_t)nrouters, sizeof *t->router_group);
  t->node_router = malloc(sizeof *t->node_router * (size_t)nnodes);
  t->node_port = malloc(sizeof *t->node_port * (size_t)nnodes);
  if (!t->port_base || !t->peer || !t->cls || !t->router_level || !t->router_group ||
      !t->node_router || !t->node_port)
    return fail(err, errlen, "topology '%s': out of memory", t->spec);
  t->port_base[0] = 0;
  for (int r = 0; r < nrouters; r++)
    t->port_base[r + 1] = t->port_base[r] + nports_of[r];
  for (long long i = 0; i < nports; i++)
    t->peer[i] = SIM_UNCONNECTED;
  for (int n = 0; n < nnodes; n++)
    t->node_router[n] = t->node_port[n] = -1;
  return 0;
}

int sim_topo_validate(const sim_topo *t, char *err, size_t errlen) {
  for (int gp = 0; gp < t->nports; gp++) {
    const int q = t->peer[gp];
    if (q == SIM_UNCONNECTED)
      continue;
    if (q >= 0) {
      if (q >= t->nports || t->peer[q] != gp || t->cls[q] != t->cls[gp])
        return fail(err, errlen, "topology '%s': internal error: port %d's link is not symmetric",
                    t->spec, gp);
    } else {
      const int n = -1 - q;
      if (n >= t->nnodes || t->port_base[t->node_router[n]] + t->node_port[n] != gp)
        return fail(err, errlen, "topology '%s': internal error: node port %d", t->spec, gp);
    }
  }
  for (int n = 0; n < t->nnodes; n++)
    if (t->node_router[n] < 0)
      return fail(err, errlen, "topology '%s': internal error: node %d unattached", t->spec, n);
  return 0;
}

/* ---- switch:nodes=N ---- */

static int parse_switch(const char *spec, const char *args, sim_topo *t, char *err, size_t errlen) {
  sim_topo_key k[] = {{.name = "nodes"}};
  if (sim_topo_parse_keys(spec, args, k, 1, err, errlen))
    return -1;
  if (!k[0].n)
    return fail(err, errlen, "topology '%s': missing nodes=", spec);
  if (k[0].v[0] > SIM_TOPO_MAX_RADIX)
    return fail(err, errlen, "topology '%s': a switch of %lld ports exceeds the radix limit %d",
                spec, k[0].v[0], SIM_TOPO_MAX_RADIX);
  const int n = (int)k[0].v[0];
  t->kind = SIM_TOPO_SWITCH;
  snprintf(t->spec, sizeof t->spec, "switch:nodes=%d", n);
  if (sim_topo_alloc(t, 1, n, &n, err, errlen))
    return -1;
  t->router_level[0] = 1;
  t->h = 1;
  t->m[0] = n;
  t->w[0] = 1;
  for (int i = 0; i < n; i++) {
    t->peer[i] = -1 - i;
    t->cls[i] = SIM_LINK_NODE;
    t->node_router[i] = 0;
    t->node_port[i] = i;
  }
  return sim_topo_validate(t, err, errlen);
}

/* ---- dispatch ---- */

int sim_topo_parse(const char *spec, sim_topo *t, char *err, size_t errlen) {
  memset(t, 0, sizeof *t);
  if (!spec || !*spec)
    return fail(err, errlen,
                "empty topology spec (known kinds: switch, fattree, xgft, "
                "dragonfly, slurm)");
  if (strlen(spec) >= sizeof t->spec)
    return fail(err, errlen, "topology spec too long (%zu characters, max %zu)", strlen(spec),
                sizeof t->spec - 1);
  for (const char *c = spec; *c; c++)
    if ((unsigned char)*c < 0x20 || *c == 0x7f)
      return fail(err, errlen, "topology spec contains a control character (at offset %d)",
                  (int)(c - spec));
  snprintf(t->spec, sizeof t->spec, "%s", spec);
  const char *colon = strchr(spec, ':');
  const size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
  const char *args = colon ? colon + 1 : "";
  int rc;
  if (klen == 6 && !strncmp(spec, "switch", 6))
    rc = parse_switch(spec, args, t, err, errlen);
  else if (klen == 7 && !strncmp(spec, "fattree", 7))
    rc = sim_topo_parse_fattree(spec, args, t, err, errlen);
  else if (klen == 4 && !strncmp(spec, "xgft", 4))
    rc = sim_topo_parse_xgft(spec, args, t, err, errlen);
  else if (klen == 9 && !strncmp(spec, "dragonfly", 9))
    rc = sim_topo_parse_dragonfly(spec, args, t, err, errlen);
  else if (klen == 5 && !strncmp(spec, "slurm", 5)) {
    if (!*args)
      rc = fail(err, errlen, "topology '%s': missing the topology.conf path (slurm:FILE)", spec);
    else
      rc = sim_topo_parse_slurm(spec, args, t, err, errlen);
  } else
    rc = fail(err, errlen,
              "unknown topology kind '%.*s' (known: switch, fattree, xgft, dragonfly, slurm)",
              (int)klen, spec);
  if (rc) {
    for (char *c = err; err && errlen && *c; c++) /* one line, whatever the file held */
      if ((unsigned char)*c < 0x20 || *c == 0x7f)
        *c = '?';
    char keep[256];
    snprintf(keep, sizeof keep, "%s", t->spec);
    sim_topo_free(t);
    snprintf(t->spec, sizeof t->spec, "%s", keep);
  }
  return rc;
}

void sim_topo_free(sim_topo *t) {
  if (!t)
    return;
  free(t->port_base);
  free(t->peer);
  free(t->cls);
  free(t->router_level);
  free(t->router_group);
  free(t->node_router);
  free(t->node_port);
  free(t->extra);
  memset(t, 0, sizeof *t);
}

const char *sim_channel_component(const sim_topo *t, long c, char *buf, size_t len) {
  if (c >= t->nports)
    snprintf(buf, len, "nic%ld", c - t->nports);
  else
    sim_router_label(t, sim_port_router(t, (int)c), buf, len);
  return buf;
}

int sim_channel_port(const sim_topo *t, long c) {
  return c >= t->nports ? 0 : (int)c - t->port_base[sim_port_router(t, (int)c)];
}

long sim_channel_reverse(const sim_topo *t, long c) {
  if (c >= t->nports) {
    const int node = (int)(c - t->nports);
    return t->port_base[t->node_router[node]] + t->node_port[node];
  }
  const int peer = t->peer[c];
  if (peer == SIM_UNCONNECTED)
    return -1;
  return peer >= 0 ? peer : (long)t->nports + (-1 - peer);
}

const char *sim_channel_tier(const sim_topo *t, long c, char *buf, size_t len) {
  if (c >= t->nports) {
    snprintf(buf, len, "injection (nic->router)");
    return buf;
  }
  const int peer = t->peer[c];
  if (peer < 0 && peer != SIM_UNCONNECTED) {
    snprintf(buf, len, "ejection (router->nic)");
    return buf;
  }
  if (t->kind == SIM_TOPO_DRAGONFLY) {
    snprintf(buf, len, "%s", t->cls[c] == SIM_LINK_GLOBAL ? "global" : "local");
    return buf;
  }
  const int a = t->router_level[sim_port_router(t, (int)c)];
  const int b = peer >= 0 ? t->router_level[sim_port_router(t, peer)] : a;
  snprintf(buf, len, "level %d->%d (%s)", a, b, b > a ? "up" : "down");
  return buf;
}

int sim_port_router(const sim_topo *t, int gp) {
  if (gp < 0 || gp >= t->nports)
    return -1;
  int lo = 0, hi = t->nrouters - 1; /* the last r with port_base[r] <= gp */
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (t->port_base[mid] <= gp)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

const char *sim_router_label(const sim_topo *t, int r, char *buf, size_t len) {
  if (!buf || !len)
    return buf;
  if (r < 0 || r >= t->nrouters) {
    snprintf(buf, len, "r%d?", r);
    return buf;
  }
  switch (t->kind) {
  case SIM_TOPO_SWITCH:
    snprintf(buf, len, "switch");
    break;
  case SIM_TOPO_DRAGONFLY:
    snprintf(buf, len, "g%d.r%d", r / t->a, r % t->a);
    break;
  case SIM_TOPO_TREE: {
    const char *name = sim_topo_slurm_name(t, r);
    if (name)
      snprintf(buf, len, "%s", name);
    else
      snprintf(buf, len, "s%d", r);
    break;
  }
  case SIM_TOPO_XGFT: {
    /* levels are numbered contiguously from the leaves up; level l (1..h)
     * holds prod_{i>l} m_i * prod_{i<=l} w_i routers (m_i = t->m[i-1]) */
    const int l = t->router_level[r];
    long long base = 0;
    for (int k = 1; k < l; k++) {
      long long c = 1;
      for (int i = k + 1; i <= t->h; i++)
        c *= t->m[i - 1];
      for (int i = 1; i <= k; i++)
        c *= t->w[i - 1];
      base += c;
    }
    const int idx = (int)(r - base);
    if (t->h <= 3) {
      static const char *names[3][3] = {
          {"leaf", "", ""}, {"leaf", "spine", ""}, {"leaf", "spine", "core"}};
      snprintf(buf, len, "%s%d", names[t->h - 1][l - 1], idx);
    } else
      snprintf(buf, len, "l%d.%d", l, idx);
    break;
  }
  }
  return buf;
}
