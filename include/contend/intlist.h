/* contend: parsing lists of non-negative integers written as ranges. */
#ifndef CONTEND_INTLIST_H
#define CONTEND_INTLIST_H

#include <stddef.h>

/* Parses "A[-B]" items joined by any character of seps (e.g. "+" gives
 * 0-7+12, "," gives 0-7,12), each value in 0..max-1, ranges ascending.
 * On success *out (malloc'd, the caller frees) holds the *n values in
 * order (duplicates kept) and 0 is returned; else -1 with one message. */
int contend_parse_int_list(const char *s, const char *seps, int max, int **out, int *n, char *err,
                           size_t errlen);

#endif
