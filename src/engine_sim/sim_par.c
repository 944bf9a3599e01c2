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

/* Everything the parts sent each other in the last window, swapped and
 * applied in the senders' order. */
static void swap(sim_net *n, sim_par *par) {
  const int P = par->parts;
  size_t *counts = malloc(sizeof *counts * 2 * (size_t)P), total = 0;
  if (!counts)
    contend_fail("out of memory");
  size_t *rcounts = counts + P;
  for (int q = 0; q < P; q++) {
    sim_net_outbox(n, q, &counts[q]);
    total += counts[q];
  }
  char *send = malloc(total ? total : 1), *at = send;
  if (!send)
    contend_fail("out of memory (simulator outboxes, %zu B)", total);
  for (int q = 0; q < P; q++) {
    size_t len;
    const void *b = sim_net_outbox(n, q, &len);
    memcpy(at, b, len);
    at += len;
  }
  sim_net_outbox_clear(n);
  char *got = par->world->ops->alltoallv(par->world, send, counts, rcounts);
  at = got;
  for (int q = 0; q < P; q++) {
    sim_net_inbox(n, at, rcounts[q]);
    at += rcounts[q];
  }
  free(got);
  free(send);
  free(counts);
}

int sim_par_run(sim_net *n, sim_par *par, sim_time until) {
  for (;;) {
    const double t0 = now_s();
    const sim_time mine = sim_net_pending(n) ? sim_net_next_time(n) : SIM_NEVER;
    int64_t agreed = mine == SIM_NEVER ? INT64_MAX : (int64_t)mine;
    contend_gallreduce(par->world, &agreed, 1, CONTEND_DT_INT64, CONTEND_OP_MIN);
    const sim_time next = agreed == INT64_MAX ? SIM_NEVER : (sim_time)agreed;
    par->wait_s += now_s() - t0;
    if (next == SIM_NEVER || next > until)
      return next != SIM_NEVER;
    sim_time end = next + par->lookahead - 1; /* nothing sent in the window lands in it */
    if (end > until || end < next)
      end = until;
    sim_net_run(n, end, NULL, NULL);
    const double t1 = now_s();
    swap(n, par);
    par->windows++;
    par->wait_s += now_s() - t1;
  }
}
