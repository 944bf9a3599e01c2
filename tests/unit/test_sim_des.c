/* The simulator's event queue (src/engine_sim/des.c) against the order it
 * promises: events pop in (time, kind, id) order, whatever mix of pushes
 * at the current time, within the current bucket, across the wheel and
 * beyond its horizon, peeks of the next time and pops (the reference is a
 * plain array searched for its minimum), with and without the bitmaps
 * of events at the current time; and the same events pushed in another
 * order pop in the same order. */
#include <stdint.h>
#include <stdlib.h>

#include "../../src/engine_sim/des.h"
#include "check.h"

typedef struct {
  sim_time t;
  uint32_t kind, id;
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
    return now; /* the current time */
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

/* The reference order: (time, kind, id). */
static int ref_cmp(const void *pa, const void *pb) {
  const ref_event *a = pa, *b = pb;
  if (a->t != b->t)
    return a->t < b->t ? -1 : 1;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

static size_t ref_min(const ref_event *r, size_t n) {
  size_t m = 0;
  for (size_t i = 1; i < n; i++)
    if (ref_cmp(&r[i], &r[m]) < 0)
      m = i;
  return m;
}

/* nowsets: kinds 1 and 4 keep their events at the current time in
 * bitmaps (ids below 5,000, and below 64^3 + 5: four levels), some ids
 * beyond them, repeated (time, kind, id) events among them; kind 7 asks
 * for a third, which is left to the heap. */
static void run(int ops, int push_bias, int nowsets) {
  sim_des d;
  sim_des_init(&d);
  if (nowsets) {
    sim_des_now_kind(&d, 1, 5000);
    sim_des_now_kind(&d, 4, (1u << 18) + 5);
    sim_des_now_kind(&d, 7, 100);
  }
  ref_event *ref = malloc(sizeof *ref * (size_t)ops);
  size_t nref = 0;
  uint32_t id = 0; /* distinct ids: every event is told apart */
  int mismatches = 0;
  size_t most_now = 0; /* events held in the bitmaps at once */
  for (int op = 0; op < ops; op++) {
    const uint64_t r = rnd() % 100;
    if (r < (uint64_t)push_bias || !nref) {
      const sim_time t = later(d.now);
      const uint32_t kind = (uint32_t)(rnd() % 20);
      uint32_t eid = id++ ^ 0x5555; /* not push order */
      if (nowsets && kind == 1)
        eid = (uint32_t)(rnd() % 5100); /* repeats, and a few beyond the bitmap */
      else if (nowsets && kind == 4)
        eid = rnd() % 2 ? (uint32_t)(rnd() % 300) : (1u << 18) - (uint32_t)(rnd() % 200);
      sim_des_push(&d, t, kind, eid);
      ref[nref++] = (ref_event){t, kind, eid};
    } else if (r < (uint64_t)push_bias + 5) {
      const size_t m = ref_min(ref, nref);
      mismatches += sim_des_next_time(&d) != ref[m].t;
    } else {
      const size_t m = ref_min(ref, nref);
      sim_event e;
      const int got = sim_des_pop(&d, &e);
      mismatches += !got || e.id != ref[m].id || e.kind != ref[m].kind || e.t != ref[m].t ||
                    d.now != ref[m].t;
      ref[m] = ref[--nref];
    }
    mismatches += sim_des_pending(&d) != nref;
    most_now = d.nowset_n > most_now ? d.nowset_n : most_now;
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
  CHECK(d.nnowset == (nowsets ? 2 : 0));
  CHECK(nowsets ? most_now > 1 : most_now == 0);
  free(ref);
  sim_des_free(&d);
}

/* The same events pushed in two orders (as a part of the fabric simulated
 * alone receives a neighbour's events later than the whole fabric would
 * schedule them) pop in the same order. */
static void order_free_of_pushes(int n) {
  ref_event *ev = malloc(sizeof *ev * (size_t)n);
  for (int i = 0; i < n; i++)
    ev[i] = (ref_event){later(0) % 50000, (uint32_t)(rnd() % 4), (uint32_t)i};
  sim_des a, b;
  sim_des_init(&a);
  sim_des_init(&b);
  for (int i = 0; i < n; i++)
    sim_des_push(&a, ev[i].t, ev[i].kind, ev[i].id);
  for (int i = n - 1; i >= 0; i--)
    sim_des_push(&b, ev[i].t, ev[i].kind, ev[i].id);
  int same = 1;
  sim_event x, y;
  while (sim_des_pop(&a, &x)) {
    same &= sim_des_pop(&b, &y) && x.t == y.t && x.kind == y.kind && x.id == y.id;
    if ((x.id & 7) == 0 && x.kind < 3) { /* an event that schedules another at once */
      sim_des_push(&a, x.t, 3, x.id + (uint32_t)n);
      sim_des_push(&b, y.t, 3, y.id + (uint32_t)n);
    }
  }
  CHECK(same && !sim_des_pop(&b, &y));
  free(ev);
  sim_des_free(&a);
  sim_des_free(&b);
}

/* One bucket of n events pushed in an order the sort may take a short
 * cut on (shape 0: already in (time, kind, id) order; 1: times in order,
 * runs of `run` equal times with keys descending; 2: keys in order, one
 * time out of order at the end) pops in (time, kind, id) order. */
static void bucket_shape(int shape, int n, int run) {
  const sim_time base = 5ull << SIM_DES_BUCKET_SHIFT; /* a bucket ahead of now */
  ref_event *ev = malloc(sizeof *ev * (size_t)n);
  for (int i = 0; i < n; i++) {
    const sim_time t = base + (sim_time)(i / run);
    const uint32_t k = shape == 1 ? (uint32_t)(run - 1 - i % run) : (uint32_t)(i % run);
    ev[i] = (ref_event){t, k % 3, k * 7919u + (uint32_t)(i / run)};
    if (shape == 1)
      ev[i].kind = 2 - k % 3 / 2; /* kinds descending too, with ties */
  }
  if (shape == 2)
    ev[n - 1].t = base; /* the last pushed is the earliest */
  sim_des d;
  sim_des_init(&d);
  for (int i = 0; i < n; i++)
    sim_des_push(&d, ev[i].t, ev[i].kind, ev[i].id);
  qsort(ev, (size_t)n, sizeof *ev, ref_cmp);
  int bad = 0;
  sim_event e;
  for (int i = 0; i < n; i++)
    bad += !sim_des_pop(&d, &e) || e.t != ev[i].t || e.kind != ev[i].kind || e.id != ev[i].id;
  CHECK(bad == 0 && !sim_des_pop(&d, &e));
  sim_des_free(&d);
  free(ev);
}

int main(void) {
  for (int shape = 0; shape < 3; shape++) {
    bucket_shape(shape, 400, 40); /* equal-time runs sorted by radix passes */
    bucket_shape(shape, 400, 5);  /* and by insertion */
  }
  order_free_of_pushes(5000);
  for (int nowsets = 0; nowsets < 2; nowsets++) {
    run(20000, 50, nowsets); /* about as many pushes as pops: a small queue */
    run(20000, 70, nowsets); /* a growing queue: many events per bucket, chunks chained */
    run(5000, 95, nowsets);  /* mostly pushes, then drained in order */
  }
  printf("test_sim_des: %d checks, %d failures\n", checks, failures);
  return failures != 0;
}
