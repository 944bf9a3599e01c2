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

/* Names up to 8 parked ranks and ends the run. */
static void deadlock(void) {
  char msg[1024];
  int len = snprintf(msg, sizeof msg, "deadlock: %d rank%s parked and none runnable:", S.nparked,
                     S.nparked == 1 ? "" : "s");
  int shown = 0;
  for (int r = 0; r < S.n && shown < 8; r++)
    if (S.s[r].state == PARKED) {
      len += snprintf(msg + len, sizeof msg - (size_t)len, "%s rank %d (%.80s)", shown ? "," : "",
                      r, S.s[r].why ? S.s[r].why : "?");
      shown++;
      if (len >= (int)sizeof msg)
        break;
    }
  if (S.nparked > shown && len < (int)sizeof msg)
    snprintf(msg + len, sizeof msg - (size_t)len, " and %d more", S.nparked - shown);
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
