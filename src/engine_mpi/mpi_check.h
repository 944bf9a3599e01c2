/* The MPI engine's error check: every MPI call goes through
 * CONTEND_MPI_CHECK.  Communicators and windows are set to
 * MPI_ERRORS_RETURN, so a failing call returns here and the run aborts
 * cleanly with file, line, rank and call (exit 3). */
#ifndef CONTEND_MPI_CHECK_H
#define CONTEND_MPI_CHECK_H

#include <mpi.h>

#include "../core/error.h"

void contend_mpi_fail(const char *file, int line, const char *call, int rc)
    __attribute__((noreturn));

#define CONTEND_MPI_CHECK(call)                                                                    \
  do {                                                                                             \
    int contend_rc_ = (call);                                                                      \
    if (contend_rc_ != MPI_SUCCESS)                                                                \
      contend_mpi_fail(__FILE__, __LINE__, #call, contend_rc_);                                    \
  } while (0)

#endif
