/* contend: the engine interface.
 *
 * A motif never calls MPI (or any transport) itself: it emits the steps of
 * its own rank through these calls, and the engine behind the context
 * executes them.  The MPI engine runs them as real MPI calls (collectives
 * stay MPI collectives); the trace engine records who sends how many bytes
 * to whom without communicating; a simulated engine can move them as
 * packets.  Ranks are ranks of the motif's group (contend_ctx.rank/size).
 *
 * Contracts shared by every engine:
 * - isend/irecv/put/get are non-blocking; waitall completes every pending
 *   isend/irecv of this context, flush/flush_all every pending put/get.
 *   An iteration must complete everything it started before returning.
 * - alloc/win_alloc memory is owned by the engine and freed when the
 *   context is finished; motifs free nothing.  win_alloc is collective over
 *   the group and gives at most one window per context, open for passive
 *   target access (lock_all) until the context is finished.
 * - barrier/allreduce/alltoall are collective over the group.
 * - Errors inside an engine abort the run with file, line, rank and call;
 *   engine calls do not return error codes.
 */
#ifndef CONTEND_ENGINE_H
#define CONTEND_ENGINE_H

#include <stddef.h>

struct contend_ctx;

typedef enum { CONTEND_DT_BYTE, CONTEND_DT_INT64, CONTEND_DT_DOUBLE } contend_dtype;
typedef enum { CONTEND_OP_SUM, CONTEND_OP_MIN, CONTEND_OP_MAX } contend_op;

typedef struct contend_engine_ops {
  const char *name;
  void *(*alloc)(struct contend_ctx *c, size_t bytes);
  void *(*win_alloc)(struct contend_ctx *c, size_t bytes);
  void (*isend)(struct contend_ctx *c, const void *buf, size_t bytes, int peer, int tag);
  void (*irecv)(struct contend_ctx *c, void *buf, size_t bytes, int peer, int tag);
  void (*waitall)(struct contend_ctx *c);
  void (*put)(struct contend_ctx *c, const void *buf, size_t bytes, int peer, size_t offset);
  void (*get)(struct contend_ctx *c, void *buf, size_t bytes, int peer, size_t offset);
  void (*flush_all)(struct contend_ctx *c);
  void (*barrier)(struct contend_ctx *c);
  void (*allreduce)(struct contend_ctx *c, const void *sbuf, void *rbuf, int count,
                    contend_dtype dt, contend_op op);
  void (*alltoall)(struct contend_ctx *c, const void *sbuf, void *rbuf, size_t bytes_per_peer);
  void (*compute)(struct contend_ctx *c, double seconds);
} contend_engine_ops;

#endif
