/* The cooperative scheduler: a FIFO run queue of ranks, each a fiber (see
 * sched.h for the contracts). */
#include "sched.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "fiber.h"

enum { NEW, READY, RUNNING, PARKED, DONE, ELSEWHERE };

typedef struct slot {
  coop_fiber *fiber; /* created when first scheduled, freed when done */
  const char *why;   /* while parked */
  int state, status;
} slot;

static struct {
  int n, self, nparked, active;
  slot *s;
  int *q; /* run queue: a ring of n entries (a rank is queued at most once) */
  int qhead, qlen;
  int (*body)(int rank, void *arg);
  void *arg;
  size_t stack;
  int (*idle)(void);
  unsigned long long switches;
} S = {.self = -1};

static void push(int r) {
  S.q[(S.qhead + S.qlen) % S.n] = r;
  S.qlen++;
}

static int pop(void) {
  int r = S.q[S.qhead];
  S.qhead = (S.qhead + 1) % S.n;
  S.qlen--;
  return r;
}

static void rank_main(void *p) {
  const int r = (int)(intptr_t)p;
  S.s[r].status = S.body(r, S.arg);
}

/* Names the parked ranks by what they wait for and ends the run: the
 * reasons (at most 8) fewest ranks first, as the rank stuck on its own
 * is the one to look at, each with up to 4 of its ranks. */
enum { DL_GROUPS = 8, DL_NAMED = 4 };
struct dl_group {
  const char *why;
  int count, first[DL_NAMED];
};
static void deadlock(void) {
  struct dl_group g[DL_GROUPS];
  int ng = 0, other = 0;
  for (int r = 0; r < S.n; r++) {
    if (S.s[r].state != PARKED)
      continue;
    const char *why = S.s[r].why ? S.s[r].why : "?";
    int k = 0;
    while (k < ng && strcmp(g[k].why, why))
      k++;
    if (k == ng) {
      if (ng == DL_GROUPS) {
        other++;
        continue;
      }
      g[ng].why = why;
      g[ng++].count = 0;
    }
    if (g[k].count < DL_NAMED)
      g[k].first[g[k].count] = r;
    g[k].count++;
  }
  for (int a = 1; a < ng; a++) /* fewest first; among equals, by first rank (stable) */
    for (int b = a; b > 0 && g[b].count < g[b - 1].count; b--) {
      const struct dl_group t = g[b];
      g[b] = g[b - 1];
      g[b - 1] = t;
    }
  char msg[2048];
  size_t len =
      (size_t)snprintf(msg, sizeof msg, "deadlock: %d rank%s parked and none runnable:", S.nparked,
                       S.nparked == 1 ? "" : "s");
  for (int k = 0; k < ng && len < sizeof msg; k++) {
    if (g[k].count == 1) {
      len += (size_t)snprintf(msg + len, sizeof msg - len, "%s rank %d (%.80s)", k ? ";" : "",
                              g[k].first[0], g[k].why);
      continue;
    }
    len += (size_t)snprintf(msg + len, sizeof msg - len, "%s %d ranks (%.80s):", k ? ";" : "",
                            g[k].count, g[k].why);
    const int shown = g[k].count < DL_NAMED ? g[k].count : DL_NAMED;
    for (int i = 0; i < shown && len < sizeof msg; i++)
      len += (size_t)snprintf(msg + len, sizeof msg - len, "%s %d", i ? "," : "", g[k].first[i]);
    if (g[k].count > shown && len < sizeof msg)
      len += (size_t)snprintf(msg + len, sizeof msg - len, " and %d more", g[k].count - shown);
  }
  if (other && len < sizeof msg)
    snprintf(msg + len, sizeof msg - len, "; %d more rank%s waiting for other things", other,
             other == 1 ? "" : "s");
  fprintf(stderr, "contend: %s\n", msg); /* no rank to name: the scheduler speaks */
  contend_die();
}

int coop_run(int n, int (*body)(int rank, void *arg), void *arg, int *status) {
  return coop_run_some(n, NULL, body, arg, status);
}

int coop_run_some(int n, const unsigned char *mine, int (*body)(int rank, void *arg), void *arg,
                  int *status) {
  if (S.active)
    contend_fail("internal error: coop_run is not reentrant");
  if (n <= 0)
    return 0;
  S.s = calloc((size_t)n, sizeof *S.s);
  S.q = malloc(sizeof *S.q * (size_t)n);
  if (!S.s || !S.q)
    contend_fail("out of memory (%d ranks)", n);
  S.n = n;
  S.active = 1;
  S.body = body;
  S.arg = arg;
  S.nparked = 0;
  S.qhead = S.qlen = 0;
  for (int r = 0; r < n; r++)
    if (!mine || mine[r])
      push(r); /* state NEW */
    else
      S.s[r].state = ELSEWHERE;
  for (;;) {
    if (!S.qlen && !(S.nparked && S.idle && S.idle() && S.qlen))
      break;
    const int r = pop();
    slot *x = &S.s[r];
    if (!x->fiber)
      x->fiber = coop_fiber_new(rank_main, (void *)(intptr_t)r, S.stack);
    x->state = RUNNING;
    S.self = r;
    S.switches++;
    const int done = coop_fiber_resume(x->fiber);
    S.self = -1;
    if (done) {
      x->state = DONE;
      coop_fiber_free(x->fiber);
      x->fiber = NULL;
    }
  }
  if (S.nparked)
    deadlock();
  if (status)
    for (int r = 0; r < n; r++)
      status[r] = S.s[r].status;
  const int rc = S.s[0].status;
  free(S.s);
  free(S.q);
  S.s = NULL;
  S.q = NULL;
  S.n = 0;
  S.active = 0;
  return rc;
}

void coop_set_stack(size_t bytes) { S.stack = bytes; }

void coop_set_idle(int (*idle)(void)) { S.idle = idle; }

int coop_runnable(void) { return S.qlen; }

unsigned long long coop_switches(void) { return S.switches; }

int coop_self(void) { return S.self; }

int coop_size(void) { return S.active ? S.n : 0; }

void coop_yield(void) {
  if (S.self < 0)
    return;
  S.s[S.self].state = READY;
  push(S.self);
  coop_fiber_suspend();
}

void coop_park(const char *why) {
  if (S.self < 0)
    contend_fail("internal error: coop_park outside a rank (%s)", why ? why : "?");
  slot *x = &S.s[S.self];
  x->state = PARKED;
  x->why = why;
  S.nparked++;
  coop_fiber_suspend();
}

int coop_wake(int rank) {
  if (!S.active || rank < 0 || rank >= S.n)
    contend_fail("internal error: coop_wake(%d) outside 0..%d", rank, S.n - 1);
  slot *x = &S.s[rank];
  if (x->state == ELSEWHERE)
    contend_fail("internal error: coop_wake(%d): the rank is run by another process", rank);
  if (x->state != PARKED)
    return 0;
  x->state = READY;
  x->why = NULL;
  S.nparked--;
  push(rank);
  return 1;
}
