/* The MPI library's name, running and compiled against (see library.h). */
#include "library.h"

#include <mpi.h>
#include <stdio.h>

void contend_mpi_library_line(char *s) {
  char *w = s;
  const char *r = s;
  while (*r == ' ' || *r == '\t' || *r == '\r' || *r == '\n')
    r++;
  for (; *r && *r != '\n' && *r != ','; r++) {
    const int space = *r == ' ' || *r == '\t' || *r == '\r' || *r == '\v' || *r == '\f';
    if (space && (w == s || w[-1] == ' '))
      continue;
    *w++ = space ? ' ' : *r;
  }
  while (w > s && w[-1] == ' ')
    w--;
  *w = 0;
}

void contend_mpi_library_running(char *buf, size_t len) {
  static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  if (MPI_Get_library_version(lib, &n) != MPI_SUCCESS) {
    snprintf(buf, len, "unknown (MPI_Get_library_version failed)");
    return;
  }
  lib[sizeof lib - 1] = 0;
  contend_mpi_library_line(lib);
  snprintf(buf, len, "%s", lib);
}

void contend_mpi_library_compiled(char *buf, size_t len) {
#if defined(OMPI_MAJOR_VERSION)
  snprintf(buf, len, "Open MPI %d.%d.%d", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION,
           OMPI_RELEASE_VERSION);
#elif defined(MVAPICH2_VERSION)
  snprintf(buf, len, "MVAPICH2 %s", MVAPICH2_VERSION);
#elif defined(I_MPI_VERSION)
  snprintf(buf, len, "Intel MPI %s", I_MPI_VERSION);
#elif defined(MPICH_VERSION)
  snprintf(buf, len, "MPICH %s", MPICH_VERSION);
#else
  snprintf(buf, len, "an MPI %d.%d library", MPI_VERSION, MPI_SUBVERSION);
#endif
}
