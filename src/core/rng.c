#include "contend/rng.h"

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void contend_rng_init(contend_rng *r, uint64_t seed, uint64_t a, uint64_t b, uint64_t c,
                      uint64_t d) {
  /* Absorb the tuple one word at a time so that distinct tuples give
   * unrelated states. */
  uint64_t x = seed;
  uint64_t h = splitmix64(&x);
  const uint64_t words[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++) {
    x = h ^ (words[i] * 0xd1342543de82ef95ULL + (uint64_t)i);
    h = splitmix64(&x);
  }
  x = h;
  for (int i = 0; i < 4; i++)
    r->s[i] = splitmix64(&x);
}

uint64_t contend_rng_next(contend_rng *r) {
  uint64_t *s = r->s;
  const uint64_t result = rotl(s[1] * 5, 7) * 9;
  const uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t contend_rng_below(contend_rng *r, uint64_t n) {
  /* Rejection sampling on the top of the range avoids modulo bias. */
  uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
  uint64_t v;
  do {
    v = contend_rng_next(r);
  } while (v >= limit);
  return v % n;
}

double contend_rng_uniform(contend_rng *r) { return (contend_rng_next(r) >> 11) * 0x1.0p-53; }

void contend_rng_shuffle(contend_rng *r, int *list, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = (int)contend_rng_below(r, (uint64_t)i + 1);
    int t = list[i];
    list[i] = list[j];
    list[j] = t;
  }
}
