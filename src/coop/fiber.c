/* Fibers: stacks and context switches on Boost.Context's fcontext (see
 * fiber.h for the model and ownership). */
#include "fiber.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../core/error.h"

/* Under valgrind, registered stacks make switches look like switches, not
 * like huge stack frames (header only: nothing to link). */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define COOP_VALGRIND 1
#endif
#endif

/* Boost.Context's C-callable switch (libboost_context, extern "C"):
 * make_fcontext prepares a context that will call fn on the stack whose
 * top is sp; jump_fcontext suspends the caller and resumes `to`, handing
 * it vp; it returns when some context jumps back, with that context's
 * suspended state and the pointer it passed.  fn must never return. */
typedef void *fcontext_t;
typedef struct {
  fcontext_t fctx;
  void *data;
} transfer_t;
transfer_t jump_fcontext(fcontext_t const to, void *vp);
fcontext_t make_fcontext(void *sp, size_t size, void (*fn)(transfer_t));

struct coop_fiber {
  fcontext_t self;   /* the fiber's suspended state (valid while not running) */
  fcontext_t caller; /* its resumer's suspended state (valid while running) */
  void (*fn)(void *arg);
  void *arg;
  void *map; /* guard page + stack */
  size_t map_len;
  int done, running;
  unsigned valgrind_id;
};

static coop_fiber *g_current;

static void entry(transfer_t t) {
  coop_fiber *f = t.data;
  f->caller = t.fctx;
  f->fn(f->arg);
  f->done = 1;
  jump_fcontext(f->caller, NULL); /* never resumed again */
  abort();
}

coop_fiber *coop_fiber_new(void (*fn)(void *arg), void *arg, size_t stack_bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!stack_bytes)
    stack_bytes = COOP_STACK_DEFAULT;
  stack_bytes = (stack_bytes + page - 1) / page * page;
  coop_fiber *f = calloc(1, sizeof *f);
  if (!f)
    contend_fail("out of memory (fiber)");
  f->map_len = stack_bytes + page;
  f->map = mmap(NULL, f->map_len, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (f->map == MAP_FAILED)
    contend_fail("cannot map a fiber stack of %zu B: %s (too many ranks for vm.max_map_count?)",
                 f->map_len, strerror(errno));
  if (mprotect(f->map, page, PROT_NONE))
    contend_fail("cannot protect a fiber stack's guard page: %s (too many ranks for "
                 "vm.max_map_count?)",
                 strerror(errno));
  f->fn = fn;
  f->arg = arg;
#ifdef COOP_VALGRIND
  f->valgrind_id = VALGRIND_STACK_REGISTER((char *)f->map + page, (char *)f->map + f->map_len);
#endif
  f->self = make_fcontext((char *)f->map + f->map_len, stack_bytes, entry);
  return f;
}

int coop_fiber_resume(coop_fiber *f) {
  if (f->done || f->running)
    contend_fail("internal error: resuming a fiber that is %s", f->done ? "finished" : "running");
  coop_fiber *prev = g_current;
  g_current = f;
  f->running = 1;
  transfer_t t = jump_fcontext(f->self, f);
  f->self = t.fctx;
  f->running = 0;
  g_current = prev;
  return f->done;
}

void coop_fiber_suspend(void) {
  coop_fiber *f = g_current;
  if (!f)
    contend_fail("internal error: fiber suspend outside a fiber");
  transfer_t t = jump_fcontext(f->caller, NULL);
  f->caller = t.fctx;
}

coop_fiber *coop_fiber_current(void) { return g_current; }

int coop_fiber_done(const coop_fiber *f) { return f->done; }

void coop_fiber_free(coop_fiber *f) {
  if (!f)
    return;
  if (f->running)
    contend_fail("internal error: freeing a running fiber");
#ifdef COOP_VALGRIND
  VALGRIND_STACK_DEREGISTER(f->valgrind_id);
#endif
  munmap(f->map, f->map_len);
  free(f);
}

#define MAP_RESERVE 4096                       /* mappings kept for libraries, heap, MPI */
#define AS_RESERVE ((size_t)512 * 1024 * 1024) /* address space kept beside the stacks */

/* A number from a small text file, or -1. */
static long long read_number(const char *path, int field) {
  FILE *f = fopen(path, "r");
  long long v = -1;
  for (int i = 0; f && i <= field; i++)
    if (fscanf(f, "%lld", &v) != 1)
      v = -1;
  if (f)
    fclose(f);
  return v;
}

long coop_fiber_limit(char *why, size_t len) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  long limit = COOP_FIBERS_MAX;
  snprintf(why, len, "the fixed maximum of %ld per process", (long)COOP_FIBERS_MAX);
  const long long maps = read_number("/proc/sys/vm/max_map_count", 0);
  if (maps > 0) {
    const long n = maps > MAP_RESERVE ? (long)((maps - MAP_RESERVE) / 2) : 0;
    if (n < limit) {
      limit = n;
      snprintf(why, len,
               "vm.max_map_count is %lld and every rank takes 2 memory mappings (its stack and "
               "guard page)",
               maps);
    }
  }
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    const long long pages = read_number("/proc/self/statm", 0); /* mapped now */
    const size_t used = pages > 0 ? (size_t)pages * page : 0;
    const size_t room =
        (size_t)rl.rlim_cur > used + AS_RESERVE ? (size_t)rl.rlim_cur - used - AS_RESERVE : 0;
    const long n = (long)(room / (COOP_STACK_DEFAULT + page));
    if (n < limit) {
      limit = n;
      snprintf(why, len,
               "the address-space limit (ulimit -v) of %.0f MiB leaves room for that many "
               "stacks of %zu KiB",
               (double)rl.rlim_cur / 1048576.0, (COOP_STACK_DEFAULT + page) / 1024);
    }
  }
  return limit;
}

int coop_ranks_check(const char *engine, const char *nodes_from, long long nodes, long long ppn,
                     char *err, size_t errlen) {
  char why[256];
  const long limit = coop_fiber_limit(why, sizeof why);
  const double ranks = (double)nodes * (double)ppn;
  if (ranks <= (double)limit)
    return 0;
  snprintf(err, errlen,
           "%s %lld nodes x --ranks-per-node %lld = %.0f ranks: the %s engine plays every rank "
           "as a user-level context of this process, at most %ld here (%s)",
           nodes_from, nodes, ppn, ranks, engine, limit, why);
  return -1;
}
