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
 * 16 lowercase hex digits.
 *
 * Values (--record-rings in measuring runs): beside a whole log, the value
 * every rank measured in every round (its mean over the round's timed
 * iterations, in the test's metric), stored aligned with the orders:
 * values[q * n + k] belongs to the rank at position k of round q's ring,
 * so that a position's neighbours in the ring are its neighbours in the
 * array. */
#ifndef CONTEND_RING_LOG_H
#define CONTEND_RING_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "contend/world.h"

/* --record-rings: ring positions a run may record in total (per position
 * a rank and, in measuring runs, its value) */
#define CONTEND_RING_RECORD_MAX (1 << 24)

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
  double *values; /* n per round held, aligned with orders (NaN: not measured) */
  size_t nvalues; /* rounds held in values (0, or norders) */
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

/* Collective over g, the group the ring ran on: every rank's values of
 * the rounds it ran (mine[0 .. nmine), in round order) travel to g's rank
 * 0, which holds the whole log l (others pass NULL) and stores them
 * aligned with its orders.  A rank with fewer values than rounds leaves
 * NaN. */
void contend_ring_log_values(contend_group *g, contend_ring_log *l, const double *mine, long nmine);

/* Collective over world: logs[0..n-1] of every rank travel to rank 0; at
 * rank 0 a log that is empty there takes the first non-empty one of
 * another rank (one rank records each test).  Other ranks keep theirs.
 * logs may be NULL on a rank other than 0 (it recorded nothing). */
void contend_ring_log_gather(contend_group *world, contend_ring_log *logs, int n);

/* Writes the log as a JSON object named key (nothing when empty):
 * digest, digests (one per measurement), rounds (per measurement), nodes
 * (of the group ranks), for whole logs orders (per measurement, per
 * round, the group ranks in ring order) and, when it holds values, those
 * under values_key (the test's metric key; same nesting as orders). */
void contend_ring_log_json(struct contend_json *j, const char *key, const contend_ring_log *l,
                           const char *values_key);

#endif
