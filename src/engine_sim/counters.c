/* Port counters of the simulated fabric: the interval CSV and the results
 * summary (see counters.h for the columns and their meaning). */
#include "counters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "contend/files.h"
#include "contend/strbuf.h"
#include "net_impl.h"

typedef struct last {
  uint64_t bytes;
  sim_time stall;
  double occ_int; /* per port: sum over VCs */
} last;

struct sim_counters {
  sim_net *n;
  contend_group *world; /* the processes of n's parts (NULL: n is the whole fabric) */
  int csv;              /* a CSV is written (over processes, by rank 0) */
  contend_out out;      /* the CSV's temporary (out.f NULL: none in this process) */
  FILE *f;              /* out.f */
  sim_time interval, t_last;
  last *prev;          /* per channel */
  contend_strbuf rows; /* over processes: this part's rows of a run of ports */
  uint64_t max_bytes;  /* the CSV's bound */
  sim_time stopped;    /* when a sample was first left out (0: none) */
};

/* Ports per gather to rank 0 over processes: what rank 0 holds at once
 * is the rows of this many ports (under 10 MiB), not a whole sample. */
#define PORTS_PER_GATHER 16384u

static const char *component(const sim_net *n, uint32_t c, char *buf, size_t len) {
  return sim_channel_component(n->t, c, buf, len);
}

static int unconnected(const sim_net *n, uint32_t c) {
  return c < (uint32_t)n->t->nports && n->t->peer[c] == SIM_UNCONNECTED;
}

/* A port this process counts: its channel's source is in this part. */
static int counted_here(const sim_counters *k, uint32_t c) {
  return sim_part_of_channel(k->n, c) == k->n->me; /* (a whole fabric: part 0, me 0) */
}

static int local_port(const sim_net *n, uint32_t c) { return sim_channel_port(n->t, c); }

/* Brings every occupancy integral up to `now` (they are lazy; now is at
 * or after every event this process ran). */
static void settle(sim_net *n, sim_time now) {
  for (size_t i = 0; i < (size_t)n->nchan * n->V; i++) {
    sim_cvc *v = &n->cvc[i];
    v->occ_int += (double)((int64_t)n->cfg.buffer_bytes - v->credit) * (double)(now - v->occ_last);
    v->occ_last = now;
  }
}

/* Stall time up to `now`, a stall still in progress included. */
static sim_time stall_at(const sim_chan *ch, sim_time now) {
  return ch->stall + (ch->stalled ? now - ch->stall_since : 0);
}

/* The simulated time of the whole fabric: this process's, or over
 * processes the latest of the parts' (collective). */
static sim_time fabric_now(const sim_counters *k) {
  int64_t t = (int64_t)k->n->des.now;
  if (k->world)
    contend_gallreduce(k->world, &t, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
  return (sim_time)t;
}

/* Appends port c's rows at `now` to o when the port sent or stalled since
 * the last sample (dt ago), and remembers its figures for the next. */
static void port_rows(sim_counters *k, uint32_t c, sim_time now, sim_time dt, contend_strbuf *o) {
  const sim_net *n = k->n;
  const sim_chan *ch = &n->chan[c];
  uint64_t bytes = 0, pkts = 0;
  double occ = 0;
  for (int v = 0; v < n->V; v++) {
    const sim_cvc *x = &n->cvc[(size_t)c * n->V + v];
    bytes += x->bytes;
    pkts += x->pkts;
    occ += x->occ_int;
  }
  const sim_time stall = stall_at(ch, now);
  last *p = &k->prev[c];
  if (bytes == p->bytes && stall == p->stall) {
    p->occ_int = occ;
    return;
  }
  const double ts = (double)now / SIM_PS_PER_S;
  char name[64];
  component(n, c, name, sizeof name);
  const int port = local_port(n, c);
  contend_sb_printf(o, "%.9f,%s,%d,,xmit_data_bytes,%llu\n", ts, name, port,
                    (unsigned long long)bytes);
  contend_sb_printf(o, "%.9f,%s,%d,,xmit_packets,%llu\n", ts, name, port, (unsigned long long)pkts);
  contend_sb_printf(o, "%.9f,%s,%d,,xmit_wait_ns,%.3f\n", ts, name, port, (double)stall / 1000.0);
  contend_sb_printf(o, "%.9f,%s,%d,,busy_ns,%.3f\n", ts, name, port, (double)ch->busy / 1000.0);
  if (ch->dst_router >= 0)
    contend_sb_printf(o, "%.9f,%s,%d,,occupancy_bytes,%.1f\n", ts, name, port,
                      dt ? (occ - p->occ_int) / (double)dt : 0.0);
  if (n->V > 1)
    for (int v = 0; v < n->V; v++) {
      const sim_cvc *x = &n->cvc[(size_t)c * n->V + v];
      contend_sb_printf(o, "%.9f,%s,%d,%d,xmit_data_bytes,%llu\n", ts, name, port, v,
                        (unsigned long long)x->bytes);
      contend_sb_printf(o, "%.9f,%s,%d,%d,xmit_wait_ns,%.3f\n", ts, name, port, v,
                        (double)x->stall / 1000.0);
    }
  p->bytes = bytes;
  p->stall = stall;
  p->occ_int = occ;
}

/* The CSV's writer (the one process, or rank 0): when the sample just
 * written (from `before` bytes on) took the file past its bound, it is
 * taken back and sampling stops. */
static void bound(sim_counters *k, long before, sim_time now) {
  const long after = ftell(k->f);
  if (before < 0 || after < 0 || (uint64_t)after <= k->max_bytes)
    return;
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

/* Over processes, collective: ports [lo, hi) of every part go to rank 0,
 * which writes them in port order (the order of one process).  A part
 * sends, per port with rows, "PORT LENGTH\n" and the rows. */
static void gather_ports(sim_counters *k, uint32_t lo, uint32_t hi, sim_time now, sim_time dt) {
  sim_net *n = k->n;
  contend_strbuf one = {0};
  k->rows.len = 0;
  for (uint32_t c = lo; c < hi; c++) {
    if (unconnected(n, c) || !counted_here(k, c))
      continue;
    one.len = 0;
    port_rows(k, c, now, dt, &one);
    if (one.len)
      contend_sb_printf(&k->rows, "%u %zu\n%.*s", c, one.len, (int)one.len, one.s);
  }
  contend_sb_free(&one);
  const int P = k->world->size;
  size_t *counts = malloc(sizeof *counts * (size_t)P);
  if (!counts)
    contend_fail("out of memory (counters)");
  char *all = k->world->ops->gatherv(k->world, k->rows.s ? k->rows.s : "", k->rows.len, counts);
  if (k->world->rank == 0) {
    typedef struct cursor {
      const char *at, *end, *rows;
      unsigned long c;
      size_t len;
    } cursor;
    cursor *u = malloc(sizeof *u * (size_t)P);
    if (!u)
      contend_fail("out of memory (counters)");
    const char *at = all;
    for (int q = 0; q < P; q++) {
      u[q] = (cursor){.at = at, .end = at + counts[q]};
      at += counts[q];
    }
    for (uint32_t c = lo; c < hi; c++) {
      cursor *x = &u[sim_part_of_channel(n, c)];
      if (x->at < x->end && !x->rows) { /* the part's next port: its header */
        char *e;
        x->c = strtoul(x->at, &e, 10);
        x->len = strtoul(e, &e, 10);
        x->rows = e + 1;
      }
      if (x->rows && x->c == c) {
        fwrite(x->rows, 1, x->len, k->f);
        x->at = x->rows + x->len;
        x->rows = NULL;
      }
    }
    for (int q = 0; q < P; q++)
      if (u[q].at != u[q].end)
        contend_fail("internal error: --counters rows of part %d out of port order", q);
    free(u);
  }
  free(all);
  free(counts);
}

/* A sample of the whole fabric at `now` (collective over processes): the
 * rows of the ports that sent or stalled since the last.  *more: in,
 * whether this process has work left; out, whether any has. */
static void take_sample(sim_counters *k, sim_time now, int *more) {
  sim_net *n = k->n;
  if (k->csv && !k->stopped) {
    settle(n, now);
    const sim_time dt = now - k->t_last;
    const long before = k->f ? ftell(k->f) : 0;
    if (k->world) {
      for (uint32_t lo = 0; lo < n->nchan; lo += PORTS_PER_GATHER)
        gather_ports(k, lo, n->nchan - lo < PORTS_PER_GATHER ? n->nchan : lo + PORTS_PER_GATHER,
                     now, dt);
    } else {
      contend_strbuf one = {0};
      for (uint32_t c = 0; c < n->nchan; c++) {
        if (unconnected(n, c))
          continue;
        one.len = 0;
        port_rows(k, c, now, dt, &one);
        if (one.len)
          fwrite(one.s, 1, one.len, k->f);
      }
      contend_sb_free(&one);
    }
    k->t_last = now;
    if (k->f)
      bound(k, before, now);
  }
  if (k->world) { /* every process: whether any has work, and when rank 0 stopped */
    int64_t v[2] = {*more, (int64_t)k->stopped};
    contend_gallreduce(k->world, v, 2, CONTEND_DT_INT64, CONTEND_OP_MAX);
    *more = (int)v[0];
    k->stopped = (sim_time)v[1];
  }
}

/* Whether this part of the fabric has work left once the sample being
 * taken is done: events pending, packets or credits on their way to
 * another part, or credits on their way back to one of its ports.
 * (Credits on their way count, although landing makes an event only at
 * a port that waits for them: whether the port waits may be known only
 * in another part, and this way the answer for the whole fabric is the
 * same in one process and over several.) */
static int work_left(const sim_net *n) {
  if (sim_des_pending(&n->des))
    return 1;
  for (int q = 0; q < n->parts; q++) {
    size_t len;
    sim_net_outbox(n, q, &len);
    if (len)
      return 1;
  }
  for (uint32_t c = 0; c < n->nchan; c++) {
    const sim_chan *ch = &n->chan[c];
    const sim_time last = sim_cred_last_t(n, ch);
    if (last != SIM_NEVER && last > n->des.now)
      return 1;
  }
  return 0;
}

/* The next sample at now + interval: a passive event (it wakes no rank,
 * sim_net_pending_active leaves it out). */
static void next_sample(sim_net *n, sim_time interval) {
  n->passive++;
  sim_des_push(&n->des, n->des.now + interval, EV_SAMPLE, 0);
}

/* The sample event: the timer runs in every part at the same times, so
 * over processes every part takes every sample (the collective in it is
 * made by all, in the same order, inside the same window). */
static void on_sample(void *arg) {
  sim_counters *k = arg;
  sim_net *n = k->n;
  int more = k->interval && work_left(n);
  take_sample(k, n->des.now, &more);
  if (more) /* the fabric still has work: keep sampling */
    next_sample(n, k->interval);
}

int sim_counters_open(sim_counters **out, sim_net *n, contend_group *world, const char *path,
                      sim_time interval, uint64_t max_bytes, char *err, size_t errlen) {
  sim_counters *k = calloc(1, sizeof *k);
  if (!k || !(k->prev = calloc(n->nchan, sizeof *k->prev)))
    contend_fail("out of memory (counters)");
  k->n = n;
  k->world = world;
  k->interval = interval;
  k->max_bytes = max_bytes;
  k->csv = path != NULL;
  int bad = 0;
  if (path && (!world || world->rank == 0)) {
    bad = contend_out_open(&k->out, "--counters", path, err, errlen) != 0;
    if (!bad) {
      k->f = k->out.f;
      fputs("time_s,component,port,vc,counter,value\n", k->f);
    }
  }
  if (world) { /* the same verdict in every process */
    int64_t b = bad;
    contend_gallreduce(world, &b, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
    if (b && !bad)
      snprintf(err, errlen, "--counters %s: refused on rank 0", path);
    bad = b != 0;
  }
  if (bad) {
    free(k->prev);
    free(k);
    return -1;
  }
  n->sample = on_sample;
  n->sample_arg = k;
  if (interval)
    next_sample(n, interval);
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

/* Per port at `now`: stall, busy time and bytes sent (iv, 3 a port) and
 * the occupancy integral (occ), in port order.  Over processes each part
 * fills its own ports and rank 0 gets the sums (collective; elsewhere
 * they are the part's alone).  The caller frees both. */
enum { TOT_STALL, TOT_BUSY, TOT_BYTES, TOT_N };
size_t sim_counters_totals_len(const sim_counters *k) {
  return (size_t)k->n->nchan * TOT_N * sizeof(int64_t) + (size_t)k->n->nchan * sizeof(double);
}

/* This part's totals at now (this process's time, or later) into out. */
static void totals_at(sim_counters *k, sim_time now, void *out) {
  sim_net *n = k->n;
  settle(n, now);
  int64_t *iv = out;
  double *occ = (double *)(iv + (size_t)n->nchan * TOT_N);
  memset(out, 0, sim_counters_totals_len(k));
  for (uint32_t c = 0; c < n->nchan; c++) {
    if (!counted_here(k, c))
      continue;
    const sim_chan *ch = &n->chan[c];
    int64_t *t = iv + (size_t)c * TOT_N;
    t[TOT_STALL] = (int64_t)stall_at(ch, now);
    t[TOT_BUSY] = (int64_t)ch->busy;
    for (int v = 0; v < n->V; v++) {
      t[TOT_BYTES] += (int64_t)n->cvc[(size_t)c * n->V + v].bytes;
      occ[c] += n->cvc[(size_t)c * n->V + v].occ_int;
    }
  }
}

void sim_counters_totals(sim_counters *k, void *out) { totals_at(k, k->n->des.now, out); }

void sim_counters_totals_add(const sim_counters *k, void *acc, const void *part) {
  const size_t ni = (size_t)k->n->nchan * TOT_N, nd = k->n->nchan;
  int64_t *ai = acc;
  const int64_t *pi = part;
  for (size_t i = 0; i < ni; i++)
    ai[i] += pi[i];
  double *ad = (double *)(ai + ni);
  const double *pd = (const double *)(pi + ni);
  for (size_t i = 0; i < nd; i++)
    ad[i] += pd[i];
}

/* The whole fabric's totals at now (over processes, collective: a port
 * is one part's, so the sums are its figures exactly); the caller frees. */
static int64_t *port_totals(sim_counters *k, sim_time now) {
  sim_net *n = k->n;
  int64_t *iv = malloc(sim_counters_totals_len(k) + sizeof *iv);
  if (!iv)
    contend_fail("out of memory (counters)");
  totals_at(k, now, iv);
  if (!k->world)
    return iv;
  double *occ = (double *)(iv + (size_t)n->nchan * TOT_N);
  const size_t step = 1u << 24;
  for (size_t at = 0; at < (size_t)n->nchan * TOT_N; at += step)
    contend_greduce(
        k->world, iv + at,
        (int)((size_t)n->nchan * TOT_N - at < step ? (size_t)n->nchan * TOT_N - at : step),
        CONTEND_DT_INT64, CONTEND_OP_SUM);
  for (size_t at = 0; at < n->nchan; at += step)
    contend_greduce(k->world, occ + at, (int)(n->nchan - at < step ? n->nchan - at : step),
                    CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  return iv;
}

static void summary(sim_counters *k, contend_json *j, int top, sim_time t_now, const int64_t *iv,
                    const double *occ);

void sim_counters_summary_json(sim_counters *k, contend_json *j, int top) {
  const sim_time t_now = fabric_now(k);
  int64_t *iv = port_totals(k, t_now);
  summary(k, j, top, t_now, iv, (const double *)(iv + (size_t)k->n->nchan * TOT_N));
  free(iv);
}

void sim_counters_summary_json_of(sim_counters *k, contend_json *j, int top, sim_time t,
                                  const void *totals) {
  const int64_t *iv = totals;
  summary(k, j, top, t, iv, (const double *)(iv + (size_t)k->n->nchan * TOT_N));
}

static void summary(sim_counters *k, contend_json *j, int top, sim_time t_now, const int64_t *iv,
                    const double *occ) {
  sim_net *n = k->n;
  const sim_time now = t_now ? t_now : 1;
  rank_item *r = malloc(sizeof *r * (n->nchan + 1));
  if (!r)
    contend_fail("out of memory (counters)");
  for (uint32_t c = 0; c < n->nchan; c++)
    r[c] = (rank_item){c, (sim_time)iv[(size_t)c * TOT_N + TOT_STALL]};
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
    const int64_t *t = iv + (size_t)c * TOT_N;
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
    contend_json_double(j, "busy_fraction", (double)t[TOT_BUSY] / (double)now);
    contend_json_uint(j, "xmit_data_bytes", (uint64_t)t[TOT_BYTES]);
    contend_json_double(j, "occupancy_bytes_mean", ch->dst_router >= 0 ? occ[c] / (double)now : 0);
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
    if (unconnected(n, c))
      continue;
    const int64_t *t = iv + (size_t)c * TOT_N;
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
    const double s = (double)t[TOT_STALL] / (double)now;
    a[i].ports++;
    a[i].stall_sum += s;
    a[i].busy_sum += (double)t[TOT_BUSY] / (double)now;
    a[i].bytes += (uint64_t)t[TOT_BYTES];
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
  contend_sb_free(&k->rows);
  free(k->prev);
  free(k);
}

int sim_counters_close(sim_counters *k, char *err, size_t errlen) {
  int rc = 0;
  if (k->csv) {
    int more = 0;
    take_sample(k, fabric_now(k), &more);
    if (k->f)
      rc = contend_out_commit(&k->out, err, errlen);
    if (k->world) { /* the same status in every process */
      int64_t bad = rc != 0;
      contend_gallreduce(k->world, &bad, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
      if (bad && !rc)
        snprintf(err, errlen, "--counters: the CSV could not be written (on rank 0)");
      rc = bad ? -1 : 0;
    }
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
