/* contend: reproducible random numbers.
 *
 * Every random choice (node split, rings, placement, noise) is drawn from
 * a stream derived from the run seed and a tuple of small integers naming
 * the choice, so that any rank can recompute any choice without
 * communication, and the same seed gives the same choices on every MPI
 * library and machine (no libc rand()). */
#ifndef CONTEND_RNG_H
#define CONTEND_RNG_H

#include <stdint.h>

typedef struct contend_rng {
  uint64_t s[4]; /* xoshiro256** state */
} contend_rng;

/* Stream for (seed, a, b, c, d): independent streams for distinct tuples. */
void contend_rng_init(contend_rng *r, uint64_t seed, uint64_t a, uint64_t b, uint64_t c,
                      uint64_t d);
uint64_t contend_rng_next(contend_rng *r);
/* Uniform integer in [0, n), without modulo bias.  n > 0. */
uint64_t contend_rng_below(contend_rng *r, uint64_t n);
/* Uniform double in [0, 1). */
double contend_rng_uniform(contend_rng *r);
/* Fisher-Yates shuffle of list[0..n). */
void contend_rng_shuffle(contend_rng *r, int *list, int n);

#endif
