/* The MPI library's name: the one a binary runs with and the one it was
 * compiled against (library.c).  For tables, JSON and `contend version`. */
#ifndef CONTEND_MPI_LIBRARY_H
#define CONTEND_MPI_LIBRARY_H

#include <stddef.h>

/* The library's name and version as one line of text for tables and
 * JSON: the first line of s up to a comma ("Open MPI v4.1.4, package: ..."
 * -> "Open MPI v4.1.4"; MPICH's several KiB "MPICH Version:\t4.0.2\n..."
 * -> "MPICH Version: 4.0.2"), every run of whitespace one space, no
 * leading or trailing space.  In place. */
void contend_mpi_library_line(char *s);

/* The running library's line (MPI_Get_library_version, which MPI allows
 * before MPI_Init: no MPI start-up, no launcher needed). */
void contend_mpi_library_running(char *buf, size_t len);

/* The library whose mpi.h this binary was compiled with, e.g. "Open MPI
 * 4.1.4" or "MPICH 4.0.2" (else the MPI standard version). */
void contend_mpi_library_compiled(char *buf, size_t len);

#endif
