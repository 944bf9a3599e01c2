/* The MPI engine: executes motif steps with real MPI calls. */
#ifndef CONTEND_ENGINE_MPI_H
#define CONTEND_ENGINE_MPI_H

#include <mpi.h>

#include "contend/motif.h"

extern const contend_engine_ops contend_mpi_ops;

/* Opens a context for motif m on comm (see below), one sub-communicator
 * at a time: the sub-communicators of one MPI_Comm_split share a context
 * id, and Open MPI 4.1's osc/rdma names the shared-memory file of a window
 * after it, so windows created at the same moment on one host collide.
 * Collective over `over`, which holds every caller; slot in [0, nslots)
 * is this caller's sub-communicator. */
int contend_mpi_ctx_open_serial(contend_ctx *c, const contend_motif *m, const contend_params *p,
                                MPI_Comm comm, int my_node, uint64_t seed, MPI_Comm over, int slot,
                                int nslots);
/* Opens a context for motif m on comm (collective over comm): fills
 * rank/size/node_of (node id of each comm rank, gathered here), allocates
 * the motif state and calls setup.  Returns 0, or -1 if setup failed. */
int contend_mpi_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                         MPI_Comm comm, int my_node, uint64_t seed);
/* As contend_mpi_ctx_open, for `contend jobs`: job_name, job_index, run_id
 * and stream are copied from *job (owned by the caller, must outlive the
 * context) before setup.  A failed setup returns -1 on every rank of comm;
 * the failing rank's reason is in its c->error. */
int contend_mpi_ctx_open_job(contend_ctx *c, const contend_motif *m, const contend_params *p,
                             MPI_Comm comm, int my_node, uint64_t seed, const contend_ctx *job);
/* Frees everything the motif allocated through the engine, its window
 * (collective over comm) and its state. */
void contend_mpi_ctx_close(contend_ctx *c);
MPI_Comm contend_mpi_ctx_comm(const contend_ctx *c);

/* Removes every file this process created through the engine and has not
 * removed yet (async-signal-safe: only unlink; best effort).  For abort
 * paths: signal handlers, watchdogs, fatal I/O errors. */
void contend_mpi_io_remove_tracked(void);

#endif
