#include "contend/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void contend_sb_printf(contend_strbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    va_end(ap2);
    return;
  }
  if (b->len + (size_t)n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + (size_t)n + 1)
      cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
      fprintf(stderr, "contend: out of memory\n");
      abort();
    }
    b->s = s;
    b->cap = cap;
  }
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void contend_sb_free(contend_strbuf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}
