/* The simulator's event queue: integer time in picoseconds, events popped
 * in (time, kind, id) order.  An event is (time, kind, id), interpreted by
 * whoever runs the loop (net.c); no allocation per event (storage is
 * pooled and reused).  The order of events at equal times is fixed by
 * what they are, not by when they were scheduled: a part of the fabric
 * simulated alone (the events of its channels, routers and nodes) pops
 * its events in the same order as the whole fabric does, which is what a
 * simulation spread over processes needs to give the same results.
 * Equal (time, kind, id) events are indistinguishable to the loop.
 *
 * Structure (a calendar queue; its cost per event does not grow with the
 * number pending, and the events about to run are contiguous in memory):
 * - a wheel of SIM_DES_BUCKETS buckets of 2^SIM_DES_BUCKET_SHIFT ps each
 *   holds the events of the next SIM_DES_BUCKETS buckets' time, appended
 *   into chunks of a shared pool;
 * - events beyond the wheel's horizon wait in a 4-ary heap (`far`);
 * - the current bucket is taken out whole (wheel chunks and the far
 *   events that fall in it), sorted by (time, kind, id) into `cur` and
 *   popped in order; events scheduled into it meanwhile go to a small
 *   heap (`side`) merged on pop;
 * - events of a few kinds (sim_des_now_kind: a channel's arbitration or
 *   a router's allocation asked for at once, thousands pending at one
 *   time on a large fabric) pushed for the current time are bits of a
 *   bitmap by id per kind (`nowset`), in levels of 64 words: a push sets
 *   a bit, a pop finds the next one, whatever their number; they pop in
 *   (kind, id) order, as from the heap.
 * sim_des_ahead() lets the loop look at the next events of the current
 * bucket to prefetch their state. */
#ifndef CONTEND_SIM_DES_H
#define CONTEND_SIM_DES_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t sim_time; /* picoseconds */
#define SIM_NEVER UINT64_MAX
#define SIM_PS_PER_S 1000000000000.0

#define SIM_DES_BUCKET_SHIFT 10 /* 1,024 ps per bucket */
#define SIM_DES_BUCKETS 4096    /* a horizon of 4.19 us */
#define SIM_DES_CHUNK 30        /* events per chunk of a bucket (488 B) */

/* 16 B: the order at equal times is key = kind << 32 | id, read as one
 * word (sorting and heaps compare it) or as its two halves. */
typedef struct sim_event {
  sim_time t;
  union {
    uint64_t key;
    struct {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
      uint32_t kind, id;
#else
      uint32_t id, kind;
#endif
    };
  };
} sim_event;
_Static_assert(sizeof(sim_event) == 16, "an event is 16 B");

typedef struct sim_des_heap {
  sim_event *h;
  size_t n, cap;
} sim_des_heap;

/* The bitmap of `kind` events at the current time (sim_des_now_kind):
 * level 0 has a bit per id, level l + 1 a bit per non-zero word of level
 * l; the top level is one word. */
#define SIM_DES_NOW_LEVELS 4 /* ids below 64^4 */
#define SIM_DES_NOW_KINDS 2
typedef struct sim_des_nowset {
  uint32_t kind;
  uint32_t ids; /* ids below this are kept here */
  int levels;
  uint64_t *bits[SIM_DES_NOW_LEVELS]; /* one allocation, from bits[0] */
  size_t n;                           /* events held, all at time now */
  uint32_t min;                       /* the smallest id held (when n) */
} sim_des_nowset;

typedef struct sim_des_chunk {
  uint32_t next, n;
  sim_event ev[SIM_DES_CHUNK];
} sim_des_chunk;

typedef struct sim_des {
  /* wheel: per bucket its first and last chunk (UINT32_MAX: empty) */
  uint32_t head[SIM_DES_BUCKETS], tail[SIM_DES_BUCKETS];
  uint64_t nonempty[SIM_DES_BUCKETS / 64];
  sim_des_chunk *chunk;
  uint32_t nchunk, capchunk, free_chunk;
  size_t nwheel;    /* events on the wheel */
  uint64_t cur_abs; /* absolute bucket number (t >> shift) of cur */
  sim_event *cur;   /* the current bucket, sorted; cur[pos..ncur) pending */
  size_t pos, ncur, capcur;
  sim_event *tmp; /* sort scratch, capcur */
  sim_des_heap side, far;
  sim_des_nowset nowset[SIM_DES_NOW_KINDS];
  int nnowset;        /* kinds given a nowset */
  size_t nowset_n;    /* events in them */
  uint64_t processed; /* events popped */
  sim_time now;
} sim_des;

void sim_des_init(sim_des *d);
void sim_des_free(sim_des *d);
/* Keeps the events of `kind` with ids below `ids` that are pushed for the
 * current time in a bitmap (ids / 8 bytes and less above); on an empty
 * queue, for up to SIM_DES_NOW_KINDS kinds (more are left to the heap).
 * The order of events is unchanged. */
void sim_des_now_kind(sim_des *d, uint32_t kind, uint32_t ids);
/* Schedules (kind, id) at t (>= now; earlier times are a programming
 * error and end the run). */
void sim_des_push(sim_des *d, sim_time t, uint32_t kind, uint32_t id);
/* Pops the earliest event into *e and advances now; 0 when empty. */
int sim_des_pop(sim_des *d, sim_event *e);
/* Time of the next event (SIM_NEVER: none).  May take the next bucket
 * out of the wheel (not a change of order). */
sim_time sim_des_next_time(sim_des *d);
/* Events pending. */
static inline size_t sim_des_pending(const sim_des *d) {
  return (d->ncur - d->pos) + d->side.n + d->far.n + d->nwheel + d->nowset_n;
}
/* The k-th next event of the current bucket's sorted run, or NULL: a
 * hint for prefetching (side and nowset events are not seen). */
static inline const sim_event *sim_des_ahead(const sim_des *d, size_t k) {
  return d->pos + k < d->ncur ? &d->cur[d->pos + k] : NULL;
}

#endif
