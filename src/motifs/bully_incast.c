/* bully_incast: the incast bully of the fat-tree congestion study
 * (seeds/fattree-congestion-poster.md: three nodes in each of seven
 * leaves send to the eighth leaf of a pod).  The job's first `receivers`
 * ranks receive; every other rank s sends to receiver (s - receivers) mod
 * receivers, without pause.  The placement decides which leaves the
 * senders and receivers sit on (e.g. receivers on one leaf: list their
 * nodes first).
 *
 * One iteration: a sender posts `window` sends of msg_bytes to its
 * receiver; a receiver posts `window` receives from each of its senders;
 * both wait for all of them.  Only receivers take samples: the motif's
 * time and its achieved bandwidth (jobs results: bandwidth_gbps_per_rank)
 * are the receivers', window x msg_bytes x (senders of this receiver) per
 * iteration over the iteration time, the poster's Gb/s per receiver. */
#include <stdio.h>

#include "bully.h"

static const contend_param_def params[] = {
    BULLY_PARAMS("messages in flight per sender and iteration"),
    {"receivers", CONTEND_P_INT, "1", "ranks",
     "receiving ranks: the job's first ones; the others send to receiver (rank - receivers) mod "
     "receivers",
     1, 1e7},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  const long long r = contend_param_int(p, "receivers");
  if (nranks > 0 && nranks < 2 * r) {
    snprintf(err, errlen,
             "receivers=%lld needs a job of at least %lld ranks (a sender for every receiver); "
             "the job has %d",
             r, 2 * r, nranks);
    return -1;
  }
  return bully_window_validate(p, "sender", err, errlen);
}

/* Senders of receiver r (< R) among n ranks: R + r, 2R + r, ... */
static int senders_of(int r, int R, int n) { return (n - R - r + R - 1) / R; }

static int setup(contend_ctx *c) {
  if (validate(c->params, c->size, c->error, sizeof c->error))
    return -1;
  bully_state *s = bully_setup(c);
  s->receivers = (int)contend_param_int(c->params, "receivers");
  const int R = s->receivers;
  const size_t per_peer = s->bytes * (size_t)s->window;
  if (c->rank < R) {
    const int ns = senders_of(c->rank, R, c->size);
    s->nx = ns * s->window;
    s->rbuf = contend_alloc(c, per_peer * (size_t)ns);
    s->x = contend_alloc(c, sizeof(contend_xfer) * (size_t)s->nx);
    for (int k = 0; k < ns; k++)
      for (int w = 0; w < s->window; w++)
        s->x[k * s->window + w] =
            (contend_xfer){s->rbuf + (size_t)k * per_peer + (size_t)w * s->bytes, s->bytes,
                           R * (k + 1) + c->rank, w, 0};
    c->metric_scale = (double)per_peer * ns / 1048576.0; /* MiB received per iteration */
  } else {
    s->nx = s->window;
    s->sbuf = contend_alloc(c, per_peer);
    s->x = contend_alloc(c, sizeof(contend_xfer) * (size_t)s->nx);
    for (int w = 0; w < s->window; w++)
      s->x[w] = (contend_xfer){s->sbuf + (size_t)w * s->bytes, s->bytes, (c->rank - R) % R, w, 1};
    c->metric_scale = 0; /* senders take no samples */
  }
  return 0;
}

static void check(contend_ctx *c) {
  bully_state *s = c->state;
  if (c->rank >= s->receivers)
    return;
  const size_t per_peer = s->bytes * (size_t)s->window;
  for (int k = 0; k < s->nx / s->window; k++)
    contend_pattern_check(c, s->rbuf + (size_t)k * per_peer, per_peer,
                          s->receivers * (k + 1) + c->rank, c->iter, 0);
}

const contend_motif contend_motif_bully_incast = {
    .name = "bully_incast",
    .label = "Bully incast",
    .help = "incast bully: the last ranks stream window x msg_bytes per iteration to the first "
            "`receivers` ranks (bandwidth in Gb/s per receiver)",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(bully_state),
    .setup = setup,
    .prepare = bully_prepare,
    .iterate = bully_iterate,
    .check = check,
    .validate = validate,
};
