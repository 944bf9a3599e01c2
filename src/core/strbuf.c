#include "contend/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and a terminating NUL. */
static void reserve(contend_strbuf *b, size_t n) {
  if (b->len + n + 1 <= b->cap)
    return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1)
    cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) {
    fprintf(stderr, "contend: out of memory\n");
    abort();
  }
  b->s = s;
  b->cap = cap;
}

void contend_sb_append(contend_strbuf *b, const void *data, size_t len) {
  reserve(b, len);
  if (len)
    memcpy(b->s + b->len, data, len);
  b->len += len;
  b->s[b->len] = 0;
}

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
  reserve(b, (size_t)n);
  vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap2);
  va_end(ap2);
  b->len += (size_t)n;
}

void contend_sb_free(contend_strbuf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
}
