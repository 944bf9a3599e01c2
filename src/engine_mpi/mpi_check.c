/* The MPI engine's failure report: names the failed MPI call and ends the
 * run through the engine-neutral error path (src/core/error.c). */
#include "mpi_check.h"

#include <stdio.h>

void contend_mpi_fail(const char *file, int line, const char *call, int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  /* unchecked: this is where a check would land */
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
    snprintf(msg, sizeof msg, "MPI error code %d", rc);
  fprintf(stderr, "contend: rank %d: %s:%d: %s failed: %s\n", contend_fail_rank(), file, line, call,
          msg);
  contend_die();
}
