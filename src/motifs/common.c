/* Helpers shared by motifs (rings, verification patterns) and by the
 * engines (the engine-neutral part of opening a context). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "contend/motif.h"

void contend_ring_neighbours(contend_ctx *c, contend_rng *rng, int *left, int *right) {
  int n = c->size;
  if (!rng) { /* natural ring: group rank order */
    *left = (c->rank - 1 + n) % n;
    *right = (c->rank + 1) % n;
    return;
  }
  /* Every group rank draws the same permutation from the same stream and
   * finds its own position: no communication needed. */
  int *list = malloc(sizeof(int) * (size_t)n);
  if (!list)
    abort();
  for (int i = 0; i < n; i++)
    list[i] = i;
  contend_rng_shuffle(rng, list, n);
  int pos = 0;
  while (list[pos] != c->rank)
    pos++;
  *left = list[(pos - 1 + n) % n];
  *right = list[(pos + 1) % n];
  free(list);
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
