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
  for (int k = 0; k < d->nnowset; k++)
    free(d->nowset[k].bits[0]);
  sim_des_init(d);
}

/* ---- the bitmap of the current time's events of one kind ---- */

void sim_des_now_kind(sim_des *d, uint32_t kind, uint32_t ids) {
  if (sim_des_pending(d) || d->processed)
    contend_fail("internal error: sim_des_now_kind on a used queue");
  const uint64_t cap = 1ull << (6 * SIM_DES_NOW_LEVELS);
  ids = ids > cap ? (uint32_t)cap : ids;
  if (!ids || d->nnowset == SIM_DES_NOW_KINDS)
    return;
  sim_des_nowset *s = &d->nowset[d->nnowset];
  size_t words[SIM_DES_NOW_LEVELS], total = 0;
  int levels = 0;
  for (uint64_t nbits = ids;; nbits = words[levels - 1]) {
    words[levels] = (size_t)((nbits + 63) / 64);
    total += words[levels++];
    if (words[levels - 1] == 1)
      break;
  }
  uint64_t *b = calloc(total, sizeof *b);
  if (!b)
    contend_fail("out of memory for the simulator's event queue (%zu B)", total * sizeof *b);
  for (int l = 0; l < levels; l++) {
    s->bits[l] = b;
    b += words[l];
  }
  s->kind = kind;
  s->ids = ids;
  s->levels = levels;
  d->nnowset++;
}

/* Adds id (< ids); 0 when it is held already (the caller queues the
 * duplicate elsewhere, so that both pop). */
static inline int nowset_add(sim_des_nowset *s, uint32_t id) {
  const uint64_t bit = 1ull << (id & 63);
  if (s->bits[0][id >> 6] & bit)
    return 0;
  uint32_t i = id;
  for (int l = 0; l < s->levels; l++, i >>= 6) {
    uint64_t *w = &s->bits[l][i >> 6];
    const uint64_t was = *w;
    *w = was | 1ull << (i & 63);
    if (was)
      break; /* the levels above have this word's bit */
  }
  if (!s->n++ || id < s->min)
    s->min = id;
  return 1;
}

/* Removes the smallest id and finds the next one: up the levels to the
 * first word with a bit past it, then down. */
static void nowset_pop_min(sim_des_nowset *s) {
  uint32_t i = s->min;
  for (int l = 0; l < s->levels; l++, i >>= 6) {
    uint64_t *w = &s->bits[l][i >> 6];
    *w &= ~(1ull << (i & 63));
    if (*w)
      break;
  }
  if (!--s->n)
    return;
  i = s->min; /* a held id is above it: the search ends within the levels */
  int l = 0;
  for (;;) {
    const uint64_t m = s->bits[l][i >> 6] & (~0ull << (i & 63));
    if (m) {
      i = (i & ~63u) | (uint32_t)__builtin_ctzll(m);
      break;
    }
    i = (i >> 6) + 1;
    l++;
  }
  while (l > 0) {
    l--;
    i = i * 64 + (uint32_t)__builtin_ctzll(s->bits[l][i]);
  }
  s->min = i;
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

/* cur, side and the nowsets are empty: takes the next bucket (wheel or far) into cur.
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
  if (t == d->now)
    for (int k = 0; k < d->nnowset; k++)
      if (kind == d->nowset[k].kind && id < d->nowset[k].ids && nowset_add(&d->nowset[k], id)) {
        d->nowset_n++;
        return;
      }
  const sim_event e = {.t = t, .id = id, .kind = kind};
  const uint64_t abs = t >> SIM_DES_BUCKET_SHIFT;
  if (abs <= d->cur_abs)
    heap_push(&d->side, e);
  else if (abs - d->cur_abs < SIM_DES_BUCKETS)
    wheel_append(d, (uint32_t)(abs & BMASK), e);
  else
    heap_push(&d->far, e);
}

/* The earliest event of cur, side and the nowsets (all of the current
 * bucket) into *e: 0 from cur, 1 side, 2 + k nowset k; -1 none. */
static inline int near_min(const sim_des *d, sim_event *e) {
  int w = -1;
  if (d->pos < d->ncur) {
    *e = d->cur[d->pos];
    w = 0;
  }
  if (d->side.n && (w < 0 || before(&d->side.h[0], e))) {
    *e = d->side.h[0];
    w = 1;
  }
  if (d->nowset_n)
    for (int k = 0; k < d->nnowset; k++)
      if (d->nowset[k].n) {
        const sim_event s = {.t = d->now, .id = d->nowset[k].min, .kind = d->nowset[k].kind};
        if (w < 0 || before(&s, e)) {
          *e = s;
          w = 2 + k;
        }
      }
  return w;
}

sim_time sim_des_next_time(sim_des *d) {
  if (d->nowset_n) /* nothing pending is earlier than now */
    return d->now;
  sim_event e;
  int w = near_min(d, &e);
  if (w < 0 && refill(d))
    w = near_min(d, &e);
  return w < 0 ? SIM_NEVER : e.t;
}

int sim_des_pop(sim_des *d, sim_event *out) {
  int w = near_min(d, out);
  if (w < 0) {
    if (!refill(d))
      return 0;
    w = near_min(d, out);
  }
  if (w == 0)
    d->pos++;
  else if (w == 1)
    heap_pop(&d->side);
  else {
    nowset_pop_min(&d->nowset[w - 2]);
    d->nowset_n--;
  }
  d->now = out->t;
  d->processed++;
  return 1;
}
