/* Helpers shared by motifs (rings, verification patterns) and by the
 * engines (the engine-neutral part of opening a context). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "contend/motif.h"

/* The last ring drawn in this process: its stream state before and after
 * the shuffle, the ring and each rank's place in it.  In-process engines
 * play thousands of ranks that draw the same ring from the same state; the
 * first draws it, the others look up their place (a whole-group shuffle
 * per rank would cost O(ranks^2) per round).  Kept for the process. */
static struct {
  contend_rng before, after;
  int n;
  int *list, *pos;
} ring_memo;

static void ring_draw(contend_rng *rng, int n) {
  if (ring_memo.list && ring_memo.n == n && !memcmp(&ring_memo.before, rng, sizeof *rng)) {
    *rng = ring_memo.after;
    return;
  }
  if (ring_memo.n != n || !ring_memo.list) {
    free(ring_memo.list);
    free(ring_memo.pos);
    ring_memo.list = malloc(sizeof(int) * (size_t)n);
    ring_memo.pos = malloc(sizeof(int) * (size_t)n);
    if (!ring_memo.list || !ring_memo.pos)
      contend_fail("out of memory (a ring of %d ranks)", n);
    ring_memo.n = n;
  }
  ring_memo.before = *rng;
  for (int i = 0; i < n; i++)
    ring_memo.list[i] = i;
  contend_rng_shuffle(rng, ring_memo.list, n);
  for (int i = 0; i < n; i++)
    ring_memo.pos[ring_memo.list[i]] = i;
  ring_memo.after = *rng;
}

void contend_ring_neighbours(contend_ctx *c, contend_rng *rng, int *left, int *right) {
  const int n = c->size;
  if (!rng) { /* natural ring: group rank order */
    *left = (c->rank - 1 + n) % n;
    *right = (c->rank + 1) % n;
    return;
  }
  /* Every group rank draws the same permutation from the same stream and
   * finds its own position: no communication needed. */
  ring_draw(rng, n);
  const int pos = ring_memo.pos[c->rank];
  *left = ring_memo.list[(pos - 1 + n) % n];
  *right = ring_memo.list[(pos + 1) % n];
}

uint64_t contend_pattern(int sender, long iter, size_t index) {
  /* the constant keeps (0, 0, 0) from hashing to zero, i.e. to the content
   * of fresh memory */
  uint64_t z = 0x5bd1e9955bd1e995ULL ^ ((uint64_t)(uint32_t)sender << 40) ^
               ((uint64_t)iter * 0x9e3779b97f4a7c15ULL) ^ ((uint64_t)index * 0xbf58476d1ce4e5b9ULL);
  z = (z ^ (z >> 31)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 29);
}

void contend_pattern_fill(void *buf, size_t bytes, int sender, long iter, size_t first) {
  unsigned char *b = buf;
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t w = contend_pattern(sender, iter, first + i);
    memcpy(b + 8 * i, &w, 8);
  }
  if (bytes % 8) {
    uint64_t w = contend_pattern(sender, iter, first + words);
    memcpy(b + 8 * words, &w, bytes % 8);
  }
}

void contend_pattern_check(contend_ctx *c, void *buf, size_t bytes, int sender, long iter,
                           size_t first) {
  unsigned char *b = buf;
  c->verify_checked++;
  if (c->verify_inject > 0 && bytes > 0 && c->verify_checked % (uint64_t)c->verify_inject == 0)
    b[bytes / 2] ^= 0x5a;
  size_t words = bytes / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t w = contend_pattern(sender, iter, first + i);
    if (memcmp(b + 8 * i, &w, 8)) {
      c->verify_errors++;
      return;
    }
  }
  if (bytes % 8) {
    uint64_t w = contend_pattern(sender, iter, first + words);
    if (memcmp(b + 8 * words, &w, bytes % 8))
      c->verify_errors++;
  }
}

void contend_ctx_init(contend_ctx *c, const contend_motif *m, const contend_params *p, int rank,
                      int size, const int *node_of, uint64_t seed, const contend_ctx *job) {
  memset(c, 0, sizeof *c);
  if (job) {
    c->job_name = job->job_name;
    c->job_index = job->job_index;
    c->run_id = job->run_id;
    c->stream = job->stream;
    c->job_phase = CONTEND_JOB_DECOMPOSE;
  }
  c->rank = rank;
  c->size = size;
  c->node_of = node_of;
  c->params = p;
  c->seed = seed;
  c->state = calloc(1, m->state_size ? m->state_size : 1);
  if (!c->state)
    contend_fail("out of memory (motif state of %s)", m->name);
}

void contend_ctx_free_state(contend_ctx *c) {
  free(c->state);
  c->state = NULL;
}
