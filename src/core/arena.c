/* Engine memory for in-process engines (see arena.h). */
#include "arena.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"

/* From this size on, blocks are their own mappings. */
#define ARENA_MAP_BYTES ((size_t)64 * 1024)

typedef struct contend_arena_block {
  void *p;
  size_t len; /* > 0: a mapping of len bytes; 0: heap */
} contend_arena_block;

void *contend_arena_alloc(contend_arena *a, size_t bytes) {
  if (a->n == a->cap) {
    const int cap = a->cap ? 2 * a->cap : 8;
    contend_arena_block *b = realloc(a->b, sizeof *b * (size_t)cap);
    if (!b)
      contend_fail("out of memory (engine buffers)");
    a->b = b;
    a->cap = cap;
  }
  contend_arena_block m = {NULL, 0};
  if (bytes >= ARENA_MAP_BYTES) {
    m.p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
               0);
    if (m.p == MAP_FAILED)
      contend_fail("engine buffer of %zu B: %s", bytes, strerror(errno));
    m.len = bytes;
  } else if (!(m.p = calloc(1, bytes ? bytes : 1))) {
    contend_fail("out of memory: engine buffer of %zu B", bytes);
  }
  a->b[a->n++] = m;
  return m.p;
}

void contend_arena_release(contend_arena *a) {
  for (int k = 0; k < a->n; k++)
    if (a->b[k].len)
      munmap(a->b[k].p, a->b[k].len);
    else
      free(a->b[k].p);
  free(a->b);
  *a = (contend_arena){0};
}
