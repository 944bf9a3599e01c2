/* The streaming JSON writer (contract in contend/json.h). */
#include "contend/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void contend_json_init(contend_json *j, contend_strbuf *out) {
  memset(j, 0, sizeof *j);
  j->out = out;
}

static void indent(contend_json *j) {
  contend_sb_printf(j->out, "\n");
  for (int i = 0; i < j->depth; i++)
    contend_sb_printf(j->out, "  ");
}

static void escaped(contend_strbuf *b, const char *s) {
  contend_sb_printf(b, "\"");
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    switch (*c) {
    case '"':
      contend_sb_printf(b, "\\\"");
      break;
    case '\\':
      contend_sb_printf(b, "\\\\");
      break;
    case '\n':
      contend_sb_printf(b, "\\n");
      break;
    case '\t':
      contend_sb_printf(b, "\\t");
      break;
    case '\r':
      contend_sb_printf(b, "\\r");
      break;
    default:
      if (*c < 0x20)
        contend_sb_printf(b, "\\u%04x", *c);
      else
        contend_sb_printf(b, "%c", *c);
    }
  }
  contend_sb_printf(b, "\"");
}

/* Separator, newline/indent and key before a value at the current level. */
static void lead(contend_json *j, const char *key) {
  if (j->depth > 0) {
    if (j->count[j->depth]++)
      contend_sb_printf(j->out, ",");
    indent(j);
  }
  if (key) {
    escaped(j->out, key);
    contend_sb_printf(j->out, ": ");
  }
}

static void json_open(contend_json *j, const char *key, const char *brace) {
  lead(j, key);
  contend_sb_printf(j->out, "%s", brace);
  if (j->depth + 1 < CONTEND_JSON_MAX_DEPTH)
    j->depth++;
  j->count[j->depth] = 0;
}

static void close_(contend_json *j, const char *brace) {
  int had = j->count[j->depth];
  if (j->depth > 0)
    j->depth--;
  if (had)
    indent(j);
  contend_sb_printf(j->out, "%s", brace);
  if (j->depth == 0)
    contend_sb_printf(j->out, "\n");
}

void contend_json_obj_begin(contend_json *j, const char *key) { json_open(j, key, "{"); }
void contend_json_obj_end(contend_json *j) { close_(j, "}"); }
void contend_json_arr_begin(contend_json *j, const char *key) { json_open(j, key, "["); }
void contend_json_arr_end(contend_json *j) { close_(j, "]"); }

void contend_json_int(contend_json *j, const char *key, int64_t v) {
  lead(j, key);
  contend_sb_printf(j->out, "%lld", (long long)v);
}

void contend_json_uint(contend_json *j, const char *key, uint64_t v) {
  lead(j, key);
  contend_sb_printf(j->out, "%llu", (unsigned long long)v);
}

void contend_json_double(contend_json *j, const char *key, double v) {
  lead(j, key);
  if (!isfinite(v)) {
    contend_sb_printf(j->out, "null");
    return;
  }
  /* shortest of %.15g/%.17g that reads back to the same double, always
   * with a decimal point or an exponent: JSON readers take 1 for an
   * integer, 1.0 for a double */
  char buf[48];
  snprintf(buf, sizeof buf, "%.15g", v);
  if (strtod(buf, NULL) != v)
    snprintf(buf, sizeof buf, "%.17g", v);
  contend_sb_printf(j->out, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
}

void contend_json_count(contend_json *j, const char *key, double v) {
  if (!(fabs(v) < 9007199254740992.0) || v != floor(v)) { /* NaN fails the first test */
    contend_json_double(j, key, v);
    return;
  }
  lead(j, key);
  contend_sb_printf(j->out, "%.0f", v == 0 ? 0.0 : v); /* no "-0" */
}

void contend_json_bool(contend_json *j, const char *key, int v) {
  lead(j, key);
  contend_sb_printf(j->out, "%s", v ? "true" : "false");
}

void contend_json_str(contend_json *j, const char *key, const char *v) {
  lead(j, key);
  if (v)
    escaped(j->out, v);
  else
    contend_sb_printf(j->out, "null");
}

void contend_json_null(contend_json *j, const char *key) {
  lead(j, key);
  contend_sb_printf(j->out, "null");
}
