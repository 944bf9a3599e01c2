/* Synthetic traffic on the simulated fabric (`contend sim`): traffic
 * components (patterns with their own sources and load) generate packets,
 * and a run reports offered and accepted load and packet latency per
 * component and in total, for one load or a sweep.
 *
 * A component is `[name=]pattern[:k=v,...]`; components are joined with
 * ';'.  Patterns: uniform, shift:K (or shift:k=K), group_shift,
 * permutation, incast:senders=LIST,dst=N, hotspot:dst=N,frac=F,
 * flow:src=S,dst=D.  Every pattern takes load=F (default: --load) and
 * nodes=LIST (its sources; default: all nodes, the senders of an incast,
 * the src of a flow).  LIST is like 0-7+12+20-23 ('+' joins ranges, since
 * ',' separates keys).
 *
 * Load is a fraction of the node link's bandwidth: time is cut into slots
 * of one packet's serialization on the node link, and in every slot a
 * source generates a packet of mtu payload (plus header) with probability
 * load (Bernoulli; load 1 is a saturated source), into a source queue of at most
 * --source-queue packets (beyond it the packet is not generated; the
 * refusal is counted).  Latency runs from generation to the tail's
 * arrival (source queueing included).  Accepted load counts the wire
 * bytes delivered during the measured window per source of the
 * component, over the node link bandwidth. */
#include "synth.h"

#include "sim_par.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/proc.h"
#include "contend/intlist.h"
#include "contend/json.h"
#include "contend/stats.h"
#include "counters.h"

#define MAX_COMPONENTS 16
#define MAX_SPEC 4095     /* characters of --traffic */
#define MAX_COMPONENT 511 /* characters of one component */
#define MAX_NAME 47       /* characters of a component's name */

typedef enum { P_UNIFORM, P_SHIFT, P_GROUP_SHIFT, P_PERM, P_INCAST, P_HOTSPOT, P_FLOW } pattern;

typedef struct component {
  char name[MAX_NAME + 1];
  char text[MAX_COMPONENT + 1];
  pattern pat;
  double load;
  int load_set;
  int k, dst, src;
  int self; /* uniform: a source may pick itself (Karol's switch model) */
  double frac;
  int *nodes, nnodes; /* sources */
  int *perm;          /* permutation */
  /* per run */
  uint64_t offered_bytes, refused, generated;
  uint64_t accepted_bytes, delivered;
  uint64_t lat_ps;     /* sum of the latencies in lat_ns, exact (the mean: any order of adding) */
  uint64_t *src_bytes; /* accepted per source (index in nodes) */
  int *src_index;      /* node -> index in nodes, or -1 */
  contend_hist lat_ns;
} component;

typedef struct synth {
  sim_net *net;
  const sim_topo *t;
  component *c;
  int nc;
  int *slot_comp, *slot_node; /* generator timers: (component, source) by timer id */
  int nslots;
  contend_rng *rng;   /* nslots: each source's own stream (its draws do not depend on others) */
  uint32_t mtu, wire; /* payload and wire bytes per packet */
  sim_time ser;       /* of a packet on a node link */
  sim_time t_measure, t_end;
  int generating;
  uint32_t source_queue;
  contend_hist total_lat;
  uint64_t total_lat_ps;
} synth;

/* group_shift's step: the nodes of a dragonfly group, of an XGFT's top
 * subtree; the node count elsewhere (one group). */
static int synth_group_size(const sim_topo *t) {
  int per = t->kind == SIM_TOPO_DRAGONFLY ? t->a * t->p : t->nnodes;
  if (t->kind == SIM_TOPO_XGFT && t->h >= 2)
    per = t->nnodes / t->m[t->h - 1];
  return per;
}

static int get_num(const char *key, const char *val, double lo, double hi, double *out, char *err,
                   size_t errlen) {
  char *end;
  errno = 0;
  const double d = strtod(val, &end);
  if (end == val || *end || errno || !(d >= lo && d <= hi)) {
    snprintf(err, errlen, "%s=%s: expected a number in [%g, %g]", key, val, lo, hi);
    return -1;
  }
  *out = d;
  return 0;
}

/* Why a parsed component can never send a packet (every source would be
 * its own destination, and self-sends are skipped), or NULL.  Such a
 * component measured nothing: its latencies would be empty. */
static const char *sends_nothing(const component *c, const sim_topo *t) {
  const int N = t->nnodes;
  int other = 0;
  switch (c->pat) {
  case P_UNIFORM:
  case P_HOTSPOT:
    return c->self || N >= 2 ? NULL : "the topology has one node";
  case P_SHIFT:
    return c->k % N ? NULL : "a shift by a multiple of the node count sends every node to itself";
  case P_GROUP_SHIFT:
    return synth_group_size(t) % N ? NULL
                                   : "the topology has one group: every node would send to itself";
  case P_PERM:
    for (int i = 0; i < c->nnodes && !other; i++)
      other = c->perm[c->nodes[i]] != c->nodes[i];
    return other ? NULL : "the permutation maps every source to itself";
  case P_INCAST:
  case P_FLOW:
    for (int i = 0; i < c->nnodes && !other; i++)
      other = c->nodes[i] != c->dst;
    return other              ? NULL
           : c->pat == P_FLOW ? "src and dst are the same node (a flow needs two nodes)"
                              : "every sender is dst itself";
  }
  return NULL;
}

/* One component from text like "victim=flow:src=5,dst=9,load=0.2". */
static void component_free(component *c) {
  free(c->src_bytes);
  free(c->src_index);
  free(c->nodes);
  free(c->perm);
  contend_hist_free(&c->lat_ns);
  c->src_bytes = NULL, c->src_index = NULL, c->nodes = NULL, c->perm = NULL;
}

static int parse_component(const char *text, const sim_topo *t, double dflt_load, component *c,
                           contend_rng *rng, char *err, size_t errlen) {
  memset(c, 0, sizeof *c);
  c->src = c->dst = -1;
  c->k = 1;
  if (strlen(text) > MAX_COMPONENT) {
    snprintf(err, errlen, "--traffic: a component of %zu characters, more than the limit of %d",
             strlen(text), MAX_COMPONENT);
    return -1;
  }
  snprintf(c->text, sizeof c->text, "%s", text);
  char buf[MAX_COMPONENT + 1];
  snprintf(buf, sizeof buf, "%s", text);
  char *body = buf;
  char *colon = strchr(buf, ':');
  char *eq = strchr(buf, '=');
  if (eq && (!colon || eq < colon)) { /* a name */
    *eq = 0;
    if (strlen(buf) > MAX_NAME) {
      snprintf(err, errlen, "--traffic: the name '%.20s...' has %zu characters, more than %d", buf,
               strlen(buf), MAX_NAME);
      return -1;
    }
    snprintf(c->name, sizeof c->name, "%s", buf);
    body = eq + 1;
    colon = strchr(body, ':');
  }
  char *args = NULL;
  if (colon) {
    *colon = 0;
    args = colon + 1;
  }
  static const char *const names[] = {"uniform", "shift",   "group_shift", "permutation",
                                      "incast",  "hotspot", "flow"};
  int pat = -1;
  for (int i = 0; i < 7; i++)
    if (!strcmp(body, names[i]))
      pat = i;
  if (pat < 0) {
    snprintf(err, errlen,
             "--traffic: unknown pattern '%s' (known: uniform, shift:K, group_shift, permutation, "
             "incast:senders=LIST,dst=N, hotspot:dst=N,frac=F, flow:src=S,dst=D)",
             body);
    return -1;
  }
  c->pat = (pattern)pat;
  if (!c->name[0])
    snprintf(c->name, sizeof c->name, "%.47s", body);
  c->load = dflt_load;
  char *nodes = NULL;
  for (char *tok = args ? strtok(args, ",") : NULL; tok; tok = strtok(NULL, ",")) {
    char *v = strchr(tok, '=');
    double d;
    if (!v) {
      if (c->pat == P_SHIFT && get_num("shift", tok, -1e7, 1e7, &d, err, errlen) == 0) {
        c->k = (int)d;
        continue;
      }
      snprintf(err, errlen, "--traffic %s: expected key=value, got '%s'", text, tok);
      return -1;
    }
    *v++ = 0;
    if (!strcmp(tok, "load")) {
      if (get_num(tok, v, 0, 1, &c->load, err, errlen))
        return -1;
      c->load_set = 1;
    } else if (!strcmp(tok, "nodes") || !strcmp(tok, "senders")) {
      nodes = v;
    } else if (!strcmp(tok, "dst") || !strcmp(tok, "src") || !strcmp(tok, "k")) {
      if (get_num(tok, v, !strcmp(tok, "k") ? -1e7 : 0, !strcmp(tok, "k") ? 1e7 : t->nnodes - 1, &d,
                  err, errlen))
        return -1;
      *(!strcmp(tok, "dst") ? &c->dst : !strcmp(tok, "src") ? &c->src : &c->k) = (int)d;
    } else if (!strcmp(tok, "self") && c->pat == P_UNIFORM) {
      if (get_num(tok, v, 0, 1, &d, err, errlen))
        return -1;
      c->self = d != 0;
    } else if (!strcmp(tok, "frac")) {
      if (get_num(tok, v, 0, 1, &c->frac, err, errlen))
        return -1;
    } else {
      snprintf(err, errlen, "--traffic %s: unknown key '%s'", text, tok);
      return -1;
    }
  }
  if ((c->pat == P_INCAST || c->pat == P_HOTSPOT || c->pat == P_FLOW) && c->dst < 0) {
    snprintf(err, errlen, "--traffic %s: needs dst=N", text);
    return -1;
  }
  if (c->pat == P_FLOW && c->src < 0) {
    snprintf(err, errlen, "--traffic %s: needs src=N", text);
    return -1;
  }
  if (c->pat == P_INCAST && !nodes) {
    snprintf(err, errlen, "--traffic %s: needs senders=LIST", text);
    return -1;
  }
  if (nodes) {
    if (!*nodes) {
      snprintf(err, errlen, "--traffic %s: the %s list is empty", text,
               c->pat == P_INCAST ? "senders" : "nodes");
      return -1;
    }
    if (contend_parse_int_list(nodes, "+ ", t->nnodes, &c->nodes, &c->nnodes, err, errlen))
      return -1;
  } else if (c->pat == P_FLOW) {
    c->nodes = malloc(sizeof(int));
    c->nodes[0] = c->src;
    c->nnodes = 1;
  } else {
    c->nodes = malloc(sizeof(int) * (size_t)t->nnodes);
    if (!c->nodes)
      contend_fail("out of memory");
    for (int i = 0; i < t->nnodes; i++)
      c->nodes[i] = i;
    c->nnodes = t->nnodes;
  }
  c->src_bytes = calloc((size_t)c->nnodes, sizeof *c->src_bytes);
  c->src_index = malloc(sizeof(int) * (size_t)t->nnodes);
  if (!c->src_bytes || !c->src_index)
    contend_fail("out of memory");
  for (int i = 0; i < t->nnodes; i++)
    c->src_index[i] = -1;
  for (int i = 0; i < c->nnodes; i++)
    c->src_index[c->nodes[i]] = i;
  if (c->pat == P_PERM) {
    c->perm = malloc(sizeof(int) * (size_t)t->nnodes);
    if (!c->perm)
      contend_fail("out of memory");
    /* a derangement-free shuffle is not needed: self-sends are skipped */
    for (int i = 0; i < t->nnodes; i++)
      c->perm[i] = i;
    contend_rng_shuffle(rng, c->perm, t->nnodes);
  }
  const char *why = sends_nothing(c, t);
  if (why) {
    snprintf(err, errlen, "--traffic %s: this component would send no packet: %s", text, why);
    component_free(c);
    return -1;
  }
  return 0;
}

int synth_parse(const char *spec, const sim_topo *t, double load, uint64_t seed, synth_spec *out,
                char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  component *c = calloc(MAX_COMPONENTS, sizeof *c);
  if (!c)
    contend_fail("out of memory");
  contend_rng rng;
  contend_rng_init(&rng, seed, 0x7a11, 1, 0, 0);
  if (strlen(spec) > MAX_SPEC) {
    snprintf(err, errlen, "--traffic: %zu characters, more than the limit of %d", strlen(spec),
             MAX_SPEC);
    free(c);
    return -1;
  }
  char buf[MAX_SPEC + 1];
  snprintf(buf, sizeof buf, "%s", spec);
  int n = 0;
  char *save = NULL;
  for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
    while (isspace((unsigned char)*tok))
      tok++;
    if (!*tok)
      continue;
    if (n == MAX_COMPONENTS) {
      snprintf(err, errlen, "--traffic: at most %d components", MAX_COMPONENTS);
      goto fail;
    }
    if (parse_component(tok, t, load, &c[n], &rng, err, errlen))
      goto fail;
    for (int i = 0; i < n; i++)
      if (!strcmp(c[i].name, c[n].name)) {
        snprintf(err, errlen, "--traffic: two components named '%s' (name them: NAME=pattern)",
                 c[n].name);
        n++;
        goto fail;
      }
    n++;
  }
  if (!n) {
    snprintf(err, errlen, "--traffic: empty");
    goto fail;
  }
  out->c = c;
  out->n = n;
  return 0;
fail:
  for (int i = 0; i < n; i++)
    component_free(&c[i]);
  free(c);
  return -1;
}

void synth_free(synth_spec *s) {
  for (int i = 0; i < s->n; i++)
    component_free(&((component *)s->c)[i]);
  free(s->c);
  s->c = NULL;
}

/* ---- running ---- */

static int pick_dst(synth *s, contend_rng *rng, component *c, int src) {
  const int N = s->t->nnodes;
  switch (c->pat) {
  case P_UNIFORM: {
    if (c->self)
      return (int)contend_rng_below(rng, (uint64_t)N);
    if (N < 2)
      return -1;
    int d = (int)contend_rng_below(rng, (uint64_t)N - 1);
    return d >= src ? d + 1 : d;
  }
  case P_SHIFT:
    return (int)(((long)src + c->k % N + N) % N);
  case P_GROUP_SHIFT:
    return (src + synth_group_size(s->t)) % N;
  case P_PERM:
    return c->perm[src];
  case P_INCAST:
  case P_FLOW:
    return c->dst;
  case P_HOTSPOT:
    if (contend_rng_uniform(rng) < c->frac)
      return c->dst;
    {
      int d = (int)contend_rng_below(rng, (uint64_t)N - 1);
      return d >= src ? d + 1 : d;
    }
  }
  return -1;
}

/* Slots (one packet's serialization on the node link) until the next
 * packet: a Bernoulli trial per slot with probability load (geometric);
 * at load 1 every slot (a saturated source). */
static sim_time gap(const synth *s, contend_rng *rng, double load) {
  if (load >= 1.0)
    return s->ser;
  const double u = contend_rng_uniform(rng);
  const double k = floor(log1p(-u) / log1p(-load));
  return (sim_time)(k + 1.0) * s->ser;
}

enum { T_GEN = 0 };

static void on_timer(void *arg, uint32_t kind, uint32_t slot) {
  synth *s = arg;
  (void)kind;
  if (!s->generating)
    return;
  component *c = &s->c[s->slot_comp[slot]];
  const int src = s->slot_node[slot];
  const sim_time now = sim_net_now(s->net);
  const int dst = pick_dst(s, &s->rng[slot], c, src);
  const int counted = now >= s->t_measure;
  if (dst >= 0 && (dst != src || c->self)) {
    if (counted)
      c->offered_bytes += s->wire;
    if (sim_nic_backlog(s->net, src) >= s->source_queue) {
      c->refused += counted;
    } else {
      sim_msg_send(s->net,
                   sim_msg_new(s->net, src, dst, s->mtu, (uint32_t)s->slot_comp[slot], now));
      c->generated++;
    }
  }
  const sim_time next = now + gap(s, &s->rng[slot], c->load);
  if (next < s->t_end)
    sim_net_timer(s->net, next, T_GEN, slot);
}

static void on_delivered(void *arg, uint32_t mi) {
  synth *s = arg;
  sim_msg *m = sim_msg_at(s->net, mi);
  const sim_time now = sim_net_now(s->net);
  component *c = &s->c[m->kind];
  if (now >= s->t_measure && now < s->t_end) {
    c->accepted_bytes += s->wire;
    c->src_bytes[c->src_index[m->src]] += s->wire;
    c->delivered++;
  }
  if (m->cookie >= s->t_measure && m->cookie < s->t_end) { /* generated in the window */
    const double ns = (double)(now - m->cookie) / 1000.0;
    contend_hist_add(&c->lat_ns, ns);
    contend_hist_add(&s->total_lat, ns);
    c->lat_ps += now - m->cookie;
    s->total_lat_ps += now - m->cookie;
  }
}

static void lat_json(contend_json *j, const contend_hist *h) {
  contend_json_obj_begin(j, "latency_ns");
  contend_json_uint(j, "count", h->count);
  contend_json_double(j, "mean", h->count ? contend_hist_mean(h) : NAN);
  contend_json_double(j, "p50", contend_hist_quantile(h, 0.50));
  contend_json_double(j, "p99", contend_hist_quantile(h, 0.99));
  contend_json_double(j, "max", h->count ? h->max : NAN);
  if (!h->count) /* the nulls above: saturated, or a window shorter than a packet's trip */
    contend_json_str(j, "null_reason", SYNTH_NO_LATENCY);
  contend_json_obj_end(j);
}

/* The whole fabric's figures on every process (collective): the sums of
 * the parts' counts, histograms and stats, their latency extremes and
 * last event time. */
static void reduce(synth *s, sim_par *par, sim_net_stats *st, sim_time *last) {
  contend_hist *h[MAX_COMPONENTS + 1]; /* the components', then the total's */
  uint64_t *sum_ps[MAX_COMPONENTS + 1];
  int nh = 0;
  for (int i = 0; i < s->nc; i++)
    h[nh] = &s->c[i].lat_ns, sum_ps[nh++] = &s->c[i].lat_ps;
  h[nh] = &s->total_lat, sum_ps[nh++] = &s->total_lat_ps;
  size_t n = 7 + (size_t)nh * (2 + CONTEND_HIST_NBUCKETS);
  for (int i = 0; i < s->nc; i++)
    n += 5 + (size_t)s->c[i].nnodes;
  int64_t *v = calloc(n, sizeof *v), *at = v;
  double *ext = malloc(sizeof *ext * 2 * (size_t)nh);
  if (!v || !ext)
    contend_fail("out of memory");
  for (int i = 0; i < s->nc; i++) {
    component *c = &s->c[i];
    const uint64_t f[5] = {c->offered_bytes, c->refused, c->generated, c->accepted_bytes,
                           c->delivered};
    for (int k = 0; k < 5; k++)
      *at++ = (int64_t)f[k];
    for (int q = 0; q < c->nnodes; q++)
      *at++ = (int64_t)c->src_bytes[q];
  }
  for (int k = 0; k < nh; k++) {
    *at++ = (int64_t)h[k]->count;
    *at++ = (int64_t)*sum_ps[k];
    for (int b = 0; b < CONTEND_HIST_NBUCKETS; b++)
      *at++ = (int64_t)contend_hist_at(h[k], b);
    ext[2 * k] = h[k]->count ? -h[k]->min : -INFINITY; /* max of -min: one MAX reduction */
    ext[2 * k + 1] = h[k]->count ? h[k]->max : -INFINITY;
  }
  const uint64_t stv[6] = {st->packet_hops,     st->packets,   st->events,
                           st->bytes_delivered, st->ecn_marks, st->cc_notifications};
  for (int k = 0; k < 6; k++)
    *at++ = (int64_t)stv[k];
  *at++ = (int64_t)*last;
  int64_t t_last = (int64_t)*last;
  contend_gallreduce(par->world, v, (int)n, CONTEND_DT_INT64, CONTEND_OP_SUM);
  contend_gallreduce(par->world, ext, 2 * nh, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  contend_gallreduce(par->world, &t_last, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
  at = v;
  for (int i = 0; i < s->nc; i++) {
    component *c = &s->c[i];
    c->offered_bytes = (uint64_t)*at++;
    c->refused = (uint64_t)*at++;
    c->generated = (uint64_t)*at++;
    c->accepted_bytes = (uint64_t)*at++;
    c->delivered = (uint64_t)*at++;
    for (int q = 0; q < c->nnodes; q++)
      c->src_bytes[q] = (uint64_t)*at++;
  }
  for (int k = 0; k < nh; k++) {
    h[k]->count = (uint64_t)*at++;
    *sum_ps[k] = (uint64_t)*at++;
    uint64_t *b = contend_hist_buckets(h[k]);
    for (int x = 0; x < CONTEND_HIST_NBUCKETS; x++)
      b[x] = (uint64_t)*at++;
    h[k]->min = h[k]->count ? -ext[2 * k] : INFINITY;
    h[k]->max = h[k]->count ? ext[2 * k + 1] : -INFINITY;
  }
  st->packet_hops = (uint64_t)*at++;
  st->packets = (uint64_t)*at++;
  st->events = (uint64_t)*at++;
  st->bytes_delivered = (uint64_t)*at++;
  st->ecn_marks = (uint64_t)*at++;
  st->cc_notifications = (uint64_t)*at++;
  *last = (sim_time)t_last;
  free(v);
  free(ext);
}

int synth_run(const sim_setup *su, const synth_spec *spec, double load, int load_given,
              const synth_run_opts *o, contend_json *j, synth_point *pt, char *err, size_t errlen) {
  synth s = {0};
  s.t = &su->topo;
  s.c = spec->c;
  s.nc = spec->n;
  s.source_queue = o->source_queue;
  for (int i = 0; i < s.nc; i++) {
    component *c = &s.c[i];
    if (load_given && !c->load_set)
      c->load = load;
    c->offered_bytes = c->refused = c->generated = c->accepted_bytes = c->delivered = 0;
    c->lat_ps = 0;
    memset(c->src_bytes, 0, sizeof *c->src_bytes * (size_t)c->nnodes);
    contend_hist_free(&c->lat_ns);
    contend_hist_reset(&c->lat_ns);
    s.nslots += c->nnodes;
  }
  contend_hist_reset(&s.total_lat);
  s.slot_comp = malloc(sizeof(int) * (size_t)s.nslots);
  s.slot_node = malloc(sizeof(int) * (size_t)s.nslots);
  if (!s.slot_comp || !s.slot_node)
    contend_fail("out of memory");
  for (int i = 0, k = 0; i < s.nc; i++)
    for (int q = 0; q < s.c[i].nnodes; q++, k++) {
      s.slot_comp[k] = i;
      s.slot_node[k] = s.c[i].nodes[q];
    }
  sim_net_hooks hooks = {.arg = &s, .delivered = on_delivered, .timer = on_timer};
  s.net = sim_net_new(&su->net, &hooks, err, errlen);
  if (!s.net) {
    free(s.slot_comp);
    free(s.slot_node);
    return -1;
  }
  sim_par *par = o->par;
  if (par)
    sim_net_partition(s.net, par->part_of_router, par->parts, par->me);
  s.rng = malloc(sizeof *s.rng * (size_t)(s.nslots ? s.nslots : 1));
  if (!s.rng)
    contend_fail("out of memory");
  for (int k = 0; k < s.nslots; k++)
    contend_rng_init(&s.rng[k], su->net.seed, 0x7a11, 2, (uint64_t)k, 0);
  s.mtu = su->net.mtu;
  s.wire = su->net.mtu + su->net.header;
  s.ser = sim_net_ser(s.net, SIM_LINK_NODE, s.wire);
  s.t_measure = o->warmup;
  s.t_end = o->warmup + o->measure;
  s.generating = 1;
  sim_counters *ctr = NULL;
  if (su->counters &&
      sim_counters_open(&ctr, s.net, par ? par->world : NULL, su->counters, su->counter_interval,
                        su->counters_max_bytes, err, errlen)) {
    sim_net_free(s.net);
    free(s.rng);
    free(s.slot_comp);
    free(s.slot_node);
    return -1;
  }
  const double w0 = contend_monotonic_s();
  for (int k = 0; k < s.nslots; k++)
    if (s.c[s.slot_comp[k]].load > 0 && sim_net_owns_node(s.net, s.slot_node[k]))
      sim_net_timer(s.net, gap(&s, &s.rng[k], s.c[s.slot_comp[k]].load), T_GEN, (uint32_t)k);
  if (par)
    sim_par_run(s.net, par, s.t_end);
  else
    sim_net_run(s.net, s.t_end, NULL, NULL);
  s.generating = 0;
  uint64_t undelivered = 0;
  int drained = -1;
  if (o->drain) { /* injection stopped: everything in flight must arrive */
    if (par)
      sim_par_run(s.net, par, SIM_NEVER);
    else
      sim_net_run(s.net, SIM_NEVER, NULL, NULL);
  }
  const double wall = contend_monotonic_s() - w0;
  sim_net_stats stv = *sim_net_stats_get(s.net);
  const sim_net_stats *st = &stv;
  pt->events_here = stv.events; /* this process's part, before the sums */
  sim_time last = sim_net_now(s.net);
  if (par)
    reduce(&s, par, &stv, &last);
  for (int i = 0; i < s.nc; i++) /* the means from exact sums: the same in any order */
    s.c[i].lat_ns.sum = (double)s.c[i].lat_ps / 1000.0;
  s.total_lat.sum = (double)s.total_lat_ps / 1000.0;
  if (o->drain) {
    uint64_t gen = 0;
    for (int i = 0; i < s.nc; i++)
      gen += s.c[i].generated;
    undelivered = gen - st->packets;
    drained = undelivered == 0;
  }
  const double window_s = (double)o->measure / SIM_PS_PER_S;
  const double node_Bps = su->net.gbps[SIM_LINK_NODE] * 1e9 / 8.0;
  double off_all = 0, acc_all = 0;
  int src_all = 0;
  contend_json_obj_begin(j, NULL);
  contend_json_double(j, "load", load);
  for (int i = 0; i < s.nc; i++) {
    off_all += (double)s.c[i].offered_bytes;
    acc_all += (double)s.c[i].accepted_bytes;
    src_all += s.c[i].nnodes;
  }
  const double norm_all = window_s * node_Bps * (src_all ? src_all : 1);
  contend_json_double(j, "offered_load", off_all / norm_all);
  contend_json_double(j, "accepted_load", acc_all / norm_all);
  lat_json(j, &s.total_lat);
  contend_json_arr_begin(j, "components");
  for (int i = 0; i < s.nc; i++) {
    const component *c = &s.c[i];
    const double norm = window_s * node_Bps * c->nnodes;
    contend_json_obj_begin(j, NULL);
    contend_json_str(j, "name", c->name);
    contend_json_str(j, "spec", c->text);
    contend_json_int(j, "sources", c->nnodes);
    contend_json_double(j, "load", c->load);
    contend_json_double(j, "offered_load", (double)c->offered_bytes / norm);
    contend_json_double(j, "accepted_load", (double)c->accepted_bytes / norm);
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int q = 0; q < c->nnodes; q++) {
      lo = c->src_bytes[q] < lo ? c->src_bytes[q] : lo;
      hi = c->src_bytes[q] > hi ? c->src_bytes[q] : hi;
    }
    contend_json_double(j, "accepted_load_source_min", (double)lo / (norm / c->nnodes));
    contend_json_double(j, "accepted_load_source_max", (double)hi / (norm / c->nnodes));
    contend_json_uint(j, "refused_packets", c->refused);
    lat_json(j, &c->lat_ns);
    contend_json_obj_end(j);
  }
  contend_json_arr_end(j);
  pt->generated = 0;
  for (int i = 0; i < s.nc; i++)
    pt->generated += s.c[i].generated;
  contend_json_uint(j, "generated_packets", pt->generated);
  contend_json_uint(j, "delivered_packets", st->packets);
  if (drained >= 0) {
    contend_json_bool(j, "drained", drained);
    contend_json_uint(j, "undelivered_packets", undelivered);
  }
  contend_json_uint(j, "packet_hops", st->packet_hops);
  contend_json_uint(j, "events", st->events);
  contend_json_uint(j, "ecn_marks", st->ecn_marks);
  contend_json_uint(j, "cc_notifications", st->cc_notifications);
  contend_json_double(j, "sim_time_us", (double)last / 1e6);
  if (ctr)
    sim_counters_summary_json(ctr, j, 10);
  contend_json_double(j, "wall_s", wall);
  contend_json_obj_end(j);
  pt->offered = off_all / norm_all;
  pt->accepted = acc_all / norm_all;
  pt->lat_count = s.total_lat.count;
  pt->lat_mean_ns = s.total_lat.count ? contend_hist_mean(&s.total_lat) : NAN;
  pt->lat_p99_ns = contend_hist_quantile(&s.total_lat, 0.99);
  pt->hops = st->packet_hops;
  pt->events = st->events;
  pt->wall_s = wall;
  pt->drained = drained;
  pt->undelivered = undelivered;
  int rc = 0;
  if (ctr && sim_counters_close(ctr, err, errlen))
    rc = -1;
  contend_hist_free(&s.total_lat);
  sim_net_free(s.net);
  free(s.rng);
  free(s.slot_comp);
  free(s.slot_node);
  return rc;
}
