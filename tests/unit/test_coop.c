/* Unit tests of the fibers and the cooperative scheduler (src/coop/):
 * context switches keep each fiber's stack, park/wake and yield order is
 * the documented FIFO and the same on every run, a deadlock ends the run
 * with status 3 and names the parked ranks, a stack overflow hits the
 * guard page, and 16384 ranks yield through the scheduler. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/coop/fiber.h"
#include "../../src/coop/sched.h"

#include "check.h"

/* ---- fibers ---- */

static char trail[64];
static size_t ntrail;
static void mark(char ch) {
  if (ntrail + 1 < sizeof trail)
    trail[ntrail++] = ch;
}

/* Sums 1..n by a recursion of n frames of about 300 B each (the volatile
 * read after the call keeps every frame alive): deep(250) needs a stack
 * of its own of about 75 KiB. */
static __attribute__((noinline)) long deep(int n) {
  volatile unsigned char pad[256];
  pad[n & 255] = (unsigned char)(n & 255);
  const long below = n > 0 ? deep(n - 1) : 0;
  return below + pad[n & 255];
}

static void fiber_a(void *arg) {
  long local = (long)(intptr_t)arg; /* on this fiber's stack */
  mark('a');
  coop_fiber_suspend();
  local += deep(250);
  mark('b');
  coop_fiber_suspend();
  mark(local == 7 + 250 * 251 / 2 ? 'c' : 'X');
}

static coop_fiber *inner;
static void fiber_inner(void *arg) {
  (void)arg;
  mark('i');
  coop_fiber_suspend();
  mark('j');
}
static void fiber_outer(void *arg) {
  (void)arg;
  mark('o');
  CHECK(coop_fiber_resume(inner) == 0); /* nested: inner returns here */
  CHECK(coop_fiber_current() != inner);
  mark('p');
  coop_fiber_suspend();
  CHECK(coop_fiber_resume(inner) == 1);
  mark('q');
}

static void test_fibers(void) {
  ntrail = 0;
  CHECK(coop_fiber_current() == NULL);
  coop_fiber *a = coop_fiber_new(fiber_a, (void *)(intptr_t)7, 0);
  coop_fiber *b = coop_fiber_new(fiber_a, (void *)(intptr_t)7, 4096 * 40);
  CHECK(coop_fiber_resume(a) == 0);
  CHECK(coop_fiber_resume(b) == 0);
  mark('-');
  CHECK(coop_fiber_resume(b) == 0);
  CHECK(coop_fiber_resume(a) == 0);
  CHECK(coop_fiber_resume(a) == 1);
  CHECK(coop_fiber_done(a) && !coop_fiber_done(b));
  CHECK(coop_fiber_resume(b) == 1);
  coop_fiber_free(a);
  coop_fiber_free(b);
  trail[ntrail] = 0;
  CHECK(!strcmp(trail, "aa-bbcc"));

  ntrail = 0;
  inner = coop_fiber_new(fiber_inner, NULL, 0);
  coop_fiber *outer = coop_fiber_new(fiber_outer, NULL, 0);
  CHECK(coop_fiber_resume(outer) == 0);
  CHECK(coop_fiber_current() == NULL);
  CHECK(coop_fiber_resume(outer) == 1);
  coop_fiber_free(outer);
  coop_fiber_free(inner);
  coop_fiber_free(NULL);
  trail[ntrail] = 0;
  CHECK(!strcmp(trail, "oipjq"));
}

/* ---- the scheduler: order ---- */

enum { NLOG = 4096 };
static int events[NLOG], nevents;
static void log_event(int v) {
  if (nevents < NLOG)
    events[nevents++] = v;
}

/* Ranks 1..7 park; rank 0 wakes them in a scrambled order, yielding in
 * between; each logs 100 + rank when it runs again.  Then three rounds of
 * yields log 1000 * round + rank. */
static const int wake_order[] = {5, 3, 7, 1, 6, 2, 4};
static int order_body(int rank, void *arg) {
  (void)arg;
  CHECK(coop_self() == rank && coop_size() == 8);
  if (rank == 0) {
    coop_yield();             /* everyone else has parked by now */
    CHECK(coop_wake(0) == 0); /* running: not parked */
    for (int i = 0; i < 7; i++) {
      CHECK(coop_wake(wake_order[i]) == 1);
      CHECK(coop_wake(wake_order[i]) == 0); /* already runnable */
      if (i % 3 == 2)
        coop_yield();
    }
    coop_yield();
  } else {
    coop_park("order test");
    log_event(100 + rank);
  }
  for (int round = 1; round <= 3; round++) {
    log_event(1000 * round + rank);
    coop_yield();
  }
  return rank * 10;
}

static void test_order(void) {
  int first[NLOG], nfirst = 0;
  for (int run = 0; run < 2; run++) {
    nevents = 0;
    int status[8];
    CHECK(coop_run(8, order_body, NULL, status) == 0);
    for (int r = 0; r < 8; r++)
      CHECK(status[r] == 10 * r);
    CHECK(coop_self() == -1 && coop_size() == 0);
    /* woken ranks run in wake order, FIFO with the others */
    int pos = 0;
    for (int i = 0; i < 7; i++) {
      while (pos < nevents && events[pos] < 100)
        pos++;
      int k = pos;
      while (k < nevents && !(events[k] >= 100 && events[k] < 200))
        k++;
      CHECK(k < nevents && events[k] == 100 + wake_order[i]);
      pos = k + 1;
    }
    if (run == 0) {
      memcpy(first, events, sizeof(int) * (size_t)nevents);
      nfirst = nevents;
    } else {
      CHECK(nevents == nfirst && !memcmp(first, events, sizeof(int) * (size_t)nevents));
    }
  }
  /* the exact trace of the first run (worked out by hand from the FIFO
   * rule): 5, 3, 7 are woken before rank 0 first yields, 1, 6, 2 before
   * its second yield, 4 last */
  static const int expect[] = {105,  1005, 103,  1003, 107,  1007, 2005, 2003, 2007, 101,  1001,
                               106,  1006, 102,  1002, 3005, 3003, 3007, 2001, 2006, 2002, 104,
                               1004, 1000, 3001, 3006, 3002, 2004, 2000, 3004, 3000};
  CHECK(nfirst == (int)(sizeof expect / sizeof expect[0]));
  CHECK(nfirst == (int)(sizeof expect / sizeof expect[0]) && !memcmp(first, expect, sizeof expect));
}

/* ---- deadlock and stack overflow, in a child process ---- */

static int deadlock_body(int rank, void *arg) {
  const int n = *(int *)arg;
  if (rank == n - 1)
    return 0; /* the only rank that could have woken the others leaves */
  static const char *const tenth[] = {"wait 0", "wait 1", "wait 2", "wait 3", "wait 4",
                                      "wait 5", "wait 6", "wait 7", "wait 8", "wait 9"};
  coop_park(n > 20 ? tenth[rank % 10] : rank % 2 ? "an odd wait" : "an even wait");
  return 0;
}

/* Runs fn(arg) in a child with stderr captured; returns the wait status. */
static int in_child(void (*fn)(void *), void *arg, char *err, size_t errlen) {
  int fd[2];
  if (pipe(fd))
    abort();
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 2);
    fn(arg);
    _exit(0);
  }
  close(fd[1]);
  size_t n = 0;
  ssize_t k;
  while (n + 1 < errlen && (k = read(fd[0], err + n, errlen - 1 - n)) > 0)
    n += (size_t)k;
  err[n] = 0;
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return st;
}

static void run_deadlock(void *arg) { coop_run(*(int *)arg, deadlock_body, arg, NULL); }

static void overflow_fn(void *arg) {
  (void)arg;
  deep(1 << 20); /* far more than 64 KiB of stack */
}
static void run_overflow(void *arg) {
  (void)arg;
  coop_fiber *f = coop_fiber_new(overflow_fn, NULL, 64 * 1024);
  coop_fiber_resume(f);
}

/* deep(), but suspends at the bottom of the recursion. */
static __attribute__((noinline)) long deep_suspend(int n) {
  volatile unsigned char pad[256];
  pad[n & 255] = (unsigned char)(n & 255);
  if (!n)
    coop_fiber_suspend();
  const long below = n > 0 ? deep_suspend(n - 1) : 0;
  return below + pad[n & 255];
}
static void overrun_fn(void *arg) { deep_suspend((int)(intptr_t)arg); }

/* Past the guard pages vm.max_map_count allows: a fiber that suspends
 * beyond its 64 KiB stack (in its neighbour's slot, which is mapped) ends
 * the run with one line, and one that stays within runs as before. */
static void run_unguarded(void *arg) {
  coop_fiber_set_guards(0);
  coop_fiber *low = coop_fiber_new(overrun_fn, (void *)(intptr_t)10, 64 * 1024);
  coop_fiber *f = coop_fiber_new(overrun_fn, arg, 64 * 1024);
  CHECK(coop_fiber_resume(low) == 0 && coop_fiber_resume(low) == 1);
  CHECK(coop_fiber_resume(f) == 0 && coop_fiber_resume(f) == 1);
  coop_fiber_free(low);
  coop_fiber_free(f);
  exit(failures ? 1 : 0);
}

static void test_failures(void) {
  char err[2048];
  int n = 4;
  int st = in_child(run_deadlock, &n, err, sizeof err);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
  /* grouped by what they wait for, the fewest ranks first */
  CHECK(!strcmp(err, "contend: deadlock: 3 ranks parked and none runnable: rank 1 (an odd wait); "
                     "2 ranks (an even wait): 0, 2\n"));
  n = 20;
  st = in_child(run_deadlock, &n, err, sizeof err);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
  CHECK(!strcmp(err, "contend: deadlock: 19 ranks parked and none runnable: 9 ranks (an odd wait): "
                     "1, 3, 5, 7 and 5 more; 10 ranks (an even wait): 0, 2, 4, 6 and 6 more\n"));
  n = 31; /* ten reasons: eight named, the others counted */
  st = in_child(run_deadlock, &n, err, sizeof err);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 3);
  CHECK(strstr(err, "contend: deadlock: 30 ranks parked and none runnable: 3 ranks (wait 0): 0, "
                    "10, 20; 3 ranks (wait 1): 1, 11, 21;") &&
        strstr(err, "; 3 ranks (wait 7): 7, 17, 27; 6 more ranks waiting for other things\n") &&
        !strstr(err, "wait 8"));
  st = in_child(run_overflow, NULL, err, sizeof err);
  CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
  st = in_child(run_unguarded, (void *)(intptr_t)100, err, sizeof err); /* about 30 KiB */
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  st = in_child(run_unguarded, (void *)(intptr_t)250, err, sizeof err); /* about 75 KiB */
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) != 0 &&
        strstr(err, "fiber stack overflow: a rank used more than its 64 KiB stack"));
}

/* ---- many ranks ---- */

static long yields;
static long rss_pages0, rss_pages_all, maps_all; /* before coop_run; with every rank alive */

static long statm_resident(void) {
  long size = 0, resident = -1;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f && fscanf(f, "%ld %ld", &size, &resident) != 2)
    resident = -1;
  if (f)
    fclose(f);
  return resident;
}

static long count_maps(void) {
  FILE *f = fopen("/proc/self/maps", "r");
  long n = 0;
  for (int c; f && (c = fgetc(f)) != EOF;)
    n += c == '\n';
  if (f)
    fclose(f);
  return n;
}

static int many_body(int rank, void *arg) {
  const int times = *(int *)arg;
  if (rank == coop_size() - 1) { /* every other rank is alive, parked in its first yield */
    rss_pages_all = statm_resident();
    maps_all = count_maps();
  }
  for (int i = 0; i < times; i++) {
    yields++;
    coop_yield();
  }
  return rank == 0 ? 42 : rank % 7;
}

/* 65,536 ranks alive at once: more than two mappings per rank would allow
 * at Linux's default vm.max_map_count (65530), whatever it is here.  With
 * 1,000 guard pages allowed, the stacks take a few hundred mappings more
 * than the guards' 2,000; each rank costs the pages it touched (one or
 * two), not its 256 KiB. */
static void test_many(void) {
  enum { N = 65536 };
  int times = 5;
  int *status = malloc(sizeof(int) * N);
  struct timespec t0, t1;
  coop_fiber_set_guards(1000);
  const long maps0 = count_maps();
  rss_pages0 = statm_resident();
  clock_gettime(CLOCK_MONOTONIC, &t0);
  CHECK(coop_run(N, many_body, &times, status) == 42);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  CHECK(yields == (long)N * times);
  int ok = 1;
  for (int r = 1; r < N; r++)
    ok &= status[r] == r % 7;
  CHECK(ok);
  free(status);
  const double kib = (double)(rss_pages_all - rss_pages0) * (double)sysconf(_SC_PAGESIZE) / 1024.0;
  CHECK(rss_pages0 > 0 && kib / N <= 16.0);
  CHECK(maps_all - maps0 < 2000 + 1000);
  printf("coop: %d ranks x %d yields in %.3f s, %.1f KiB and %.3f mappings per rank\n", N, times,
         (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec), kib / N,
         (double)(maps_all - maps0) / N);
}

int main(void) {
  test_fibers();
  test_order();
  test_failures();
  test_many();
  if (failures) {
    fprintf(stderr, "test_coop: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_coop: %d checks passed\n", checks);
  return 0;
}
