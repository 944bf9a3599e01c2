/* The trace engine's context API for `contend jobs --dry-run`: one
 * process plays every rank of a group in turn; steps are recorded into the
 * traffic accumulator attached with the engine op `count`. */
#ifndef CONTEND_ENGINE_TRACE_H
#define CONTEND_ENGINE_TRACE_H

#include "contend/motif.h"
#include "contend/traffic.h"

/* Opens a context for motif m as rank `rank` of a group of `size` ranks
 * whose nodes are node_of[] (owned by the caller, must outlive the
 * context); job fields are copied from *job when not NULL.  Runs setup
 * (nothing recorded) and returns its status (reason in c->error). */
int contend_trace_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                           int rank, int size, const int *node_of, uint64_t seed,
                           const contend_ctx *job);
/* Frees the engine memory and the motif state. */
void contend_trace_ctx_close(contend_ctx *c);

#endif
