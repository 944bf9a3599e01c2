/* The simulator's event queue (src/engine_sim/des.c) against the order it
 * promises: events pop in (time, scheduling sequence) order, whatever mix
 * of pushes at the current time, within the current bucket, across the
 * wheel and beyond its horizon, peeks of the next time and pops.  The
 * reference is a plain array searched for its minimum. */
#include <stdint.h>
#include <stdlib.h>

#include "../../src/engine_sim/des.h"
#include "check.h"

typedef struct {
  sim_time t;
  uint64_t seq;
  uint32_t id;
} ref_event;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A time at or after now, from one of the ranges the queue treats apart. */
static sim_time later(sim_time now) {
  const uint64_t bucket = 1ull << SIM_DES_BUCKET_SHIFT;
  switch (rnd() % 6) {
  case 0:
    return now; /* the FIFO of the current time */
  case 1:
    return now + rnd() % 4; /* ties and the current bucket */
  case 2:
    return now + rnd() % bucket;
  case 3:
    return now + rnd() % (bucket * 64);
  case 4:
    return now + rnd() % (bucket * SIM_DES_BUCKETS); /* across the wheel */
  default:
    return now + rnd() % (bucket * SIM_DES_BUCKETS * 8); /* beyond it: the far heap */
  }
}

static size_t ref_min(const ref_event *r, size_t n) {
  size_t m = 0;
  for (size_t i = 1; i < n; i++)
    if (r[i].t < r[m].t || (r[i].t == r[m].t && r[i].seq < r[m].seq))
      m = i;
  return m;
}

static void run(int ops, int push_bias) {
  sim_des d;
  sim_des_init(&d);
  ref_event *ref = malloc(sizeof *ref * (size_t)ops);
  size_t nref = 0;
  uint64_t seq = 0;
  uint32_t id = 0;
  int mismatches = 0;
  for (int op = 0; op < ops; op++) {
    const uint64_t r = rnd() % 100;
    if (r < (uint64_t)push_bias || !nref) {
      const sim_time t = later(d.now);
      sim_des_push(&d, t, 1, id);
      ref[nref++] = (ref_event){t, seq++, id++};
    } else if (r < (uint64_t)push_bias + 5) {
      const size_t m = ref_min(ref, nref);
      mismatches += sim_des_next_time(&d) != ref[m].t;
    } else {
      const size_t m = ref_min(ref, nref);
      sim_event e;
      const int got = sim_des_pop(&d, &e);
      mismatches += !got || e.id != ref[m].id || e.t != ref[m].t || d.now != ref[m].t;
      ref[m] = ref[--nref];
    }
    mismatches += sim_des_pending(&d) != nref;
  }
  while (nref) { /* drain */
    const size_t m = ref_min(ref, nref);
    sim_event e;
    const int got = sim_des_pop(&d, &e);
    mismatches += !got || e.id != ref[m].id || e.t != ref[m].t;
    ref[m] = ref[--nref];
  }
  sim_event e;
  CHECK(!sim_des_pop(&d, &e));
  CHECK(sim_des_next_time(&d) == SIM_NEVER);
  CHECK(mismatches == 0);
  CHECK(d.processed == (uint64_t)id);
  free(ref);
  sim_des_free(&d);
}

int main(void) {
  run(20000, 50); /* about as many pushes as pops: a small queue */
  run(20000, 70); /* a growing queue: many events per bucket, chunks chained */
  run(5000, 95);  /* mostly pushes, then drained in order */
  printf("test_sim_des: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
