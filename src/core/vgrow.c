/* Arrays growing in place in their own mappings (see vgrow.h). */
#define _GNU_SOURCE
#include "vgrow.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "error.h"

static size_t page_round(size_t bytes) {
  const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  return (bytes + pg - 1) / pg * pg;
}

void *contend_vgrow(void *p, size_t *cap, size_t need, size_t elem, const char *what) {
  size_t c = *cap ? *cap : 1024;
  while (c < need) {
    if (c > SIZE_MAX / 2 / elem)
      contend_fail("out of memory (%s: %zu elements of %zu B)", what, need, elem);
    c *= 2;
  }
  if (p && c == *cap)
    return p;
  const size_t bytes = page_round(c * elem);
  void *q;
  if (!p)
    q = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
  else
    q = mremap(p, page_round(*cap * elem), bytes, MREMAP_MAYMOVE);
  if (q == MAP_FAILED)
    contend_fail("out of memory (%s: %zu B)", what, bytes);
  *cap = c;
  return q;
}

void contend_vgrow_free(void *p, size_t cap, size_t elem) {
  if (p)
    munmap(p, page_round(cap * elem));
}
