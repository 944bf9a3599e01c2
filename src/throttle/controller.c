/* The throttle's rate controller (eq. 13-15); contract in controller.h. */
#include "controller.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ct_config_default(ct_config *c) {
  *c = (ct_config){.mode = CT_OFF,
                   .line_gbps = 100,
                   .gain = 0.0625,
                   .alpha_init = 0,
                   .ca = 0,
                   .increase_gbps = 1,
                   .min_fraction = 0.01,
                   .stall_threshold = 0.01,
                   .window_s = 1};
}

/* "25", "25Gbps", "25 Gbit/s", "2500Mbps", "25%": Gbit/s or a fraction. */
static int parse_rate(const char *t, double *gbps, double *fraction) {
  char *end;
  const double v = strtod(t, &end);
  if (end == t || !isfinite(v) || v <= 0)
    return -1;
  while (*end == ' ')
    end++;
  *gbps = 0;
  *fraction = 0;
  if (!strcmp(end, "%")) {
    if (v > 100)
      return -1;
    *fraction = v / 100;
  } else if (!*end || !strcasecmp(end, "gbps") || !strcasecmp(end, "gbit/s") ||
             !strcasecmp(end, "gbit")) {
    *gbps = v;
  } else if (!strcasecmp(end, "mbps") || !strcasecmp(end, "mbit/s") || !strcasecmp(end, "mbit")) {
    *gbps = v / 1000;
  } else {
    return -1;
  }
  return 0;
}

void ct_config_set_line(ct_config *c, double line_gbps) {
  c->line_gbps = line_gbps;
  if (c->increase_of_line)
    c->increase_gbps = 0.01 * line_gbps;
}

int ct_mode_parse(const char *text, ct_config *c, char *err, size_t errlen) {
  if (!strcmp(text, "off")) {
    c->mode = CT_OFF;
  } else if (!strcmp(text, "dcqcn")) {
    c->mode = CT_DCQCN;
  } else if (!strcmp(text, "netscope")) {
    c->mode = CT_NETSCOPE;
  } else if (!strncmp(text, "static:", 7)) {
    if (parse_rate(text + 7, &c->static_gbps, &c->static_fraction)) {
      snprintf(err, errlen,
               "throttle mode '%s': the static rate must be a positive number of Gbit/s "
               "(static:25, static:2500Mbps) or a share of the line rate (static:25%%)",
               text);
      return -1;
    }
    c->mode = CT_STATIC;
  } else {
    snprintf(err, errlen,
             "throttle mode '%s' is not valid: expected off, static:RATE (Gbit/s, or N%% of the "
             "line rate), dcqcn or netscope",
             text);
    return -1;
  }
  return 0;
}

static double static_rate(const ct_config *c) {
  return c->static_fraction > 0 ? c->static_fraction * c->line_gbps : c->static_gbps;
}

void ct_mode_format(const ct_config *c, char *buf, size_t len) {
  switch (c->mode) {
  case CT_OFF:
    snprintf(buf, len, "off");
    break;
  case CT_STATIC:
    if (c->static_fraction > 0)
      snprintf(buf, len, "static:%g%%", 100 * c->static_fraction);
    else
      snprintf(buf, len, "static:%g Gbit/s", c->static_gbps);
    break;
  case CT_DCQCN:
    snprintf(buf, len, "dcqcn");
    break;
  case CT_NETSCOPE:
    if (c->ca_per_job)
      snprintf(buf, len, "netscope (c_a per job)");
    else
      snprintf(buf, len, "netscope (c_a %g)", c->ca);
    break;
  }
}

int ct_config_check(const ct_config *c, char *err, size_t errlen) {
  if (!(c->line_gbps > 0) || !isfinite(c->line_gbps))
    snprintf(err, errlen, "throttle: the line rate must be > 0 Gbit/s (got %g)", c->line_gbps);
  else if (!(c->window_s > 0) || !isfinite(c->window_s))
    snprintf(err, errlen, "throttle: the control window must be > 0 s (got %g)", c->window_s);
  else if (!(c->gain > 0 && c->gain <= 1))
    snprintf(err, errlen, "throttle: the gain g must be in (0, 1] (got %g)", c->gain);
  else if (!(c->alpha_init >= 0 && c->alpha_init <= 1))
    snprintf(err, errlen, "throttle: the initial alpha must be in [0, 1] (got %g)", c->alpha_init);
  else if (!(c->ca >= 0) || !isfinite(c->ca))
    snprintf(err, errlen, "throttle: the delay sensitivity c_a must be >= 0 (got %g)", c->ca);
  else if (!(c->increase_gbps >= 0) || !isfinite(c->increase_gbps))
    snprintf(err, errlen, "throttle: the rate increase must be >= 0 Gbit/s (got %g)",
             c->increase_gbps);
  else if (!(c->min_fraction > 0 && c->min_fraction <= 1))
    snprintf(err, errlen, "throttle: the minimum rate must be in (0, 1] of the line (got %g)",
             c->min_fraction);
  else if (!(c->stall_threshold >= 0 && c->stall_threshold < 1))
    snprintf(err, errlen, "throttle: the stall threshold must be in [0, 1) (got %g)",
             c->stall_threshold);
  else if (c->mode == CT_STATIC && static_rate(c) > c->line_gbps * (1 + 1e-12))
    snprintf(err, errlen, "throttle: static rate %g Gbit/s is above the line rate %g Gbit/s",
             static_rate(c), c->line_gbps);
  else
    return 0;
  return -1;
}

void ct_init(ct_state *s, const ct_config *c, uint64_t seed, uint64_t stream) {
  memset(s, 0, sizeof *s);
  s->rate_gbps = c->mode == CT_STATIC ? static_rate(c) : c->line_gbps;
  s->alpha = c->alpha_init;
  s->next_s = -INFINITY;
  contend_rng_init(&s->rng, seed, 0x7407, stream, 0, 0);
}

int ct_window(ct_state *s, const ct_config *c, double signal) {
  if (!(signal >= 0 && signal <= 1))
    return -1; /* NaN, negative, above 1: not a fraction of a window */
  s->windows++;
  if (c->mode != CT_DCQCN && c->mode != CT_NETSCOPE)
    return 0;
  const double g = c->gain, ca = c->mode == CT_DCQCN ? 0 : c->ca;
  s->alpha = (1 - g) * s->alpha + g * signal; /* eq. 14 */
  double r = s->rate_gbps;
  if (signal > c->stall_threshold) { /* eq. 15, decrease */
    r *= 1 - s->alpha / (2 + ca);
    s->cuts++;
  } else { /* eq. 15, increase */
    r += c->increase_gbps;
  }
  const double lo = c->min_fraction * c->line_gbps;
  s->rate_gbps = r < lo ? lo : r > c->line_gbps ? c->line_gbps : r;
  return 0;
}

double ct_fraction(const ct_state *s, const ct_config *c) {
  if (c->mode == CT_OFF)
    return 1;
  return s->rate_gbps / c->line_gbps;
}

double ct_pace(ct_state *s, const ct_config *c, double now_s, double bytes) {
  if (c->mode == CT_OFF || !(bytes > 0))
    return 0;
  double start = s->next_s;
  if (start < now_s - CT_SLACK_S)
    start = now_s - CT_SLACK_S;
  const double delay = start > now_s ? start - now_s : 0;
  s->next_s = start + 8 * bytes / (s->rate_gbps * 1e9);
  return delay;
}

long ct_quantize_us(ct_state *s, double delay_s) {
  if (!(delay_s > 0))
    return 0;
  const double us = delay_s * 1e6;
  const double whole = floor(us);
  return (long)whole + (contend_rng_uniform(&s->rng) < us - whole ? 1 : 0);
}
