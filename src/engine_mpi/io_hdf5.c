/* HDF5 back end (parallel HDF5): one 1-D byte dataset per file, named
 * after the job.  A shared file uses the MPI-IO driver on the group
 * (independent or collective transfers through the dataset transfer
 * property); a file per rank uses the default (sec2) driver.  Transfers
 * select a hyperslab of the dataset at the byte offset. */
#ifdef CONTEND_HAVE_HDF5
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contend/files.h"
#include "contend/json.h"
#include "io_backend.h"

typedef struct h5 {
  hid_t file, dset, dxpl;
} h5;

static void h5_quiet(void) {
  static int done;
  if (!done) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* we report errors ourselves */
    done = 1;
  }
}

/* Why H5Fcreate/H5Fopen failed, from the file system: HDF5 keeps its
 * reason in its own error stack (silenced) and leaves errno unrelated. */
static void file_error(const contend_io_spec *s, char *err, size_t len) {
  char why[4200];
  struct stat st;
  if (s->create) {
    if (contend_path_creatable(s->path, why, sizeof why))
      snprintf(err, len, "cannot create '%s': %s", s->path, why);
    else
      snprintf(err, len, "HDF5 cannot create '%s'", s->path);
  } else if (stat(s->path, &st) != 0) {
    snprintf(err, len, "cannot open '%s': %s", s->path, strerror(errno));
  } else if (S_ISDIR(st.st_mode)) {
    snprintf(err, len, "cannot open '%s': it is a directory, expected a file", s->path);
  } else {
    snprintf(err, len, "HDF5 cannot open '%s' (not an HDF5 file?)", s->path);
  }
}

static int h5_open(io_file *f, const contend_io_spec *s, char *err, size_t len) {
  h5_quiet();
  h5 *h = calloc(1, sizeof *h);
  if (!h) {
    snprintf(err, len, "out of memory");
    return -1;
  }
  h->file = h->dset = h->dxpl = -1;
  const char *name = s->dataset && *s->dataset ? s->dataset : "data";
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (f->shared)
    H5Pset_fapl_mpio(fapl, f->comm, MPI_INFO_NULL);
  if (s->create) {
    h->file = H5Fcreate(s->path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (h->file >= 0) {
      hsize_t dims[1] = {(hsize_t)s->file_bytes};
      hid_t space = H5Screate_simple(1, dims, NULL);
      h->dset =
          H5Dcreate2(h->file, name, H5T_NATIVE_UCHAR, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Sclose(space);
    }
  } else {
    h->file = H5Fopen(s->path, H5F_ACC_RDONLY, fapl);
    if (h->file >= 0)
      h->dset = H5Dopen2(h->file, name, H5P_DEFAULT);
  }
  H5Pclose(fapl);
  if (h->file < 0) {
    file_error(s, err, len);
    free(h);
    return -1;
  }
  if (h->dset < 0) {
    snprintf(err, len, "HDF5 cannot %s dataset '%s' in '%s'", s->create ? "create" : "open", name,
             s->path);
    H5Fclose(h->file);
    free(h);
    return -1;
  }
  h->dxpl = H5Pcreate(H5P_DATASET_XFER);
  if (f->shared)
    H5Pset_dxpl_mpio(h->dxpl, f->collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
  f->priv = h;
  return 0;
}

static int h5_xfer(io_file *f, void *buf, size_t n, unsigned long long off, int write, char *err,
                   size_t len) {
  h5 *h = f->priv;
  hsize_t start[1] = {(hsize_t)off}, count[1] = {(hsize_t)n};
  hid_t fspace = H5Dget_space(h->dset);
  hid_t mspace = H5Screate_simple(1, count, NULL);
  herr_t rc = H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
  if (rc >= 0)
    rc = write ? H5Dwrite(h->dset, H5T_NATIVE_UCHAR, mspace, fspace, h->dxpl, buf)
               : H5Dread(h->dset, H5T_NATIVE_UCHAR, mspace, fspace, h->dxpl, buf);
  H5Sclose(mspace);
  H5Sclose(fspace);
  if (rc < 0) {
    snprintf(err, len, "H5D%s of %zu B at offset %llu failed", write ? "write" : "read", n, off);
    return -1;
  }
  return 0;
}

static int h5_write_at(io_file *f, const void *buf, size_t n, unsigned long long off, char *err,
                       size_t len) {
  return h5_xfer(f, (void *)buf, n, off, 1, err, len);
}

static int h5_read_at(io_file *f, void *buf, size_t n, unsigned long long off, char *err,
                      size_t len) {
  return h5_xfer(f, buf, n, off, 0, err, len);
}

static int h5_sync(io_file *f, char *err, size_t len) {
  h5 *h = f->priv;
  if (f->create && H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0) {
    snprintf(err, len, "H5Fflush failed");
    return -1;
  }
  return 0;
}

static int h5_close(io_file *f, char *err, size_t len) {
  h5 *h = f->priv;
  herr_t rc = 0;
  rc |= H5Pclose(h->dxpl);
  rc |= H5Dclose(h->dset);
  rc |= H5Fclose(h->file);
  free(h);
  f->priv = NULL;
  if (rc < 0) {
    snprintf(err, len, "H5Fclose failed");
    return -1;
  }
  return 0;
}

static int h5_remove(const char *path, char *err, size_t len) {
  if (unlink(path) != 0 && errno != ENOENT) {
    snprintf(err, len, "cannot remove '%s': %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

const io_backend contend_io_hdf5 = {
    .name = "hdf5",
    .open = h5_open,
    .write_at = h5_write_at,
    .read_at = h5_read_at,
    .sync = h5_sync,
    .close = h5_close,
    .remove = h5_remove,
};
#else
/* Built without parallel HDF5: nothing here (ISO C wants a declaration). */
typedef int contend_io_hdf5_unused;
#endif
