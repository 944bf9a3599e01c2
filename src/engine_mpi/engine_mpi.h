/* The MPI engine's motif side: executes motif steps with real MPI calls.
 * Internal to src/engine_mpi (the run layer reaches it through
 * contend_engine_mpi, world_mpi.c). */
#ifndef CONTEND_ENGINE_MPI_H
#define CONTEND_ENGINE_MPI_H

#include <mpi.h>
#include <stdint.h>

#include "contend/motif.h"

extern const contend_engine_ops contend_mpi_ops;

/* Opens a context for motif m (collective over data and ctl, two
 * communicators with the same ranks in the same order).  The motif's
 * steps run on data (the measured channel); the engine's own agreements
 * run on ctl: the node of every rank (gathered into c->node_of), the
 * group-wide answer of setup, the file-open agreement and the barriers
 * around a shared file's removal.  Copies job_name, job_index, run_id and
 * stream from *job when job != NULL (owned by the caller, must outlive
 * the context).  Returns 0, or -1 on every rank if setup failed on any
 * (the failing rank's reason in its c->error); close the context in both
 * cases. */
int contend_mpi_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                         MPI_Comm data, MPI_Comm ctl, int my_node, uint64_t seed,
                         const contend_ctx *job);
/* Frees everything the motif allocated through the engine, its window
 * (collective over the context's communicators) and its state. */
void contend_mpi_ctx_close(contend_ctx *c);

/* The MPI types of the engine-neutral reduction arguments (CONTEND_DT_BYTE
 * is an unsigned 8-bit integer: MPI_BYTE takes no arithmetic). */
MPI_Datatype contend_mpi_dtype(contend_dtype dt);
MPI_Op contend_mpi_op(contend_op op);

/* Removes every file this process created through the engine and has not
 * removed yet (async-signal-safe: only unlink; best effort).  For abort
 * paths: signal handlers, watchdogs, fatal I/O errors. */
void contend_mpi_io_remove_tracked(void);

#endif
