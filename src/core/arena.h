/* Engine memory for motif buffers in the in-process engines: zeroed
 * blocks freed all at once when the context closes.  Large blocks are
 * private mappings whose pages nobody touches stay uncommitted, so
 * thousands of simulated ranks' message buffers cost nothing unless
 * written (calloc would reuse, and so commit, freed heap memory once
 * glibc's dynamic mmap threshold has grown). */
#ifndef CONTEND_CORE_ARENA_H
#define CONTEND_CORE_ARENA_H

#include <stddef.h>

typedef struct contend_arena {
  struct contend_arena_block *b;
  int n, cap;
} contend_arena;

/* Zeroed; ends the run on failure.  Owned by the arena. */
void *contend_arena_alloc(contend_arena *a, size_t bytes);
/* Frees every block; the arena is empty (reusable) afterwards. */
void contend_arena_release(contend_arena *a);

#endif
