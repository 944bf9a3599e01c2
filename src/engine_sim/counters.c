/* Port counters of the simulated fabric: the interval CSV and the results
 * summary (see counters.h for the columns and their meaning). */
#include "counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "contend/files.h"
#include "net_impl.h"

typedef struct last {
  uint64_t bytes;
  sim_time stall;
  double occ_int; /* per port: sum over VCs */
} last;

struct sim_counters {
  sim_net *n;
  contend_out out; /* the CSV's temporary (out.f NULL: summary only) */
  FILE *f;         /* out.f */
  sim_time interval, t_last;
  last *prev;                  /* per channel */
  uint64_t max_bytes, written; /* the CSV's bound, its size so far */
  uint64_t largest;            /* the largest sample written */
  sim_time stopped;            /* when a sample was first left out (0: none) */
};

static const char *component(const sim_net *n, uint32_t c, char *buf, size_t len) {
  return sim_channel_component(n->t, c, buf, len);
}

static int unconnected(const sim_net *n, uint32_t c) {
  return c < (uint32_t)n->t->nports && n->t->peer[c] == SIM_UNCONNECTED;
}

static int local_port(const sim_net *n, uint32_t c) { return sim_channel_port(n->t, c); }

/* Brings every occupancy integral up to now (they are lazy). */
static void settle(sim_net *n) {
  const sim_time now = n->des.now;
  for (size_t i = 0; i < (size_t)n->nchan * n->V; i++) {
    sim_cvc *v = &n->cvc[i];
    v->occ_int += (double)((int64_t)n->cfg.buffer_bytes - v->credit) * (double)(now - v->occ_last);
    v->occ_last = now;
  }
}

/* Stall time including a stall still in progress. */
static sim_time stall_now(const sim_net *n, const sim_chan *ch) {
  return ch->stall + (ch->stalled ? n->des.now - ch->stall_since : 0);
}

static void write_sample(sim_counters *k) {
  sim_net *n = k->n;
  if (!k->f || k->stopped)
    return;
  const long before = ftell(k->f);
  settle(n);
  const sim_time now = n->des.now, dt = now - k->t_last;
  const double ts = (double)now / SIM_PS_PER_S;
  char name[64];
  for (uint32_t c = 0; c < n->nchan; c++) {
    const sim_chan *ch = &n->chan[c];
    if (unconnected(n, c))
      continue;
    uint64_t bytes = 0, pkts = 0;
    double occ = 0;
    for (int v = 0; v < n->V; v++) {
      const sim_cvc *x = &n->cvc[(size_t)c * n->V + v];
      bytes += x->bytes;
      pkts += x->pkts;
      occ += x->occ_int;
    }
    const sim_time stall = stall_now(n, ch);
    last *p = &k->prev[c];
    if (bytes == p->bytes && stall == p->stall) {
      p->occ_int = occ;
      continue;
    }
    component(n, c, name, sizeof name);
    const int port = local_port(n, c);
    fprintf(k->f, "%.9f,%s,%d,,xmit_data_bytes,%llu\n", ts, name, port, (unsigned long long)bytes);
    fprintf(k->f, "%.9f,%s,%d,,xmit_packets,%llu\n", ts, name, port, (unsigned long long)pkts);
    fprintf(k->f, "%.9f,%s,%d,,xmit_wait_ns,%.3f\n", ts, name, port, (double)stall / 1000.0);
    fprintf(k->f, "%.9f,%s,%d,,busy_ns,%.3f\n", ts, name, port, (double)ch->busy / 1000.0);
    if (ch->dst_router >= 0)
      fprintf(k->f, "%.9f,%s,%d,,occupancy_bytes,%.1f\n", ts, name, port,
              dt ? (occ - p->occ_int) / (double)dt : 0.0);
    if (n->V > 1)
      for (int v = 0; v < n->V; v++) {
        const sim_cvc *x = &n->cvc[(size_t)c * n->V + v];
        fprintf(k->f, "%.9f,%s,%d,%d,xmit_data_bytes,%llu\n", ts, name, port, v,
                (unsigned long long)x->bytes);
        fprintf(k->f, "%.9f,%s,%d,%d,xmit_wait_ns,%.3f\n", ts, name, port, v,
                (double)x->stall / 1000.0);
      }
    p->bytes = bytes;
    p->stall = stall;
    p->occ_int = occ;
  }
  k->t_last = now;
  const long after = ftell(k->f);
  if (before < 0 || after < 0 || (uint64_t)after <= k->max_bytes)
    return;
  /* past the bound: this sample is taken back, and sampling stops */
  fflush(k->f);
  if (ftruncate(fileno(k->f), before) == 0)
    fseek(k->f, before, SEEK_SET);
  k->stopped = now ? now : 1;
  fprintf(stderr,
          "contend: --counters: the sample at %.3f us simulated would take the CSV past "
          "--counters-max-mib %.0f (%.1f MiB): no more samples from then on (a longer "
          "--counter-interval-us or a larger --counters-max-mib)\n",
          (double)now / 1e6, (double)k->max_bytes / 1048576.0, (double)after / 1048576.0);
}

static void on_sample(void *arg) {
  sim_counters *k = arg;
  write_sample(k);
  if (k->interval && sim_des_pending(&k->n->des)) /* the fabric still has work: keep sampling */
    sim_des_push(&k->n->des, k->n->des.now + k->interval, EV_SAMPLE, 0);
}

int sim_counters_open(sim_counters **out, sim_net *n, const char *path, sim_time interval,
                      uint64_t max_bytes, char *err, size_t errlen) {
  sim_counters *k = calloc(1, sizeof *k);
  if (!k || !(k->prev = calloc(n->nchan, sizeof *k->prev)))
    contend_fail("out of memory (counters)");
  k->n = n;
  k->interval = interval;
  k->max_bytes = max_bytes;
  if (path) {
    if (contend_out_open(&k->out, "--counters", path, err, errlen)) {
      free(k->prev);
      free(k);
      return -1;
    }
    k->f = k->out.f;
    fputs("time_s,component,port,vc,counter,value\n", k->f);
  }
  n->sample = on_sample;
  n->sample_arg = k;
  if (interval)
    sim_des_push(&n->des, n->des.now + interval, EV_SAMPLE, 0);
  *out = k;
  return 0;
}

typedef struct rank_item {
  uint32_t c;
  sim_time stall;
} rank_item;

static int by_stall(const void *a, const void *b) {
  const rank_item *x = a, *y = b;
  if (x->stall != y->stall)
    return x->stall < y->stall ? 1 : -1;
  return (x->c > y->c) - (x->c < y->c);
}

/* The tier of a channel: where it goes from and to. */
static void tier(const sim_net *n, uint32_t c, char *buf, size_t len) {
  sim_channel_tier(n->t, c, buf, len);
}

void sim_counters_summary_json(sim_counters *k, contend_json *j, int top) {
  sim_net *n = k->n;
  settle(n);
  const sim_time now = n->des.now ? n->des.now : 1;
  rank_item *r = malloc(sizeof *r * n->nchan);
  if (!r)
    contend_fail("out of memory (counters)");
  for (uint32_t c = 0; c < n->nchan; c++)
    r[c] = (rank_item){c, stall_now(n, &n->chan[c])};
  qsort(r, n->nchan, sizeof *r, by_stall);
  contend_json_obj_begin(j, "counters");
  contend_json_double(j, "sim_time_us", (double)now / 1e6);
  if (k->stopped)
    contend_json_double(j, "csv_stopped_at_us", (double)k->stopped / 1e6);
  contend_json_arr_begin(j, "top_stalled");
  char name[64], peer[64], tr[64];
  for (int i = 0; i < top && (uint32_t)i < n->nchan && r[i].stall; i++) {
    const uint32_t c = r[i].c;
    const sim_chan *ch = &n->chan[c];
    uint64_t bytes = 0;
    double occ = 0;
    for (int v = 0; v < n->V; v++) {
      bytes += n->cvc[(size_t)c * n->V + v].bytes;
      occ += n->cvc[(size_t)c * n->V + v].occ_int;
    }
    if (ch->dst_router >= 0)
      sim_router_label(n->t, ch->dst_router, peer, sizeof peer);
    else
      snprintf(peer, sizeof peer, "nic%d", -1 - ch->dst_router);
    tier(n, c, tr, sizeof tr);
    contend_json_obj_begin(j, NULL);
    contend_json_str(j, "component", component(n, c, name, sizeof name));
    contend_json_int(j, "port", local_port(n, c));
    contend_json_str(j, "peer", peer);
    contend_json_str(j, "tier", tr);
    contend_json_double(j, "stall_fraction", (double)r[i].stall / (double)now);
    contend_json_double(j, "busy_fraction", (double)ch->busy / (double)now);
    contend_json_uint(j, "xmit_data_bytes", bytes);
    contend_json_double(j, "occupancy_bytes_mean", ch->dst_router >= 0 ? occ / (double)now : 0);
    contend_json_obj_end(j);
  }
  contend_json_arr_end(j);
  /* per tier: ports, mean and max stall and busy fractions, bytes sent */
  typedef struct agg {
    char name[64];
    int ports;
    double stall_sum, stall_max, busy_sum;
    uint64_t bytes;
  } agg;
  agg a[16];
  int na = 0;
  for (uint32_t c = 0; c < n->nchan; c++) {
    const sim_chan *ch = &n->chan[c];
    if (unconnected(n, c))
      continue;
    tier(n, c, tr, sizeof tr);
    int i = 0;
    while (i < na && strcmp(a[i].name, tr))
      i++;
    if (i == na) {
      if (na == 16)
        continue;
      memset(&a[na], 0, sizeof a[na]);
      snprintf(a[na].name, sizeof a[na].name, "%s", tr);
      na++;
    }
    const double s = (double)stall_now(n, ch) / (double)now;
    a[i].ports++;
    a[i].stall_sum += s;
    a[i].busy_sum += (double)ch->busy / (double)now;
    for (int v = 0; v < n->V; v++)
      a[i].bytes += n->cvc[(size_t)c * n->V + v].bytes;
    if (s > a[i].stall_max)
      a[i].stall_max = s;
  }
  contend_json_arr_begin(j, "by_tier");
  for (int i = 0; i < na; i++) {
    contend_json_obj_begin(j, NULL);
    contend_json_str(j, "tier", a[i].name);
    contend_json_int(j, "ports", a[i].ports);
    contend_json_double(j, "stall_fraction_mean", a[i].stall_sum / a[i].ports);
    contend_json_double(j, "stall_fraction_max", a[i].stall_max);
    contend_json_double(j, "busy_fraction_mean", a[i].busy_sum / a[i].ports);
    contend_json_uint(j, "xmit_data_bytes", a[i].bytes);
    contend_json_obj_end(j);
  }
  contend_json_arr_end(j);
  contend_json_obj_end(j);
  free(r);
}

static void release(sim_counters *k) {
  k->n->sample = NULL;
  k->n->sample_arg = NULL;
  free(k->prev);
  free(k);
}

int sim_counters_close(sim_counters *k, char *err, size_t errlen) {
  int rc = 0;
  if (k->f) {
    write_sample(k);
    rc = contend_out_commit(&k->out, err, errlen);
  }
  release(k);
  return rc;
}

void sim_counters_abandon(sim_counters *k) {
  if (!k)
    return;
  contend_out_abandon(&k->out);
  release(k);
}
