/* File I/O back ends of the MPI engine (IOR style: a struct of functions
 * per back end, one file each).  Internal to src/engine_mpi. */
#ifndef CONTEND_IO_BACKEND_H
#define CONTEND_IO_BACKEND_H

#include <mpi.h>
#include <stddef.h>

#include "contend/engine.h"

typedef struct io_file {
  const struct io_backend *be;
  MPI_Comm comm; /* the group for a shared file, MPI_COMM_SELF otherwise */
  int shared, collective, create;
  int is_open;
  int fd;      /* POSIX */
  MPI_File fh; /* MPI-IO */
  void *priv;  /* back-end private (HDF5 handles) */
} io_file;

/* Every function returns 0, or -1 with this rank's reason in err.  open,
 * sync and close are collective over f->comm; write_at/read_at are when
 * f->collective.  remove is called by one rank per file. */
typedef struct io_backend {
  const char *name;
  int (*open)(io_file *f, const contend_io_spec *s, char *err, size_t len);
  int (*write_at)(io_file *f, const void *buf, size_t n, unsigned long long off, char *err,
                  size_t len);
  int (*read_at)(io_file *f, void *buf, size_t n, unsigned long long off, char *err, size_t len);
  int (*sync)(io_file *f, char *err, size_t len);
  int (*close)(io_file *f, char *err, size_t len);
  int (*remove)(const char *path, char *err, size_t len);
} io_backend;

extern const io_backend contend_io_posix, contend_io_mpiio;
#ifdef CONTEND_HAVE_HDF5
extern const io_backend contend_io_hdf5;
#endif

#endif
