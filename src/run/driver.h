/* The measurement driver: the one loop that runs a motif's life cycle on
 * any engine, for canaries, congestors and job motifs alike.
 *
 * Per round: the motif's round hook (with the round's random stream),
 * warm-up iterations, then timed iterations, each timed alone or, for
 * CONTEND_MOTIF_BLOCK_TIMING motifs, runs of iterations of one series
 * timed as a block (one clock read before and after, as a hand-written
 * latency loop), or for CONTEND_MOTIF_ROUND_TIMING motifs the round as a
 * whole, warm-up included (receivers of unsynchronised data: incasts); prepare/check around
 * iterations with verification (untimed, traffic detached); series of job motifs; the round's ring
 * named for the records (motifs with ring_of, untimed).  Time is read only
 * through the engine's clock (contend_group.now).  The policy around the
 * rounds (timeouts decided collectively, congestors that run until told
 * to stop) lives in the caller's `before` hook, which may use the control
 * plane: the driver itself is local to the rank and never communicates
 * except through the motif. */
#ifndef CONTEND_DRIVER_H
#define CONTEND_DRIVER_H

#include <stdint.h>

#include "contend/motif.h"
#include "contend/traffic.h"
#include "contend/world.h"

typedef struct contend_drive {
  const contend_group *clock; /* this rank's clock (any group of this rank); NULL: untimed */
  long measurements;          /* outer loop (LONG_MAX: until `before` stops it) */
  long rounds;                /* rounds per measurement (rings, nR) */
  long warmup, iters;         /* per round */
  int verify;                 /* prepare/check every iteration (check always for ALWAYS_CHECK) */
  long verify_inject;
  /* the round's random stream: contend_rng_init(seed, rng_kind, rng_id,
   * rng_first + measurement, round) */
  uint64_t rng_kind, rng_id, rng_first;
  long round_offset; /* c->round = round_offset + measurement * rounds + round */
  /* attached to the context during iterations (never prepare/check), or
   * NULL; `first` (only without `traffic`): during the first timed
   * iteration of the first sampled round only (dry-run plans) */
  contend_traffic *traffic, *first;
  /* before every round (may be NULL): returns 1 to stop before it; sets
   * *sampled to 0 when the round is run but not sampled (starts at 1) */
  int (*before)(void *arg, long measurement, long round, int *sampled);
  /* each timed iteration, or block of `count` iterations of mean duration
   * `seconds`, of series s >= 0 (may be NULL) */
  void (*sample)(void *arg, int series, double seconds, long count);
  /* after each sampled round: the time from the start of its first timed
   * iteration to the end of its last (may be NULL) */
  void (*after)(void *arg, double span_s, long iters);
  /* after the round hook of a motif with ring_of (may be NULL): the
   * round's ring, order[0 .. n) the group ranks in ring order (valid
   * during the call); outside the timed iterations */
  void (*ring)(void *arg, long measurement, long round, const int *order, int n);
  void *arg;
} contend_drive;

typedef struct contend_drive_done {
  long measurements; /* measurements begun (the last one possibly cut short) */
  long sampled;      /* sampled rounds run */
  int stopped;       /* `before` ended the loop */
  double timed_s;    /* sum of the timed iterations' durations */
} contend_drive_done;

/* Runs the loop on context c (every rank of the motif's group calls it
 * with the same counts).  A rank with c->metric_scale == 0 reads no clock
 * and takes no samples but runs the same steps. */
contend_drive_done contend_drive_run(contend_ctx *c, const contend_motif *m,
                                     const contend_drive *d);

/* The rings the loop would draw, without running anything: d->ring for
 * rounds 0 .. d->rounds - 1 of measurements 0 .. d->measurements - 1, in
 * order, at most max_rounds of them (< 0: all); local to the rank (dry
 * runs: every round of the plan).  Returns the rounds reported; 0 when
 * the motif has no ring_of or d->ring is NULL. */
long contend_drive_rings(contend_ctx *c, const contend_motif *m, const contend_drive *d,
                         long max_rounds);

#endif
