/* Arrays that grow in place, each in a memory mapping of its own.  Growing
 * (mremap) copies nothing and leaves no freed copy behind in the heap, and
 * capacity not yet written takes no memory: a pool that doubles to hundreds
 * of MiB peaks at what it holds, not at the old and new arrays together
 * plus the heap realloc leaves behind.  For the simulator's pools of
 * packets, messages, credits and events.  Contents are page-aligned and
 * start zeroed. */
#ifndef CONTEND_CORE_VGROW_H
#define CONTEND_CORE_VGROW_H

#include <stddef.h>

/* The array p of *cap elements of elem bytes (p NULL, *cap 0: none yet),
 * grown by doubling to hold at least need (from 1024 elements or a page).
 * Returns its (possibly moved) base and updates *cap; the first *cap
 * elements keep their contents.  Ends the run naming what on failure. */
void *contend_vgrow(void *p, size_t *cap, size_t need, size_t elem, const char *what);
/* Unmaps an array of contend_vgrow (NULL: nothing). */
void contend_vgrow_free(void *p, size_t cap, size_t elem);

#endif
