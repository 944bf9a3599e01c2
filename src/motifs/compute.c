/* compute: busy time standing for the computation between communication
 * steps.  dist=fixed spins `mean` seconds; gaussian draws N(mean, stddev)
 * (negative draws become 0), uniform U(low, high), exponential with mean
 * `mean`: one draw per rank and iteration from a stream of (seed, motif
 * instance, rank, repeat, iteration), so a run repeats exactly with the
 * same seed and the isolated and concurrent passes see the same draws. */
#include <stdio.h>

#include "workload.h"

typedef struct {
  wl_dist dist;
  double mean, stddev, low, high;
  uint64_t seed;
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"dist", CONTEND_P_STRING, "fixed", "",
     "distribution of the busy time: fixed, gaussian, uniform or exponential", 1, 0},
    {"mean", CONTEND_P_DOUBLE, "0.001", "s", "busy time (fixed), mean (gaussian, exponential)", 0,
     3600},
    {"stddev", CONTEND_P_DOUBLE, "0", "s", "standard deviation (gaussian)", 0, 3600},
    {"low", CONTEND_P_DOUBLE, "0", "s", "lower bound (uniform)", 0, 3600},
    {"high", CONTEND_P_DOUBLE, "0", "s", "upper bound (uniform)", 0, 3600},
    {"seed", CONTEND_P_SEED, "time", "", "seed of the draws ('time': the run's --seed)", 1, 0},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  (void)nranks;
  wl_dist d;
  if (wl_parse_dist(contend_param_str(p, "dist"), &d)) {
    snprintf(err, errlen,
             "dist='%s' is not valid: expected fixed, gaussian, uniform or exponential",
             contend_param_str(p, "dist"));
    return -1;
  }
  if (d == WL_DIST_UNIFORM && contend_param_double(p, "low") > contend_param_double(p, "high")) {
    snprintf(err, errlen, "dist=uniform needs low <= high (low=%g s, high=%g s)",
             contend_param_double(p, "low"), contend_param_double(p, "high"));
    return -1;
  }
  return 0;
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  wl_parse_dist(contend_param_str(c->params, "dist"), &s->dist);
  s->mean = contend_param_double(c->params, "mean");
  s->stddev = contend_param_double(c->params, "stddev");
  s->low = contend_param_double(c->params, "low");
  s->high = contend_param_double(c->params, "high");
  s->seed = wl_seed(c->params, "seed", c->seed);
  c->metric_scale = 1.0;
  return 0;
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  double t = s->mean;
  if (s->dist != WL_DIST_FIXED) {
    contend_rng r;
    contend_rng_init(&r, s->seed, WL_STREAM_COMPUTE, c->stream, (uint64_t)c->rank,
                     ((uint64_t)c->round << 32) ^ (uint64_t)c->iter);
    if (s->dist == WL_DIST_GAUSSIAN)
      t = s->mean + s->stddev * wl_normal(&r);
    else if (s->dist == WL_DIST_UNIFORM)
      t = s->low + (s->high - s->low) * contend_rng_uniform(&r);
    else
      t = wl_exponential(&r, s->mean);
  }
  contend_compute(c, t > 0 ? t : 0);
}

const contend_motif contend_motif_compute = {
    .name = "compute",
    .label = "Compute",
    .help = "busy time: fixed, or drawn per rank and iteration (gaussian, uniform, exponential)",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .iterate = iterate,
    .validate = validate,
};
