/* contend: recorded MPI traces as replay steps (src/trace_otf2/).
 *
 * contend_trace_read turns one rank (OTF2 location) of an OTF2 archive into
 * the steps the replay motif plays through the engine interface:
 * point-to-point posts with the world rank of the peer, the points where
 * every request the rank had posted is complete (a waitall), collectives
 * with their communicator, root and sizes, one-sided puts/gets and their
 * synchronisations, and the compute time between MPI calls.  Everything a
 * user controls is bounded by the limits below; a bad archive is one line
 * in err naming the archive, the location and the event.  Built without
 * OTF2 (CMake: CONTEND_WITH_OTF2), every call fails with the reason. */
#ifndef CONTEND_TRACE_OTF2_TRACE_H
#define CONTEND_TRACE_OTF2_TRACE_H

#include <stddef.h>
#include <stdint.h>

/* Limits (named in the messages that refuse an archive). */
#define CONTEND_TRACE_MAX_RANKS 65536        /* MPI ranks (locations) of an archive */
#define CONTEND_TRACE_MAX_STEPS 4000000      /* replay steps per rank */
#define CONTEND_TRACE_MAX_TOTAL 20000000     /* replay steps of all ranks (in-process engines) */
#define CONTEND_TRACE_MAX_BYTES (1ULL << 30) /* bytes of one message, put or get */
#define CONTEND_TRACE_MAX_COMMS 65536        /* communicator definitions */
#define CONTEND_TRACE_MAX_PENDING 65536      /* requests posted and not yet complete */
#define CONTEND_TRACE_MAX_DEFS (1 << 22)     /* the largest definition id (regions, groups) */

typedef enum {
  CONTEND_TS_SEND,     /* post a send: bytes to peer, tag on comm */
  CONTEND_TS_RECV,     /* post a receive: bytes from peer, tag on comm */
  CONTEND_TS_WAIT,     /* complete everything posted (no request left open) */
  CONTEND_TS_COLL,     /* collective coll on comm: bytes sent, bytes2 received, root */
  CONTEND_TS_COMPUTE,  /* seconds between two MPI calls */
  CONTEND_TS_PUT,      /* one-sided: bytes to peer's window */
  CONTEND_TS_GET,      /* one-sided: bytes from peer's window */
  CONTEND_TS_RMA_SYNC, /* the end of an access epoch (fence): completes puts/gets */
  CONTEND_TS_SKIP      /* (internal) a request cancelled or never completed */
} contend_tstep_kind;

/* Collective operations, numbered as OTF2_CollectiveOp (read.c checks). */
typedef enum {
  CONTEND_TC_BARRIER = 0,
  CONTEND_TC_BCAST = 1,
  CONTEND_TC_GATHER = 2,
  CONTEND_TC_GATHERV = 3,
  CONTEND_TC_SCATTER = 4,
  CONTEND_TC_SCATTERV = 5,
  CONTEND_TC_ALLGATHER = 6,
  CONTEND_TC_ALLGATHERV = 7,
  CONTEND_TC_ALLTOALL = 8,
  CONTEND_TC_ALLTOALLV = 9,
  CONTEND_TC_ALLTOALLW = 10,
  CONTEND_TC_ALLREDUCE = 11,
  CONTEND_TC_REDUCE = 12,
  CONTEND_TC_REDUCE_SCATTER = 13,
  CONTEND_TC_SCAN = 14,
  CONTEND_TC_EXSCAN = 15,
  CONTEND_TC_REDUCE_SCATTER_BLOCK = 16
} contend_tcoll;

typedef struct contend_tstep {
  uint64_t bytes, bytes2;
  double seconds;
  int peer;           /* world rank: SEND, RECV, PUT, GET; COLL: the root's world rank or -1 */
  int tag;            /* the recorded tag (SEND, RECV) */
  int comm;           /* index into contend_trace.comm (SEND, RECV, COLL) */
  uint8_t kind, coll; /* coll: contend_tcoll */
} contend_tstep;

/* A communicator: its members as world ranks, in communicator rank order. */
typedef struct contend_tcomm {
  int size;
  int *world;
} contend_tcomm;

/* What contend_trace_read gives; freed with contend_trace_free. */
typedef struct contend_trace {
  int nranks;
  int ncomm;
  contend_tcomm *comm;
  contend_tstep *step; /* the rank's steps, in order */
  size_t nstep;
  /* 1: the COMPUTE steps are the CPU time the rank's thread ran between
   * its calls (`contend record --compute-cpu`: the archive's property
   * CONTEND::COMPUTE_CLOCK=cpu); 0: wall time (any other archive) */
  int compute_cpu;
} contend_trace;

/* 1 when this build reads OTF2; else 0 and *why_not (may be NULL) says why. */
int contend_trace_available(const char **why_not);

/* Reads the definitions and the events of world rank `rank` of the archive
 * at path (the archive's directory or its .otf2 anchor file) into *t.
 * rank < 0: definitions only (t->nranks, t->comm).  Returns 0, or -1 with
 * one line in err (and *t empty). */
int contend_trace_read(const char *path, int rank, contend_trace *t, char *err, size_t errlen);

/* What contend_trace_check finds over all ranks. */
typedef struct contend_trace_sizes {
  int nranks;
  uint64_t steps;   /* replay steps of all ranks */
  uint64_t msg_max; /* the most bytes of one message or collective, sent or received */
  uint64_t rma_max; /* the most bytes of one put or get */
} contend_trace_sizes;

/* Reads every rank (a check of the whole archive) into *sz.  The last
 * archive checked is remembered (same path, anchor file unchanged), so
 * that every rank of a process can ask.  Returns 0 or -1 with err. */
int contend_trace_check(const char *path, contend_trace_sizes *sz, char *err, size_t errlen);

void contend_trace_free(contend_trace *t);

#endif
