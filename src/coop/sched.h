/* A deterministic cooperative scheduler: N ranks, each a fiber, run one
 * at a time in this process (the in-process engines' ranks).
 *
 * Contracts:
 * - coop_run starts rank 0 .. n-1 in that order; a rank runs until it
 *   finishes, yields or parks.  The run queue is FIFO and nothing else
 *   (no clock, no randomness) decides the order, so a run is reproducible.
 * - coop_yield puts the caller at the back of the run queue.
 * - coop_park blocks the caller until some other rank calls coop_wake on
 *   it.  Only a parked rank can be woken: waking a rank that is running or
 *   runnable does nothing (returns 0).  Because ranks never preempt each
 *   other, "check a condition, then park" cannot miss a wake-up given
 *   between the two.
 * - If the run queue empties while ranks are parked and the idle hook (if
 *   any, see coop_set_idle) wakes none, nothing can ever wake them: the scheduler prints one line
 * naming how many are parked and up to 8 of them with what they wait on ("contend: deadlock: ..."),
 * and ends the run with exit status 3 (contend_die: the abort hook, then the registered end).
 * - A rank's stack is released as soon as its body returns; what the body
 *   allocated is its own business.
 * - Not reentrant: one coop_run at a time, never from inside a rank.
 *   Not thread-safe. */
#ifndef CONTEND_COOP_SCHED_H
#define CONTEND_COOP_SCHED_H

#include <stddef.h>

/* Runs body(rank, arg) for every rank 0 .. n-1 as a fiber and returns when
 * all have returned.  status (n entries, may be NULL) receives each
 * rank's return value.  Returns rank 0's (0 when n <= 0). */
int coop_run(int n, int (*body)(int rank, void *arg), void *arg, int *status);

/* coop_run for the ranks r with mine[r] != 0 only (mine: n entries; NULL:
 * every rank): the others are done from the start, as ranks played by
 * another process of a simulation over processes.  Ranks keep their
 * numbers (coop_self, coop_wake); waking a rank not run here is an error.
 * Returns rank 0's status when rank 0 is run here, else 0. */
int coop_run_some(int n, const unsigned char *mine, int (*body)(int rank, void *arg), void *arg,
                  int *status);

/* Stack size of the ranks of later coop_run calls (0: COOP_STACK_DEFAULT,
 * 256 KiB; pages are committed only when touched). */
void coop_set_stack(size_t bytes);

/* Idle hook of later coop_run calls (NULL: none): called on the
 * scheduler's stack when no rank is runnable but some are parked; it may
 * wake ranks (an in-process engine advances its simulated time there) and
 * returns non-zero if it did.  When it returns 0, or there is no hook,
 * the parked ranks are deadlocked (see above). */
void coop_set_idle(int (*idle)(void));

/* Ranks in the run queue now. */
int coop_runnable(void);

/* Ranks resumed so far by this process (each resume is a switch into a
 * rank and, when it parks or yields, one back). */
unsigned long long coop_switches(void);

/* The calling rank, or -1 outside coop_run's ranks. */
int coop_self(void);
/* The number of ranks of the running coop_run (0 outside). */
int coop_size(void);

/* Back of the run queue; returns when the caller is scheduled again.
 * Outside a rank it does nothing. */
void coop_yield(void);

/* Blocks the calling rank until coop_wake(rank).  why (kept, not copied:
 * it must stay valid while parked) is shown if the run deadlocks.
 * Outside a rank it ends the run (a programming error). */
void coop_park(const char *why);

/* Makes a parked rank runnable (back of the run queue) and returns 1;
 * returns 0 if the rank was not parked. */
int coop_wake(int rank);

#endif
