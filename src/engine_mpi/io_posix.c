/* POSIX back end: open/pwrite/pread/fsync/close/unlink.  A shared file is
 * created (and truncated) by group rank 0 before the others open it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_backend.h"

static int px_open(io_file *f, const contend_io_spec *s, char *err, size_t len) {
  int rank = 0, rc = 0;
  if (f->shared)
    MPI_Comm_rank(f->comm, &rank);
  f->fd = -1;
  if (f->shared && s->create) {
    if (rank == 0) {
      f->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC, 0644);
      rc = f->fd < 0 ? errno : 0;
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, f->comm);
    if (rc) {
      snprintf(err, len, "cannot create '%s': %s", s->path, strerror(rc));
      return -1;
    }
    if (rank != 0)
      f->fd = open(s->path, O_RDWR);
  } else {
    f->fd = s->create ? open(s->path, O_RDWR | O_CREAT | O_TRUNC, 0644) : open(s->path, O_RDONLY);
  }
  if (f->fd < 0) {
    snprintf(err, len, "cannot %s '%s': %s", s->create ? "create" : "open", s->path,
             strerror(errno));
    return -1;
  }
  return 0;
}

static int px_write_at(io_file *f, const void *buf, size_t n, unsigned long long off, char *err,
                       size_t len) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = pwrite(f->fd, p, n, (off_t)off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      snprintf(err, len, "write of %zu B at offset %llu failed: %s", n, off,
               w < 0 ? strerror(errno) : "no progress");
      return -1;
    }
    p += w;
    n -= (size_t)w;
    off += (unsigned long long)w;
  }
  return 0;
}

static int px_read_at(io_file *f, void *buf, size_t n, unsigned long long off, char *err,
                      size_t len) {
  char *p = buf;
  while (n > 0) {
    ssize_t r = pread(f->fd, p, n, (off_t)off);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0) {
      snprintf(err, len, "read of %zu B at offset %llu failed: %s", n, off,
               r < 0 ? strerror(errno) : "end of file (the file is shorter than expected)");
      return -1;
    }
    p += r;
    n -= (size_t)r;
    off += (unsigned long long)r;
  }
  return 0;
}

static int px_sync(io_file *f, char *err, size_t len) {
  if (f->create && fsync(f->fd) != 0 && errno != EINVAL) {
    snprintf(err, len, "fsync failed: %s", strerror(errno));
    return -1;
  }
  return 0;
}

static int px_close(io_file *f, char *err, size_t len) {
  if (close(f->fd) != 0) {
    snprintf(err, len, "close failed: %s", strerror(errno));
    return -1;
  }
  f->fd = -1;
  return 0;
}

static int px_remove(const char *path, char *err, size_t len) {
  if (unlink(path) != 0 && errno != ENOENT) {
    snprintf(err, len, "cannot remove '%s': %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

const io_backend contend_io_posix = {
    .name = "posix",
    .open = px_open,
    .write_at = px_write_at,
    .read_at = px_read_at,
    .sync = px_sync,
    .close = px_close,
    .remove = px_remove,
};
