/* Unit tests of the throttle's controller (src/throttle/controller.c):
 * eq. 14-15 against sequences computed by hand, the pacing of eq. 13, the
 * probabilistic microsecond delays, mode and c_a parsing. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../src/throttle/controller.h"
#include "../../src/throttle/params.h"

#include "check.h"

static int near(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b) + 1e-12; }

static ct_config aimd(ct_mode mode, double ca) {
  ct_config c;
  ct_config_default(&c);
  c.mode = mode;
  c.line_gbps = 100;
  c.gain = 0.5;
  c.ca = ca;
  c.increase_gbps = 1;
  c.min_fraction = 0.01;
  c.stall_threshold = 0.0;
  return c;
}

/* Signals 0.4, 0.4, 0, 0.8 with g = 1/2 (by hand):
 *   alpha: 0.2, 0.3, 0.15, 0.475
 *   dcqcn (c_a 0):    R = 100 (1 - 0.2/2) = 90; 90 (1 - 0.3/2) = 76.5; 77.5;
 *                     77.5 (1 - 0.475/2) = 59.09375
 *   netscope c_a = 2: R = 100 (1 - 0.2/4) = 95; 95 (1 - 0.3/4) = 87.875; 88.875;
 *                     88.875 (1 - 0.475/4) = 78.32109375 */
static void test_sequences(void) {
  const double sig[] = {0.4, 0.4, 0, 0.8};
  const double alpha[] = {0.2, 0.3, 0.15, 0.475};
  const double dcqcn[] = {90, 76.5, 77.5, 59.09375};
  const double netscope[] = {95, 87.875, 88.875, 78.32109375};
  ct_config cd = aimd(CT_DCQCN, 5), cn = aimd(CT_NETSCOPE, 2);
  ct_state sd, sn;
  ct_init(&sd, &cd, 1, 0);
  ct_init(&sn, &cn, 1, 0);
  CHECK(sd.rate_gbps == 100 && sn.rate_gbps == 100 && sd.alpha == 0);
  for (int i = 0; i < 4; i++) {
    CHECK(ct_window(&sd, &cd, sig[i]) == 0);
    CHECK(ct_window(&sn, &cn, sig[i]) == 0);
    CHECK(near(sd.alpha, alpha[i], 1e-12) && near(sn.alpha, alpha[i], 1e-12));
    CHECK(near(sd.rate_gbps, dcqcn[i], 1e-12));
    CHECK(near(sn.rate_gbps, netscope[i], 1e-12));
  }
  CHECK(sd.cuts == 3 && sd.windows == 4);
  CHECK(near(ct_fraction(&sd, &cd), 0.5909375, 1e-12));
}

/* alpha_init 1 (DCTCP's and DCQCN's start), g = 1/2, signals 0.4 then 0:
 *   alpha 0.5 + 0.2 = 0.7: dcqcn 100 (1 - 0.7/2) = 65, netscope c_a 2
 *   100 (1 - 0.7/4) = 82.5; then alpha 0.35, R + 1: 66 and 83.5.
 * Out of [0, 1] is refused. */
static void test_alpha_init(void) {
  ct_config cd = aimd(CT_DCQCN, 0), cn = aimd(CT_NETSCOPE, 2);
  cd.alpha_init = cn.alpha_init = 1;
  ct_state sd, sn;
  ct_init(&sd, &cd, 1, 0);
  ct_init(&sn, &cn, 1, 0);
  CHECK(sd.alpha == 1 && sd.rate_gbps == 100);
  ct_window(&sd, &cd, 0.4);
  ct_window(&sn, &cn, 0.4);
  CHECK(near(sd.alpha, 0.7, 1e-12) && near(sd.rate_gbps, 65, 1e-12));
  CHECK(near(sn.rate_gbps, 82.5, 1e-12));
  ct_window(&sd, &cd, 0);
  ct_window(&sn, &cn, 0);
  CHECK(near(sd.alpha, 0.35, 1e-12) && near(sd.rate_gbps, 66, 1e-12));
  CHECK(near(sn.rate_gbps, 83.5, 1e-12));
  char err[256];
  cd.alpha_init = 1.5;
  CHECK(ct_config_check(&cd, err, sizeof err) == -1 && strstr(err, "initial alpha"));
  cd.alpha_init = -0.1;
  CHECK(ct_config_check(&cd, err, sizeof err) == -1);
}

static void test_bounds_and_garbage(void) {
  ct_config c = aimd(CT_DCQCN, 0);
  c.gain = 1;
  ct_state s;
  ct_init(&s, &c, 1, 0);
  for (int i = 0; i < 50; i++) /* alpha = 1: halves each window, down to the floor */
    ct_window(&s, &c, 1.0);
  CHECK(near(s.rate_gbps, 1.0, 1e-12)); /* 1 % of 100 */
  for (int i = 0; i < 500; i++)
    ct_window(&s, &c, 0.0);
  CHECK(s.rate_gbps == 100); /* increases stop at the line rate */
  const ct_state before = s;
  CHECK(ct_window(&s, &c, NAN) == -1);
  CHECK(ct_window(&s, &c, -0.1) == -1);
  CHECK(ct_window(&s, &c, 1.5) == -1);
  CHECK(ct_window(&s, &c, INFINITY) == -1);
  CHECK(!memcmp(&before, &s, sizeof s)); /* garbage leaves the state alone */
  /* a threshold: stalls at or under it count as an uncongested window */
  ct_config t = aimd(CT_NETSCOPE, 1);
  t.stall_threshold = 0.05;
  ct_state u;
  ct_init(&u, &t, 1, 0);
  u.rate_gbps = 50;
  ct_window(&u, &t, 0.05);
  CHECK(near(u.rate_gbps, 51, 1e-12) && near(u.alpha, 0.025, 1e-12));
  ct_window(&u, &t, 0.06); /* alpha 0.0425: 51 (1 - 0.0425 / 3) */
  CHECK(near(u.rate_gbps, 51 * (1 - 0.0425 / 3), 1e-12));
}

static void test_static_off(void) {
  ct_config c;
  ct_config_default(&c);
  char err[256];
  CHECK(ct_mode_parse("static:25", &c, err, sizeof err) == 0 && c.mode == CT_STATIC &&
        c.static_gbps == 25);
  ct_state s;
  ct_init(&s, &c, 1, 0);
  CHECK(s.rate_gbps == 25);
  ct_window(&s, &c, 1.0);
  CHECK(s.rate_gbps == 25 && near(ct_fraction(&s, &c), 0.25, 1e-12));
  CHECK(ct_mode_parse("static:40%", &c, err, sizeof err) == 0 && c.static_fraction == 0.4);
  ct_init(&s, &c, 1, 0);
  CHECK(near(s.rate_gbps, 40, 1e-12));
  CHECK(ct_mode_parse("static:2500Mbps", &c, err, sizeof err) == 0 &&
        near(c.static_gbps, 2.5, 1e-12));
  CHECK(ct_mode_parse("static:0", &c, err, sizeof err) == -1 && strstr(err, "static"));
  CHECK(ct_mode_parse("static:120%", &c, err, sizeof err) == -1);
  CHECK(ct_mode_parse("static:fast", &c, err, sizeof err) == -1);
  CHECK(ct_mode_parse("aimd", &c, err, sizeof err) == -1 && strstr(err, "netscope"));
  CHECK(ct_mode_parse("static:200", &c, err, sizeof err) == 0);
  CHECK(ct_config_check(&c, err, sizeof err) == -1 && strstr(err, "above the line rate"));
  CHECK(ct_mode_parse("off", &c, err, sizeof err) == 0);
  ct_init(&s, &c, 1, 0);
  CHECK(ct_pace(&s, &c, 0.0, 1e6) == 0 && ct_pace(&s, &c, 0.0, 1e6) == 0);
  CHECK(ct_fraction(&s, &c) == 1);
  c.window_s = 0;
  CHECK(ct_config_check(&c, err, sizeof err) == -1 && strstr(err, "window"));
}

/* Pacing: back-to-back sends of 1 MB at 8 Gbit/s are 1 ms apart; a sender
 * that already spent the line-rate time waits eq. 13's difference. */
static void test_pacing(void) {
  ct_config c = aimd(CT_STATIC, 0);
  c.static_gbps = 8;
  ct_state s;
  ct_init(&s, &c, 1, 0);
  double t = 10.0;
  CHECK(ct_pace(&s, &c, t, 1e6) == 0); /* the first send leaves at once (slack) */
  /* 1 MB at 8 Gbit/s reserves 1 ms; the slack (1 ms) lets it start 1 ms early */
  double d = ct_pace(&s, &c, t, 1e6);
  CHECK(near(d, 0.0, 1e-9));
  d = ct_pace(&s, &c, t, 1e6);
  CHECK(near(d, 1e-3, 1e-9));
  /* line rate 100 Gbit/s: the send itself took 80 us; the next waits 1 ms - 80 us */
  t += d + 80e-6;
  d = ct_pace(&s, &c, t, 1e6);
  CHECK(near(d, 1e-3 - 80e-6, 1e-9));
  /* long idle: no burst beyond the slack */
  t += 10.0;
  CHECK(ct_pace(&s, &c, t, 1e6) == 0);
  CHECK(near(ct_pace(&s, &c, t, 1e6), 0.0, 1e-9));
  CHECK(near(ct_pace(&s, &c, t, 1e6), 1e-3, 1e-9));
  /* achieved rate over many sends, each taking 10 % of its share */
  ct_init(&s, &c, 1, 0);
  t = 0;
  const double first = t;
  double bytes = 0;
  for (int i = 0; i < 100000; i++) {
    t += ct_pace(&s, &c, t, 4096);
    bytes += 4096;
    t += 0.1 * 8 * 4096 / 8e9;
  }
  const double gbps = 8 * bytes / (t - first) / 1e9;
  /* 410 ms of sends; the first ms of them leave early (the slack) */
  CHECK(near(gbps, 8, 0.005) && gbps > 8);
}

/* Probabilistic delays: mean within 2 % of the delay over 10^5 draws (the
 * fraction of 0.3 us has a relative standard error of 0.5 %), only
 * whole microseconds, the same seed the same draws. */
static void test_quantize(void) {
  ct_config c = aimd(CT_DCQCN, 0);
  const double delays[] = {0.3e-6, 1.7e-6, 0.6e-6, 12.25e-6};
  for (int k = 0; k < 4; k++) {
    ct_state s;
    ct_init(&s, &c, 42, (uint64_t)k);
    double sum = 0;
    long lo = 1L << 40, hi = -1;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
      const long us = ct_quantize_us(&s, delays[k]);
      sum += (double)us;
      lo = us < lo ? us : lo;
      hi = us > hi ? us : hi;
    }
    const double mean_s = sum / n * 1e-6;
    CHECK(near(mean_s, delays[k], 0.02));
    CHECK(lo == (long)floor(delays[k] * 1e6) && hi == lo + 1);
  }
  ct_state a, b;
  ct_init(&a, &c, 7, 3);
  ct_init(&b, &c, 7, 3);
  int same = 1;
  for (int i = 0; i < 1000; i++)
    same &= ct_quantize_us(&a, 0.5e-6) == ct_quantize_us(&b, 0.5e-6);
  CHECK(same);
  ct_init(&b, &c, 8, 3);
  ct_init(&a, &c, 7, 3);
  int diff = 0;
  for (int i = 0; i < 1000; i++)
    diff |= ct_quantize_us(&a, 0.5e-6) != ct_quantize_us(&b, 0.5e-6);
  CHECK(diff);
  CHECK(ct_quantize_us(&a, 0) == 0 && ct_quantize_us(&a, -1) == 0 && ct_quantize_us(&a, NAN) == 0);
}

static void test_ca(void) {
  double ca;
  char err[256];
  CHECK(ct_ca_for("4.6", "milc", &ca, err, sizeof err) == 0 && ca == 4.6);
  CHECK(ct_ca_for("milc=4.6,a2a=0.1", "milc", &ca, err, sizeof err) == 0 && ca == 4.6);
  CHECK(ct_ca_for("milc=4.6,a2a=0.1", "a2a", &ca, err, sizeof err) == 0 && ca == 0.1);
  CHECK(ct_ca_for("milc=4.6,a2a=0.1", "mil", &ca, err, sizeof err) == 0 && ca == 0);
  CHECK(ct_ca_for("milc=4.6", NULL, &ca, err, sizeof err) == 0);
  CHECK(ct_ca_for("-1", NULL, &ca, err, sizeof err) == -1 && strstr(err, ">= 0"));
  CHECK(ct_ca_for("milc=", NULL, &ca, err, sizeof err) == -1);
  CHECK(ct_ca_for("=3", NULL, &ca, err, sizeof err) == -1);
  CHECK(ct_ca_for("milc=3,", NULL, &ca, err, sizeof err) == 0);
  CHECK(ct_ca_for("milc=nan", NULL, &ca, err, sizeof err) == -1);
  CHECK(ct_ca_for("x", NULL, &ca, err, sizeof err) == -1);
  /* a job named twice is refused (which one would it be?) */
  CHECK(ct_ca_for("milc=1,milc=2", NULL, &ca, err, sizeof err) == -1 && strstr(err, "twice"));
  CHECK(ct_ca_for("a=1,b=2,b=3", "a", &ca, err, sizeof err) == -1 && strstr(err, "'b'"));
  CHECK(ct_ca_for("a=1,ab=2,b=3", "b", &ca, err, sizeof err) == 0 && ca == 3);
  /* the parameter table reads into a configuration */
  contend_params p;
  CHECK(contend_params_init(&p, ct_param_defs, "", err, sizeof err) == 0);
  ct_config c;
  CHECK(ct_config_from_params(&p, 42, &c, err, sizeof err) == 0 && c.mode == CT_OFF &&
        c.line_gbps == 42 && c.window_s == 1);
  /* the default increase is 1 % of the line rate, and follows it */
  CHECK(near(c.increase_gbps, 0.42, 1e-12) && c.increase_of_line);
  ct_config_set_line(&c, 0.1);
  CHECK(near(c.increase_gbps, 0.001, 1e-12));
  CHECK(contend_params_set(&p, contend_params_find(&p, "throttle_increase_gbps"), "2", err,
                           sizeof err) == 0);
  CHECK(ct_config_from_params(&p, 42, &c, err, sizeof err) == 0 && c.increase_gbps == 2 &&
        !c.increase_of_line);
  ct_config_set_line(&c, 0.1);
  CHECK(c.increase_gbps == 2);
  CHECK(contend_params_set(&p, contend_params_find(&p, "throttle"), "netscope", err, sizeof err) ==
        0);
  CHECK(contend_params_set(&p, contend_params_find(&p, "throttle_window_us"), "20", err,
                           sizeof err) == 0);
  CHECK(ct_config_from_params(&p, 42, &c, err, sizeof err) == 0 && c.mode == CT_NETSCOPE &&
        near(c.window_s, 20e-6, 1e-12));
  /* the mode as recorded: one c_a, or c_a per job (not "c_a 0") */
  char mode[96];
  c.ca = 4.5;
  ct_mode_format(&c, mode, sizeof mode);
  CHECK(!strcmp(mode, "netscope (c_a 4.5)"));
  CHECK(contend_params_set(&p, contend_params_find(&p, "throttle_ca"), "app=2,io=0.5", err,
                           sizeof err) == 0);
  CHECK(ct_config_from_params(&p, 42, &c, err, sizeof err) == 0 && c.ca_per_job);
  ct_mode_format(&c, mode, sizeof mode);
  CHECK(!strcmp(mode, "netscope (c_a per job)"));
  CHECK(contend_params_set(&p, contend_params_find(&p, "throttle"), "static:50", err, sizeof err) ==
        0);
  CHECK(ct_config_from_params(&p, 42, &c, err, sizeof err) == -1 && strstr(err, "line rate"));
  contend_params_free(&p);
}

int main(void) {
  test_sequences();
  test_bounds_and_garbage();
  test_alpha_init();
  test_static_off();
  test_pacing();
  test_quantize();
  test_ca();
  printf("test_throttle: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
