/* How the MPI engine makes RMA windows and completes RMA epochs: the
 * --rma-window and --rma-flush run options (declared once here) and, for
 * "auto", a table of MPI libraries known to be wrong on the fast path.
 * Internal to src/engine_mpi; the engine registers the option rows as its
 * own (contend_engine.options). */
#ifndef CONTEND_ENGINE_MPI_RMA_POLICY_H
#define CONTEND_ENGINE_MPI_RMA_POLICY_H

#include <stddef.h>

#include "contend/param.h"

struct contend_json;

/* The MPI engine's own run options (CONTEND_PARAM_END-terminated). */
extern const contend_param_def contend_mpi_param_defs[];

typedef struct contend_mpi_rma {
  int win_create;       /* 1: MPI_Win_create over MPI_Alloc_mem; 0: MPI_Win_allocate */
  int flush_per_target; /* 1: MPI_Win_flush to every target used; 0: MPI_Win_flush_all */
  char window_why[200]; /* how the choice was made ("default", "forced by --rma-window", ...) */
  char flush_why[200];
} contend_mpi_rma;

/* Checks the option values (no MPI calls).  Returns 0, or -1 with one line
 * in err (exit status 2). */
int contend_mpi_rma_check(const contend_params *opts, char *err, size_t errlen);

/* Resolves the policy of this process from the options (NULL: all auto)
 * and the library string (MPI_Get_library_version's, any length).  Every
 * rank of a run gets the same answer (same options, same library). */
void contend_mpi_rma_resolve(const contend_params *opts, const char *library);

/* The resolved policy (defaults until contend_mpi_rma_resolve ran). */
const contend_mpi_rma *contend_mpi_rma_policy(void);

/* One line for the text reports' header. */
void contend_mpi_rma_describe(char *buf, size_t len);

/* Writes {"rma": {...}} members into the results object at rank 0. */
void contend_mpi_rma_json(struct contend_json *j);

#endif
