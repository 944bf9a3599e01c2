/* The job-file parser (grammar in docs/jobfile.md).
 *
 * Text is read in three steps: physical lines lose their comments and are
 * grouped into logical directives (a trailing backslash, or an indented
 * line, continues the previous one); {NAME} variables are substituted
 * piece by piece, so every message names the physical line; each
 * directive is then parsed in order.  Every error is one message
 * "path:line: what" and the parse stops. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "jobs.h"

/* A piece of a logical directive: the text of one physical line. */
typedef struct piece {
  char *text;
  int line;
} piece;

typedef struct directive {
  piece *p;
  int np;
} directive;

typedef struct var {
  char *name, *value;
  int fixed; /* from -D: the file's [VAR] does not override it */
} var;

typedef struct parser {
  const char *path;
  char *err;
  size_t errlen;
  var *vars;
  int nvars;
  contend_jobfile *jf;
  size_t expanded;  /* bytes of the file's text after substitution, so far */
  size_t directive; /* bytes of the current directive after substitution */
} parser;

static int fail(parser *ps, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(parser *ps, int line, const char *fmt, ...) {
  char msg[1536];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (line > 0)
    snprintf(ps->err, ps->errlen, "%s:%d: %s", ps->path, line, msg);
  else
    snprintf(ps->err, ps->errlen, "%s: %s", ps->path, msg);
  return -1;
}

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p)
    abort();
  return p;
}

static void *xrealloc(void *p, size_t n) {
  void *q = realloc(p, n ? n : 1);
  if (!q)
    abort();
  return q;
}

static char *xstrdup(const char *s) {
  char *d = strdup(s);
  if (!d)
    abort();
  return d;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1]))
    s[--n] = 0;
  return s;
}

/* Removes a '#' comment (outside double quotes). */
static void strip_comment(char *s) {
  int quoted = 0;
  for (; *s; s++) {
    if (*s == '"')
      quoted = !quoted;
    else if (*s == '#' && !quoted) {
      *s = 0;
      return;
    }
  }
}

/* ---- variables ----------------------------------------------------------- */

static const char *const reserved[] = {"rank", "job", "nranks", "run"};

static int is_reserved(const char *name, size_t n) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (strlen(reserved[i]) == n && !strncmp(reserved[i], name, n))
      return 1;
  return 0;
}

static int valid_name(const char *s, size_t n) {
  if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
    return 0;
  for (size_t i = 1; i < n; i++)
    if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
      return 0;
  return 1;
}

static var *find_var(parser *ps, const char *name, size_t n) {
  for (int i = 0; i < ps->nvars; i++)
    if (strlen(ps->vars[i].name) == n && !strncmp(ps->vars[i].name, name, n))
      return &ps->vars[i];
  return NULL;
}

static void set_var(parser *ps, const char *name, const char *value, int fixed) {
  var *v = find_var(ps, name, strlen(name));
  if (v && v->fixed && !fixed)
    return; /* -D wins */
  if (!v) {
    ps->vars = xrealloc(ps->vars, sizeof(var) * (size_t)(ps->nvars + 1));
    v = &ps->vars[ps->nvars++];
    v->name = xstrdup(name);
    v->value = NULL;
  }
  free(v->value);
  v->value = xstrdup(value);
  v->fixed = fixed;
}

/* Appends n bytes of text to out unless that takes the directive or the
 * file past their bounds (then -1 with the message: variables that
 * double on every line would otherwise grow without limit). */
static int append_bounded(parser *ps, const piece *pc, contend_strbuf *out, const char *text,
                          size_t n) {
  if (ps->directive + out->len + n > CONTEND_JOBFILE_LINE_MAX)
    return fail(ps, pc->line,
                "after {VAR} substitution the directive is longer than the limit of %d bytes "
                "(1 MiB)",
                CONTEND_JOBFILE_LINE_MAX);
  if (ps->expanded + out->len + n > CONTEND_JOBFILE_MAX_BYTES)
    return fail(ps, pc->line,
                "after {VAR} substitution the job file is longer than the limit of %d bytes "
                "(16 MiB)",
                CONTEND_JOBFILE_MAX_BYTES);
  contend_sb_printf(out, "%.*s", (int)n, text);
  return 0;
}

/* Substitutes {NAME} in one piece (in place: the text is replaced). */
static int substitute(parser *ps, piece *pc) {
  const char *s = pc->text;
  contend_strbuf out = {0};
  contend_sb_printf(&out, "%s", "");
  while (*s) {
    const char *open = strchr(s, '{');
    if (!open) {
      if (append_bounded(ps, pc, &out, s, strlen(s)))
        return contend_sb_free(&out), -1;
      break;
    }
    if (append_bounded(ps, pc, &out, s, (size_t)(open - s)))
      return contend_sb_free(&out), -1;
    const char *close = strchr(open, '}');
    if (!close)
      return contend_sb_free(&out), fail(ps, pc->line, "unterminated '{' in '%s'", pc->text);
    const size_t n = (size_t)(close - open - 1);
    if (is_reserved(open + 1, n)) { /* left for the motif (path templates) */
      if (append_bounded(ps, pc, &out, open, n + 2))
        return contend_sb_free(&out), -1;
    } else {
      if (!valid_name(open + 1, n))
        return contend_sb_free(&out),
               fail(ps, pc->line, "'{%.*s}' is not a variable name (letters, digits, _)", (int)n,
                    open + 1);
      var *v = find_var(ps, open + 1, n);
      if (!v)
        return contend_sb_free(&out),
               fail(ps, pc->line,
                    "undefined variable '{%.*s}' (define it with [VAR] %.*s=VALUE before this "
                    "line, or -D %.*s=VALUE)",
                    (int)n, open + 1, (int)n, open + 1, (int)n, open + 1);
      if (append_bounded(ps, pc, &out, v->value, strlen(v->value)))
        return contend_sb_free(&out), -1;
    }
    s = close + 1;
  }
  ps->directive += out.len;
  ps->expanded += out.len;
  free(pc->text);
  pc->text = out.s;
  return 0;
}

/* ---- tokens ------------------------------------------------------------- */

typedef struct token {
  char *text;
  int line;
} token;

/* Splits the directive's argument pieces into whitespace-separated tokens
 * (double quotes group; the quotes are removed).  Returns the count. */
static int tokenize(parser *ps, directive *d, const char *first_args, token **out) {
  token *t = NULL;
  int n = 0;
  for (int i = 0; i < d->np; i++) {
    const char *s = i == 0 ? first_args : d->p[i].text;
    while (*s) {
      while (isspace((unsigned char)*s))
        s++;
      if (!*s)
        break;
      contend_strbuf tok = {0};
      contend_sb_printf(&tok, "%s", "");
      int quoted = 0;
      while (*s && (quoted || !isspace((unsigned char)*s))) {
        if (*s == '"')
          quoted = !quoted;
        else
          contend_sb_printf(&tok, "%c", *s);
        s++;
      }
      if (quoted) {
        contend_sb_free(&tok);
        for (int k = 0; k < n; k++)
          free(t[k].text);
        free(t);
        return fail(ps, d->p[i].line, "unterminated double quote");
      }
      t = xrealloc(t, sizeof(token) * (size_t)(n + 1));
      t[n].text = tok.s;
      t[n].line = d->p[i].line;
      n++;
    }
  }
  *out = t;
  return n;
}

static void free_tokens(token *t, int n) {
  for (int i = 0; i < n; i++)
    free(t[i].text);
  free(t);
}

/* ---- values with units ----------------------------------------------------- */

/* ---- directives ------------------------------------------------------------ */

static contend_job *cur_job(parser *ps, int line, const char *dir) {
  if (!ps->jf->njobs) {
    fail(ps, line, "%s before any [JOB_NAME] (every job starts with [JOB_NAME] name)", dir);
    return NULL;
  }
  return &ps->jf->jobs[ps->jf->njobs - 1];
}

static int dir_job(parser *ps, token *t, int n, int line) {
  if (n != 1)
    return fail(ps, line, "[JOB_NAME] takes one name, got %d words", n);
  const char *name = t[0].text;
  size_t len = strlen(name);
  int ok = len > 0 && len < CONTEND_JOB_NAME_MAX;
  for (size_t i = 0; ok && i < len; i++)
    ok = isalnum((unsigned char)name[i]) || name[i] == '_' || name[i] == '-' || name[i] == '.';
  if (!ok)
    return fail(ps, line,
                "job name '%s' is not valid: use up to %d letters, digits, '_', '-' or '.' (it "
                "names files and HDF5 datasets)",
                name, CONTEND_JOB_NAME_MAX - 1);
  for (int j = 0; j < ps->jf->njobs; j++)
    if (!strcmp(ps->jf->jobs[j].name, name))
      return fail(ps, line, "job name '%s' is already used by the job at line %d", name,
                  ps->jf->jobs[j].line);
  contend_jobfile *jf = ps->jf;
  jf->jobs = xrealloc(jf->jobs, sizeof(contend_job) * (size_t)(jf->njobs + 1));
  contend_job *j = &jf->jobs[jf->njobs++];
  memset(j, 0, sizeof *j);
  snprintf(j->name, sizeof j->name, "%s", name);
  j->line = line;
  j->repeat = 1;
  return 0;
}

static int parse_count(const char *s, long long *v) {
  char *end = NULL;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end || errno || x < 0)
    return -1;
  *v = x;
  return 0;
}

static int dir_nid_list(parser *ps, token *t, int n, int line) {
  contend_job *j = cur_job(ps, line, "[NID_LIST]");
  if (!j)
    return -1;
  if (j->nodes_line)
    return fail(ps, line, "job '%s' already has its nodes (line %d)", j->name, j->nodes_line);
  if (n == 0)
    return fail(ps, line, "[NID_LIST] is empty (expected e.g. 0-7,12)");
  contend_strbuf all = {0};
  for (int i = 0; i < n; i++)
    contend_sb_printf(&all, "%s%s", i ? "," : "", t[i].text);
  int rc = 0;
  char *save = NULL;
  for (char *e = strtok_r(all.s, ",", &save); e && !rc; e = strtok_r(NULL, ",", &save)) {
    e = trim(e);
    if (!*e)
      continue;
    long long a, b;
    char *dash = strchr(e, '-');
    if (dash) {
      *dash = 0;
      if (parse_count(trim(e), &a) || parse_count(trim(dash + 1), &b) || b < a) {
        *dash = '-';
        rc = fail(ps, line, "'%s' is not a node range (expected A-B with 0 <= A <= B)", e);
        break;
      }
    } else if (parse_count(e, &a)) {
      rc = fail(ps, line, "'%s' is not a node number (expected e.g. 0-7,12)", e);
      break;
    } else {
      b = a;
    }
    if (b >= 10000000 || j->nlist + (b - a + 1) > 10000000) {
      rc = fail(ps, line, "node list too long (more than 10^7 nodes)");
      break;
    }
    j->list = xrealloc(j->list, sizeof(int) * (size_t)(j->nlist + (b - a + 1)));
    for (long long x = a; x <= b; x++)
      j->list[j->nlist++] = (int)x;
  }
  contend_sb_free(&all);
  if (rc)
    return rc;
  if (!j->nlist)
    return fail(ps, line, "[NID_LIST] is empty (expected e.g. 0-7,12)");
  /* duplicates within the list, then overlaps with earlier jobs */
  int maxn = 0;
  for (int i = 0; i < j->nlist; i++)
    maxn = j->list[i] > maxn ? j->list[i] : maxn;
  char *seen = xcalloc((size_t)maxn + 1, 1);
  for (int i = 0; i < j->nlist && !rc; i++) {
    if (seen[j->list[i]])
      rc = fail(ps, line, "node %d is listed twice in job '%s'", j->list[i], j->name);
    seen[j->list[i]] = 1;
  }
  for (int k = 0; k < ps->jf->njobs - 1 && !rc; k++) {
    const contend_job *o = &ps->jf->jobs[k];
    for (int i = 0; o->kind == CONTEND_NODES_LIST && i < o->nlist && !rc; i++)
      if (o->list[i] <= maxn && seen[o->list[i]])
        rc = fail(ps, line,
                  "node %d of job '%s' is also in job '%s' (line %d): jobs run concurrently on "
                  "disjoint nodes",
                  o->list[i], j->name, o->name, o->nodes_line);
  }
  free(seen);
  j->kind = CONTEND_NODES_LIST;
  j->nodes_line = line;
  return rc;
}

/* The [PLACEMENT] kinds and the options each accepts (docs/jobfile.md). */
static const struct {
  const char *name;
  contend_nodes_kind kind;
  const char *options; /* space-separated, for checks and messages */
  const char *required;
} kinds[] = {
    {"linear", CONTEND_NODES_LINEAR, "nodes", "nodes"},
    {"interleaved", CONTEND_NODES_INTERLEAVED, "nodes", "nodes"},
    {"random", CONTEND_NODES_RANDOM, "nodes seed", "nodes"},
    {"compact", CONTEND_NODES_COMPACT, "nodes per_leaf pod seed", "nodes"},
    {"spread", CONTEND_NODES_SPREAD, "nodes pods per_leaf pod seed", "nodes pods"},
    {"every_leaf", CONTEND_NODES_EVERY_LEAF, "per_leaf pods pod seed", "per_leaf"},
    {"pairs", CONTEND_NODES_PAIRS, "pairs across pods pod seed", "pairs"},
    {"incast", CONTEND_NODES_INCAST, "per_leaf senders receivers pod seed", "per_leaf"},
};

static int has_word(const char *list, const char *w) {
  const size_t n = strlen(w);
  if (!n)
    return 0; /* strstr finds "" everywhere: no progress */
  for (const char *s = list; (s = strstr(s, w)); s += n)
    if ((s == list || s[-1] == ' ') && (s[n] == ' ' || !s[n]))
      return 1;
  return 0;
}

static int dir_placement(parser *ps, token *t, int n, int line) {
  contend_job *j = cur_job(ps, line, "[PLACEMENT]");
  if (!j)
    return -1;
  if (j->nodes_line)
    return fail(ps, line, "job '%s' already has its nodes (line %d)", j->name, j->nodes_line);
  if (n < 1)
    return fail(ps, line,
                "[PLACEMENT] needs a kind: linear, interleaved, random, compact, spread, "
                "every_leaf, pairs or incast");
  int ki = -1;
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    if (!strcmp(t[0].text, kinds[k].name))
      ki = (int)k;
  if (ki < 0)
    return fail(ps, t[0].line,
                "placement '%s' is not valid: expected linear, interleaved, random, compact, "
                "spread, every_leaf, pairs or incast",
                t[0].text);
  j->kind = kinds[ki].kind;
  j->want = 0;
  j->pod = -1;
  char given[128] = "";
  for (int i = 1; i < n; i++) {
    char *eq = strchr(t[i].text, '=');
    long long v;
    if (!eq)
      return fail(ps, t[i].line, "expected key=value after the placement kind, got '%s'",
                  t[i].text);
    *eq = 0;
    const char *key = t[i].text, *val = eq + 1;
    if (!strcmp(key, "seed") && !has_word(kinds[ki].options, key))
      return fail(ps, t[i].line, "seed= only applies to random placement and the tree placements");
    if (!has_word(kinds[ki].options, key)) {
      char opts[128];
      snprintf(opts, sizeof opts, "%s", kinds[ki].options);
      return fail(ps, t[i].line, "[PLACEMENT] %s has no option '%s' (valid: %s)", t[0].text, key,
                  opts);
    }
    if (has_word(given, key))
      return fail(ps, t[i].line, "[PLACEMENT] option '%s' is given twice", key);
    if (strlen(given) + strlen(key) + 2 < sizeof given)
      snprintf(given + strlen(given), sizeof given - strlen(given), " %s", key);
    if (!strcmp(key, "seed")) {
      unsigned long long sd;
      char *end = NULL;
      errno = 0;
      sd = strtoull(val, &end, 0);
      if (!*val || *val == '-' || end == val || *end || errno)
        return fail(ps, t[i].line, "seed='%s' is not valid: expected a whole number >= 0", val);
      j->seed = sd;
      j->seed_set = 1;
    } else if (!strcmp(key, "across")) {
      if (strcmp(val, "leaf") && strcmp(val, "pod"))
        return fail(ps, t[i].line,
                    "across='%s' is not valid: expected leaf (partners on the next leaf of the "
                    "pod) or pod (partners in the next pod: bisection)",
                    val);
      j->across_pods = !strcmp(val, "pod");
    } else {
      const long long lo = !strcmp(key, "pod") ? 0 : 1;
      if (parse_count(val, &v) || v < lo || v > 10000000)
        return fail(ps, t[i].line,
                    "%s='%s' is not valid: expected a whole number in [%lld, 10000000]", key, val,
                    lo);
      if (!strcmp(key, "nodes"))
        j->want = (int)v;
      else if (!strcmp(key, "per_leaf"))
        j->per_leaf = (int)v;
      else if (!strcmp(key, "pods"))
        j->pods = (int)v;
      else if (!strcmp(key, "pod"))
        j->pod = (int)v;
      else if (!strcmp(key, "senders"))
        j->sender_leaves = (int)v;
      else if (!strcmp(key, "receivers"))
        j->receivers = (int)v;
      else if (!strcmp(key, "pairs")) {
        if (v > 5000000)
          return fail(ps, t[i].line, "pairs='%s' is not valid: at most 5000000", val);
        j->want = (int)(2 * v);
      }
    }
  }
  char req[64];
  snprintf(req, sizeof req, "%s", kinds[ki].required);
  for (char *save = NULL, *w = strtok_r(req, " ", &save); w; w = strtok_r(NULL, " ", &save))
    if (!has_word(given, w))
      return fail(ps, line, "[PLACEMENT] %s needs %s=%s", t[0].text, w,
                  !strcmp(w, "nodes")   ? "N"
                  : !strcmp(w, "pairs") ? "P"
                                        : "K");
  if (j->kind == CONTEND_NODES_INCAST) {
    if (!j->sender_leaves)
      j->sender_leaves = 7;
    if (!j->receivers)
      j->receivers = j->per_leaf;
    const long long total = (long long)j->sender_leaves * j->per_leaf + j->receivers;
    if (total > 10000000)
      return fail(ps, line, "[PLACEMENT] incast: senders x per_leaf + receivers is too large");
    j->want = (int)total;
  }
  j->nodes_line = line;
  return 0;
}

static int dir_repeat(parser *ps, token *t, int n, int line) {
  contend_job *j = cur_job(ps, line, "[REPEAT]");
  long long v;
  if (!j)
    return -1;
  if (j->repeat_line)
    return fail(ps, line, "job '%s' already has [REPEAT] (line %d)", j->name, j->repeat_line);
  if (n != 1 || parse_count(t[0].text, &v) || v < 1 || v > 1000000000)
    return fail(ps, line, "[REPEAT] takes one whole number >= 1%s%s%s", n ? ", got '" : "",
                n ? t[0].text : "", n ? "'" : "");
  j->repeat = (long)v;
  j->repeat_line = line;
  return 0;
}

static int dir_var(parser *ps, token *t, int n, int line) {
  if (n != 1 || !strchr(t[0].text, '='))
    return fail(ps, line, "[VAR] takes NAME=VALUE (quote a value with spaces)");
  char *eq = strchr(t[0].text, '=');
  *eq = 0;
  const char *name = t[0].text;
  if (!valid_name(name, strlen(name)))
    return fail(ps, line, "'%s' is not a variable name (letters, digits, _)", name);
  if (is_reserved(name, strlen(name)))
    return fail(ps, line,
                "'%s' is reserved: {rank}, {job}, {nranks} and {run} are filled in by "
                "the motifs (path templates)",
                name);
  set_var(ps, name, eq + 1, 0);
  return 0;
}

/* The motif's parameter keys, for messages. */
static int dir_motif(parser *ps, token *t, int n, int line) {
  contend_job *j = cur_job(ps, line, "[MOTIF]");
  if (!j)
    return -1;
  if (n < 1)
    return fail(ps, line, "[MOTIF] needs a motif name (see 'contend jobs --list')");
  const contend_motif *m = contend_job_motif_find(t[0].text);
  if (!m)
    return fail(ps, t[0].line, "unknown motif '%s' (see 'contend jobs --list')", t[0].text);
  j->motifs = xrealloc(j->motifs, sizeof(contend_job_motif) * (size_t)(j->nmotifs + 1));
  contend_job_motif *jm = &j->motifs[j->nmotifs++];
  memset(jm, 0, sizeof *jm);
  jm->motif = m;
  jm->line = line;
  char perr[1024];
  if (contend_params_init(&jm->params, m->params, m->name, perr, sizeof perr))
    return fail(ps, line, "%s", perr);
  char *given = xcalloc(jm->params.n, 1);
  int rc = 0;
  for (int i = 1; i < n && !rc; i++) {
    char *eq = strchr(t[i].text, '=');
    if (!eq || eq == t[i].text) {
      rc = fail(ps, t[i].line, "motif '%s': expected key=value, got '%s'", m->name, t[i].text);
      break;
    }
    *eq = 0;
    const int idx =
        contend_params_set_item(&jm->params, t[i].text, eq + 1, given, perr, sizeof perr);
    if (idx < 0)
      rc = fail(ps, t[i].line, "motif '%s': %s", m->name, perr);
    else if (m->role != CONTEND_ROLE_WORKLOAD && !strcmp(jm->params.defs[idx].key, "measurements"))
      rc = fail(ps, t[i].line,
                "'measurements' is not used in job files: one invocation of '%s' runs rings x "
                "(warmup + iters) iterations; use [REPEAT] for more",
                m->name);
  }
  free(given);
  if (rc)
    return rc;
  if (m->validate && m->validate(&jm->params, 0, perr, sizeof perr))
    return fail(ps, line, "motif '%s': %s", m->name, perr);
  return 0;
}

/* ---- logical lines ---------------------------------------------------------- */

static void free_directives(directive *d, int n) {
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < d[i].np; k++)
      free(d[i].p[k].text);
    free(d[i].p);
  }
  free(d);
}

static void add_piece(directive *d, const char *text, int line) {
  d->p = xrealloc(d->p, sizeof(piece) * (size_t)(d->np + 1));
  d->p[d->np].text = xstrdup(text);
  d->p[d->np].line = line;
  d->np++;
}

/* Groups physical lines into directives.  Returns the count, or -1. */
static int logical(parser *ps, const char *text, directive **out) {
  directive *d = NULL;
  int n = 0, line = 0, cont = 0, cont_line = 0;
  const char *s = text;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t len = nl ? (size_t)(nl - s) : strlen(s);
    char *raw = xcalloc(len + 1, 1);
    memcpy(raw, s, len);
    s += len + (nl ? 1 : 0);
    line++;
    if (len && raw[len - 1] == '\r')
      raw[len - 1] = 0;
    strip_comment(raw);
    const int indented = raw[0] == ' ' || raw[0] == '\t';
    char *body = trim(raw);
    int ends_bs = 0;
    size_t bl = strlen(body);
    if (bl && body[bl - 1] == '\\') {
      ends_bs = 1;
      body[--bl] = 0;
      body = trim(body);
    }
    if (cont && n > 0) {
      if (body[0] == '[') {
        free(raw);
        free_directives(d, n);
        return fail(ps, cont_line,
                    "unterminated continuation: the line ends with '\\' but line %d starts a new "
                    "directive",
                    line);
      }
      add_piece(&d[n - 1], body, line);
    } else if (!*body) {
      /* blank or comment line */
    } else if (body[0] == '[') {
      d = xrealloc(d, sizeof(directive) * (size_t)(n + 1));
      memset(&d[n], 0, sizeof d[n]);
      add_piece(&d[n], body, line);
      n++;
    } else if (indented && n > 0) {
      add_piece(&d[n - 1], body, line); /* StressBench style: indented lines continue */
    } else {
      free_directives(d, n);
      int rc = fail(
          ps, line, "expected a directive such as [JOB_NAME] or [MOTIF], got '%s'%s", body,
          indented ? " (an indented line continues a directive; there is none before it)" : "");
      free(raw);
      return rc;
    }
    cont = ends_bs;
    if (ends_bs)
      cont_line = line;
    free(raw);
  }
  if (cont) {
    free_directives(d, n);
    return fail(ps, cont_line,
                "unterminated continuation: the line ends with '\\' at the end of "
                "the file");
  }
  *out = d;
  return n;
}

/* ---- the whole file ----------------------------------------------------------- */

static void free_job(contend_job *j) {
  for (int k = 0; k < j->nmotifs; k++)
    contend_params_free(&j->motifs[k].params);
  free(j->motifs);
  free(j->list);
  free(j->nodes);
  free(j->node_leaf);
  free(j->node_pod);
}

void contend_jobfile_free(contend_jobfile *jf) {
  for (int i = 0; i < jf->njobs; i++)
    free_job(&jf->jobs[i]);
  free(jf->jobs);
  free(jf->path);
  memset(jf, 0, sizeof *jf);
}

static int one_directive(parser *ps, directive *d) {
  ps->directive = 0;
  for (int k = 0; k < d->np; k++)
    if (substitute(ps, &d->p[k]))
      return -1;
  const int line = d->p[0].line;
  char *head = d->p[0].text;
  char *close = strchr(head, ']');
  if (!close)
    return fail(ps, line, "'%s': a directive is [NAME] followed by its arguments", head);
  char dname[64];
  snprintf(dname, sizeof dname, "%.*s", (int)(close - head - 1), head + 1);
  token *t = NULL;
  int n = tokenize(ps, d, close + 1, &t);
  if (n < 0)
    return -1;
  int rc;
  if (!strcasecmp(dname, "JOB_NAME") || !strcasecmp(dname, "JOB_ID"))
    rc = dir_job(ps, t, n, line);
  else if (!strcasecmp(dname, "NID_LIST"))
    rc = dir_nid_list(ps, t, n, line);
  else if (!strcasecmp(dname, "PLACEMENT"))
    rc = dir_placement(ps, t, n, line);
  else if (!strcasecmp(dname, "MOTIF"))
    rc = dir_motif(ps, t, n, line);
  else if (!strcasecmp(dname, "REPEAT"))
    rc = dir_repeat(ps, t, n, line);
  else if (!strcasecmp(dname, "VAR"))
    rc = dir_var(ps, t, n, line);
  else
    rc = fail(ps, line,
              "unknown directive '[%s]' (valid: [JOB_NAME], [NID_LIST], [PLACEMENT], [MOTIF], "
              "[REPEAT], [VAR])",
              dname);
  free_tokens(t, n);
  return rc;
}

int contend_jobfile_parse(contend_jobfile *jf, const char *path, const char *text,
                          char *const *defines, int ndefines, char *err, size_t errlen) {
  memset(jf, 0, sizeof *jf);
  jf->path = xstrdup(path);
  parser ps = {.path = path, .err = err, .errlen = errlen, .jf = jf};
  int rc = 0;
  for (int i = 0; i < ndefines && !rc; i++) {
    char *def = xstrdup(defines[i]);
    char *eq = strchr(def, '=');
    if (!eq || !valid_name(def, (size_t)(eq - def)) || is_reserved(def, (size_t)(eq - def))) {
      snprintf(err, errlen,
               "-D %s: expected NAME=VALUE (NAME: letters, digits, _; not rank, "
               "job, nranks or run)",
               defines[i]);
      rc = -1;
    } else {
      *eq = 0;
      set_var(&ps, def, eq + 1, 1);
    }
    free(def);
  }
  directive *d = NULL;
  int nd = rc ? 0 : logical(&ps, text, &d);
  if (nd < 0)
    rc = -1;
  for (int i = 0; i < nd && !rc; i++)
    rc = one_directive(&ps, &d[i]);
  if (nd > 0)
    free_directives(d, nd);
  if (!rc && jf->njobs == 0)
    rc = fail(&ps, 0, "no jobs: a job starts with [JOB_NAME] name");
  for (int i = 0; i < jf->njobs && !rc; i++) {
    const contend_job *j = &jf->jobs[i];
    if (!j->nodes_line)
      rc = fail(&ps, j->line,
                "job '%s' has no nodes: add [NID_LIST] 0-3 or [PLACEMENT] linear "
                "nodes=4",
                j->name);
    else if (!j->nmotifs)
      rc = fail(&ps, j->line, "job '%s' has no [MOTIF]", j->name);
  }
  for (int i = 0; i < ps.nvars; i++) {
    free(ps.vars[i].name);
    free(ps.vars[i].value);
  }
  free(ps.vars);
  return rc;
}

int contend_jobfile_load(contend_jobfile *jf, const char *path, char *const *defines, int ndefines,
                         char *err, size_t errlen) {
  memset(jf, 0, sizeof *jf);
  FILE *f = fopen(path, "rb");
  if (!f) {
    snprintf(err, errlen, "cannot read job file '%s': %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) { /* fopen opens directories */
    fclose(f);
    snprintf(err, errlen, "%s: is a directory, expected a job file", path);
    return -1;
  }
  contend_strbuf text = {0};
  contend_sb_printf(&text, "%s", "");
  char buf[8192];
  size_t got;
  while ((got = fread(buf, 1, sizeof buf, f)) > 0) {
    if (memchr(buf, 0, got)) {
      fclose(f);
      contend_sb_free(&text);
      snprintf(err, errlen, "%s: not a text file (it contains NUL bytes)", path);
      return -1;
    }
    if (text.len + got > CONTEND_JOBFILE_MAX_BYTES) {
      fclose(f);
      contend_sb_free(&text);
      snprintf(err, errlen, "%s: larger than the limit of %d bytes (16 MiB) for a job file", path,
               CONTEND_JOBFILE_MAX_BYTES);
      return -1;
    }
    contend_sb_printf(&text, "%.*s", (int)got, buf);
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) {
    contend_sb_free(&text);
    snprintf(err, errlen, "cannot read job file '%s'", path);
    return -1;
  }
  int rc = contend_jobfile_parse(jf, path, text.s, defines, ndefines, err, errlen);
  contend_sb_free(&text);
  return rc;
}
