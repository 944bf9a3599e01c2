/* The windows of a simulation over processes (sim_par.h). */
#include "sim_par.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/error.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The records for process q of layer k (0: the fabric, then the channels). */
static const void *outbox(sim_net *n, const sim_par *par, int k, int q, size_t *len) {
  return k ? par->channel[k - 1]->outbox(q, len) : sim_net_outbox(n, q, len);
}

/* Everything the parts sent each other in the last window, swapped and
 * applied in the senders' order: to each process, a length per layer,
 * then the layers' records. */
void sim_par_swap(sim_net *n, sim_par *par) {
  const double t0 = now_s();
  const int P = par->parts;
  int layers = 1;
  while (layers <= SIM_PAR_CHANNELS_MAX && par->channel[layers - 1])
    layers++;
  size_t *counts = malloc(sizeof *counts * 2 * (size_t)P), total = 0;
  if (!counts)
    contend_fail("out of memory");
  size_t *rcounts = counts + P;
  for (int q = 0; q < P; q++) {
    counts[q] = sizeof(uint64_t) * (size_t)layers;
    for (int k = 0; k < layers; k++) {
      size_t len;
      outbox(n, par, k, q, &len);
      counts[q] += len;
    }
    total += counts[q];
  }
  char *send = malloc(total ? total : 1), *at = send;
  if (!send)
    contend_fail("out of memory (simulator outboxes, %zu B)", total);
  for (int q = 0; q < P; q++) {
    char *head = at;
    at += sizeof(uint64_t) * (size_t)layers;
    for (int k = 0; k < layers; k++) {
      size_t len;
      const void *b = outbox(n, par, k, q, &len);
      const uint64_t l64 = len;
      memcpy(head + sizeof l64 * (size_t)k, &l64, sizeof l64);
      if (len)
        memcpy(at, b, len);
      at += len;
    }
  }
  sim_net_outbox_clear(n);
  for (int k = 1; k < layers; k++)
    par->channel[k - 1]->clear();
  char *got = par->world->ops->alltoallv(par->world, send, counts, rcounts);
  at = got;
  for (int q = 0; q < P; q++) {
    const char *head = at;
    at += sizeof(uint64_t) * (size_t)layers;
    for (int k = 0; k < layers; k++) {
      uint64_t len;
      memcpy(&len, head + sizeof len * (size_t)k, sizeof len);
      if (k == 0)
        sim_net_inbox(n, at, len);
      else
        par->channel[k - 1]->inbox(at, len);
      at += len;
    }
  }
  free(got);
  free(send);
  free(counts);
  par->windows++;
  par->wait_s += now_s() - t0;
}

sim_time sim_par_agree(sim_par *par, sim_time mine, int busy, int *any_busy) {
  const double t0 = now_s();
  int64_t v[2] = {mine == SIM_NEVER ? INT64_MAX : (int64_t)mine, -(int64_t)(busy != 0)};
  contend_gallreduce(par->world, v, 2, CONTEND_DT_INT64, CONTEND_OP_MIN);
  par->wait_s += now_s() - t0;
  if (any_busy)
    *any_busy = v[1] < 0;
  return v[0] == INT64_MAX ? SIM_NEVER : (sim_time)v[0];
}

int sim_par_run(sim_net *n, sim_par *par, sim_time until) {
  for (;;) {
    const sim_time next =
        sim_par_agree(par, sim_net_pending(n) ? sim_net_next_time(n) : SIM_NEVER, 0, NULL);
    if (next == SIM_NEVER || next > until)
      return next != SIM_NEVER;
    sim_time end = next + par->lookahead - 1; /* nothing sent in the window lands in it */
    if (end > until || end < next)
      end = until;
    sim_net_run(n, end, NULL, NULL);
    sim_par_swap(n, par);
  }
}
