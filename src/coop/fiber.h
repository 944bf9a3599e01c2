/* User-level execution contexts (fibers) for the in-process engines, on
 * Boost.Context's fcontext switch (called from C; no ucontext, no threads).
 *
 * Model: asymmetric coroutines.  Whoever calls coop_fiber_resume (the
 * "resumer", usually the scheduler on the process stack) runs the fiber
 * until it calls coop_fiber_suspend or its function returns; either way
 * control comes back to the resumer.  Resumes may nest (a fiber may resume
 * another fiber); a fiber must not resume itself or a fiber that is already
 * running.
 *
 * Stacks come from a pool of large private anonymous mappings with
 * MAP_NORESERVE (SLOTS_PER_CHUNK stacks each, see fiber.c): pages are
 * committed only when touched, so thousands of fibers with the default
 * 256 KiB stack cost what they use, and they take a few hundred kernel
 * memory mappings, not one or two each (vm.max_map_count, 65530 by
 * default, does not bound the fiber count).  Below each stack is a page
 * that is PROT_NONE, so an overflow faults (SIGSEGV) instead of
 * corrupting a neighbour, for as many fibers as vm.max_map_count leaves
 * room for (each guard page splits a mapping: two mappings); fibers past
 * that have no guard page and are checked instead: a fiber that suspends
 * with its stack pointer in its lowest usable page ends the run
 * ("fiber stack overflow").  Freed stacks are kept for reuse, their pages
 * released (MADV_DONTNEED).
 *
 * Ownership: coop_fiber_new returns a fiber owned by the caller, freed with
 * coop_fiber_free once it has finished or was never resumed (never while it
 * is suspended in the middle of its function: its stack would vanish under
 * it).  Allocation failures end the run (contend_fail). */
#ifndef CONTEND_COOP_FIBER_H
#define CONTEND_COOP_FIBER_H

#include <stddef.h>

#define COOP_STACK_DEFAULT ((size_t)256 * 1024)
/* The most fibers one process holds at once, whatever its limits. */
#define COOP_FIBERS_MAX (1L << 20)

typedef struct coop_fiber coop_fiber;

/* A fiber that will run fn(arg) on its own stack of stack_bytes (0: the
 * default; rounded up to whole pages, plus the guard page).  Nothing runs
 * until the first coop_fiber_resume. */
coop_fiber *coop_fiber_new(void (*fn)(void *arg), void *arg, size_t stack_bytes);

/* Runs f from where it last stopped until it suspends or finishes.
 * Returns 1 if fn has returned (f can then only be freed), 0 if f
 * suspended. */
int coop_fiber_resume(coop_fiber *f);

/* From inside a fiber: back to its resumer; returns when resumed again.
 * Outside any fiber it ends the run (a programming error). */
void coop_fiber_suspend(void);

/* The fiber running now (NULL on the process stack). */
coop_fiber *coop_fiber_current(void);

/* Whether fn has returned. */
int coop_fiber_done(const coop_fiber *f);

/* Test hook: at most n more fibers get a guard page (the others the
 * stack-pointer check).  Normally computed from vm.max_map_count. */
void coop_fiber_set_guards(long n);

/* Releases the stack's pages and frees f (NULL is fine); see the ownership rule. */
void coop_fiber_free(coop_fiber *f);

/* How many fibers of the default stack this process can hold at once:
 * the least of COOP_FIBERS_MAX and what RLIMIT_AS leaves (stack and
 * guard page each, less what is mapped already and a reserve).  why: which limit binds, for
 * messages. */
long coop_fiber_limit(char *why, size_t len);

/* The in-process engines' up-front check of their rank count: 0 when
 * nodes x ppn ranks fit coop_fiber_limit, else -1 with one line in err
 * naming where the nodes come from (nodes_from: "--nodes", "the
 * topology's"), --ranks-per-node, the engine and the limit. */
int coop_ranks_check(const char *engine, const char *nodes_from, long long nodes, long long ppn,
                     char *err, size_t errlen);

#endif
