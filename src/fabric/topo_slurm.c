/* Builds a tree from a Slurm topology.conf (topology/tree plugin format):
 *
 *   SwitchName=s0 Nodes=n[1-32,40]
 *   SwitchName=s2 Switches=s[0-1] LinkSpeed=...
 *
 * Keys are case-insensitive; LinkSpeed is ignored; '#' starts a comment.
 * Hostlists: comma lists and bracket ranges, several brackets per name
 * ("r[1-2]n[01-16]"), zero padding to the width of the range's start.
 * Nodes are numbered in order of first appearance; a node may be listed
 * under one switch only.  Routers are the switches in definition order.
 * A switch may have several parents (the graph must be acyclic); its level
 * is 1 for a switch without child switches, else 1 + its highest child's.
 * Every two switches with nodes must have a common ancestor (routing goes
 * up to one and down again).  Ports of a switch: its nodes (as listed),
 * its child switches (as listed), its parents (in definition order).
 * Link classes: NODE; GLOBAL into the top level when the tree has 3 or
 * more levels; else LOCAL.  t->extra holds the switch names, then the node
 * names (one block: the pointer array, nrouters + nnodes entries, followed
 * by the strings). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define MAX_FILE_BYTES (64 << 20)
#define MAX_NAME 256
#define MAX_TABLE_ENTRIES (16LL << 20) /* switches x switches with nodes (route.c's table) */
/* Bounds on what a file may describe, well above any Slurm system: nodes,
 * and Switches= entries, of the whole file.  Checked before a hostlist is
 * expanded, so that a short one such as n[1-999][1-999][1-999] is refused
 * at once, not after building it. */
#define MAX_CONF_NODES (SIM_TOPO_MAX_NODES < (1 << 18) ? SIM_TOPO_MAX_NODES : (1 << 18))
#define MAX_CONF_LINKS (SIM_TOPO_MAX_PORTS < (1 << 20) ? SIM_TOPO_MAX_PORTS : (1 << 20))

/* ---- growable vectors and a string -> index map ---- */

typedef struct {
  int *v;
  int n, cap;
} ivec;

static int ivec_push(ivec *a, int x) {
  if (a->n == a->cap) {
    const int cap = a->cap ? 2 * a->cap : 8;
    int *v = realloc(a->v, sizeof *v * (size_t)cap);
    if (!v)
      return -1;
    a->v = v;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return 0;
}

typedef struct {
  char **names; /* index -> name (owned) */
  int n, cap;
  int *slot; /* open addressing: index + 1, 0 empty */
  size_t nslot;
} strmap;

static uint64_t hash_str(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static int strmap_find(const strmap *m, const char *s) {
  if (!m->nslot)
    return -1;
  for (size_t i = hash_str(s) & (m->nslot - 1);; i = (i + 1) & (m->nslot - 1)) {
    if (!m->slot[i])
      return -1;
    if (!strcmp(m->names[m->slot[i] - 1], s))
      return m->slot[i] - 1;
  }
}

/* Returns the index of s, adding it if new (*added = 1); -1 out of memory. */
static int strmap_add(strmap *m, const char *s, int *added) {
  *added = 0;
  const int f = strmap_find(m, s);
  if (f >= 0)
    return f;
  if ((size_t)(m->n + 1) * 2 > m->nslot) {
    const size_t ns = m->nslot ? 2 * m->nslot : 64;
    int *slot = calloc(ns, sizeof *slot);
    if (!slot)
      return -1;
    for (int i = 0; i < m->n; i++) {
      size_t j = hash_str(m->names[i]) & (ns - 1);
      while (slot[j])
        j = (j + 1) & (ns - 1);
      slot[j] = i + 1;
    }
    free(m->slot);
    m->slot = slot;
    m->nslot = ns;
  }
  if (m->n == m->cap) {
    const int cap = m->cap ? 2 * m->cap : 64;
    char **nm = realloc(m->names, sizeof *nm * (size_t)cap);
    if (!nm)
      return -1;
    m->names = nm;
    m->cap = cap;
  }
  char *copy = strdup(s);
  if (!copy)
    return -1;
  size_t j = hash_str(s) & (m->nslot - 1);
  while (m->slot[j])
    j = (j + 1) & (m->nslot - 1);
  m->names[m->n] = copy;
  m->slot[j] = ++m->n;
  *added = 1;
  return m->n - 1;
}

static void strmap_free(strmap *m) {
  for (int i = 0; i < m->n; i++)
    free(m->names[i]);
  free(m->names);
  free(m->slot);
}

/* ---- hostlists ---- */

typedef int (*name_fn)(void *ctx, const char *name);

typedef struct {
  const char *item; /* one comma-free (at depth 0) hostlist item */
  size_t len;
  long long count, limit;
  name_fn fn;
  void *ctx;
  char *err;
  size_t errlen;
} expander;

/* Expands it->item from position pos with the name built so far in buf. */
static int expand_from(expander *it, size_t pos, char *buf, size_t blen) {
  while (pos < it->len && it->item[pos] != '[') {
    if (blen + 1 >= MAX_NAME) {
      snprintf(it->err, it->errlen, "a name in '%.*s' is too long",
               it->len > 60 ? 60 : (int)it->len, it->item);
      return -1;
    }
    buf[blen++] = it->item[pos++];
  }
  buf[blen] = 0;
  if (pos == it->len) {
    if (++it->count > it->limit) {
      snprintf(it->err, it->errlen,
               "hostlist '%.*s' expands to too many names (a file may name at most %d nodes "
               "and %d child switches in all)",
               it->len > 60 ? 60 : (int)it->len, it->item, MAX_CONF_NODES, MAX_CONF_LINKS);
      return -1;
    }
    return it->fn(it->ctx, buf);
  }
  const char *close = memchr(it->item + pos, ']', it->len - pos);
  if (!close) {
    snprintf(it->err, it->errlen, "unbalanced '[' in '%.*s'", it->len > 60 ? 60 : (int)it->len,
             it->item);
    return -1;
  }
  const size_t next = (size_t)(close - it->item) + 1;
  const char *s = it->item + pos + 1;
  while (s < close) {
    const char *e = memchr(s, ',', (size_t)(close - s));
    if (!e)
      e = close;
    const char *dash = memchr(s, '-', (size_t)(e - s));
    const char *lo = s, *hi = dash ? dash + 1 : s;
    const size_t lolen = (size_t)((dash ? dash : e) - lo), hilen = (size_t)(e - hi);
    long long a = 0, b = 0;
    int ok = lolen > 0 && hilen > 0 && lolen <= 9 && hilen <= 9;
    for (size_t i = 0; ok && i < lolen; i++)
      ok = isdigit((unsigned char)lo[i]), a = a * 10 + (lo[i] - '0');
    for (size_t i = 0; ok && i < hilen; i++)
      ok = isdigit((unsigned char)hi[i]), b = b * 10 + (hi[i] - '0');
    if (!ok || b < a) {
      snprintf(it->err, it->errlen, "bad range '%.*s' in '%.*s'", (int)(e - s), s, (int)it->len,
               it->item);
      return -1;
    }
    for (long long v = a; v <= b; v++) {
      const int w = snprintf(buf + blen, MAX_NAME - blen, "%0*lld", (int)lolen, v);
      if (w < 0 || blen + (size_t)w >= MAX_NAME) {
        snprintf(it->err, it->errlen, "a name in '%.*s' is too long",
                 it->len > 60 ? 60 : (int)it->len, it->item);
        return -1;
      }
      if (expand_from(it, next, buf, blen + (size_t)w))
        return -1;
    }
    s = e + 1;
  }
  return 0;
}

/* How many names item (len bytes) expands to, saturating above limit;
 * malformed ranges count 1 (expand_from reports them). */
static long long item_names(const char *item, size_t len, long long limit) {
  long long total = 1;
  for (size_t i = 0; i < len && total <= limit; i++) {
    if (item[i] != '[')
      continue;
    long long sum = 0;
    const char *p = item + i + 1, *end = memchr(p, ']', len - i - 1);
    if (!end)
      return 1;
    while (p < end) {
      char *e;
      const long long a = strtoll(p, &e, 10);
      long long b = a;
      if (e < end && *e == '-')
        b = strtoll(e + 1, &e, 10);
      if (a >= 0 && b >= a)
        sum += b - a < limit ? b - a + 1 : limit + 1; /* saturated: more than allowed */
      else
        sum += 1; /* malformed: expand_from says why */
      const char *comma = memchr(p, ',', (size_t)(end - p));
      p = comma ? comma + 1 : end;
    }
    total *= sum > 0 ? sum : 1;
    i = (size_t)(end - item);
  }
  return total;
}

static int expand_hostlist(const char *list, long long limit, name_fn fn, void *ctx, char *err,
                           size_t errlen) {
  expander it = {.fn = fn, .ctx = ctx, .err = err, .errlen = errlen, .limit = limit};
  const char *s = list;
  if (!*s) {
    snprintf(err, errlen, "empty hostlist");
    return -1;
  }
  while (*s) {
    const char *e = s;
    int depth = 0;
    while (*e && (depth || *e != ',')) {
      if (*e == '[')
        depth++;
      else if (*e == ']')
        depth--;
      if (depth < 0 || depth > 1) {
        snprintf(err, errlen, "unbalanced brackets in '%s'", list);
        return -1;
      }
      e++;
    }
    if (e == s) {
      snprintf(err, errlen, "empty name in '%s'", list);
      return -1;
    }
    it.item = s;
    it.len = (size_t)(e - s);
    if (it.count + item_names(s, it.len, limit) > limit) {
      snprintf(err, errlen,
               "hostlist item '%.*s%s' expands to too many names (a file may name at most "
               "%d nodes and %d child switches in all)",
               it.len > 40 ? 40 : (int)it.len, s, it.len > 40 ? "..." : "", MAX_CONF_NODES,
               MAX_CONF_LINKS);
      return -1;
    }
    char buf[MAX_NAME];
    if (expand_from(&it, 0, buf, 0))
      return -1;
    s = *e ? e + 1 : e;
  }
  return 0;
}

/* ---- the file ---- */

typedef struct {
  int line;
  ivec nodes;       /* node indices */
  ivec child_names; /* indices into the pending names map */
  ivec children;    /* switch indices (resolved) */
  ivec parents;
} sw_t;

typedef struct {
  const char *spec;
  char *err;
  size_t errlen;
  strmap sws, nodes, refs; /* switch names, node names, referenced switch names */
  sw_t *sw;
  int cap;
  int *node_sw; /* node -> switch (grown with nodes) */
  int node_cap;
  long long links; /* Switches= entries so far */
  int cur;         /* switch being filled */
  int line;
} ctx_t;

static int perr(ctx_t *c, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *p = msg; *p; p++) /* the file's bytes, quoted: printable ASCII only */
    if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
      *p = '?';
  if (c->line)
    snprintf(c->err, c->errlen, "topology '%s': line %d: %s", c->spec, c->line, msg);
  else
    snprintf(c->err, c->errlen, "topology '%s': %s", c->spec, msg);
  return -1;
}

static int add_node(void *vc, const char *name) {
  ctx_t *c = vc;
  int added;
  const int n = strmap_add(&c->nodes, name, &added);
  if (n < 0)
    return perr(c, "out of memory");
  if (!added)
    return perr(c, "node '%s' is listed under switches '%s' and '%s'", name,
                c->sws.names[c->node_sw[n]], c->sws.names[c->cur]);
  if (n >= c->node_cap) {
    const int cap = c->node_cap ? 2 * c->node_cap : 256;
    int *v = realloc(c->node_sw, sizeof *v * (size_t)cap);
    if (!v)
      return perr(c, "out of memory");
    c->node_sw = v;
    c->node_cap = cap;
  }
  c->node_sw[n] = c->cur;
  return ivec_push(&c->sw[c->cur].nodes, n) ? perr(c, "out of memory") : 0;
}

static int add_child(void *vc, const char *name) {
  ctx_t *c = vc;
  int added;
  const int k = strmap_add(&c->refs, name, &added);
  if (k < 0 || ivec_push(&c->sw[c->cur].child_names, k))
    return perr(c, "out of memory");
  c->links++;
  return 0;
}

static int parse_line(ctx_t *c, char *s) {
  char *hash = strchr(s, '#');
  if (hash)
    *hash = 0;
  char *tok[64];
  int nt = 0;
  char *save = NULL;
  for (char *p = strtok_r(s, " \t\r\n", &save); p; p = strtok_r(NULL, " \t\r\n", &save)) {
    if (nt == 64)
      return perr(c, "too many fields");
    tok[nt++] = p;
  }
  if (!nt)
    return 0;
  const char *name = NULL, *nodes = NULL, *switches = NULL;
  for (int i = 0; i < nt; i++) {
    char *eq = strchr(tok[i], '=');
    if (!eq)
      return perr(c, "expected Key=Value, got '%s'", tok[i]);
    *eq = 0;
    const char *v = eq + 1;
    if (!strcasecmp(tok[i], "SwitchName"))
      name = v;
    else if (!strcasecmp(tok[i], "Nodes"))
      nodes = v;
    else if (!strcasecmp(tok[i], "Switches"))
      switches = v;
    else if (strcasecmp(tok[i], "LinkSpeed"))
      return perr(c, "unknown key '%s' (known: SwitchName, Switches, Nodes, LinkSpeed)", tok[i]);
  }
  if (!name || !*name)
    return perr(c, "expected SwitchName=");
  int added;
  const int sidx = strmap_add(&c->sws, name, &added);
  if (sidx < 0)
    return perr(c, "out of memory");
  if (!added)
    return perr(c, "switch '%s' defined twice (first on line %d)", name, c->sw[sidx].line);
  if (sidx >= c->cap) {
    const int cap = c->cap ? 2 * c->cap : 64;
    sw_t *v = realloc(c->sw, sizeof *v * (size_t)cap);
    if (!v)
      return perr(c, "out of memory");
    memset(v + c->cap, 0, sizeof *v * (size_t)(cap - c->cap));
    c->sw = v;
    c->cap = cap;
  }
  c->sw[sidx].line = c->line;
  c->cur = sidx;
  char msg[200] = "";
  if (nodes && expand_hostlist(nodes, MAX_CONF_NODES - c->nodes.n, add_node, c, msg, sizeof msg))
    return msg[0] ? perr(c, "Nodes=%.40s%s: %s", nodes, strlen(nodes) > 40 ? "..." : "", msg)
                  : -1; /* else add_node said why */
  if (switches &&
      expand_hostlist(switches, MAX_CONF_LINKS - c->links, add_child, c, msg, sizeof msg))
    return msg[0]
               ? perr(c, "Switches=%.40s%s: %s", switches, strlen(switches) > 40 ? "..." : "", msg)
               : -1;
  return 0;
}

static void ctx_free(ctx_t *c) {
  for (int i = 0; i < c->sws.n; i++) {
    free(c->sw[i].nodes.v);
    free(c->sw[i].child_names.v);
    free(c->sw[i].children.v);
    free(c->sw[i].parents.v);
  }
  free(c->sw);
  free(c->node_sw);
  strmap_free(&c->sws);
  strmap_free(&c->nodes);
  strmap_free(&c->refs);
}

static char *read_file(const char *path, ctx_t *c) {
  FILE *f = fopen(path, "r");
  if (!f) {
    perr(c, "cannot read '%s': %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      if (cap >= MAX_FILE_BYTES) {
        perr(c, "'%s' is larger than %d MiB", path, MAX_FILE_BYTES >> 20);
        free(buf);
        fclose(f);
        return NULL;
      }
      char *b = realloc(buf, cap * 2);
      if (!b)
        break;
      buf = b;
      cap *= 2;
    }
    const size_t got = fread(buf + n, 1, cap - 1 - n, f);
    n += got;
    if (got == 0)
      break;
  }
  const int bad = ferror(f);
  fclose(f);
  if (!buf) {
    perr(c, "out of memory");
    return NULL;
  }
  if (bad) {
    perr(c, "error reading '%s'", path);
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  return buf;
}

/* A cycle among the switches Kahn's order left (left[s] > 0: children
 * not all placed), as "a -> b -> a" (each lists the next under
 * Switches=): from any of them, a child also left always exists; walking
 * down such children must come back to a switch seen before. */
static int name_cycle(ctx_t *c, const int *left) {
  const int ns = c->sws.n;
  int *seen = calloc((size_t)ns, sizeof *seen), *path = malloc(sizeof *path * (size_t)ns);
  if (!seen || !path) {
    free(seen);
    free(path);
    return perr(c, "the switches form a cycle");
  }
  int s = 0, n = 0;
  while (s < ns && !left[s])
    s++;
  while (s < ns && !seen[s]) {
    seen[s] = n + 1;
    path[n++] = s;
    const sw_t *w = &c->sw[s];
    int next = ns;
    for (int j = 0; j < w->children.n && next == ns; j++)
      if (left[w->children.v[j]])
        next = w->children.v[j];
    s = next;
  }
  char text[480];
  size_t o = 0;
  const int first = s < ns ? seen[s] - 1 : 0, len = n - first;
  for (int k = 0; k <= len && o + 1 < sizeof text; k++) {
    const int x = path[first + (k == len ? 0 : k)];
    if (len > 8 && k == 4) { /* a long cycle: its start and its end */
      o += (size_t)snprintf(text + o, sizeof text - o, " -> ... (%d switches)", len - 7);
      k = len - 4;
      continue;
    }
    o += (size_t)snprintf(text + o, sizeof text - o, "%s'%.40s%s'", k ? " -> " : "",
                          c->sws.names[x], strlen(c->sws.names[x]) > 40 ? "..." : "");
  }
  free(seen);
  free(path);
  return perr(c, "the switches form a cycle: %s (each lists the next under Switches=)", text);
}

/* Resolves children, parents and levels; checks the tree.  level[] out. */
static int shape(ctx_t *c, int *level, int *hmax) {
  const int ns = c->sws.n;
  c->line = 0;
  for (int s = 0; s < ns; s++) {
    sw_t *w = &c->sw[s];
    for (int i = 0; i < w->child_names.n; i++) {
      const char *cn = c->refs.names[w->child_names.v[i]];
      const int ch = strmap_find(&c->sws, cn);
      c->line = w->line;
      if (ch < 0)
        return perr(c, "switch '%s' (under '%s') is not defined", cn, c->sws.names[s]);
      if (ch == s)
        return perr(c, "switch '%s' lists itself", cn);
      for (int j = 0; j < w->children.n; j++)
        if (w->children.v[j] == ch)
          return perr(c, "switch '%s' listed twice under '%s'", cn, c->sws.names[s]);
      if (ivec_push(&w->children, ch) || ivec_push(&c->sw[ch].parents, s))
        return perr(c, "out of memory");
    }
  }
  c->line = 0;
  /* Kahn's order from switches without children upwards */
  int *left = malloc(sizeof *left * (size_t)ns), *queue = malloc(sizeof *queue * (size_t)ns);
  if (!left || !queue) {
    free(left);
    free(queue);
    return perr(c, "out of memory");
  }
  int qn = 0;
  for (int s = 0; s < ns; s++) {
    left[s] = c->sw[s].children.n;
    level[s] = 1;
    if (!left[s])
      queue[qn++] = s;
  }
  for (int qi = 0; qi < qn; qi++) {
    const int s = queue[qi];
    for (int j = 0; j < c->sw[s].parents.n; j++) {
      const int p = c->sw[s].parents.v[j];
      if (level[p] < level[s] + 1)
        level[p] = level[s] + 1;
      if (--left[p] == 0)
        queue[qn++] = p;
    }
  }
  int rc = 0;
  if (qn < ns)
    rc = name_cycle(c, left);
  *hmax = 1;
  for (int s = 0; s < ns && !rc; s++) {
    if (level[s] > SIM_MAX_LEVELS) {
      rc = perr(c, "the tree has more than %d levels", SIM_MAX_LEVELS);
      break;
    }
    if (level[s] > *hmax)
      *hmax = level[s];
    const sw_t *w = &c->sw[s];
    if (w->nodes.n + w->children.n + w->parents.n > SIM_TOPO_MAX_RADIX)
      rc = perr(c, "switch '%s' has %d ports (max %d)", c->sws.names[s],
                w->nodes.n + w->children.n + w->parents.n, SIM_TOPO_MAX_RADIX);
  }
  /* connectivity: for every switch a with nodes, the subtrees of a's
   * ancestors (and a's) must cover every switch with nodes */
  int nl = 0;
  int *lidx = malloc(sizeof *lidx * (size_t)ns);
  for (int s = 0; lidx && s < ns; s++)
    lidx[s] = c->sw[s].nodes.n ? nl++ : -1;
  if (!rc && lidx && (long long)ns * nl > MAX_TABLE_ENTRIES)
    rc = perr(c, "%d switches x %d switches with nodes is too large (max %lld)", ns, nl,
              MAX_TABLE_ENTRIES);
  const size_t words = ((size_t)nl + 63) / 64;
  uint64_t *desc = rc || !lidx ? NULL : calloc((size_t)ns * words, sizeof *desc);
  uint64_t *acc = desc ? calloc(words, sizeof *acc) : NULL;
  int *stamp = acc ? malloc(sizeof *stamp * (size_t)ns) : NULL;
  if (!rc && !stamp)
    rc = perr(c, "out of memory");
  if (!rc) {
    for (int qi = 0; qi < qn; qi++) { /* children before parents */
      const int s = queue[qi];
      uint64_t *d = desc + (size_t)s * words;
      if (lidx[s] >= 0)
        d[lidx[s] / 64] |= 1ull << (lidx[s] % 64);
      for (int j = 0; j < c->sw[s].parents.n; j++) {
        uint64_t *pd = desc + (size_t)c->sw[s].parents.v[j] * words;
        for (size_t k = 0; k < words; k++)
          pd[k] |= d[k];
      }
    }
    for (int s = 0; s < ns; s++)
      stamp[s] = -1;
    for (int a = 0; a < ns && !rc; a++) {
      if (lidx[a] < 0)
        continue;
      memset(acc, 0, words * sizeof *acc);
      int qh = 0, qt = 0;
      queue[qt++] = a;
      stamp[a] = a;
      while (qh < qt) {
        const int s = queue[qh++];
        for (size_t k = 0; k < words; k++)
          acc[k] |= desc[(size_t)s * words + k];
        for (int j = 0; j < c->sw[s].parents.n; j++) {
          const int p = c->sw[s].parents.v[j];
          if (stamp[p] != a) {
            stamp[p] = a;
            queue[qt++] = p;
          }
        }
      }
      for (int b = 0; b < ns; b++)
        if (lidx[b] >= 0 && !(acc[lidx[b] / 64] >> (lidx[b] % 64) & 1)) {
          rc = perr(c, "switches '%s' and '%s' have no common ancestor (the tree is not connected)",
                    c->sws.names[a], c->sws.names[b]);
          break;
        }
    }
  }
  free(desc);
  free(acc);
  free(stamp);
  free(lidx);
  free(left);
  free(queue);
  return rc;
}

int sim_topo_parse_slurm(const char *spec, const char *path, sim_topo *t, char *err,
                         size_t errlen) {
  ctx_t c = {.spec = spec, .err = err, .errlen = errlen};
  char *text = read_file(path, &c);
  if (!text)
    return -1;
  const int rc = sim_topo_parse_slurm_text(spec, text, t, err, errlen);
  free(text);
  return rc;
}

int sim_topo_parse_slurm_text(const char *spec, const char *conf, sim_topo *t, char *err,
                              size_t errlen) {
  ctx_t c = {.spec = spec, .err = err, .errlen = errlen};
  char *text = strdup(conf);
  if (!text)
    return perr(&c, "out of memory");
  int rc = 0;
  char *s = text;
  while (*s && !rc) {
    char *e = strchr(s, '\n');
    if (e)
      *e = 0;
    c.line++;
    rc = parse_line(&c, s);
    s = e ? e + 1 : s + strlen(s);
  }
  free(text);
  c.line = 0;
  if (!rc && !c.sws.n)
    rc = perr(&c, "no SwitchName= lines");
  const int ns = c.sws.n;
  int *level = rc ? NULL : malloc(sizeof *level * (size_t)ns);
  int *nports_of = rc ? NULL : malloc(sizeof *nports_of * (size_t)ns);
  int hmax = 1;
  if (!rc && (!level || !nports_of))
    rc = perr(&c, "out of memory");
  if (!rc && !c.nodes.n) /* a cycle first: it is why a file of switches names no node */
    rc = shape(&c, level, &hmax) ? -1 : perr(&c, "no Nodes= (the tree has no nodes)");
  else if (!rc)
    rc = shape(&c, level, &hmax);
  if (!rc) {
    t->kind = SIM_TOPO_TREE;
    for (int i = 0; i < ns; i++)
      nports_of[i] = c.sw[i].nodes.n + c.sw[i].children.n + c.sw[i].parents.n;
    rc = sim_topo_alloc(t, ns, c.nodes.n, nports_of, err, errlen);
  }
  if (!rc) {
    t->h = hmax;
    int *pslot = calloc((size_t)ns, sizeof *pslot); /* next parent port per switch */
    const int nn = c.nodes.n;
    size_t bytes = sizeof(char *) * ((size_t)ns + (size_t)nn);
    for (int i = 0; i < ns; i++)
      bytes += strlen(c.sws.names[i]) + 1;
    for (int i = 0; i < nn; i++)
      bytes += strlen(c.nodes.names[i]) + 1;
    char **names = malloc(bytes);
    if (!pslot || !names) {
      free(pslot);
      free(names);
      rc = perr(&c, "out of memory");
    } else {
      char *dst = (char *)(names + ns + nn);
      for (int i = 0; i < ns + nn; i++) {
        names[i] = dst;
        strcpy(dst, i < ns ? c.sws.names[i] : c.nodes.names[i - ns]);
        dst += strlen(dst) + 1;
      }
      t->extra = names;
      for (int s2 = 0; s2 < ns; s2++) {
        const sw_t *w = &c.sw[s2];
        const int pb = t->port_base[s2];
        t->router_level[s2] = level[s2];
        for (int i = 0; i < w->nodes.n; i++) {
          const int n = w->nodes.v[i];
          t->peer[pb + i] = -1 - n;
          t->cls[pb + i] = SIM_LINK_NODE;
          t->node_router[n] = s2;
          t->node_port[n] = i;
        }
        const sim_link_class lc =
            (hmax >= 3 && level[s2] == hmax) ? SIM_LINK_GLOBAL : SIM_LINK_LOCAL;
        for (int j = 0; j < w->children.n; j++) {
          const int ch = w->children.v[j];
          const int down = pb + w->nodes.n + j;
          const int up = t->port_base[ch] + c.sw[ch].nodes.n + c.sw[ch].children.n + pslot[ch]++;
          t->peer[down] = up;
          t->peer[up] = down;
          t->cls[down] = t->cls[up] = (unsigned char)lc;
        }
      }
      free(pslot);
      rc = sim_topo_validate(t, err, errlen);
    }
  }
  free(level);
  free(nports_of);
  ctx_free(&c);
  return rc;
}

const char *sim_topo_slurm_name(const sim_topo *t, int r) {
  if (t->kind != SIM_TOPO_TREE || !t->extra || r < 0 || r >= t->nrouters)
    return NULL;
  return ((char *const *)t->extra)[r];
}

const char *sim_topo_slurm_node_name(const sim_topo *t, int n) {
  if (t->kind != SIM_TOPO_TREE || !t->extra || n < 0 || n >= t->nnodes)
    return NULL;
  return ((char *const *)t->extra)[t->nrouters + n];
}
