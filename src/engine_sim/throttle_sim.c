/* The throttle on the simulated fabric: per-node controllers driven by NIC
 * injection stalls (contract in throttle_sim.h). */
#include "throttle_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../throttle/params.h"
#include "contend/files.h"

#define MAX_JOBS 256

typedef struct node_ctl {
  ct_state s;
  ct_config c;      /* the run's, with this node's c_a */
  sim_time count0;  /* the signal's counter at the start of the window (stall, blocked) */
  double level0;    /* occupancy: its integral at the start of the window */
  int job;          /* index in jobs[], -1: none; -2: not bound (no rank here) */
  double sum_frac;  /* sum over windows of the rate fraction */
  uint64_t windows; /* windows seen while bound */
  double delay_s;   /* delays injected before sends */
} node_ctl;

struct sim_throttle {
  sim_net *net;
  ct_config cfg;
  char *ca_spec;
  node_ctl *node;
  int nnodes;
  char *jobs[MAX_JOBS];
  int njobs;
  sim_time window;
  double buffer;
  int signal; /* --throttle-signal: index in signal_names */
  uint32_t timer_kind;
  contend_out log_out; /* the log's temporary */
  FILE *log;           /* log_out.f, NULL: no log */
};

static const char *const signal_names[] = {"stall", "occupancy", "blocked"};
enum { SIG_STALL, SIG_OCCUPANCY, SIG_BLOCKED, SIG_N };

int sim_throttle_config(const contend_params *opts, double node_gbps, ct_config *cfg, int *signal,
                        char *err, size_t errlen) {
  const char *sig = contend_param_str(opts, "throttle_signal");
  for (*signal = 0; *signal < SIG_N && strcmp(sig, signal_names[*signal]); ++*signal)
    ;
  if (*signal == SIG_N) {
    snprintf(err, errlen,
             "--throttle-signal '%s' is not valid: expected stall, occupancy or blocked", sig);
    return -1;
  }
  return ct_config_from_params(opts, node_gbps, cfg, err, errlen);
}

static void arm(sim_throttle *t) {
  sim_net_timer_passive(t->net, sim_net_now(t->net) + t->window, t->timer_kind, 0);
}

int sim_throttle_open(sim_throttle **out, sim_net *net, const ct_config *cfg, int signal,
                      const char *ca_spec, const char *log_path, uint32_t timer_kind, char *err,
                      size_t errlen) {
  *out = NULL;
  if (cfg->mode == CT_OFF)
    return 0;
  sim_throttle *t = calloc(1, sizeof *t);
  const int nn = sim_net_nodes(net);
  if (!t || !(t->node = calloc((size_t)nn, sizeof *t->node)) || !(t->ca_spec = strdup(ca_spec)))
    contend_fail("out of memory (throttle)");
  t->net = net;
  t->cfg = *cfg;
  t->nnodes = nn;
  t->timer_kind = timer_kind;
  t->window = (sim_time)(cfg->window_s * SIM_PS_PER_S + 0.5);
  t->buffer = sim_net_buffer_bytes(net);
  t->signal = signal;
  if (!t->window)
    t->window = 1;
  for (int i = 0; i < nn; i++) {
    node_ctl *x = &t->node[i];
    x->c = *cfg;
    x->job = -2;
    ct_init(&x->s, &x->c, 0, (uint64_t)i);
  }
  if (log_path && *log_path) {
    if (contend_out_open(&t->log_out, "--throttle-log", log_path, err, errlen)) {
      sim_throttle_close(t, 0, NULL, 0);
      return -1;
    }
    t->log = t->log_out.f;
    fputs("time_s,node,job,signal,alpha,rate_gbps\n", t->log);
  }
  if (cfg->mode == CT_DCQCN || cfg->mode == CT_NETSCOPE) {
    for (int i = 0; i < nn; i++)
      t->node[i].count0 = signal == SIG_STALL ? sim_nic_stall(net, i) : sim_nic_blocked(net, i);
    arm(t);
  }
  *out = t;
  return 0;
}

void sim_throttle_bind(sim_throttle *t, int node, const char *job) {
  if (!t || node < 0 || node >= t->nnodes)
    return;
  node_ctl *x = &t->node[node];
  x->job = -1;
  if (!job)
    return;
  int k = 0;
  while (k < t->njobs && strcmp(t->jobs[k], job))
    k++;
  if (k == t->njobs) {
    if (t->njobs == MAX_JOBS)
      return; /* summarised under no job; the controller still runs */
    if (!(t->jobs[k] = strdup(job)))
      contend_fail("out of memory (throttle)");
    t->njobs++;
  }
  x->job = k;
  char err[256];
  ct_ca_for(t->ca_spec, job, &x->c.ca, err, sizeof err); /* validated at option time */
}

sim_time sim_throttle_delay(sim_throttle *t, int node, uint64_t bytes) {
  if (!t || node < 0 || node >= t->nnodes)
    return 0;
  node_ctl *x = &t->node[node];
  const double d = ct_pace(&x->s, &x->c, (double)sim_net_now(t->net) / SIM_PS_PER_S, (double)bytes);
  x->delay_s += d;
  return (sim_time)(d * SIM_PS_PER_S + 0.5);
}

void sim_throttle_window(sim_throttle *t) {
  const sim_time now = sim_net_now(t->net);
  const double w = (double)t->window;
  for (int i = 0; i < t->nnodes; i++) {
    node_ctl *x = &t->node[i];
    double signal;
    if (t->signal == SIG_OCCUPANCY) {
      const double occ = sim_nic_occupancy(t->net, i);
      signal = (occ - x->level0) / (w * t->buffer);
      x->level0 = occ;
    } else {
      const sim_time v =
          t->signal == SIG_STALL ? sim_nic_stall(t->net, i) : sim_nic_blocked(t->net, i);
      signal = (double)(v - x->count0) / w;
      x->count0 = v;
    }
    if (signal > 1) /* a stall that began before the window was counted when it ended */
      signal = 1;
    ct_window(&x->s, &x->c, signal);
    if (x->job == -2)
      continue;
    x->sum_frac += ct_fraction(&x->s, &x->c);
    x->windows++;
    if (t->log)
      fprintf(t->log, "%.9f,%d,%s,%.6f,%.6f,%.6g\n", (double)now / SIM_PS_PER_S, i,
              x->job >= 0 ? t->jobs[x->job] : "", signal, x->s.alpha, x->s.rate_gbps);
  }
  if (sim_net_pending(t->net)) /* the fabric still has work: keep controlling */
    arm(t);
}

void sim_throttle_json(const sim_throttle *t, contend_json *j) {
  if (!t)
    return;
  char mode[96];
  ct_mode_format(&t->cfg, mode, sizeof mode);
  contend_json_obj_begin(j, "throttle");
  contend_json_str(j, "mode", mode);
  contend_json_double(j, "window_us", t->cfg.window_s * 1e6);
  contend_json_double(j, "gain", t->cfg.gain);
  contend_json_double(j, "alpha_init", t->cfg.alpha_init);
  contend_json_double(j, "increase_gbps", t->cfg.increase_gbps);
  contend_json_double(j, "min_fraction", t->cfg.min_fraction);
  contend_json_double(j, "stall_threshold", t->cfg.stall_threshold);
  contend_json_double(j, "line_gbps", t->cfg.line_gbps);
  contend_json_str(j, "ca", t->ca_spec);
  contend_json_str(j, "signal", signal_names[t->signal]);
  contend_json_arr_begin(j, "jobs");
  for (int k = -1; k < t->njobs; k++) {
    double sum = 0, ca = 0, fraction = 1;
    uint64_t win = 0, cuts = 0;
    double delay = 0;
    int nodes = 0;
    for (int i = 0; i < t->nnodes; i++) {
      const node_ctl *x = &t->node[i];
      if (x->job != k)
        continue;
      nodes++;
      sum += x->sum_frac;
      win += x->windows;
      cuts += x->s.cuts;
      delay += x->delay_s;
      ca = x->c.ca;
      fraction = ct_fraction(&x->s, &x->c);
    }
    if (!nodes)
      continue;
    contend_json_obj_begin(j, NULL);
    contend_json_str(j, "job", k >= 0 ? t->jobs[k] : "");
    contend_json_int(j, "nodes", nodes);
    contend_json_double(j, "ca", t->cfg.mode == CT_NETSCOPE ? ca : 0);
    /* static and off close no window: their rate is constant */
    contend_json_double(j, "mean_rate_fraction", win ? sum / (double)win : fraction);
    contend_json_uint(j, "windows", win);
    contend_json_uint(j, "rate_cuts", cuts);
    contend_json_double(j, "injected_delay_s", delay);
    contend_json_obj_end(j);
  }
  contend_json_arr_end(j);
  contend_json_obj_end(j);
}

int sim_throttle_close(sim_throttle *t, int commit, char *err, size_t errlen) {
  if (!t)
    return 0;
  int rc = 0;
  if (t->log && commit)
    rc = contend_out_commit(&t->log_out, err, errlen);
  else
    contend_out_abandon(&t->log_out);
  for (int k = 0; k < t->njobs; k++)
    free(t->jobs[k]);
  free(t->ca_spec);
  free(t->node);
  free(t);
  return rc;
}
