/* Degraded links of the simulated fabric: parsing and naming (degrade.h). */
#include "degrade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "contend/json.h"
#include "contend/rng.h"

/* Every router's label, built once per sim_degrade_parse (slurm switch
 * names reach 255 characters): one buffer, label r at off[r]. */
typedef struct labels {
  char *buf;
  size_t *off;
} labels;

/* The router labelled name, or -1. */
static int find_router(const sim_topo *t, const char *name, labels *L) {
  if (!L->off) {
    size_t len = 0, cap = 4096;
    L->off = malloc(sizeof *L->off * (size_t)(t->nrouters ? t->nrouters : 1));
    L->buf = malloc(cap);
    for (int r = 0; r < t->nrouters && L->off && L->buf; r++) {
      char one[SIM_LABEL_MAX];
      const size_t n = strlen(sim_router_label(t, r, one, sizeof one)) + 1;
      while (len + n > cap) {
        char *b = realloc(L->buf, cap *= 2);
        if (!b)
          contend_fail("out of memory (router labels)");
        L->buf = b;
      }
      memcpy(L->buf + len, one, n);
      L->off[r] = len;
      len += n;
    }
    if (!L->off || !L->buf)
      contend_fail("out of memory (router labels)");
  }
  for (int r = 0; r < t->nrouters; r++)
    if (!strcmp(L->buf + L->off[r], name))
      return r;
  return -1;
}

static int add(const sim_topo *t, sim_degrade *d, long c, double f, const char *item, char *err,
               size_t errlen) {
  const long b = sim_channel_reverse(t, c);
  for (int i = 0; i < d->n; i++)
    if (d->link[i].chan == c || d->link[i].back == c) {
      snprintf(err, errlen, "--degrade %s: that link is already degraded", item);
      return -1;
    }
  if (d->n >= SIM_DEGRADE_MAX) {
    snprintf(err, errlen, "--degrade: more than the limit of %d links", SIM_DEGRADE_MAX);
    return -1;
  }
  d->link[d->n++] = (sim_degraded){c, b, f};
  d->scale[c] = d->scale[b] = f;
  return 0;
}

static int parse_fraction(const char *s, const char *opt, const char *item, const char *routing,
                          double *f, char *err, size_t errlen) {
  char *end;
  *f = strtod(s, &end);
  if (end == s || *end || !(*f >= 0 && *f <= 1)) {
    snprintf(err, errlen, "%s %s: the fraction '%s' is not a number in (0, 1]", opt, item, s);
    return -1;
  }
  if (*f == 0) {
    snprintf(err, errlen,
             "%s %s: a link that is down (fraction 0) needs a routing that avoids it, and routing "
             "%s does not: give a fraction in (0, 1]",
             opt, item, routing);
    return -1;
  }
  return 0;
}

static int parse_item(const sim_topo *t, char *item, const char *routing, sim_degrade *d, labels *L,
                      char *err, size_t errlen) {
  char *eq = strrchr(item, '='), *colon = strrchr(item, ':');
  if (!eq || !colon || colon > eq || colon == item) {
    snprintf(err, errlen, "--degrade '%s' is not COMPONENT:PORT=FRACTION (e.g. leaf0:8=0.25)",
             item);
    return -1;
  }
  *eq = 0, *colon = 0;
  const char *comp = item, *port_s = colon + 1;
  char shown[SIM_LABEL_MAX + 32];
  snprintf(shown, sizeof shown, "%s:%s", comp, port_s);
  double f;
  if (parse_fraction(eq + 1, "--degrade", shown, routing, &f, err, errlen))
    return -1;
  char *end;
  const long port = strtol(port_s, &end, 10);
  long c;
  if (!strncmp(comp, "nic", 3) && comp[3] >= '0' && comp[3] <= '9') {
    const long node = strtol(comp + 3, &end, 10);
    if (*end || node < 0 || node >= t->nnodes) {
      snprintf(err, errlen, "--degrade %s: no such NIC (nic0 .. nic%d)", shown, t->nnodes - 1);
      return -1;
    }
    if (*port_s == 0 || strcmp(port_s, "0")) {
      snprintf(err, errlen, "--degrade %s: a NIC has port 0 only", shown);
      return -1;
    }
    c = (long)t->nports + node;
  } else {
    const int r = find_router(t, comp, L);
    if (r < 0) {
      char first[SIM_LABEL_MAX], last[SIM_LABEL_MAX];
      sim_router_label(t, 0, first, sizeof first);
      sim_router_label(t, t->nrouters - 1, last, sizeof last);
      snprintf(err, errlen,
               "--degrade %s: no component '%s' (routers %s .. %s, NICs nic0 .. nic%d; the names "
               "of the counter CSV and `contend topology paths`)",
               shown, comp, first, last, t->nnodes - 1);
      return -1;
    }
    const int radix = t->port_base[r + 1] - t->port_base[r];
    if (*port_s == 0 || *end || port < 0 || port >= radix) {
      snprintf(err, errlen, "--degrade %s: %s has ports 0 .. %d", shown, comp, radix - 1);
      return -1;
    }
    c = t->port_base[r] + port;
    if (t->peer[c] == SIM_UNCONNECTED) {
      snprintf(err, errlen, "--degrade %s: that port has no link", shown);
      return -1;
    }
  }
  return add(t, d, c, f, shown, err, errlen);
}

static int parse_random(const sim_topo *t, const char *spec, const char *routing, sim_degrade *d,
                        char *err, size_t errlen) {
  long n;
  char fs[64], cls_s[16] = "";
  unsigned long long seed;
  int used = 0, cls = -1;
  const int got = sscanf(spec, "%ld,%63[^,],%llu%n,%15[a-z]%n", &n, fs, &seed, &used, cls_s, &used);
  if (got < 3 || spec[used] || spec[0] == '-') {
    snprintf(err, errlen,
             "--degrade-random '%s' is not N,FRACTION,SEED[,local|global] (e.g. 2,0.25,7)", spec);
    return -1;
  }
  if (got == 4) {
    if (!strcmp(cls_s, "local"))
      cls = SIM_LINK_LOCAL;
    else if (!strcmp(cls_s, "global"))
      cls = SIM_LINK_GLOBAL;
    else {
      snprintf(err, errlen, "--degrade-random %s: the link class '%s' is not local or global", spec,
               cls_s);
      return -1;
    }
  }
  double f;
  if (parse_fraction(fs, "--degrade-random", spec, routing, &f, err, errlen))
    return -1;
  /* the router-to-router links, each once (from its lower-numbered port) */
  long nl = 0;
  for (int gp = 0; gp < t->nports; gp++)
    nl += t->peer[gp] > gp && (cls < 0 || t->cls[gp] == cls);
  if (n < 1 || n > nl || n > SIM_DEGRADE_MAX) {
    snprintf(err, errlen,
             "--degrade-random %s: N must be 1 .. %ld (router-to-router links%s%s; at most %d)",
             spec, nl < SIM_DEGRADE_MAX ? nl : SIM_DEGRADE_MAX, cls < 0 ? "" : " of class ", cls_s,
             SIM_DEGRADE_MAX);
    return -1;
  }
  int *links = malloc(sizeof *links * (size_t)nl);
  if (!links)
    contend_fail("out of memory (degraded links)");
  nl = 0;
  for (int gp = 0; gp < t->nports; gp++)
    if (t->peer[gp] > gp && (cls < 0 || t->cls[gp] == cls))
      links[nl++] = gp;
  /* a partial Fisher-Yates shuffle: the first n are the draw */
  contend_rng rng;
  contend_rng_init(&rng, (uint64_t)seed, 0x64656772, 0, 0, 0);
  int rc = 0;
  for (long k = 0; k < n && !rc; k++) {
    const long pick = k + (long)contend_rng_below(&rng, (uint64_t)(nl - k));
    const int c = links[pick];
    links[pick] = links[k];
    links[k] = c;
    int taken = 0;
    for (int i = 0; i < d->n; i++)
      taken |= d->link[i].chan == c || d->link[i].back == c;
    if (taken) {
      char a[SIM_LABEL_MAX];
      snprintf(err, errlen, "--degrade-random %s: it draws %s:%d, which --degrade already degrades",
               spec, sim_channel_component(t, c, a, sizeof a), sim_channel_port(t, c));
      rc = -1;
    } else
      rc = add(t, d, c, f, spec, err, errlen);
  }
  free(links);
  return rc;
}

int sim_degrade_parse(const sim_topo *t, const char *list, const char *random, const char *routing,
                      sim_degrade *d, char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  if ((!list || !*list) && (!random || !*random))
    return 0;
  const long nchan = (long)t->nports + t->nnodes;
  d->scale = malloc(sizeof *d->scale * (size_t)nchan);
  d->link = malloc(sizeof *d->link * SIM_DEGRADE_MAX);
  if (!d->scale || !d->link)
    contend_fail("out of memory (degraded links)");
  for (long c = 0; c < nchan; c++)
    d->scale[c] = 1.0;
  labels L = {NULL, NULL};
  int rc = 0;
  if (list && *list) {
    char *copy = strdup(list), *save = NULL;
    if (!copy)
      contend_fail("out of memory");
    for (char *e = strtok_r(copy, ",", &save); e && !rc; e = strtok_r(NULL, ",", &save))
      rc = parse_item(t, e, routing, d, &L, err, errlen);
    free(copy);
  }
  if (!rc && random && *random)
    rc = parse_random(t, random, routing, d, err, errlen);
  free(L.buf);
  free(L.off);
  if (rc)
    sim_degrade_free(d);
  return rc;
}

void sim_degrade_free(sim_degrade *d) {
  free(d->scale);
  free(d->link);
  memset(d, 0, sizeof *d);
}

void sim_degrade_json(contend_json *j, const sim_topo *t, const sim_degrade *d) {
  if (!d->n)
    return;
  contend_json_arr_begin(j, "degraded");
  for (int i = 0; i < d->n; i++) {
    char a[SIM_LABEL_MAX], b[SIM_LABEL_MAX];
    contend_json_obj_begin(j, NULL);
    contend_json_str(j, "component", sim_channel_component(t, d->link[i].chan, a, sizeof a));
    contend_json_int(j, "port", sim_channel_port(t, d->link[i].chan));
    contend_json_str(j, "peer_component", sim_channel_component(t, d->link[i].back, b, sizeof b));
    contend_json_int(j, "peer_port", sim_channel_port(t, d->link[i].back));
    contend_json_double(j, "fraction", d->link[i].fraction);
    contend_json_obj_end(j);
  }
  contend_json_arr_end(j);
}
