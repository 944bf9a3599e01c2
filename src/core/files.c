/* The files a command reads and writes: the checks before any work and
 * the writes through temporaries (contract in contend/files.h). */
#include "contend/files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

#define SHOW_MAX 160 /* characters of a path shown whole in a message */

/* ---- registering ----------------------------------------------------------------------- */

void contend_files_init(contend_files *fs) { memset(fs, 0, sizeof *fs); }

static void add(contend_files *fs, const char *role, const char *path, int output, int flags) {
  if (!path || !*path)
    return;
  if (fs->n == CONTEND_FILES_MAX) {
    fs->overflow = 1;
    return;
  }
  contend_file_entry *e = &fs->e[fs->n++];
  snprintf(e->role, sizeof e->role, "%s", role);
  e->path = path;
  e->output = output;
  e->flags = flags;
}

void contend_files_input(contend_files *fs, const char *role, const char *path, int flags) {
  add(fs, role, path, 0, flags);
}

void contend_files_output(contend_files *fs, const char *role, const char *path) {
  add(fs, role, path, 1, 0);
}

void contend_files_data(contend_files *fs, const char *role, const char *path, int planned) {
  add(fs, role, path, 1, CONTEND_FILE_DATA | (planned ? CONTEND_FILE_PLANNED : 0));
}

void contend_files_from_params(contend_files *fs, const contend_params *p) {
  for (size_t i = 0; i < p->n; i++) {
    const contend_param_def *d = &p->defs[i];
    if (d->type != CONTEND_P_FILE_IN && d->type != CONTEND_P_FILE_OUT)
      continue;
    char role[64];
    if (!strcmp(d->key, "output"))
      snprintf(role, sizeof role, "-o/--output");
    else {
      snprintf(role, sizeof role, "--%s", d->key);
      for (char *c = role; *c; c++)
        *c = *c == '_' ? '-' : *c;
    }
    add(fs, role, p->v[i].s, d->type == CONTEND_P_FILE_OUT, 0);
  }
}

void contend_files_add(contend_files *fs, const contend_files *src) {
  for (int i = 0; i < src->n; i++)
    add(fs, src->e[i].role, src->e[i].path, src->e[i].output, src->e[i].flags);
  fs->overflow |= src->overflow;
}

/* ---- messages -------------------------------------------------------------------------- */

const char *contend_path_show(const char *path, char *buf, size_t len) {
  const size_t n = strlen(path);
  if (n <= SHOW_MAX || len < 96)
    snprintf(buf, len, "%s", n <= SHOW_MAX ? path : "(a long path)");
  else
    snprintf(buf, len, "%.60s...%s (%zu characters)", path, path + n - 40, n);
  return buf;
}

/* The directory an output goes into: everything before the last '/'. */
static void dir_of(const char *path, char *dir, size_t len) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, len, ".");
  else if (slash == path)
    snprintf(dir, len, "/");
  else
    snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

/* Names a pseudo file system that holds no ordinary files, or "". */
static const char *pseudo_fs(const char *dir) {
  struct statfs s;
  if (statfs(dir, &s) != 0)
    return "";
  switch ((unsigned long)s.f_type) {
  case 0x9fa0UL: /* PROC_SUPER_MAGIC */
    return "proc";
  case 0x62656572UL: /* SYSFS_MAGIC */
    return "sysfs";
  case 0x1cd1UL: /* DEVPTS_SUPER_MAGIC */
    return "devpts";
  case 0x27e0ebUL:   /* CGROUP_SUPER_MAGIC */
  case 0x63677270UL: /* CGROUP2_SUPER_MAGIC */
    return "cgroup";
  case 0x64626720UL: /* DEBUGFS_MAGIC */
    return "debugfs";
  }
  return "";
}

/* ---- identity: the same file? ------------------------------------------------------------ */

typedef struct ident {
  int kind; /* 0 unknown, 1 device and inode, 2 resolved path of a file not created yet */
  dev_t dev;
  ino_t ino;
  char path[PATH_MAX + 256];
} ident;

/* Collapses "//" and "/./" of an absolute path (no "..": a link may
 * stand before it). */
static void lexical(const char *path, char *out, size_t len) {
  char cwd[PATH_MAX] = "";
  if (path[0] != '/' && !getcwd(cwd, sizeof cwd))
    cwd[0] = 0;
  char tmp[2 * PATH_MAX + 2];
  snprintf(tmp, sizeof tmp, "%s/%s", cwd, path);
  size_t o = 0;
  for (const char *s = tmp; *s && o + 1 < len;) {
    if (s[0] == '/' && (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || !s[2])))) {
      s += s[1] == '/' ? 1 : 2;
      continue;
    }
    out[o++] = *s++;
  }
  out[o] = 0;
}

/* 0, or the errno of a path that cannot be told (ELOOP). */
static int identify(const char *path, ident *id) {
  struct stat st;
  memset(id, 0, sizeof *id);
  if (stat(path, &st) == 0) {
    id->kind = 1;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return 0;
  }
  if (errno == ELOOP)
    return ELOOP;
  char dir[PATH_MAX + 1], real[PATH_MAX];
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  dir_of(path, dir, sizeof dir);
  id->kind = 2;
  if (realpath(dir, real))
    snprintf(id->path, sizeof id->path, "%s/%s", strcmp(real, "/") ? real : "", base);
  else if (errno == ELOOP)
    return ELOOP;
  else
    lexical(path, id->path, sizeof id->path);
  return 0;
}

static int same(const ident *a, const ident *b) {
  if (a->kind != b->kind || !a->kind)
    return 0;
  return a->kind == 1 ? a->dev == b->dev && a->ino == b->ino : !strcmp(a->path, b->path);
}

/* ---- the checks ---------------------------------------------------------------------------- */

static int length_ok(const contend_file_entry *e, char *err, size_t errlen) {
  char show[256];
  const size_t n = strlen(e->path);
  if (n > CONTEND_PATH_LEN_MAX) {
    snprintf(err, errlen,
             "%s: the path has %zu characters, more than the limit of %d (PATH_MAX 4096 less "
             "room for a temporary name): '%s'",
             e->role, n, CONTEND_PATH_LEN_MAX, contend_path_show(e->path, show, sizeof show));
    return 0;
  }
  const char *slash = strrchr(e->path, '/');
  const size_t base = strlen(slash ? slash + 1 : e->path);
  if (e->output && base > CONTEND_NAME_LEN_MAX) {
    snprintf(err, errlen,
             "%s: the file name has %zu characters, more than the limit of %d (NAME_MAX 255 "
             "less room for a temporary name): '%s'",
             e->role, base, CONTEND_NAME_LEN_MAX, contend_path_show(e->path, show, sizeof show));
    return 0;
  }
  return 1;
}

/* An input re-read during the run: a regular file when it exists. */
static int polled_ok(const contend_file_entry *e, char *err, size_t errlen) {
  struct stat st;
  char show[256];
  if (stat(e->path, &st) != 0 || S_ISREG(st.st_mode))
    return 1;
  const char *what = S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISBLK(st.st_mode)  ? "a block device"
                     : S_ISDIR(st.st_mode)  ? "a directory"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  snprintf(err, errlen,
           "%s '%s' is %s: it is read every control window, so it must be a regular file (a "
           "FIFO or a device could block the reader)",
           e->role, contend_path_show(e->path, show, sizeof show), what);
  return 0;
}

/* The output can be created: see contend_path_creatable, then (create) a
 * temporary beside it. */
static int creatable(const contend_file_entry *e, int create, char *err, size_t errlen) {
  char why[640], show[256];
  if (contend_path_creatable(e->path, why, sizeof why)) {
    snprintf(err, errlen, "%s: cannot write '%s': %s", e->role,
             contend_path_show(e->path, show, sizeof show), why);
    return 0;
  }
  if (!create)
    return 1;
  contend_out o;
  char oerr[1024];
  if (contend_out_open(&o, e->role, e->path, oerr, sizeof oerr)) {
    snprintf(err, errlen, "%s", oerr);
    return 0;
  }
  contend_out_abandon(&o);
  return 1;
}

int contend_files_check(const contend_files *fs, int flags, char *err, size_t errlen) {
  char show[256];
  if (fs->overflow) {
    snprintf(err, errlen, "internal error: more than %d files registered", CONTEND_FILES_MAX);
    return -1;
  }
  ident id[CONTEND_FILES_MAX];
  for (int i = 0; i < fs->n; i++) {
    const contend_file_entry *e = &fs->e[i];
    if (!length_ok(e, err, errlen))
      return -1;
    if (identify(e->path, &id[i])) {
      snprintf(err, errlen, "%s '%s': too many levels of symbolic links (a link loop)", e->role,
               contend_path_show(e->path, show, sizeof show));
      return -1;
    }
    if ((e->flags & CONTEND_FILE_POLLED) && !polled_ok(e, err, errlen))
      return -1;
  }
  /* an output against every file registered before it, and inputs after it */
  for (int i = 0; i < fs->n; i++)
    for (int k = 0; k < fs->n; k++) {
      const contend_file_entry *a = &fs->e[i], *b = &fs->e[k];
      if (k == i || !a->output || (b->output && k > i) || !same(&id[i], &id[k]))
        continue;
      if (a->flags & b->flags & CONTEND_FILE_DATA)
        continue;
      char show2[256];
      if (b->output)
        snprintf(err, errlen,
                 "%s '%s' and %s '%s' are the same file: give each output its own path", b->role,
                 contend_path_show(b->path, show2, sizeof show2), a->role,
                 contend_path_show(a->path, show, sizeof show));
      else
        snprintf(err, errlen,
                 "%s '%s' is the same file as %s '%s': an output never overwrites an input",
                 a->role, contend_path_show(a->path, show, sizeof show), b->role,
                 contend_path_show(b->path, show2, sizeof show2));
      return -1;
    }
  for (int i = 0; i < fs->n; i++)
    if (fs->e[i].output && !(fs->e[i].flags & CONTEND_FILE_PLANNED) &&
        !creatable(&fs->e[i], flags & CONTEND_FILES_CREATE, err, errlen))
      return -1;
  return 0;
}

int contend_files_check_params(const contend_params *p, const contend_files *extra, int flags,
                               char *err, size_t errlen) {
  contend_files fs;
  contend_files_init(&fs);
  if (extra)
    contend_files_add(&fs, extra);
  contend_files_from_params(&fs, p);
  return contend_files_check(&fs, flags, err, errlen);
}

int contend_check_writable(const char *path, char *err, size_t errlen) {
  if (!path || !*path) {
    snprintf(err, errlen, "-o/--output: empty path");
    return -1;
  }
  contend_files fs;
  contend_files_init(&fs);
  contend_files_output(&fs, "-o/--output", path);
  return contend_files_check(&fs, CONTEND_FILES_CREATE, err, errlen);
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
  } else if (errno == ELOOP) {
    snprintf(why, len, "too many levels of symbolic links (a link loop)");
    return -1;
  }
  char dir[PATH_MAX + 1], show[256];
  dir_of(path, dir, sizeof dir);
  const char *d = contend_path_show(dir, show, sizeof show);
  if (stat(dir, &st) != 0) {
    if (errno == ENOENT)
      snprintf(why, len, "directory '%s' does not exist", d);
    else if (errno == ENOTDIR)
      snprintf(why, len, "'%s' is not a directory", d);
    else if (errno == ELOOP)
      snprintf(why, len, "directory '%s': too many levels of symbolic links (a link loop)", d);
    else
      snprintf(why, len, "directory '%s': %s", d, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    snprintf(why, len, "'%s' is not a directory", d);
    return -1;
  }
  if (access(dir, W_OK | X_OK) != 0) {
    snprintf(why, len, "directory '%s' is not writable: %s", d, strerror(errno));
    return -1;
  }
  const char *fs = pseudo_fs(dir);
  if (*fs) {
    snprintf(why, len,
             "directory '%s' is on the %s pseudo file system: no file can be created there", d, fs);
    return -1;
  }
  return 0;
}

/* ---- temporaries ---------------------------------------------------------------------------- */

#define MAX_TMP 64
static char *volatile g_tmp[MAX_TMP]; /* temporaries not yet committed or abandoned */
static int g_atexit;

void contend_out_remove_all(void) {
  for (int i = 0; i < MAX_TMP; i++) {
    char *p = g_tmp[i];
    if (p)
      unlink(p); /* the strings stay allocated: async-signal-safe */
  }
}

static int track(char *tmp) {
  if (!g_atexit) {
    g_atexit = atexit(contend_out_remove_all) == 0;
    contend_catch_termination(); /* error.h: removes them on SIGTERM too */
  }
  for (int i = 0; i < MAX_TMP; i++)
    if (!g_tmp[i]) {
      g_tmp[i] = tmp;
      return i;
    }
  return -1; /* not tracked: still removed by commit and abandon */
}

static void untrack(contend_out *o) {
  if (o->tmp && o->slot >= 0 && o->slot < MAX_TMP && g_tmp[o->slot] == o->tmp)
    g_tmp[o->slot] = NULL;
  o->slot = -1;
}

static void release(contend_out *o) {
  untrack(o);
  free(o->path);
  free(o->tmp);
  o->path = o->tmp = NULL;
  o->f = NULL;
}

int contend_out_open(contend_out *o, const char *role, const char *path, char *err, size_t errlen) {
  memset(o, 0, sizeof *o);
  o->slot = -1;
  snprintf(o->role, sizeof o->role, "%s", role);
  char show[256];
  const size_t n = strlen(path);
  o->path = strdup(path);
  o->tmp = malloc(n + CONTEND_TMP_SUFFIX_MAX + 1);
  if (!o->path || !o->tmp) {
    snprintf(err, errlen, "%s: out of memory", role);
    release(o);
    return -1;
  }
  static unsigned counter;
  int fd = -1;
  for (int tries = 0; fd < 0 && tries < 100; tries++) {
    snprintf(o->tmp, n + CONTEND_TMP_SUFFIX_MAX + 1, "%s.tmp.%ld.%u", path, (long)getpid(),
             counter++ % 1000);
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    const int e = errno;
    char dir[PATH_MAX + 1], dshow[256], why[640];
    dir_of(path, dir, sizeof dir);
    if (contend_path_creatable(path, why, sizeof why) == 0)
      snprintf(why, sizeof why, "cannot create a file in directory '%s': %s",
               contend_path_show(dir, dshow, sizeof dshow), strerror(e));
    snprintf(err, errlen, "%s: cannot write '%s': %s", role,
             contend_path_show(path, show, sizeof show), why);
    release(o);
    return -1;
  }
  o->f = fdopen(fd, "w");
  if (!o->f) {
    snprintf(err, errlen, "%s: cannot write '%s': %s", role,
             contend_path_show(path, show, sizeof show), strerror(errno));
    close(fd);
    unlink(o->tmp);
    release(o);
    return -1;
  }
  o->slot = track(o->tmp);
  return 0;
}

int contend_out_commit(contend_out *o, char *err, size_t errlen) {
  if (!o->f)
    return 0;
  char show[256];
  int bad = fflush(o->f) != 0 || ferror(o->f);
  int e = bad ? errno : 0;
  if (!bad && fsync(fileno(o->f)) != 0 && errno != EINVAL) /* EINVAL: fsync unsupported */
    bad = 1, e = errno;
  if (fclose(o->f) != 0 && !bad)
    bad = 1, e = errno;
  o->f = NULL;
  if (!bad && rename(o->tmp, o->path) != 0)
    bad = 1, e = errno;
  if (bad) {
    snprintf(err, errlen, "%s: cannot write '%s': %s", o->role,
             contend_path_show(o->path, show, sizeof show), strerror(e));
    unlink(o->tmp);
  }
  release(o);
  return bad ? -1 : 0;
}

void contend_out_abandon(contend_out *o) {
  if (o->f)
    fclose(o->f);
  if (o->tmp)
    unlink(o->tmp);
  release(o);
}

int contend_write_file_atomic(const char *path, const char *text, size_t len, char *err,
                              size_t errlen) {
  contend_out o;
  if (contend_out_open(&o, "-o/--output", path, err, errlen))
    return -1;
  if (len && fwrite(text, 1, len, o.f) != len) {
    char show[256];
    snprintf(err, errlen, "-o/--output: cannot write '%s': %s",
             contend_path_show(path, show, sizeof show), strerror(errno));
    contend_out_abandon(&o);
    return -1;
  }
  return contend_out_commit(&o, err, errlen);
}
