/* The in-process control plane over processes (contend/inproc.h,
 * contend_inproc_launch_procs), run as `mpirun -n P test_inproc_procs`.
 *
 * 12 nodes x 2 ranks are spread over the P processes by an irregular map
 * (rank 0 is not in process 0 at P > 1, and groups straddle processes).
 * Every rank computes for a time of its own, then runs collectives on the
 * world, on groups split from it (one color left out) and on a group
 * split from those, and posts, polls and waits for signals; it checks the
 * values it gets against what they must be and logs when each call
 * returned and what it got.  Rank 0 gathers the logs over the control
 * plane itself and prints them, one line per rank.
 *
 * A fake clock stands for the simulator: a process runs its ranks' timers
 * in windows of WINDOW ticks, and between windows the processes swap the
 * control records (an all-to-all over MPI) and agree on the next window
 * (the earliest timer anywhere); the control latency is DELAY >= WINDOW.
 * tests/python/test_inproc_procs.py checks that every P prints the same
 * logs as one process (where the plain contend_inproc_launch runs).
 *
 * --deadlock: rank 5 waits for a signal nobody else posts instead of the
 * last barrier, where the others wait for it: every rank is parked and
 * nothing is left to run anywhere, so every process must end (exit status
 * 3, the deadlock named on stderr) rather than hang.
 *
 * Exit status: 0 every check held, 1 some failed (FAIL lines on stderr). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/coop/sched.h"
#include "check.h"
#include "contend/engine.h"
#include "contend/inproc.h"
#include "contend/world.h"

#define NODES 12
#define PPN 2
#define WINDOW 100ull /* ticks */
#define DELAY 250ull  /* the control latency, ticks (>= WINDOW) */
#define LOG_BYTES 2048

#define DEADLOCK_RANK 5 /* in process 0 at P = 2 and 3 (node 2) */

static contend_group *procs; /* the MPI processes (NULL: one process) */
static int deadlock;         /* --deadlock */
static unsigned long long now_ticks, win_end;
static int win_open;
static struct timer {
  unsigned long long t;
  int wrank;
} * timers;
static int ntimers, captimers;

static unsigned long long fake_delay(void) { return DELAY; }
static unsigned long long fake_ticks(void) { return now_ticks; }
static double fake_now(void) { return (double)now_ticks * 1e-12; }

static void fake_wake_at(int wrank, unsigned long long t) {
  if (ntimers == captimers) {
    captimers = captimers ? 2 * captimers : 64;
    timers = realloc(timers, sizeof *timers * (size_t)captimers);
    if (!timers)
      abort();
  }
  timers[ntimers++] = (struct timer){t, wrank};
}

/* The earliest timer (ties: the lowest rank), or -1. */
static int earliest(void) {
  int k = -1;
  for (int i = 0; i < ntimers; i++)
    if (k < 0 || timers[i].t < timers[k].t ||
        (timers[i].t == timers[k].t && timers[i].wrank < timers[k].wrank))
      k = i;
  return k;
}

/* The window's end: every process's control records to every other. */
static void swap(void) {
  if (!procs)
    return;
  const int P = procs->size;
  size_t *counts = calloc(2 * (size_t)P, sizeof *counts), total = 0;
  for (int q = 0; q < P; q++) {
    contend_inproc_outbox(q, &counts[q]);
    total += counts[q];
  }
  char *send = malloc(total ? total : 1), *at = send;
  for (int q = 0; q < P; q++) {
    size_t len;
    const void *b = contend_inproc_outbox(q, &len);
    if (len)
      memcpy(at, b, len);
    at += len;
  }
  contend_inproc_outbox_clear();
  char *got = procs->ops->alltoallv(procs, send, counts, counts + P);
  at = got;
  for (int q = 0; q < P; q++) {
    contend_inproc_inbox(at, counts[P + q]);
    at += counts[P + q];
  }
  free(got);
  free(send);
  free(counts);
}

/* The next window's start (the earliest timer anywhere; INT64_MAX: none)
 * and whether any process still has ranks. */
static int64_t agree(int ranks_here, int *ranks_anywhere) {
  const int k = earliest();
  int64_t v[2] = {k < 0 ? INT64_MAX : (int64_t)timers[k].t, -(int64_t)ranks_here};
  if (procs)
    contend_gallreduce(procs, v, 2, CONTEND_DT_INT64, CONTEND_OP_MIN);
  *ranks_anywhere = v[1] < 0;
  return v[0];
}

/* Every rank here parked: the window's next timer, or the swap and the
 * next window. */
static int fake_idle(void) {
  for (;;) {
    if (win_open) {
      const int k = earliest();
      if (k >= 0 && timers[k].t <= win_end) {
        const struct timer x = timers[k];
        timers[k] = timers[--ntimers];
        CHECK(x.t >= now_ticks); /* no timer in the past: the records came in time */
        now_ticks = x.t;
        coop_wake(x.wrank);
        return 1;
      }
      win_open = 0;
    }
    swap();
    int anywhere;
    const int64_t next = agree(1, &anywhere);
    if (next == INT64_MAX)
      return 0; /* nothing will ever wake them: the scheduler reports a deadlock */
    win_end = (unsigned long long)next + WINDOW - 1;
    win_open = 1;
  }
}

/* This process's ranks are done: windows until everyone's are. */
static int fake_finish(int status) {
  CHECK(ntimers == 0);
  for (;;) {
    swap();
    int anywhere;
    const int64_t next = agree(0, &anywhere);
    if (!anywhere)
      break;
    if (next == INT64_MAX) {
      fprintf(stderr, "test_inproc_procs: deadlock in another process\n");
      exit(3);
    }
  }
  int64_t st = status;
  contend_gallreduce(procs, &st, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
  return (int)st;
}

static void sleep_for(unsigned long long dt) {
  const unsigned long long t = now_ticks + dt;
  fake_wake_at(coop_self(), t);
  while (now_ticks < t)
    coop_park("computing (test)");
}

static void fake_poll(void) { sleep_for(7); }

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

typedef struct rlog {
  char b[LOG_BYTES];
  size_t n;
} rlog;

static void logf_(rlog *l, const char *what, long long v) {
  const int k = snprintf(l->b + l->n, sizeof l->b - l->n, " %s@%llu=%lld", what, now_ticks, v);
  if (k > 0 && l->n + (size_t)k < sizeof l->b)
    l->n += (size_t)k;
}

/* A rank's compute time before its step-th call: differs by rank and step. */
static unsigned long long work(int r, int step) {
  return (unsigned long long)((r * 37 + step * 53) % 101) * 13 + 1;
}

static int body(contend_group *w, void *arg) {
  (void)arg;
  const int r = w->rank, n = w->size;
  rlog l = {.n = 0};

  sleep_for(work(r, 0));
  contend_gbarrier(w);
  logf_(&l, "barrier", 0);

  sleep_for(work(r, 1));
  int64_t sum = r + 1;
  contend_gallreduce(w, &sum, 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
  CHECK(sum == (int64_t)n * (n + 1) / 2);
  double mx[2] = {r * 0.5, -r};
  contend_gallreduce(w, mx, 2, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  CHECK(mx[0] == (n - 1) * 0.5 && mx[1] == 0);
  logf_(&l, "allreduce", (long long)sum);

  /* colors 0..2 by r % 4, rank 3 mod 4 in none; key: reversed order */
  sleep_for(work(r, 2));
  contend_group *sub = contend_split(w, r % 4 == 3 ? -1 : r % 4, n - r);
  logf_(&l, "split", sub ? sub->rank * 100 + sub->size : -1);
  if (sub) {
    const int c = r % 4, sr = sub->rank, ss = sub->size;
    int members = 0; /* ranks of color c, highest first (key n - r) */
    for (int q = n - 1; q >= 0; q--)
      if (q % 4 == c) {
        if (q == r)
          CHECK(sr == members);
        members++;
      }
    CHECK(ss == members);
    const int top = n - 1 - ((n - 1 - c) % 4); /* the highest rank of color c: sub rank 0 */

    sleep_for(work(r, 3));
    int64_t mine = (int64_t)r * r, all[NODES * PPN];
    contend_ggather(sub, &mine, sizeof mine, sr == 0 ? all : NULL);
    if (sr == 0)
      for (int i = 0; i < ss; i++)
        CHECK(all[i] == (int64_t)(top - 4 * i) * (top - 4 * i));
    logf_(&l, "gather", sr == 0 ? (long long)all[ss - 1] : 0);

    int64_t got[NODES * PPN];
    contend_gallgather(sub, &mine, sizeof mine, got);
    for (int i = 0; i < ss; i++)
      CHECK(got[i] == (int64_t)(top - 4 * i) * (top - 4 * i));
    logf_(&l, "allgather", (long long)got[0]);

    sleep_for(work(r, 4));
    int64_t b = sr == 0 ? 1000 + r : -1;
    contend_gbcast(sub, &b, sizeof b);
    CHECK(b == 1000 + top);
    int64_t lo = 50 - r;
    contend_greduce(sub, &lo, 1, CONTEND_DT_INT64, CONTEND_OP_MIN);
    if (sr == 0)
      CHECK(lo == 50 - top);
    else
      CHECK(lo == 50 - r); /* unchanged off the root */
    logf_(&l, "bcast_reduce", (long long)(b + lo));

    /* signals: posted at different times; the root polls, others wait */
    for (int k = 0; k < 2; k++) {
      sleep_for(work(r, 5 + k));
      contend_signal *s = contend_signal_post(sub);
      if (sr == 0) {
        int polls = 0;
        while (!contend_signal_test(sub, s))
          polls++;
        logf_(&l, "signal_test", polls);
      } else {
        contend_signal_wait(sub, s, 0);
        logf_(&l, "signal_wait", 0);
      }
      CHECK(contend_signal_test(sub, s) == 1);
      contend_signal_free(sub, s);
    }

    /* a group of a group: the sub ranks of even rank */
    contend_group *pair = contend_split(sub, sr % 2, sr);
    int64_t ps = sr;
    contend_gallreduce(pair, &ps, 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
    int64_t want = 0;
    for (int i = sr % 2; i < ss; i += 2)
      want += i;
    CHECK(ps == want);
    logf_(&l, "subsplit", (long long)ps);
    contend_group_free(pair);
    contend_group_free(sub);
  }

  /* every rank's log to rank 0, over the control plane itself */
  sleep_for(work(r, 8));
  size_t counts[NODES * PPN];
  char *logs = contend_ggatherv(w, l.b, l.n, r == 0 ? counts : NULL);
  logf_(&l, "end", 0);
  if (r == 0) {
    size_t at = 0;
    for (int i = 0; i < n; i++) {
      printf("rank %d:%.*s\n", i, (int)counts[i], logs + at);
      at += counts[i];
    }
    printf("rank 0 ends at %llu\n", now_ticks);
    fflush(stdout);
  }
  free(logs);
  if (deadlock && r == DEADLOCK_RANK) { /* waits for a signal nobody else posts */
    contend_signal *x = contend_signal_post(w);
    contend_signal_wait(w, x, 0);
  }
  contend_gbarrier(w);
  return 0;
}

/* Irregular on purpose: node 0 (rank 0) is in process 1 at P > 1. */
static int proc_of(int node, int P) { return (node * 5 + 1) % P; }

static int run(contend_group *world, void *arg) {
  (void)arg;
  procs = world && world->size > 1 ? world : NULL;
  int rc;
  if (!procs) {
    rc = contend_inproc_launch(&fake, NODES, PPN, body, NULL);
  } else {
    int map[NODES];
    for (int i = 0; i < NODES; i++)
      map[i] = proc_of(i, procs->size);
    const contend_inproc_procs pr = {
        .count = procs->size, .me = procs->rank, .proc_of_node = map, .finish = fake_finish};
    rc = contend_inproc_launch_procs(&fake, NODES, PPN, &pr, body, NULL);
  }
  CHECK(rc == 0);
  CHECK(ntimers == 0);
  int64_t bad = failures;
  if (procs)
    contend_gallreduce(procs, &bad, 1, CONTEND_DT_INT64, CONTEND_OP_SUM);
  if (!world || world->rank == 0)
    fprintf(stderr, "test_inproc_procs: %d processes, %d checks here, %lld failures in all\n",
            world ? world->size : 1, checks, (long long)bad);
  return bad != 0;
}

int main(int argc, char **argv) {
  deadlock = argc > 1 && !strcmp(argv[1], "--deadlock");
  const contend_engine *mpi = contend_engine_find("mpi");
  if (!mpi) /* built without MPI: one process */
    return run(NULL, NULL);
  contend_launch l = {.argc = &argc, .argv = &argv};
  return mpi->launch(&l, run, NULL);
}
