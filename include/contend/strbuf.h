/* contend: a growable string buffer (used for help text, tables, JSON, and
 * the records processes of a simulation swap). */
#ifndef CONTEND_STRBUF_H
#define CONTEND_STRBUF_H

#include <stddef.h>

typedef struct contend_strbuf {
  char *s;
  size_t len, cap;
} contend_strbuf;

void contend_sb_printf(contend_strbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends len bytes (any bytes: also a buffer of binary records). */
void contend_sb_append(contend_strbuf *b, const void *data, size_t len);
void contend_sb_free(contend_strbuf *b);

#endif
