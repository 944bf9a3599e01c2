/* The 64-bit key map (keymap.h). */
#include "keymap.h"

#include <stdlib.h>

#include "error.h"

static size_t home(const contend_keymap *m, uint64_t key) {
  uint64_t x = key * 0x9E3779B97F4A7C15ull;
  return (size_t)(x ^ x >> 32) & (m->cap - 1);
}

/* The slot of key, or the empty slot where it would go. */
static size_t find(const contend_keymap *m, uint64_t key) {
  size_t i = home(m, key);
  while (m->s[i].key && m->s[i].key != key)
    i = (i + 1) & (m->cap - 1);
  return i;
}

void contend_keymap_put(contend_keymap *m, uint64_t key, uint64_t val, const char *what) {
  if (!key)
    contend_fail("internal error: key 0 in the map of %s", what);
  if (2 * (m->n + 1) > m->cap) {
    const size_t old = m->cap;
    struct contend_keymap_slot *o = m->s;
    m->cap = old ? 2 * old : 64;
    m->s = calloc(m->cap, sizeof *m->s);
    if (!m->s)
      contend_fail("out of memory (the map of %s, %zu entries)", what, m->cap);
    for (size_t k = 0; k < old; k++)
      if (o[k].key)
        m->s[find(m, o[k].key)] = o[k];
    free(o);
  }
  const size_t i = find(m, key);
  if (m->s[i].key)
    contend_fail("internal error: key %#llx twice in the map of %s", (unsigned long long)key, what);
  m->s[i].key = key;
  m->s[i].val = val;
  m->n++;
}

int contend_keymap_get(const contend_keymap *m, uint64_t key, uint64_t *val) {
  if (!m->n || !key)
    return 0;
  const size_t i = find(m, key);
  if (!m->s[i].key)
    return 0;
  *val = m->s[i].val;
  return 1;
}

int contend_keymap_take(contend_keymap *m, uint64_t key, uint64_t *val) {
  if (!m->n || !key)
    return 0;
  size_t i = find(m, key);
  if (!m->s[i].key)
    return 0;
  *val = m->s[i].val;
  const size_t mask = m->cap - 1;
  for (size_t j = (i + 1) & mask; m->s[j].key; j = (j + 1) & mask) {
    /* j's entry may fill the hole at i unless its home lies in (i, j] */
    if (((j - home(m, m->s[j].key)) & mask) >= ((j - i) & mask)) {
      m->s[i] = m->s[j];
      i = j;
    }
  }
  m->s[i].key = 0;
  m->n--;
  return 1;
}

void contend_keymap_free(contend_keymap *m) {
  free(m->s);
  m->s = NULL;
  m->cap = m->n = 0;
}
