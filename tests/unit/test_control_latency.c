/* The in-process control plane's latency (contend/inproc.h, control_delay):
 * on a fake backend whose clock moves only by its ranks' timers, a
 * collective returns to every member, the last one too, exactly D after
 * its last member arrives, and a signal is seen exactly D after its last
 * post (by signal_test, by a waiter listed before it completed and by one
 * that comes after).  With D = 0 both happen at once, as before the
 * latency existed.  The ranks arrive at different times, so a rule that
 * took the first arrival, or forgot the last member, would fail. */
#include <stdio.h>
#include <stdlib.h>

#include "../../src/coop/sched.h"
#include "check.h"
#include "contend/engine.h"
#include "contend/inproc.h"
#include "contend/world.h"

#define RANKS 5
#define STEP 1000ull /* ticks between the ranks' arrivals */

static unsigned long long now_ticks, delay;
static struct timer {
  unsigned long long t;
  int wrank;
} timers[4 * RANKS];
static int ntimers;

static unsigned long long fake_delay(void) { return delay; }
static unsigned long long fake_ticks(void) { return now_ticks; }
static double fake_now(void) { return (double)now_ticks * 1e-12; }

static void fake_wake_at(int wrank, unsigned long long t) {
  if (ntimers == (int)(sizeof timers / sizeof *timers)) {
    fprintf(stderr, "test_control_latency: too many timers\n");
    exit(1);
  }
  timers[ntimers++] = (struct timer){t, wrank};
}

/* Every rank parked: the earliest timer (ties: the lowest rank) fires. */
static int fake_idle(void) {
  if (!ntimers)
    return 0;
  int k = 0;
  for (int i = 1; i < ntimers; i++)
    if (timers[i].t < timers[k].t ||
        (timers[i].t == timers[k].t && timers[i].wrank < timers[k].wrank))
      k = i;
  const struct timer x = timers[k];
  timers[k] = timers[--ntimers];
  now_ticks = x.t;
  coop_wake(x.wrank);
  return 1;
}

static void sleep_until(unsigned long long t) {
  fake_wake_at(coop_self(), t);
  while (now_ticks < t)
    coop_park("sleeping (test)");
}

static void fake_poll(void) { sleep_until(now_ticks + 1); }

static const contend_engine fake_engine = {.name = "fake", .in_process = 1};

static const contend_inproc_backend fake = {
    .engine = &fake_engine,
    .library = "test",
    .now = fake_now,
    .control_delay = fake_delay,
    .ticks = fake_ticks,
    .wake_at = fake_wake_at,
    .poll = fake_poll,
    .idle = fake_idle,
};

static int body(contend_group *w, void *arg) {
  (void)arg;
  const int r = w->rank, n = w->size;
  const unsigned long long base = now_ticks;

  /* a barrier: arrivals at base + r * STEP, the last at base + (n-1) * STEP */
  sleep_until(base + (unsigned long long)r * STEP);
  contend_gbarrier(w);
  const unsigned long long done = base + (unsigned long long)(n - 1) * STEP + delay;
  CHECK(now_ticks == done);

  /* an allreduce entered together: its value, and D later */
  long long v = r + 1;
  contend_gallreduce(w, &v, 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
  CHECK(v == (long long)n * (n + 1) / 2);
  CHECK(now_ticks == done + delay);

  /* a signal: rank r posts at t0 + r * STEP; rank 0 waits from the start
   * (listed before completion), the last poster waits right after posting
   * (after completion, before it is seen), rank 1 polls with signal_test */
  const unsigned long long t0 = now_ticks;
  const unsigned long long last_post = t0 + (unsigned long long)(n - 1) * STEP;
  sleep_until(t0 + (unsigned long long)r * STEP);
  contend_signal *s = contend_signal_post(w);
  if (r == 1) {
    int polls = 0;
    while (!contend_signal_test(w, s))
      polls++;
    /* D = 0: its poll at last_post runs before the last post (rank 1's
     * timer first at equal times), so the next poll, a tick later, sees it */
    CHECK(now_ticks == last_post + (delay ? delay : 1));
    CHECK(polls > 0);
  } else {
    contend_signal_wait(w, s, 0);
    CHECK(now_ticks == last_post + delay);
  }
  CHECK(contend_signal_test(w, s) == 1);
  contend_signal_free(w, s);
  contend_gbarrier(w);
  return 0;
}

int main(void) {
  const unsigned long long delays[] = {0, 100000, 7};
  for (size_t i = 0; i < sizeof delays / sizeof *delays; i++) {
    delay = delays[i];
    now_ticks = 0;
    ntimers = 0;
    const int before = failures;
    const int rc = contend_inproc_launch(&fake, RANKS, 1, body, NULL);
    CHECK(rc == 0);
    CHECK(ntimers == 0);
    if (failures != before)
      fprintf(stderr, "  (with a control latency of %llu ticks)\n", delay);
  }
  printf("test_control_latency: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
