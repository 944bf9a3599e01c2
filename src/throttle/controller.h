/* The throttle's rate controller (seeds/netscope-ics21.md section 5,
 * eq. 13-15): one piece of C shared by the PMPI library
 * (libcontend-throttle.so) and the simulated NIC's pacing hook, so that
 * the same algorithm runs on real MPI and on the simulated fabric.
 *
 * Pure: no clock, no I/O, no MPI, no allocation.  The caller feeds it
 *   - one congestion signal per control window (ct_window): the fraction
 *     of the window the local NIC's injection into the network stalled
 *     (the paper's nic2hsn), in [0, 1];
 *   - each send (ct_pace): the time now and the bytes about to leave; it
 *     answers how long to wait first so that the sends average the
 *     current rate R.
 *
 * Rates are Gbit/s of payload.  The state is a few dozen bytes (the
 * library's budget is 1 KiB per process).
 *
 * Rate control (eq. 14-15), once per window with signal s:
 *   alpha <- (1 - g) alpha + g s
 *   R     <- R (1 - alpha / (2 + c_a))   when the window was congested
 *                                        (s > stall_threshold)
 *   R     <- R + increase                otherwise
 * bounded to [min_fraction x line, line].  The paper writes the condition
 * as "alpha > 0"; alpha is a moving average that never returns to 0 after
 * the first stall, so read literally the rate could only fall.  We cut on
 * a congested window, as DCQCN cuts on a congestion notification and lets
 * alpha decay otherwise.  dcqcn is the same controller with c_a = 0;
 * static holds R at a fixed rate; off never delays.
 *
 * Delay injection (eq. 13): the paper waits dT = (R_line - R_req) / B_nic
 * between consecutive sends, the time a message takes at the required
 * rate minus the time it takes at the line rate.  ct_pace computes the
 * same gap from the sends themselves: a send of b bytes reserves
 * 8 b / R of the sender's time, and the delay before a send is what is
 * left of the previous reservations; time the sender spent elsewhere
 * (computing, sending at the line rate) counts towards it, so R holds
 * whatever the line rate is (a blocking send at the line rate followed by
 * the next one waits exactly eq. 13's 8 b (1/R - 1/R_line)).  Time the
 * sender fell behind its reservations (a sleep that overshot) is made up
 * for up to CT_SLACK_S; an idle sender earns no burst beyond that.
 * ct_quantize turns a delay into whole microseconds the way the paper
 * does: 0.3 us becomes 1 us with probability 0.3 (mean preserved), with
 * the controller's own seeded random stream. */
#ifndef CONTEND_THROTTLE_CONTROLLER_H
#define CONTEND_THROTTLE_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "contend/rng.h"

/* Lag behind the reservations that later sends may make up for (s). */
#define CT_SLACK_S 0.001

typedef enum { CT_OFF, CT_STATIC, CT_DCQCN, CT_NETSCOPE } ct_mode;

typedef struct ct_config {
  ct_mode mode;
  double line_gbps;       /* R_line: the NIC's line rate (> 0) */
  double static_gbps;     /* CT_STATIC: the fixed rate */
  double static_fraction; /* CT_STATIC given as N%: fraction of line_gbps (0: use static_gbps) */
  double gain;            /* g of eq. 14, in (0, 1] */
  double alpha_init;      /* alpha before the first window, in [0, 1] */
  double ca;              /* c_a of eq. 15 (>= 0); CT_DCQCN uses 0 whatever this says */
  int ca_per_job;         /* c_a comes per job (JOB=C_A,...): ca is the bound job's */
  double increase_gbps;   /* additive increase per uncongested window */
  int increase_of_line;   /* increase_gbps is 1 % of line_gbps (kept so by ct_config_set_line) */
  double min_fraction;    /* lower bound of R, as a fraction of the line rate */
  double stall_threshold; /* a window whose signal exceeds this is congested */
  double window_s;        /* control window (> 0) */
} ct_config;

typedef struct ct_state {
  double alpha;     /* eq. 14 */
  double rate_gbps; /* R */
  double next_s;    /* pacing: the time the reservations made so far end */
  uint64_t windows; /* windows seen */
  uint64_t cuts;    /* windows that cut the rate */
  contend_rng rng;  /* probabilistic delays */
} ct_state;

/* Defaults of every field (mode off; see params in throttle_params.c). */
void ct_config_default(ct_config *c);

/* Parses a mode: "off", "static:RATE" (Gbit/s; "static:25%" for a share of
 * the line rate; a unit suffix Gbps/Gbit/s/Mbps is accepted), "dcqcn",
 * "netscope".  Returns 0, or -1 with one line in err. */
int ct_mode_parse(const char *text, ct_config *c, char *err, size_t errlen);
/* The mode as text ("static:25 Gbit/s" etc.), for tables and logs. */
void ct_mode_format(const ct_config *c, char *buf, size_t len);
/* Sets the line rate (a counter source may know it only after the options
 * are read) and, when the increase follows it, the increase. */
void ct_config_set_line(ct_config *c, double line_gbps);
/* Checks the numbers (ranges, static rate within the line rate): 0, or -1
 * with one line in err. */
int ct_config_check(const ct_config *c, char *err, size_t errlen);

/* Starts a controller at the line rate (static: its rate) with alpha_init and
 * the random stream (seed, stream). */
void ct_init(ct_state *s, const ct_config *c, uint64_t seed, uint64_t stream);

/* One control window ended with congestion signal `signal` (fraction of
 * the window stalled).  Returns 0, or -1 when the signal is not a number
 * in [0, 1] (the window is then ignored: state unchanged).  No effect for
 * off and static. */
int ct_window(ct_state *s, const ct_config *c, double signal);

/* The current rate as a fraction of the line rate (1 for off). */
double ct_fraction(const ct_state *s, const ct_config *c);

/* A send of `bytes` at time now_s: returns the delay to wait before it
 * (seconds, >= 0, unquantized) and reserves its share of time.  Always 0
 * for off. */
double ct_pace(ct_state *s, const ct_config *c, double now_s, double bytes);

/* Whole microseconds to wait for a delay of delay_s: floor(us), plus one
 * with probability equal to the fraction left. */
long ct_quantize_us(ct_state *s, double delay_s);

#endif
