/* contend: parameter tables.
 *
 * Every tunable is declared exactly once as a row of a contend_param_def
 * table (key, type, default, unit, help, range).  The same rows drive the
 * command line (--key VALUE), --help, validation, job files and the
 * configuration recorded in the results.  Values live in a contend_params
 * object created from a table; parsing functions never exit: they return
 * a non-zero status and a message the caller reports (exit status 2).
 */
#ifndef CONTEND_PARAM_H
#define CONTEND_PARAM_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
  CONTEND_P_INT,      /* int64, range [min, max] */
  CONTEND_P_DOUBLE,   /* double, range [min, max] */
  CONTEND_P_BOOL,     /* flag: "--key" alone sets it; also true/false/1/0 */
  CONTEND_P_STRING,   /* free text (lists, specs); validated by the owner */
  CONTEND_P_SEED,     /* uint64, or the word "time" (the default) */
  CONTEND_P_FILE_IN,  /* a path the command reads (text; contend/files.h checks it) */
  CONTEND_P_FILE_OUT, /* a path the command writes (text; contend/files.h checks it) */
  CONTEND_P_LIST, /* items, comma-separated; a repeated option appends (validated by the owner) */
} contend_param_type;

typedef struct contend_param_def {
  const char *key; /* snake_case; the option is --key with '_' or '-' */
  contend_param_type type;
  const char *def;  /* default, as text (parsed like user input) */
  const char *unit; /* "B", "s", "count", "fraction", ... or "" */
  const char *help;
  double min, max; /* inclusive range for INT/DOUBLE (ignored if min > max) */
} contend_param_def;

/* Table terminator. */
#define CONTEND_PARAM_END                                                                          \
  { NULL, CONTEND_P_INT, NULL, NULL, NULL, 0, 0 }

typedef struct contend_param_value {
  int64_t i;
  double d;
  char *s;     /* owned copy (STRING, FILE_IN, FILE_OUT); NULL otherwise */
  int set;     /* 1 if given by the user (not the default) */
  int is_time; /* SEED: "time" requested */
} contend_param_value;

typedef struct contend_params {
  const contend_param_def *defs;
  size_t n;
  contend_param_value *v;
  const char *scope; /* "" for globals, motif name for per-test tables */
} contend_params;

/* Creates the values of a table, each at its default.  Returns 0, or -1
 * with a message in err if a default does not parse (a programming error). */
int contend_params_init(contend_params *p, const contend_param_def *defs, const char *scope,
                        char *err, size_t errlen);
void contend_params_free(contend_params *p);

/* Index of key (accepts '-' for '_'), or -1. */
int contend_params_find(const contend_params *p, const char *key);

/* Parses text into row idx, checking type and range.  Returns 0 or -1 with
 * a message naming the option, the bad value and what is valid. */
int contend_params_set(contend_params *p, int idx, const char *text, char *err, size_t errlen);

/* The table's keys, ", "-separated, into buf (truncated to len). */
void contend_params_keys(const contend_params *p, char *buf, size_t len);

/* Sets the row of key (spelled with '-' or '_') from text, a key=value
 * item of a job file's [MOTIF] line or of a spec's tail: a row at most
 * once (given: one flag per row, the caller's, zeroed before the first
 * item), a byte size with a unit ("64KiB", "1MB") and seconds with one
 * ("350us") converted.  Returns the row's index, or -1 with one message
 * without a prefix: "no parameter 'k' (the parameters: ...)", "parameter
 * 'k' is given twice", "k='v' is not valid: ...". */
int contend_params_set_item(contend_params *p, const char *key, const char *text, char *given,
                            char *err, size_t errlen);

/* Sets rows from "key=value" items separated by sep (the tail of a spec
 * such as "bully_incast:receivers=2,window=4"), each as
 * contend_params_set_item.  Returns 0, or -1 with one message naming the
 * item (an unknown key lists the table's keys). */
int contend_params_set_items(contend_params *p, const char *items, char sep, char *err,
                             size_t errlen);

int64_t contend_param_int(const contend_params *p, const char *key);
double contend_param_double(const contend_params *p, const char *key);
int contend_param_bool(const contend_params *p, const char *key);
const char *contend_param_str(const contend_params *p, const char *key);
int contend_param_is_set(const contend_params *p, const char *key);

/* Rewrites '-' as '_' in place: option and test names are spelled either way. */
void contend_key_normalize(char *s);

/* Splits one command-line token: "--key[=value]" gives key (with '-' still
 * in it) and the value or NULL; the short forms -o and -q give "output"
 * and "quiet".  Returns 1 for an option, 0 for anything else. */
int contend_option_split(const char *arg, char *key, size_t keylen, const char **val);

/* Sets row idx from the command-line option `opt` found at argv[*a]:
 * `val` is its "=value" part or NULL; a boolean then means true, any other
 * type takes the next argument (and advances *a).  Returns 0 or -1 with a
 * message. */
int contend_params_set_arg(contend_params *p, int idx, const char *opt, const char *val, int argc,
                           char **argv, int *a, char *err, size_t errlen);

/* A new table: the rows of a, then those of b (CONTEND_PARAM_END-terminated).
 * The caller frees it (free()) after the contend_params made from it. */
contend_param_def *contend_param_defs_join(const contend_param_def *a, const contend_param_def *b);

/* Parses argv[first..argc-1] as options of p ("--key value", "--key=value",
 * -o, -q).  Returns 0; 1 when -h/--help was given (nothing else parsed
 * after it); or -1 with one message in err (unknown option, bad value,
 * a stray argument). */
int contend_params_parse_argv(contend_params *p, int argc, char **argv, int first, char *err,
                              size_t errlen);

/* Writes the table's values as a JSON object named key: numbers, booleans
 * and strings typed as declared; a SEED row as its value, or as `seed`
 * (the run's seed) where it was "time". */
struct contend_json;
void contend_params_json(struct contend_json *j, const char *key, const contend_params *p,
                         uint64_t seed);

/* Writes "  --key VALUE   help [unit, default D]" lines for a table. */
struct contend_strbuf;
void contend_params_help(const contend_params *p, const char *prefix, struct contend_strbuf *out);

/* Formats the current value of row idx as text (for tables and errors). */
void contend_params_format(const contend_params *p, int idx, char *buf, size_t len);

#endif
