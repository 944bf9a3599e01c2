/* The throttle's parameter table and its reading (see params.h). */
#include "params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const contend_param_def ct_param_defs[] = {
    {"throttle", CONTEND_P_STRING, "off", "",
     "rate control of every sender (seeds/netscope-ics21.md section 5): off | static:RATE (a "
     "fixed limit in Gbit/s, or N% of the line rate, as Cray's static rate control) | dcqcn "
     "(AIMD on the NIC's injection stalls, c_a = 0) | netscope (the same AIMD with the "
     "application's delay sensitivity c_a in the decrease)",
     1, 0},
    {"throttle_window_us", CONTEND_P_DOUBLE, "1000000", "us",
     "control window: one congestion signal and one rate update per window (the paper: 1 s; "
     "simulated runs last milliseconds: use tens of us)",
     1e-3, 1e12},
    {"throttle_gain", CONTEND_P_DOUBLE, "0.0625", "fraction",
     "g of eq. 14: weight of the newest window's stall fraction in alpha", 1e-6, 1},
    {"throttle_alpha_init", CONTEND_P_DOUBLE, "0", "fraction",
     "alpha of eq. 14 before the first window (DCTCP and DCQCN start at 1: the first congested "
     "window halves the rate; 0: alpha builds up over about 1/g windows)",
     0, 1},
    {"throttle_ca", CONTEND_P_STRING, "0", "",
     "delay sensitivity c_a of eq. 15 for netscope (dimensionless, >= 0; 'contend model show' "
     "reports it): one number, or per job JOB=C_A,JOB=C_A (jobs not named: 0)",
     1, 0},
    {"throttle_increase_gbps", CONTEND_P_DOUBLE, "0", "Gbit/s",
     "additive increase of the rate after a window without congestion (eq. 15's R + 1; 0: 1 % "
     "of the line rate, 1 Gbit/s on a 100 Gbit/s NIC)",
     0, 1e6},
    {"throttle_min_fraction", CONTEND_P_DOUBLE, "0.01", "fraction",
     "lowest rate the controller may set, as a share of the line rate", 1e-6, 1},
    {"throttle_stall_threshold", CONTEND_P_DOUBLE, "0.01", "fraction",
     "a window in which the NIC's injection stalled more than this share of the time is "
     "congested and cuts the rate",
     0, 0.999},
    {"throttle_line_gbps", CONTEND_P_DOUBLE, "0", "Gbit/s",
     "line rate of a NIC (0: the simulator's node_gbps; the library: the counter source's, "
     "else 100)",
     0, 1e6},
    {"throttle_signal", CONTEND_P_STRING, "stall", "",
     "simulator only: the NIC counter read as the congestion signal: stall (share of the window "
     "the NIC had a packet and no credit into its leaf router, the paper's nic2hsn) | occupancy "
     "(mean share of those injection credits in use) | blocked (share of the window the NIC's "
     "packet at the head of its leaf router's input waited for the network; unlike stall it "
     "sees senders that keep one packet in flight, which never run out of credits)",
     1, 0},
    {"throttle_log", CONTEND_P_FILE_OUT, "", "path",
     "write every control decision to this CSV (one row per window and sender)", 1, 0},
    CONTEND_PARAM_END};

int ct_config_from_params(const contend_params *p, double line_default_gbps, ct_config *c,
                          char *err, size_t errlen) {
  ct_config_default(c);
  if (ct_mode_parse(contend_param_str(p, "throttle"), c, err, errlen))
    return -1;
  c->window_s = contend_param_double(p, "throttle_window_us") * 1e-6;
  c->gain = contend_param_double(p, "throttle_gain");
  c->alpha_init = contend_param_double(p, "throttle_alpha_init");
  c->increase_gbps = contend_param_double(p, "throttle_increase_gbps");
  c->increase_of_line = !(c->increase_gbps > 0);
  c->min_fraction = contend_param_double(p, "throttle_min_fraction");
  c->stall_threshold = contend_param_double(p, "throttle_stall_threshold");
  const double line = contend_param_double(p, "throttle_line_gbps");
  ct_config_set_line(c, line > 0 ? line : line_default_gbps);
  double ca;
  if (ct_ca_for(contend_param_str(p, "throttle_ca"), NULL, &ca, err, errlen))
    return -1;
  c->ca_per_job = strchr(contend_param_str(p, "throttle_ca"), '=') != NULL;
  c->ca = c->ca_per_job ? 0 : ca; /* per job: each node's controller takes its job's */
  return ct_config_check(c, err, errlen);
}

static int parse_ca(const char *t, size_t n, double *ca) {
  char buf[64];
  if (!n || n >= sizeof buf)
    return -1;
  memcpy(buf, t, n);
  buf[n] = 0;
  char *end;
  const double v = strtod(buf, &end);
  if (end == buf || *end || !isfinite(v) || v < 0)
    return -1;
  *ca = v;
  return 0;
}

int ct_ca_for(const char *spec, const char *job, double *ca, char *err, size_t errlen) {
  *ca = 0;
  if (!strchr(spec, '=')) {
    if (parse_ca(spec, strlen(spec), ca)) {
      snprintf(err, errlen,
               "--throttle-ca '%s': expected a delay sensitivity >= 0, or JOB=C_A,... per job",
               spec);
      return -1;
    }
    return 0;
  }
  for (const char *t = spec; *t;) {
    const char *comma = strchr(t, ',');
    const size_t n = comma ? (size_t)(comma - t) : strlen(t);
    const char *eq = memchr(t, '=', n);
    double v;
    if (!eq || eq == t || parse_ca(eq + 1, n - (size_t)(eq + 1 - t), &v)) {
      snprintf(err, errlen,
               "--throttle-ca '%s': '%.*s' is not JOB=C_A with a delay sensitivity >= 0", spec,
               (int)n, t);
      return -1;
    }
    const size_t name = (size_t)(eq - t);
    for (const char *u = spec; u < t;) { /* the jobs named before this one */
      const size_t un = strcspn(u, ",");
      if (strcspn(u, "=") == name && !strncmp(u, t, name)) {
        snprintf(err, errlen, "--throttle-ca '%s': job '%.*s' is given twice", spec, (int)name, t);
        return -1;
      }
      u += un + 1;
    }
    if (job && strlen(job) == name && !strncmp(job, t, name))
      *ca = v;
    t += n + (comma ? 1 : 0);
  }
  return 0;
}
