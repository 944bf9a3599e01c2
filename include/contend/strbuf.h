/* contend: a growable string buffer (used for help text, tables, JSON). */
#ifndef CONTEND_STRBUF_H
#define CONTEND_STRBUF_H

#include <stddef.h>

typedef struct contend_strbuf {
  char *s;
  size_t len, cap;
} contend_strbuf;

void contend_sb_printf(contend_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void contend_sb_free(contend_strbuf *b);

#endif
