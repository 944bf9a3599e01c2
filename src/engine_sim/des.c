/* The event queue (see des.h): a calendar wheel of time buckets, the
 * current bucket sorted, a heap beyond the horizon. */
#include "des.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/vgrow.h"

#define NIL UINT32_MAX
#define BMASK ((uint64_t)SIM_DES_BUCKETS - 1)

void sim_des_init(sim_des *d) {
  *d = (sim_des){0};
  memset(d->head, 0xff, sizeof d->head);
  memset(d->tail, 0xff, sizeof d->tail);
  d->free_chunk = NIL;
}

void sim_des_free(sim_des *d) {
  contend_vgrow_free(d->chunk, d->capchunk, sizeof *d->chunk);
  contend_vgrow_free(d->cur, d->capcur, sizeof *d->cur);
  contend_vgrow_free(d->tmp, d->capcur, sizeof *d->tmp);
  contend_vgrow_free(d->side.h, d->side.cap, sizeof *d->side.h);
  contend_vgrow_free(d->far.h, d->far.cap, sizeof *d->far.h);
  sim_des_init(d);
}

/* The event arrays grow in their own mappings (vgrow.h): a queue of
 * millions of events peaks at what it holds. */
static void *grow(void *p, size_t *cap, size_t min, size_t elem) {
  return contend_vgrow(p, cap, min, elem, "simulator event queue");
}

static inline int before(const sim_event *a, const sim_event *b) {
  return a->t < b->t || (a->t == b->t && a->key < b->key);
}

/* ---- 4-ary heaps on (time, key) ---- */

static void heap_push(sim_des_heap *hp, sim_event e) {
  if (hp->n == hp->cap)
    hp->h = grow(hp->h, &hp->cap, hp->n + 1, sizeof *hp->h);
  size_t i = hp->n++;
  while (i) {
    const size_t p = (i - 1) / 4;
    if (!before(&e, &hp->h[p]))
      break;
    hp->h[i] = hp->h[p];
    i = p;
  }
  hp->h[i] = e;
}

static sim_event heap_pop(sim_des_heap *hp) {
  const sim_event top = hp->h[0];
  const sim_event last = hp->h[--hp->n];
  const size_t n = hp->n;
  size_t i = 0;
  for (;;) {
    const size_t c = 4 * i + 1;
    if (c >= n)
      break;
    size_t m = c;
    const size_t end = c + 4 < n ? c + 4 : n;
    for (size_t k = c + 1; k < end; k++)
      if (before(&hp->h[k], &hp->h[m]))
        m = k;
    if (!before(&hp->h[m], &last))
      break;
    hp->h[i] = hp->h[m];
    i = m;
  }
  if (n)
    hp->h[i] = last;
  return top;
}

/* ---- the wheel ---- */

static void wheel_append(sim_des *d, uint32_t b, sim_event e) {
  uint32_t c = d->tail[b];
  if (c == NIL || d->chunk[c].n == SIM_DES_CHUNK) {
    uint32_t k = d->free_chunk;
    if (k != NIL) {
      d->free_chunk = d->chunk[k].next;
    } else {
      if (d->nchunk == d->capchunk) {
        size_t cap = d->capchunk;
        d->chunk = grow(d->chunk, &cap, (size_t)d->nchunk + 1, sizeof *d->chunk);
        d->capchunk = (uint32_t)cap;
      }
      k = d->nchunk++;
    }
    d->chunk[k].next = NIL;
    d->chunk[k].n = 0;
    if (c == NIL) {
      d->head[b] = k;
      d->nonempty[b / 64] |= 1ull << (b % 64);
    } else {
      d->chunk[c].next = k;
    }
    d->tail[b] = c = k;
  }
  d->chunk[c].ev[d->chunk[c].n++] = e;
  d->nwheel++;
}

/* Circular distance (1 .. SIM_DES_BUCKETS - 1) from bucket `from` to the
 * next non-empty bucket, or 0 if the wheel is empty. */
static uint64_t wheel_next(const sim_des *d, uint32_t from) {
  if (!d->nwheel)
    return 0;
  const uint32_t words = SIM_DES_BUCKETS / 64;
  uint32_t b = (from + 1) & (uint32_t)BMASK;
  uint32_t wi = b / 64;
  uint64_t m = d->nonempty[wi] & (~0ull << (b % 64));
  for (uint32_t k = 0; k <= words; k++) {
    if (m) {
      const uint32_t hit = wi * 64 + (uint32_t)__builtin_ctzll(m);
      return ((uint64_t)hit - from) & BMASK;
    }
    wi = wi + 1 == words ? 0 : wi + 1;
    m = d->nonempty[wi];
  }
  return 0;
}

/* One stable counting pass over a[0..n) by the `bits`-bit digit at `sh`
 * of the events' time (by_key 0) or key (1); scratch t. */
static inline void counting_pass(sim_event *a, sim_event *t, size_t n, int by_key, int sh,
                                 int bits) {
  const uint64_t mask = (1ull << bits) - 1;
  size_t cnt[257]; /* bits <= 8; only the digit's range is cleared (a pass is over a bucket) */
  memset(cnt, 0, (size_t)(mask + 2) * sizeof *cnt);
  for (size_t i = 0; i < n; i++)
    cnt[(((by_key ? a[i].key : a[i].t) >> sh) & mask) + 1]++;
  for (uint64_t k = 0; k < mask + 1; k++)
    cnt[k + 1] += cnt[k];
  for (size_t i = 0; i < n; i++)
    t[cnt[((by_key ? a[i].key : a[i].t) >> sh) & mask]++] = a[i];
  memcpy(a, t, n * sizeof *a);
}

/* Sorts a[0..n) by (time, key) within one bucket (the low
 * SIM_DES_BUCKET_SHIFT bits of time); scratch t: a stable radix sort by
 * time, then each run of equal times by key (LSD radix on the key bytes
 * that differ within the run: ids and kinds are small, so few passes;
 * synchronised sources make runs of thousands). */
static void sort_bucket(sim_event *a, sim_event *t, size_t n) {
  if (n <= 32) {
    for (size_t i = 1; i < n; i++) {
      const sim_event e = a[i];
      size_t j = i;
      while (j && before(&e, &a[j - 1])) {
        a[j] = a[j - 1];
        j--;
      }
      a[j] = e;
    }
    return;
  }
  size_t desc = 0; /* events scheduled out of time order (often none) */
  for (size_t i = 1; i < n; i++)
    desc += a[i].t < a[i - 1].t;
  if (desc) {
    counting_pass(a, t, n, 0, 0, 5);
    counting_pass(a, t, n, 0, 5, 5);
  }
  for (size_t i = 0, j; i < n; i = j) { /* each run of equal times by key */
    size_t kdesc = 0;
    for (j = i + 1; j < n && a[j].t == a[i].t; j++)
      kdesc += a[j].key < a[j - 1].key;
    if (!kdesc)
      continue;
    if (j - i > 16) {
      uint64_t diff = 0;
      for (size_t k = i + 1; k < j; k++)
        diff |= a[k].key ^ a[i].key;
      for (int sh = 0; sh < 64 && diff >> sh; sh += 8)
        if ((diff >> sh) & 0xff)
          counting_pass(a + i, t, j - i, 1, sh, 8);
      continue;
    }
    for (size_t k = i + 1; k < j; k++) {
      const sim_event e = a[k];
      size_t m = k;
      while (m > i && a[m - 1].key > e.key) {
        a[m] = a[m - 1];
        m--;
      }
      a[m] = e;
    }
  }
}

/* cur and side are empty: takes the next bucket (wheel or far) into cur.
 * 0 when nothing is left. */
static int refill(sim_des *d) {
  const uint64_t dist = wheel_next(d, (uint32_t)(d->cur_abs & BMASK));
  const uint64_t wabs = dist ? d->cur_abs + dist : UINT64_MAX;
  const uint64_t fabs = d->far.n ? d->far.h[0].t >> SIM_DES_BUCKET_SHIFT : UINT64_MAX;
  const uint64_t b = wabs < fabs ? wabs : fabs;
  if (b == UINT64_MAX)
    return 0;
  d->cur_abs = b;
  size_t n = 0;
  if (wabs == b) {
    const uint32_t w = (uint32_t)(b & BMASK);
    for (uint32_t c = d->head[w]; c != NIL;) {
      const sim_des_chunk *ck = &d->chunk[c];
      if (n + ck->n > d->capcur) {
        size_t cap = d->capcur;
        d->cur = grow(d->cur, &cap, n + ck->n, sizeof *d->cur);
        d->tmp = grow(d->tmp, &d->capcur, n + ck->n, sizeof *d->tmp);
      }
      memcpy(d->cur + n, ck->ev, ck->n * sizeof *ck->ev);
      n += ck->n;
      const uint32_t next = ck->next;
      d->chunk[c].next = d->free_chunk;
      d->free_chunk = c;
      c = next;
    }
    d->head[w] = d->tail[w] = NIL;
    d->nonempty[w / 64] &= ~(1ull << (w % 64));
    d->nwheel -= n;
    sort_bucket(d->cur, d->tmp, n);
  }
  if (fabs == b) { /* merge the far events of this bucket (in order) */
    size_t nf = 0;
    while (d->far.n && (d->far.h[0].t >> SIM_DES_BUCKET_SHIFT) == b) {
      if (n + nf + 1 > d->capcur) {
        size_t cap = d->capcur;
        d->cur = grow(d->cur, &cap, n + nf + 1, sizeof *d->cur);
        d->tmp = grow(d->tmp, &d->capcur, n + nf + 1, sizeof *d->tmp);
      }
      d->tmp[nf++] = heap_pop(&d->far);
    }
    /* merge cur[0..n) and tmp[0..nf) from the back into cur */
    size_t i = n, j = nf, k = n + nf;
    while (j) {
      if (i && before(&d->tmp[j - 1], &d->cur[i - 1]))
        d->cur[--k] = d->cur[--i];
      else
        d->cur[--k] = d->tmp[--j];
    }
    n += nf;
  }
  d->pos = 0;
  d->ncur = n;
  return 1;
}

void sim_des_push(sim_des *d, sim_time t, uint32_t kind, uint32_t id) {
  if (t < d->now)
    contend_fail("internal error: simulator event in the past (%llu < %llu ps)",
                 (unsigned long long)t, (unsigned long long)d->now);
  const sim_event e = {.t = t, .id = id, .kind = kind};
  const uint64_t abs = t >> SIM_DES_BUCKET_SHIFT;
  if (abs <= d->cur_abs)
    heap_push(&d->side, e);
  else if (abs - d->cur_abs < SIM_DES_BUCKETS)
    wheel_append(d, (uint32_t)(abs & BMASK), e);
  else
    heap_push(&d->far, e);
}

/* The earliest of cur and side (both of the current bucket), or NULL. */
static inline const sim_event *near_min(const sim_des *d) {
  const sim_event *c = d->pos < d->ncur ? &d->cur[d->pos] : NULL;
  if (!d->side.n)
    return c;
  return c && before(c, &d->side.h[0]) ? c : &d->side.h[0];
}

sim_time sim_des_next_time(sim_des *d) {
  const sim_event *m = near_min(d);
  if (!m && refill(d))
    m = near_min(d);
  return m ? m->t : SIM_NEVER;
}

int sim_des_pop(sim_des *d, sim_event *out) {
  const sim_event *m = near_min(d);
  if (!m) {
    if (!refill(d))
      return 0;
    m = near_min(d);
  }
  if (m == &d->cur[d->pos] && d->pos < d->ncur)
    *out = d->cur[d->pos++];
  else
    *out = heap_pop(&d->side);
  d->now = out->t;
  d->processed++;
  return 1;
}
