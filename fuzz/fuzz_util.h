/* Helpers shared by the fuzz harnesses (fuzz_util.c): a private scratch
 * directory, argv from lines, and the check every harness makes of a
 * parser's failure. */
#ifndef CONTEND_FUZZ_UTIL_H
#define CONTEND_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Makes a fresh directory under $TMPDIR (else /dev/shm, else /tmp),
 * removed at exit;
 * returns its absolute path (static storage).  Idempotent.  The working
 * directory is left alone: libFuzzer writes to corpus paths given
 * relative to it. */
const char *fuzz_scratch(void);

/* A NUL-terminated copy of data (malloc'd; the caller frees). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/* Splits text in place at '\n' into at most max pointers; returns the
 * count.  Empty lines are kept (an empty argument is an input too). */
int fuzz_split_lines(char *text, char **out, int max);

/* The contract of every parser's failure: a message, one line, not
 * empty.  Aborts (a finding) when err breaks it; what names the parser.
 * With CONTEND_FUZZ_VERBOSE set in the environment, prints every message
 * (to see why a replayed input is refused). */
void fuzz_check_message(const char *what, const char *err);

#endif
