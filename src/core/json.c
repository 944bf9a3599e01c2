#include "contend/json.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void tmp_name(const char *path, char *buf, size_t len) {
  snprintf(buf, len, "%s.tmp.%ld", path, (long)getpid());
}

int contend_write_file_atomic(const char *path, const char *text, size_t len, char *err,
                              size_t errlen) {
  char tmp[4096];
  tmp_name(path, tmp, sizeof tmp);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    snprintf(err, errlen, "cannot write results file '%s': %s", path, strerror(errno));
    return -1;
  }
  size_t off = 0;
  while (off < len) {
    ssize_t n = write(fd, text + off, len - off);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      snprintf(err, errlen, "cannot write results file '%s': %s", path, strerror(errno));
      close(fd);
      unlink(tmp);
      return -1;
    }
    off += (size_t)n;
  }
  if (fsync(fd) != 0 && errno != EINVAL) { /* EINVAL: fsync unsupported (pipes, some fs) */
    snprintf(err, errlen, "cannot write results file '%s': %s", path, strerror(errno));
    close(fd);
    unlink(tmp);
    return -1;
  }
  close(fd);
  if (rename(tmp, path) != 0) {
    snprintf(err, errlen, "cannot write results file '%s': %s", path, strerror(errno));
    unlink(tmp);
    return -1;
  }
  return 0;
}

int contend_path_creatable(const char *path, char *why, size_t len) {
  const size_t n = strlen(path);
  struct stat st;
  if (n == 0) {
    snprintf(why, len, "empty path");
    return -1;
  }
  if (path[n - 1] == '/') {
    snprintf(why, len, "it names a directory (ends in '/'), expected a file");
    return -1;
  }
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      snprintf(why, len, "it is a directory, expected a file");
      return -1;
    }
    if (!S_ISREG(st.st_mode)) { /* a device or pipe would be replaced, not written */
      snprintf(why, len, "it exists and is not a regular file");
      return -1;
    }
  }
  /* the directory the file goes into: everything before the last '/' */
  char dir[4096];
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == path)
    snprintf(dir, sizeof dir, "/");
  else
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT)
      snprintf(why, len, "directory '%s' does not exist", dir);
    else if (errno == ENOTDIR)
      snprintf(why, len, "'%s' is not a directory", dir);
    else
      snprintf(why, len, "directory '%s': %s", dir, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(why, len, "'%s' is not a directory", dir);
    return -1;
  }
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(why, len, "directory '%s' is not writable: %s", dir, strerror(errno));
    return -1;
  }
  return 0;
}

int contend_check_writable(const char *path, char *err, size_t errlen) {
  char tmp[4096], why[4200];
  if (!path || !*path) {
    snprintf(err, errlen, "-o/--output: empty path");
    return -1;
  }
  if (contend_path_creatable(path, why, sizeof why)) {
    snprintf(err, errlen, "-o/--output: cannot write '%s': %s", path, why);
    return -1;
  }
  /* the last word: create (and remove) the temporary the results go to */
  tmp_name(path, tmp, sizeof tmp);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) {
    snprintf(err, errlen, "-o/--output: cannot write '%s': %s", path, strerror(errno));
    return -1;
  }
  close(fd);
  unlink(tmp);
  return 0;
}
