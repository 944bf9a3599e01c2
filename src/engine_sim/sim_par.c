/* The windows of a simulation over processes (sim_par.h). */
#include "sim_par.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/proc.h"

/* The records for process q of layer k (0: the fabric, then the channels). */
static const void *outbox(sim_net *n, const sim_par *par, int k, int q, size_t *len) {
  return k ? par->channel[k - 1]->outbox(q, len) : sim_net_outbox(n, q, len);
}

/* What every process tells every other at a swap, after its lengths:
 * its next event before the swap (INT64_MAX: none), whether it sent any
 * record this window (their events come at the earliest a window after
 * the sender's window began: par->bound), whether it has ranks, and
 * whether it holds events other than passive timers and samples (with
 * H_SENT: whether anything of it may still wake a rank). */
enum { H_MINE, H_SENT, H_BUSY, H_ACTIVE, H_N };

/* Everything the parts sent each other in the last window, swapped and
 * applied in the senders' order: to each process, a length per layer and
 * the header above, then the layers' records.  Returns the next window's
 * start: the earliest of every process's next event and, if any record
 * went anywhere, the bound on its events (the same in every process). */
static sim_time exchange(sim_net *n, sim_par *par, sim_time mine, int busy, int *any_busy,
                         int *any_live) {
  const double t0 = contend_monotonic_s();
  const int P = par->parts;
  int layers = 1;
  while (layers <= SIM_PAR_CHANNELS_MAX && par->channel[layers - 1])
    layers++;
  size_t *counts = malloc(sizeof *counts * 2 * (size_t)P), total = 0;
  if (!counts)
    contend_fail("out of memory");
  size_t *rcounts = counts + P;
  const size_t head = sizeof(uint64_t) * ((size_t)layers + H_N);
  int64_t sent = 0;
  for (int q = 0; q < P; q++) {
    counts[q] = head;
    for (int k = 0; k < layers; k++) {
      size_t len;
      outbox(n, par, k, q, &len);
      counts[q] += len;
      sent |= len > 0;
    }
    total += counts[q];
  }
  const int64_t tell[H_N] = {mine == SIM_NEVER ? INT64_MAX : (int64_t)mine, sent, busy != 0,
                             sim_net_pending_active(n) > 0};
  char *send = malloc(total ? total : 1), *at = send;
  if (!send)
    contend_fail("out of memory (simulator outboxes, %zu B)", total);
  for (int q = 0; q < P; q++) {
    char *h = at;
    at += head;
    for (int k = 0; k < layers; k++) {
      size_t len;
      const void *b = outbox(n, par, k, q, &len);
      const uint64_t l64 = len;
      memcpy(h + sizeof l64 * (size_t)k, &l64, sizeof l64);
      if (len)
        memcpy(at, b, len);
      at += len;
    }
    memcpy(h + sizeof(uint64_t) * (size_t)layers, tell, sizeof tell);
  }
  sim_net_outbox_clear(n);
  for (int k = 1; k < layers; k++)
    par->channel[k - 1]->clear();
  char *got = par->world->ops->alltoallv(par->world, send, counts, rcounts);
  at = got;
  int64_t next = INT64_MAX, anybody = 0, live = 0;
  for (int q = 0; q < P; q++) {
    const char *h = at;
    int64_t told[H_N];
    memcpy(told, h + sizeof(uint64_t) * (size_t)layers, sizeof told);
    if (told[H_MINE] < next)
      next = told[H_MINE];
    if (told[H_SENT] && (int64_t)par->bound < next)
      next = (int64_t)par->bound;
    anybody |= told[H_BUSY];
    live |= told[H_SENT] | told[H_ACTIVE];
    at += head;
    for (int k = 0; k < layers; k++) {
      uint64_t len;
      memcpy(&len, h + sizeof len * (size_t)k, sizeof len);
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
  par->wait_s += contend_monotonic_s() - t0;
  if (any_busy)
    *any_busy = anybody != 0;
  if (any_live)
    *any_live = live != 0;
  return next == INT64_MAX ? SIM_NEVER : (sim_time)next;
}

sim_time sim_par_window_end(sim_par *par, sim_time next, sim_time until) {
  sim_time end = next + par->lookahead - 1; /* nothing sent in the window lands in it */
  if (end > until || end < next)
    end = until;
  par->bound = end + 1 > end ? end + 1 : end;
  par->windows++;
  return end;
}

sim_time sim_par_swap(sim_net *n, sim_par *par, sim_time mine, int busy, int *any_busy,
                      int *any_live) {
  return exchange(n, par, mine, busy, any_busy, any_live);
}

sim_time sim_par_agree(sim_par *par, sim_time mine, int busy, int *any_busy) {
  const double t0 = contend_monotonic_s();
  int64_t v[2] = {mine == SIM_NEVER ? INT64_MAX : (int64_t)mine, -(int64_t)(busy != 0)};
  contend_gallreduce(par->world, v, 2, CONTEND_DT_INT64, CONTEND_OP_MIN);
  par->wait_s += contend_monotonic_s() - t0;
  if (any_busy)
    *any_busy = v[1] < 0;
  return v[0] == INT64_MAX ? SIM_NEVER : (sim_time)v[0];
}

static sim_time mine_of(sim_net *n) {
  return sim_net_pending(n) ? sim_net_next_time(n) : SIM_NEVER;
}

int sim_par_run(sim_net *n, sim_par *par, sim_time until) {
  /* the caller may have made events since the last call: agree afresh */
  sim_time next = sim_par_agree(par, mine_of(n), 0, NULL);
  for (;;) {
    if (next == SIM_NEVER || next > until)
      return next != SIM_NEVER;
    sim_net_run(n, sim_par_window_end(par, next, until), NULL, NULL);
    next = exchange(n, par, mine_of(n), 0, NULL, NULL);
  }
}
