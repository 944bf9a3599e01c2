#include "contend/param.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "contend/json.h"
#include "contend/strbuf.h"
#include "error.h"

static int key_eq(const char *def, const char *user) {
  for (; *def && *user; def++, user++) {
    char u = *user == '-' ? '_' : *user;
    if (*def != u)
      return 0;
  }
  return *def == 0 && *user == 0;
}

int contend_params_find(const contend_params *p, const char *key) {
  for (size_t i = 0; i < p->n; i++)
    if (key_eq(p->defs[i].key, key))
      return (int)i;
  return -1;
}

static void option_name(const contend_params *p, int idx, char *buf, size_t len) {
  char key[128];
  snprintf(key, sizeof key, "%s", p->defs[idx].key);
  if (!p->scope || !*p->scope) /* global options are spelled with dashes */
    for (char *c = key; *c; c++)
      if (*c == '_')
        *c = '-';
  if (p->scope && *p->scope)
    snprintf(buf, len, "--%s.%s", p->scope, key);
  else
    snprintf(buf, len, "--%s", key);
}

static int parse_range_error(const contend_params *p, int idx, const char *text, const char *what,
                             char *err, size_t errlen) {
  const contend_param_def *d = &p->defs[idx];
  char opt[160];
  option_name(p, idx, opt, sizeof opt);
  if (d->min <= d->max)
    snprintf(err, errlen, "%s: '%s' is not valid: expected %s in [%g, %g]%s%s", opt, text, what,
             d->min, d->max, d->unit && *d->unit ? " " : "", d->unit ? d->unit : "");
  else
    snprintf(err, errlen, "%s: '%s' is not valid: expected %s", opt, text, what);
  return -1;
}

int contend_params_set(contend_params *p, int idx, const char *text, char *err, size_t errlen) {
  const contend_param_def *d = &p->defs[idx];
  contend_param_value *v = &p->v[idx];
  char *end = NULL;
  errno = 0;
  switch (d->type) {
  case CONTEND_P_INT: {
    long long x = strtoll(text, &end, 10);
    double dx = (double)x;
    /* accept exponent forms such as 1e4 if they are whole numbers */
    if (end == text || *end) {
      double y = strtod(text, &end);
      /* 2^63 is exact in a double: outside [-2^63, 2^63) no long long holds y */
      if (end == text || *end || !isfinite(y) || y != floor(y) || y < -0x1p63 || y >= 0x1p63)
        return parse_range_error(p, idx, text, "a whole number", err, errlen);
      x = (long long)y;
      dx = y;
    }
    if (errno == ERANGE || (d->min <= d->max && (dx < d->min || dx > d->max)))
      return parse_range_error(p, idx, text, "a whole number", err, errlen);
    v->i = x;
    v->d = (double)x;
    break;
  }
  case CONTEND_P_DOUBLE: {
    double x = strtod(text, &end);
    if (end == text || *end || !isfinite(x) || errno == ERANGE ||
        (d->min <= d->max && (x < d->min || x > d->max)))
      return parse_range_error(p, idx, text, "a number", err, errlen);
    v->d = x;
    v->i = x < -0x1p63 ? INT64_MIN : x >= 0x1p63 ? INT64_MAX : (int64_t)x; /* no UB cast */
    break;
  }
  case CONTEND_P_BOOL:
    if (!strcasecmp(text, "1") || !strcasecmp(text, "true") || !strcasecmp(text, "yes") ||
        !strcasecmp(text, "on"))
      v->i = 1;
    else if (!strcasecmp(text, "0") || !strcasecmp(text, "false") || !strcasecmp(text, "no") ||
             !strcasecmp(text, "off"))
      v->i = 0;
    else
      return parse_range_error(p, idx, text, "true or false", err, errlen);
    v->d = (double)v->i;
    break;
  case CONTEND_P_LIST:
    if (v->set && v->s && *v->s && *text) { /* a repeated option appends */
      const size_t a = strlen(v->s), b = strlen(text);
      char *s = malloc(a + b + 2);
      if (!s)
        return parse_range_error(p, idx, text, "text (out of memory)", err, errlen);
      memcpy(s, v->s, a);
      s[a] = ',';
      memcpy(s + a + 1, text, b + 1);
      free(v->s);
      v->s = s;
      break;
    }
    /* fall through */
  case CONTEND_P_STRING:
  case CONTEND_P_FILE_IN:
  case CONTEND_P_FILE_OUT: {
    char *s = strdup(text);
    if (!s)
      return parse_range_error(p, idx, text, "text (out of memory)", err, errlen);
    free(v->s);
    v->s = s;
    break;
  }
  case CONTEND_P_SEED:
    if (!strcasecmp(text, "time")) {
      v->is_time = 1;
      v->i = 0;
    } else {
      if (text[0] == '-')
        return parse_range_error(p, idx, text, "a whole number >= 0 or 'time'", err, errlen);
      unsigned long long x = strtoull(text, &end, 0);
      if (end == text || *end || errno == ERANGE)
        return parse_range_error(p, idx, text, "a whole number >= 0 or 'time'", err, errlen);
      v->is_time = 0;
      v->i = (int64_t)x;
    }
    break;
  }
  v->set = 1;
  return 0;
}

void contend_params_keys(const contend_params *p, char *buf, size_t len) {
  size_t o = 0;
  buf[0] = 0;
  for (size_t i = 0; i < p->n && o + 1 < len; i++)
    o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "", p->defs[i].key);
}

/* "4KiB" -> "4096" for byte-sized integers, "350us" -> "0.00035" for
 * seconds; other text is copied unchanged (the parameter table checks it). */
static void with_units(const contend_param_def *d, const char *in, char *out, size_t len) {
  snprintf(out, len, "%s", in);
  if (!((d->type == CONTEND_P_INT && !strcmp(d->unit, "B")) ||
        (d->type == CONTEND_P_DOUBLE && !strcmp(d->unit, "s"))))
    return;
  char *end = NULL;
  errno = 0;
  double v = strtod(in, &end);
  if (end == in || !*end || errno)
    return;
  static const struct {
    const char *suffix;
    double factor;
    int bytes;
  } units[] = {
      {"B", 1, 1},
      {"KiB", 1024.0, 1},
      {"MiB", 1048576.0, 1},
      {"GiB", 1073741824.0, 1},
      {"k", 1024.0, 1},
      {"K", 1024.0, 1},
      {"m", 1048576.0, 1},
      {"M", 1048576.0, 1},
      {"g", 1073741824.0, 1},
      {"G", 1073741824.0, 1},
      {"KB", 1e3, 1},
      {"MB", 1e6, 1},
      {"GB", 1e9, 1},
      {"ns", 1e-9, 0},
      {"us", 1e-6, 0},
      {"ms", 1e-3, 0},
      {"s", 1, 0},
      {"min", 60, 0},
  };
  const int bytes = d->type == CONTEND_P_INT;
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (units[i].bytes == bytes && !strcmp(end, units[i].suffix)) {
      double x = v * units[i].factor;
      if (bytes) {
        if (x == floor(x) && fabs(x) < 9e15)
          snprintf(out, len, "%.0f", x);
      } else {
        snprintf(out, len, "%.17g", x);
      }
      return;
    }
}

int contend_params_set_item(contend_params *p, const char *key, const char *text, char *given,
                            char *err, size_t errlen) {
  const int idx = contend_params_find(p, key);
  if (idx < 0) {
    char keys[512];
    contend_params_keys(p, keys, sizeof keys);
    snprintf(err, errlen, "no parameter '%s' (the parameters: %s)", key, p->n ? keys : "none");
    return -1;
  }
  if (given[idx]) {
    snprintf(err, errlen, "parameter '%s' is given twice", p->defs[idx].key);
    return -1;
  }
  given[idx] = 1;
  char conv[512], perr[1024];
  if (strlen(text) >= sizeof conv) {
    snprintf(err, errlen, "the value of %s has %zu characters, more than the limit of %zu",
             p->defs[idx].key, strlen(text), sizeof conv - 1);
    return -1;
  }
  with_units(&p->defs[idx], text, conv, sizeof conv);
  if (contend_params_set(p, idx, conv, perr, sizeof perr)) {
    /* "--scope.key: 'v' is not valid: ..." -> "key='v' is not valid: ..." */
    const char *why = strstr(perr, " is not valid");
    if (why)
      snprintf(err, errlen, "%s='%s'%s", p->defs[idx].key, text, why);
    else
      snprintf(err, errlen, "%s", perr);
    return -1;
  }
  return idx;
}

int contend_params_set_items(contend_params *p, const char *items, char sep, char *err,
                             size_t errlen) {
  char *given = calloc(p->n ? p->n : 1, 1);
  if (!given) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  int rc = 0;
  for (const char *at = items; at && *at && !rc;) {
    const char *end = strchr(at, sep);
    const size_t len = end ? (size_t)(end - at) : strlen(at);
    char item[512];
    if (len >= sizeof item) {
      snprintf(err, errlen, "an item of '%.40s...' has %zu characters, more than the limit of %zu",
               items, len, sizeof item - 1);
      rc = -1;
      break;
    }
    memcpy(item, at, len);
    item[len] = 0;
    char *eq = strchr(item, '=');
    if (!eq || eq == item) {
      snprintf(err, errlen, "expected key=value, got '%s'", item);
      rc = -1;
    } else {
      *eq = 0;
      rc = contend_params_set_item(p, item, eq + 1, given, err, errlen) < 0 ? -1 : 0;
    }
    at = end ? end + 1 : NULL;
  }
  free(given);
  return rc;
}

int contend_params_init(contend_params *p, const contend_param_def *defs, const char *scope,
                        char *err, size_t errlen) {
  size_t n = 0;
  while (defs[n].key)
    n++;
  p->defs = defs;
  p->n = n;
  p->scope = scope;
  p->v = calloc(n ? n : 1, sizeof *p->v);
  if (!p->v) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (contend_params_set(p, (int)i, defs[i].def, err, errlen))
      return -1;
    p->v[i].set = 0;
  }
  return 0;
}

void contend_params_free(contend_params *p) {
  if (!p->v)
    return;
  for (size_t i = 0; i < p->n; i++)
    free(p->v[i].s);
  free(p->v);
  p->v = NULL;
}

static const contend_param_value *get(const contend_params *p, const char *key) {
  int i = contend_params_find(p, key);
  if (i < 0) {
    fprintf(stderr, "contend: internal error: no parameter '%s' in scope '%s'\n", key,
            p->scope ? p->scope : "");
    abort();
  }
  return &p->v[i];
}

int64_t contend_param_int(const contend_params *p, const char *key) { return get(p, key)->i; }
double contend_param_double(const contend_params *p, const char *key) { return get(p, key)->d; }
int contend_param_bool(const contend_params *p, const char *key) { return get(p, key)->i != 0; }
const char *contend_param_str(const contend_params *p, const char *key) {
  const char *s = get(p, key)->s;
  return s ? s : "";
}
int contend_param_is_set(const contend_params *p, const char *key) { return get(p, key)->set; }

void contend_params_format(const contend_params *p, int idx, char *buf, size_t len) {
  const contend_param_value *v = &p->v[idx];
  switch (p->defs[idx].type) {
  case CONTEND_P_INT:
    snprintf(buf, len, "%lld", (long long)v->i);
    break;
  case CONTEND_P_DOUBLE:
    snprintf(buf, len, "%g", v->d);
    break;
  case CONTEND_P_BOOL:
    snprintf(buf, len, "%s", v->i ? "true" : "false");
    break;
  case CONTEND_P_STRING:
  case CONTEND_P_LIST:
  case CONTEND_P_FILE_IN:
  case CONTEND_P_FILE_OUT:
    snprintf(buf, len, "%s", v->s ? v->s : "");
    break;
  case CONTEND_P_SEED:
    if (v->is_time)
      snprintf(buf, len, "time");
    else
      snprintf(buf, len, "%llu", (unsigned long long)v->i);
    break;
  }
}

void contend_params_help(const contend_params *p, const char *prefix, contend_strbuf *out) {
  (void)prefix;
  for (size_t i = 0; i < p->n; i++) {
    const contend_param_def *d = &p->defs[i];
    char opt[160], arg[32] = "";
    option_name(p, (int)i, opt, sizeof opt);
    switch (d->type) {
    case CONTEND_P_INT:
      snprintf(arg, sizeof arg, " N");
      break;
    case CONTEND_P_DOUBLE:
      snprintf(arg, sizeof arg, " X");
      break;
    case CONTEND_P_STRING:
      snprintf(arg, sizeof arg, " TEXT");
      break;
    case CONTEND_P_LIST:
      snprintf(arg, sizeof arg, " TEXT (repeatable)");
      break;
    case CONTEND_P_FILE_IN:
    case CONTEND_P_FILE_OUT:
      snprintf(arg, sizeof arg, " FILE");
      break;
    case CONTEND_P_SEED:
      snprintf(arg, sizeof arg, " N|time");
      break;
    case CONTEND_P_BOOL:
      break;
    }
    char head[200];
    snprintf(head, sizeof head, "%s%s", opt, arg);
    contend_sb_printf(out, "  %-34s %s", head, d->help);
    contend_sb_printf(out, " [");
    if (d->unit && *d->unit)
      contend_sb_printf(out, "unit %s, ", d->unit);
    if (d->type == CONTEND_P_BOOL)
      contend_sb_printf(out, "default %s]\n", strcmp(d->def, "0") ? "on" : "off");
    else
      contend_sb_printf(out, "default %s]\n", *d->def ? d->def : "none");
  }
}

int contend_params_set_arg(contend_params *p, int idx, const char *opt, const char *val, int argc,
                           char **argv, int *a, char *err, size_t errlen) {
  if (!val) {
    if (p->defs[idx].type == CONTEND_P_BOOL)
      val = "1";
    else if (*a + 1 < argc)
      val = argv[++*a];
    else {
      snprintf(err, errlen, "%s: missing value", opt);
      return -1;
    }
  }
  return contend_params_set(p, idx, val, err, errlen);
}

contend_param_def *contend_param_defs_join(const contend_param_def *a, const contend_param_def *b) {
  size_t na = 0, nb = 0;
  while (a[na].key)
    na++;
  while (b[nb].key)
    nb++;
  contend_param_def *d = malloc(sizeof *d * (na + nb + 1));
  if (!d)
    contend_fail("out of memory");
  memcpy(d, a, sizeof *d * na);
  memcpy(d + na, b, sizeof *d * nb);
  d[na + nb] = (contend_param_def)CONTEND_PARAM_END;
  return d;
}

int contend_params_parse_argv(contend_params *p, int argc, char **argv, int first, char *err,
                              size_t errlen) {
  for (int a = first; a < argc; a++) {
    const char *arg = argv[a];
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
      return 1;
    char key[128];
    const char *val = NULL;
    if (!contend_option_split(arg, key, sizeof key, &val)) {
      snprintf(err, errlen, "unexpected argument '%s'", arg);
      return -1;
    }
    const int idx = contend_params_find(p, key);
    if (idx < 0) {
      snprintf(err, errlen, "unknown option '%s'", arg);
      return -1;
    }
    if (contend_params_set_arg(p, idx, arg, val, argc, argv, &a, err, errlen))
      return -1;
  }
  return 0;
}

void contend_params_json(contend_json *j, const char *key, const contend_params *p, uint64_t seed) {
  contend_json_obj_begin(j, key);
  for (size_t i = 0; i < p->n; i++) {
    const contend_param_def *d = &p->defs[i];
    const contend_param_value *v = &p->v[i];
    switch (d->type) {
    case CONTEND_P_INT:
      contend_json_int(j, d->key, v->i);
      break;
    case CONTEND_P_DOUBLE:
      contend_json_double(j, d->key, v->d);
      break;
    case CONTEND_P_BOOL:
      contend_json_bool(j, d->key, (int)v->i);
      break;
    case CONTEND_P_STRING:
    case CONTEND_P_LIST:
    case CONTEND_P_FILE_IN:
    case CONTEND_P_FILE_OUT:
      contend_json_str(j, d->key, v->s ? v->s : "");
      break;
    case CONTEND_P_SEED: /* "time" was resolved to the run's seed */
      contend_json_uint(j, d->key, v->is_time ? seed : (uint64_t)v->i);
      break;
    }
  }
  contend_json_obj_end(j);
}

int contend_option_split(const char *arg, char *key, size_t keylen, const char **val) {
  *val = NULL;
  if (!strcmp(arg, "-o") || !strcmp(arg, "-q")) {
    snprintf(key, keylen, "%s", arg[1] == 'o' ? "output" : "quiet");
    return 1;
  }
  if (strncmp(arg, "--", 2) || !arg[2])
    return 0;
  snprintf(key, keylen, "%s", arg + 2);
  char *eq = strchr(key, '=');
  if (eq) {
    *eq = 0;
    *val = arg + 2 + (eq - key) + 1;
  }
  return 1;
}

void contend_key_normalize(char *s) {
  for (; *s; s++)
    if (*s == '-')
      *s = '_';
}
