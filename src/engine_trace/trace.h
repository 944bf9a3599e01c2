/* The trace engine's data plane: motif contexts whose steps are recorded,
 * not performed, into the traffic accumulator attached with the engine op
 * `count` (nothing is recorded while none is attached, e.g. during setup).
 * No data moves: receive buffers (irecv, get, allreduce, alltoall, file
 * reads) keep what they held, so --verify means nothing on this engine.
 * Every context is one rank's and independent of the others: the data
 * ops never wait for another rank, so they can be driven rank by rank
 * (tests) or from fibers (the trace engine's world, world_trace.c). */
#ifndef CONTEND_ENGINE_TRACE_H
#define CONTEND_ENGINE_TRACE_H

#include "contend/motif.h"
#include "contend/traffic.h"

/* Opens a context for motif m as rank `rank` of a group of `size` ranks
 * whose nodes are node_of[] (owned by the caller, must outlive the
 * context); job fields are copied from *job when not NULL.  Allocates the
 * zeroed motif state, runs setup (nothing recorded) and returns its
 * status (reason in c->error).  The context must be closed even when
 * setup failed. */
int contend_trace_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                           int rank, int size, const int *node_of, uint64_t seed,
                           const contend_ctx *job);
/* Has contend_trace_ctx_close call fn(arg) after freeing the context
 * (e.g. to release a node_of shared by the ranks of a group).  One per
 * context; a later call replaces it. */
void contend_trace_ctx_on_close(contend_ctx *c, void (*fn)(void *arg), void *arg);
/* Frees the engine memory (alloc, win_alloc) and the motif state; does
 * not call the motif's cleanup.  A closed or zeroed context is fine. */
void contend_trace_ctx_close(contend_ctx *c);

#endif
