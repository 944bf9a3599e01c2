/* Ring records: which ring each measurement of a ring test used.
 *
 * A ring is a permutation of the group ranks (contend_motif.ring_of): the
 * rank order around the ring.  Every round of a ring test draws one from a
 * stream every group rank shares, so one rank can record them all without
 * communication.  A log keeps, per measurement, a 64-bit digest of the
 * rings of its rounds, and optionally (whole) every ring.
 *
 * Digest (stable across versions, recomputable from the recorded rings):
 * FNV-1a 64 over the ranks of every round of the measurement in order, each
 * rank as 4 bytes little endian; the combined digest of a log is FNV-1a 64
 * over the measurement digests, each as 8 bytes little endian.  Written as
 * 16 lowercase hex digits. */
#ifndef CONTEND_RING_LOG_H
#define CONTEND_RING_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "contend/world.h"

struct contend_json;
struct contend_strbuf;

typedef struct contend_ring_log {
  int n;          /* ranks per ring; 0: nothing recorded */
  int whole;      /* set by the owner before recording: keep every ring */
  int *nodes;     /* node of every group rank (n entries) */
  long nmeas;     /* measurements recorded */
  long last;      /* the driver's index of the last one */
  long *rounds;   /* rounds recorded in each */
  uint64_t *hash; /* digest of each */
  int *orders;    /* whole: n ranks per round, every round in order */
  size_t norders; /* rounds held in orders */
  size_t cap_meas, cap_orders;
} contend_ring_log;

/* Adds the ring of one round of measurement `measurement` (the rounds of a
 * measurement arrive together, measurements in increasing order).  order:
 * n group ranks; nodes: the node of every group rank (copied at the first
 * ring).  Aborts on out of memory. */
void contend_ring_log_add(contend_ring_log *l, long measurement, const int *order, int n,
                          const int *nodes);
/* The combined digest (over every measurement's). */
uint64_t contend_ring_log_digest(const contend_ring_log *l);
/* hex: 17 bytes; 16 lowercase hex digits */
void contend_ring_hex(uint64_t h, char *hex);
/* Frees what the log holds and zeroes it (whole is kept). */
void contend_ring_log_free(contend_ring_log *l);

/* Collective over world: logs[0..n-1] of every rank travel to rank 0; at
 * rank 0 a log that is empty there takes the first non-empty one of
 * another rank (one rank records each test).  Other ranks keep theirs. */
void contend_ring_log_gather(contend_group *world, contend_ring_log *logs, int n);

/* Writes the log as a JSON object named key (nothing when empty):
 * digest, digests (one per measurement), rounds (per measurement), nodes
 * (of the group ranks) and, for whole logs, orders (per measurement, per
 * round, the group ranks in ring order). */
void contend_ring_log_json(struct contend_json *j, const char *key, const contend_ring_log *l);

#endif
