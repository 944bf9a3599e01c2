/* The simulator's event queue: integer time in picoseconds, events kept in
 * a 4-ary min-heap ordered by (time, insertion sequence), so events at
 * equal times run in the order they were scheduled and a run is
 * deterministic.  An event is three integers (kind, id) interpreted by
 * whoever runs the loop (net.c); there is no per-event allocation.
 * The fabric keeps at most one pending event per queue head (a channel's
 * wire, a channel's arbiter), so the heap holds O(channels + ranks)
 * entries, not O(packets).
 * Events scheduled for the current time (an arbiter asked for at once)
 * skip the heap: they go to a FIFO that runs after the heap's events of
 * that time.  This is the same (time, sequence) order: any heap event of
 * time `now` was scheduled before time reached `now`, so before every
 * FIFO entry. */
#ifndef CONTEND_SIM_DES_H
#define CONTEND_SIM_DES_H

#include <stddef.h>
#include <stdint.h>

typedef uint64_t sim_time; /* picoseconds */
#define SIM_NEVER UINT64_MAX
#define SIM_PS_PER_S 1000000000000.0

typedef struct sim_event {
  sim_time t;
  uint64_t seq;
  uint32_t id;
  uint32_t kind;
} sim_event;

typedef struct sim_des {
  sim_event *h;
  size_t n, cap;       /* heap: entries, capacity */
  sim_event *q;        /* FIFO of events at `now`: a ring */
  size_t qh, qn, qcap; /* its head, entries, capacity (a power of 2) */
  uint64_t seq;
  uint64_t processed; /* events popped */
  sim_time now;
} sim_des;

void sim_des_init(sim_des *d);
void sim_des_free(sim_des *d);
/* Schedules (kind, id) at t (>= now; earlier times are a programming
 * error and end the run). */
void sim_des_push(sim_des *d, sim_time t, uint32_t kind, uint32_t id);
/* Pops the earliest event into *e and advances now; 0 when empty. */
int sim_des_pop(sim_des *d, sim_event *e);
static inline sim_time sim_des_next_time(const sim_des *d) {
  return d->qn ? d->now : d->n ? d->h[0].t : SIM_NEVER;
}
/* Events pending. */
static inline size_t sim_des_pending(const sim_des *d) { return d->n + d->qn; }

#endif
