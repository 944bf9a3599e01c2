/* contend: error reporting.
 *
 * CONTEND_MPI_CHECK(call): every MPI call goes through it.  Communicators
 * and windows are set to MPI_ERRORS_RETURN, so a failing call returns here
 * and the run aborts cleanly with file, line, rank and call (exit 3).
 *
 * Exit statuses: 0 success; 1 --verify found corrupted data; 2 bad input
 * (usage, values, too few nodes, unwritable output); 3 runtime failure. */
#ifndef CONTEND_ERROR_H
#define CONTEND_ERROR_H

#include <mpi.h>

enum {
  CONTEND_EXIT_OK = 0,
  CONTEND_EXIT_VERIFY = 1,
  CONTEND_EXIT_USAGE = 2,
  CONTEND_EXIT_FAIL = 3
};

/* A function run once just before a failing rank aborts the job (e.g. to
 * remove the files it created); NULL clears it.  Not thread-safe. */
void contend_set_abort_hook(void (*hook)(void));

void contend_mpi_fail(const char *file, int line, const char *call, int rc)
    __attribute__((noreturn));
void contend_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

#define CONTEND_MPI_CHECK(call)                                                                    \
  do {                                                                                             \
    int contend_rc_ = (call);                                                                      \
    if (contend_rc_ != MPI_SUCCESS)                                                                \
      contend_mpi_fail(__FILE__, __LINE__, #call, contend_rc_);                                    \
  } while (0)

#endif
