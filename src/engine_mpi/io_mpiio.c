/* MPI-IO back end: MPI_File_open on the group (shared file) or on
 * MPI_COMM_SELF (file per rank); independent (write_at/read_at) or
 * collective (write_at_all/read_at_all) transfers. */
#include <limits.h>
#include <stdio.h>

#include "io_backend.h"

static void mpi_msg(int rc, char *buf, size_t len) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int n = 0;
  MPI_Error_string(rc, msg, &n);
  snprintf(buf, len, "%s", msg);
}

static int mi_open(io_file *f, const contend_io_spec *s, char *err, size_t len) {
  int amode = s->create ? MPI_MODE_CREATE | MPI_MODE_RDWR : MPI_MODE_RDONLY;
  int rc = MPI_File_open(f->comm, s->path, amode, MPI_INFO_NULL, &f->fh);
  if (rc == MPI_SUCCESS && s->create)
    rc = MPI_File_set_size(f->fh, 0); /* truncate what an earlier run left */
  if (rc != MPI_SUCCESS) {
    char m[MPI_MAX_ERROR_STRING];
    mpi_msg(rc, m, sizeof m);
    snprintf(err, len, "MPI_File_open('%s') failed: %s", s->path, m);
    return -1;
  }
  MPI_File_set_errhandler(f->fh, MPI_ERRORS_RETURN);
  return 0;
}

static int xfer(io_file *f, void *buf, size_t n, unsigned long long off, int write, char *err,
                size_t len) {
  MPI_Status st;
  int rc;
  if (n > INT_MAX) {
    snprintf(err, len, "transfer of %zu B exceeds MPI's int count", n);
    return -1;
  }
  if (write)
    rc = f->collective ? MPI_File_write_at_all(f->fh, (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st)
                       : MPI_File_write_at(f->fh, (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st);
  else
    rc = f->collective ? MPI_File_read_at_all(f->fh, (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st)
                       : MPI_File_read_at(f->fh, (MPI_Offset)off, buf, (int)n, MPI_BYTE, &st);
  int got = (int)n;
  if (rc == MPI_SUCCESS)
    MPI_Get_count(&st, MPI_BYTE, &got);
  if (rc != MPI_SUCCESS || got != (int)n) {
    char m[MPI_MAX_ERROR_STRING] = "short transfer (end of file?)";
    if (rc != MPI_SUCCESS)
      mpi_msg(rc, m, sizeof m);
    snprintf(err, len, "MPI_File_%s_at%s of %zu B at offset %llu failed: %s",
             write ? "write" : "read", f->collective ? "_all" : "", n, off, m);
    return -1;
  }
  return 0;
}

static int mi_write_at(io_file *f, const void *buf, size_t n, unsigned long long off, char *err,
                       size_t len) {
  return xfer(f, (void *)buf, n, off, 1, err, len);
}

static int mi_read_at(io_file *f, void *buf, size_t n, unsigned long long off, char *err,
                      size_t len) {
  return xfer(f, buf, n, off, 0, err, len);
}

static int mi_sync(io_file *f, char *err, size_t len) {
  int rc = MPI_File_sync(f->fh);
  if (rc != MPI_SUCCESS) {
    char m[MPI_MAX_ERROR_STRING];
    mpi_msg(rc, m, sizeof m);
    snprintf(err, len, "MPI_File_sync failed: %s", m);
    return -1;
  }
  return 0;
}

static int mi_close(io_file *f, char *err, size_t len) {
  int rc = MPI_File_close(&f->fh);
  if (rc != MPI_SUCCESS) {
    char m[MPI_MAX_ERROR_STRING];
    mpi_msg(rc, m, sizeof m);
    snprintf(err, len, "MPI_File_close failed: %s", m);
    return -1;
  }
  return 0;
}

static int mi_remove(const char *path, char *err, size_t len) {
  int rc = MPI_File_delete((char *)path, MPI_INFO_NULL);
  if (rc != MPI_SUCCESS) {
    int cls = 0;
    MPI_Error_class(rc, &cls);
    if (cls == MPI_ERR_NO_SUCH_FILE)
      return 0;
    char m[MPI_MAX_ERROR_STRING];
    mpi_msg(rc, m, sizeof m);
    snprintf(err, len, "MPI_File_delete('%s') failed: %s", path, m);
    return -1;
  }
  return 0;
}

const io_backend contend_io_mpiio = {
    .name = "mpiio",
    .open = mi_open,
    .write_at = mi_write_at,
    .read_at = mi_read_at,
    .sync = mi_sync,
    .close = mi_close,
    .remove = mi_remove,
};
