/* contend: traffic accounting shared by the engines.
 *
 * A contend_traffic accumulates what one or more contexts did while it was
 * attached (engine op `count`): bytes and messages per (source node,
 * destination node) pair for point-to-point and one-sided steps (exact:
 * isend and put count from the caller's node to the peer's, get from the
 * peer's node to the caller's), the calls and payload of each collective
 * (logical: what the motif asked for, not how the library moved it), file
 * I/O volume and busy compute time.  The trace engine also expands
 * collectives into estimated node pairs (`estimated`).  Not thread-safe;
 * the owner initialises and frees it. */
#ifndef CONTEND_TRAFFIC_H
#define CONTEND_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "contend/engine.h"

typedef struct contend_flow {
  int src, dst; /* node ids */
  double bytes, msgs;
} contend_flow;

/* Open-addressing map (src, dst) -> flow; n used of cap slots. */
typedef struct contend_flowmap {
  contend_flow *slot;
  size_t n, cap;
  size_t last; /* slot of the last hit (a cheap cache for repeated peers) */
} contend_flowmap;

typedef enum {
  CONTEND_COLL_BARRIER,
  CONTEND_COLL_ALLREDUCE,
  CONTEND_COLL_ALLTOALL,
  CONTEND_COLL_N
} contend_coll_kind;

typedef struct contend_traffic {
  contend_flowmap flows;     /* point-to-point and one-sided: exact */
  contend_flowmap estimated; /* trace engine: collectives as textbook algorithms */
  /* per collective kind: calls summed over ranks, and bytes each rank
   * contributes (allreduce: count x element; alltoall: to the other ranks) */
  double coll_calls[CONTEND_COLL_N], coll_bytes[CONTEND_COLL_N];
  double io_write_bytes, io_read_bytes, io_write_ops, io_read_ops;
  double compute_s; /* requested busy time, summed over ranks */
} contend_traffic;

extern const char *const contend_coll_names[CONTEND_COLL_N];

void contend_traffic_init(contend_traffic *t);
void contend_traffic_free(contend_traffic *t);
void contend_traffic_reset(contend_traffic *t);
/* Adds one message of `bytes` from node src to node dst. */
void contend_flow_add(contend_flowmap *m, int src, int dst, double bytes, double msgs);
/* Adds everything of `from` into `into`. */
void contend_traffic_merge(contend_traffic *into, const contend_traffic *from);
/* Flows as a sorted array (src, then dst); the caller frees it. */
contend_flow *contend_flows_sorted(const contend_flowmap *m, size_t *n);
/* Totals of a map. */
void contend_flows_total(const contend_flowmap *m, double *bytes, double *msgs);

/* Bytes of one element of dt (1 for CONTEND_DT_BYTE, 8 otherwise). */
size_t contend_dtype_bytes(contend_dtype dt);
/* Counts one collective call of kind k by one rank contributing `bytes`:
 * coll_calls[k] += 1, coll_bytes[k] += bytes.  The one rule for `bytes`,
 * what the motif asked for (every engine uses it):
 *   barrier:   0
 *   allreduce: count x contend_dtype_bytes(dt)
 *   alltoall:  bytes_per_peer x (group size - 1)
 * t == NULL (nothing attached) does nothing. */
void contend_traffic_coll(contend_traffic *t, contend_coll_kind k, double bytes);

/* Flat form for MPI reductions/gathers: the scalar counters (coll calls,
 * coll bytes, I/O, compute) as CONTEND_TRAFFIC_NSCALARS doubles. */
#define CONTEND_TRAFFIC_NSCALARS (2 * CONTEND_COLL_N + 5)
void contend_traffic_scalars(const contend_traffic *t, double *out);
void contend_traffic_add_scalars(contend_traffic *t, const double *in);

#endif
