/* Shared part of the I/O motifs (io.h): one parameter table, layout,
 * path templates, the data pattern. */
#include "io.h"

#include <stdio.h>
#include <string.h>

int contend_io_hdf5_available(const char **why_not) {
#ifdef CONTEND_HAVE_HDF5
  if (why_not)
    *why_not = "";
  return 1;
#else
#ifndef CONTEND_HDF5_WHY
#define CONTEND_HDF5_WHY "built without parallel HDF5"
#endif
  if (why_not)
    *why_not = CONTEND_HDF5_WHY;
  return 0;
#endif
}

const contend_param_def contend_io_params[] = {
    WL_ITERS(1),
    {"api", CONTEND_P_STRING, "mpiio", "", "back end: posix, mpiio or hdf5", 1, 0},
    {"layout", CONTEND_P_STRING, "shared", "",
     "shared: one file for the job (N-1); per_rank: a file per rank (N-N)", 1, 0},
    {"collective", CONTEND_P_BOOL, "0", "",
     "collective transfers (MPI_File_write_at_all / read_at_all; HDF5 collective)", 1, 0},
    {"block_bytes", CONTEND_P_INT, "1048576", "B", "bytes per rank per iteration", 1, 1 << 30},
    {"transfer_bytes", CONTEND_P_INT, "262144", "B", "bytes per call (divides block_bytes)", 8,
     1 << 30},
    {"path", CONTEND_P_STRING, "", "path",
     "file path template: {job}, {rank}, {nranks}, {run} are replaced (default "
     "contend-{run}-{job}.dat, per_rank: contend-{run}-{job}-{rank}.dat)",
     1, 0},
    {"fsync", CONTEND_P_BOOL, "0", "", "write: sync the file at the end of each iteration (timed)",
     1, 0},
    {"read_shift", CONTEND_P_INT, "0", "ranks",
     "read: rank r reads the block written by rank (r + read_shift) mod size (defeats caches)", 0,
     1e7},
    {"keep", CONTEND_P_BOOL, "0", "", "keep the files after the run (default: removed)", 1, 0},
    CONTEND_PARAM_END};

static int parse_api(const char *s, contend_io_api *api) {
  if (!strcmp(s, "posix"))
    *api = CONTEND_IO_POSIX;
  else if (!strcmp(s, "mpiio") || !strcmp(s, "mpi-io"))
    *api = CONTEND_IO_MPIIO;
  else if (!strcmp(s, "hdf5"))
    *api = CONTEND_IO_HDF5;
  else
    return -1;
  return 0;
}

static int parse_layout(const char *s, int *shared) {
  if (!strcmp(s, "shared") || !strcmp(s, "n-1") || !strcmp(s, "N-1"))
    *shared = 1;
  else if (!strcmp(s, "per_rank") || !strcmp(s, "n-n") || !strcmp(s, "N-N"))
    *shared = 0;
  else
    return -1;
  return 0;
}

int io_validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  contend_io_api api;
  int shared;
  const char *why;
  if (parse_api(contend_param_str(p, "api"), &api)) {
    snprintf(err, errlen, "api='%s' is not valid: expected posix, mpiio or hdf5",
             contend_param_str(p, "api"));
    return -1;
  }
  if (api == CONTEND_IO_HDF5 && !contend_io_hdf5_available(&why)) {
    snprintf(err, errlen, "api=hdf5 is not available in this build: %s", why);
    return -1;
  }
  if (parse_layout(contend_param_str(p, "layout"), &shared)) {
    snprintf(err, errlen, "layout='%s' is not valid: expected shared (N-1) or per_rank (N-N)",
             contend_param_str(p, "layout"));
    return -1;
  }
  if (api == CONTEND_IO_POSIX && contend_param_bool(p, "collective")) {
    snprintf(err, errlen, "collective=1 needs api=mpiio or api=hdf5 (POSIX has no collective I/O)");
    return -1;
  }
  const int64_t block = contend_param_int(p, "block_bytes"),
                xfer = contend_param_int(p, "transfer_bytes");
  if (xfer > block || block % xfer) {
    snprintf(err, errlen, "transfer_bytes=%lld must divide block_bytes=%lld", (long long)xfer,
             (long long)block);
    return -1;
  }
  const char *path = contend_param_str(p, "path");
  if (*path && shared && strstr(path, "{rank}")) {
    snprintf(err, errlen,
             "layout=shared (N-1) but path '%s' contains {rank}: every rank would "
             "write its own file; use layout=per_rank",
             path);
    return -1;
  }
  if (*path && !shared && !strstr(path, "{rank}")) {
    snprintf(err, errlen,
             "layout=per_rank (N-N) needs {rank} in path '%s' (else every rank "
             "writes the same file)",
             path);
    return -1;
  }
  /* the longest the expansion can be: {job} a job name, {run} a run id,
   * {rank} and {nranks} numbers of up to 10 digits */
  size_t most = strlen(path);
  for (const char *q = path; (q = strchr(q, '{')) != NULL; q++)
    most += !strncmp(q, "{job}", 5)      ? IO_JOB_NAME_MAX - 5
            : !strncmp(q, "{run}", 5)    ? IO_RUN_ID_MAX - 5
            : !strncmp(q, "{rank}", 6)   ? 10 - 6
            : !strncmp(q, "{nranks}", 8) ? 10 - 8
                                         : 0;
  if (most >= sizeof(((io_state *)0)->path)) {
    snprintf(err, errlen,
             "path: the template '%.40s...' expands to up to %zu characters, more than the limit "
             "of %zu",
             path, most, sizeof(((io_state *)0)->path) - 1);
    return -1;
  }
  (void)nranks;
  return 0;
}

/* Expands the path template for rank `rank` (io_validate bounded the
 * template: it always fits). */
static void expand(const contend_ctx *c, const char *tmpl, int rank, char *out, size_t len) {
  size_t o = 0;
  for (const char *p = tmpl; *p && o + 1 < len;) {
    char val[160] = "";
    size_t skip = 0;
    if (!strncmp(p, "{rank}", 6))
      snprintf(val, sizeof val, "%d", rank), skip = 6;
    else if (!strncmp(p, "{nranks}", 8))
      snprintf(val, sizeof val, "%d", c->size), skip = 8;
    else if (!strncmp(p, "{job}", 5))
      snprintf(val, sizeof val, "%s", c->job_name ? c->job_name : "job"), skip = 5;
    else if (!strncmp(p, "{run}", 5))
      snprintf(val, sizeof val, "%s", c->run_id ? c->run_id : "run"), skip = 5;
    if (skip) {
      for (const char *v = val; *v && o + 1 < len; v++)
        out[o++] = *v;
      p += skip;
    } else {
      out[o++] = *p++;
    }
  }
  out[o] = 0;
}

int io_setup_common(contend_ctx *c, int read_shift) {
  io_state *s = c->state;
  int shared;
  parse_api(contend_param_str(c->params, "api"), &s->spec.api);
  parse_layout(contend_param_str(c->params, "layout"), &shared);
  s->block = (size_t)contend_param_int(c->params, "block_bytes");
  s->xfer = (size_t)contend_param_int(c->params, "transfer_bytes");
  s->nxfer = (long)(s->block / s->xfer);
  s->fsync_each = contend_param_bool(c->params, "fsync");
  s->keep = contend_param_bool(c->params, "keep");
  const char *tmpl = contend_param_str(c->params, "path");
  if (!*tmpl)
    tmpl = shared ? "contend-{run}-{job}.dat" : "contend-{run}-{job}-{rank}.dat";
  s->writer = read_shift ? (c->rank + read_shift) % c->size : c->rank;
  expand(c, tmpl, c->rank, s->path, sizeof s->path);
  expand(c, tmpl, s->writer, s->read_path, sizeof s->read_path);
  s->spec = (contend_io_spec){
      .api = s->spec.api,
      .path = s->path,
      .dataset = c->job_name ? c->job_name : "data",
      .shared = shared,
      .collective = contend_param_bool(c->params, "collective"),
      .create = 1,
      .file_bytes = (unsigned long long)s->block * (shared ? (unsigned long long)c->size : 1ULL),
  };
  s->read_spec = s->spec;
  s->read_spec.path = s->read_path;
  s->read_spec.create = 0;
  s->base = shared ? (unsigned long long)c->rank * s->block : 0;
  s->read_base = shared ? (unsigned long long)s->writer * s->block : 0;
  s->fh = s->read_fh = -1;
  s->fh = contend_file_open(c, &s->spec);
  if (s->fh < 0)
    return -1;
  c->msg_bytes = s->xfer;
  c->metric_scale = 1.0;
  return 0;
}

/* Word 0 of a transfer: writer and offset; the rest: the writer's words. */
static uint64_t stamp(int writer, unsigned long long off) {
  return contend_pattern(writer, -1, (size_t)(off / 8));
}

void io_write_block(contend_ctx *c, io_state *s, int sync) {
  for (long t = 0; t < s->nxfer; t++) {
    const unsigned long long off = s->base + (unsigned long long)t * s->xfer;
    const uint64_t w = stamp(c->rank, off);
    memcpy(s->buf, &w, 8);
    contend_file_write_at(c, s->fh, s->buf, s->xfer, off);
  }
  if (sync)
    contend_file_sync(c, s->fh);
}

void io_check_block(contend_ctx *c, const io_state *s, unsigned char *buf, int writer,
                    unsigned long long base) {
  for (long t = 0; t < s->nxfer; t++) {
    unsigned char *b = buf + (size_t)t * s->xfer;
    c->verify_checked++;
    if (c->verify_inject > 0 && c->verify_checked % (uint64_t)c->verify_inject == 0)
      b[s->xfer / 2] ^= 0x5a; /* testing aid, as contend_pattern_check */
    const uint64_t w = stamp(writer, base + (unsigned long long)t * s->xfer);
    int bad = memcmp(b, &w, 8) != 0;
    const size_t words = s->xfer / 8;
    for (size_t i = 1; i < words && !bad; i++) {
      const uint64_t v = contend_pattern(writer, 0, i);
      bad = memcmp(b + 8 * i, &v, 8) != 0;
    }
    if (!bad && s->xfer % 8) {
      const uint64_t v = contend_pattern(writer, 0, words);
      bad = memcmp(b + 8 * words, &v, s->xfer % 8) != 0;
    }
    c->verify_errors += (uint64_t)bad;
  }
}

void io_cleanup(contend_ctx *c) {
  io_state *s = c->state;
  if (!s->spec.path) /* setup stopped before the layout was known */
    return;
  if (s->read_fh >= 0)
    contend_file_close(c, s->read_fh);
  if (s->fh >= 0)
    contend_file_close(c, s->fh);
  s->read_fh = s->fh = -1;
  contend_barrier(c); /* nobody still has a file open that is removed below */
  if (!s->keep)
    contend_file_remove(c, &s->spec);
}
