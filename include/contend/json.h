/* contend: a small streaming JSON writer into a contend_strbuf.
 *
 * Keys are passed with each value (NULL inside arrays).  Doubles are
 * written with the fewest of 15 or 17 significant digits that round-trip
 * exactly, always with a decimal point or an exponent (1.0, not 1: a
 * double stays a double for JSON readers); NaN and infinities are written
 * as null.  Strings are escaped. */
#ifndef CONTEND_JSON_H
#define CONTEND_JSON_H

#include <stdint.h>

#include "contend/strbuf.h"

#define CONTEND_JSON_MAX_DEPTH 32

typedef struct contend_json {
  contend_strbuf *out;
  int depth;
  int count[CONTEND_JSON_MAX_DEPTH]; /* values written at each level */
} contend_json;

void contend_json_init(contend_json *j, contend_strbuf *out);
void contend_json_obj_begin(contend_json *j, const char *key);
void contend_json_obj_end(contend_json *j);
void contend_json_arr_begin(contend_json *j, const char *key);
void contend_json_arr_end(contend_json *j);
void contend_json_int(contend_json *j, const char *key, int64_t v);
void contend_json_uint(contend_json *j, const char *key, uint64_t v);
void contend_json_double(contend_json *j, const char *key, double v);
/* A count kept in a double (bytes, messages, calls summed over ranks):
 * written as a JSON integer when it is whole and below 2^53, else as
 * contend_json_double writes it. */
void contend_json_count(contend_json *j, const char *key, double v);
void contend_json_bool(contend_json *j, const char *key, int v);
void contend_json_str(contend_json *j, const char *key, const char *v); /* NULL -> null */
void contend_json_null(contend_json *j, const char *key);

#endif
