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
  char *slot;      /* guard page (or not) + stack, in a chunk of the stack pool */
  size_t slot_len; /* page + stack bytes */
  int done, running;
  int guarded;            /* the slot's lowest page is PROT_NONE */
  struct coop_fiber *nxt; /* in its size's free list, once freed */
  unsigned valgrind_id;
};

/* The stack pool: slots of one size are carved from chunk mappings of
 * SLOTS_PER_CHUNK slots (MAP_NORESERVE: a slot costs the pages its fiber
 * touched), so 65,536 fibers take a few hundred mappings, not 131,072.  A
 * freed fiber keeps its slot on its size's free list (pages released with
 * MADV_DONTNEED); chunks stay mapped for the process's lifetime.  Guard
 * pages split a chunk's mapping (two more mappings each), so only the
 * first fibers get one, as many as vm.max_map_count leaves
 * (g_guards); the others rely on the stack-pointer check at every
 * suspend (overflow_check). */
#define SLOTS_PER_CHUNK 256
#define SIZE_CLASSES 8
static struct {
  size_t slot_len;
  char *chunk;      /* the chunk being carved */
  int carved;       /* slots taken from it */
  coop_fiber *free; /* freed fibers of this slot size (their slots kept) */
} g_class[SIZE_CLASSES];
static long g_guards = -1; /* guard pages still allowed (-1: not computed yet) */

static coop_fiber *g_current;

static void entry(transfer_t t) {
  coop_fiber *f = t.data;
  f->caller = t.fctx;
  f->fn(f->arg);
  f->done = 1;
  jump_fcontext(f->caller, NULL); /* never resumed again */
  abort();
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

/* A fiber struct with a slot of slot_len bytes (new or from the free list). */
static coop_fiber *slot_get(size_t slot_len, size_t page) {
  int c = 0;
  while (c < SIZE_CLASSES && g_class[c].slot_len && g_class[c].slot_len != slot_len)
    c++;
  if (c == SIZE_CLASSES)
    contend_fail("internal error: more than %d fiber stack sizes", SIZE_CLASSES);
  g_class[c].slot_len = slot_len;
  coop_fiber *f = g_class[c].free;
  if (f) {
    g_class[c].free = f->nxt;
    const int guarded = f->guarded;
    char *slot = f->slot;
    memset(f, 0, sizeof *f);
    f->slot = slot;
    f->slot_len = slot_len;
    f->guarded = guarded;
    return f;
  }
  if (!g_class[c].chunk || g_class[c].carved == SLOTS_PER_CHUNK) {
    void *m = mmap(NULL, slot_len * SLOTS_PER_CHUNK, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
      contend_fail("cannot map fiber stacks (%d of %zu KiB): %s (too many ranks for the "
                   "address-space limit?)",
                   SLOTS_PER_CHUNK, slot_len / 1024, strerror(errno));
    g_class[c].chunk = m;
    g_class[c].carved = 0;
  }
  f = calloc(1, sizeof *f);
  if (!f)
    contend_fail("out of memory (fiber)");
  f->slot = g_class[c].chunk + slot_len * (size_t)g_class[c].carved++;
  f->slot_len = slot_len;
  if (g_guards < 0) {
    const long long maps = read_number("/proc/sys/vm/max_map_count", 0);
    g_guards =
        maps > 0 ? (maps > MAP_RESERVE ? (long)((maps - MAP_RESERVE) / 2) : 0) : COOP_FIBERS_MAX;
  }
  if (g_guards > 0 && !mprotect(f->slot, page, PROT_NONE)) {
    f->guarded = 1;
    g_guards--;
  }
  return f;
}

coop_fiber *coop_fiber_new(void (*fn)(void *arg), void *arg, size_t stack_bytes) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!stack_bytes)
    stack_bytes = COOP_STACK_DEFAULT;
  stack_bytes = (stack_bytes + page - 1) / page * page;
  coop_fiber *f = slot_get(stack_bytes + page, page);
  f->fn = fn;
  f->arg = arg;
#ifdef COOP_VALGRIND
  f->valgrind_id = VALGRIND_STACK_REGISTER(f->slot + page, f->slot + f->slot_len);
#endif
  f->self = make_fcontext(f->slot + f->slot_len, stack_bytes, entry);
  return f;
}

void coop_fiber_set_guards(long n) { g_guards = n; }

/* Unguarded stacks: a fiber that suspends below its stack's lowest
 * usable page has overrun it (into a neighbour's slot): end the run
 * before the neighbour resumes on a corrupt stack.  Costs one compare per
 * switch; an overrun that returns before suspending goes unseen. */
static void overflow_check(const coop_fiber *f, const char *sp) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (!f->guarded && sp < f->slot + 2 * page)
    contend_fail("fiber stack overflow: a rank used more than its %zu KiB stack",
                 (f->slot_len - page) / 1024);
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
  char here;
  overflow_check(f, &here);
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
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  madvise(f->slot + page, f->slot_len - page, MADV_DONTNEED); /* its touched pages go back */
  int c = 0;
  while (g_class[c].slot_len != f->slot_len)
    c++;
  f->nxt = g_class[c].free;
  g_class[c].free = f;
}

long coop_fiber_limit(char *why, size_t len) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  long limit = COOP_FIBERS_MAX;
  snprintf(why, len, "the fixed maximum of %ld per process", (long)COOP_FIBERS_MAX);
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
