/* A map of nonzero 64-bit keys to 64-bit values: open addressing with
 * linear probing and backward-shift deletion (no tombstones), at most half
 * full, capacity a power of two.  For the simulator's tables of things
 * named alike in every process (groups, messages, timers) and found
 * again by name.  Zero-initialised: empty.  Not thread-safe. */
#ifndef CONTEND_CORE_KEYMAP_H
#define CONTEND_CORE_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct contend_keymap {
  struct contend_keymap_slot {
    uint64_t key, val; /* key 0: empty */
  } * s;
  size_t cap, n;
} contend_keymap;

/* Adds key (nonzero, not in m) -> val; ends the run naming what when out of
 * memory, or when key is already there (an internal error). */
void contend_keymap_put(contend_keymap *m, uint64_t key, uint64_t val, const char *what);
/* 1 and *val when key is in m, else 0 (*val untouched). */
int contend_keymap_get(const contend_keymap *m, uint64_t key, uint64_t *val);
/* contend_keymap_get, and key leaves m when it was there. */
int contend_keymap_take(contend_keymap *m, uint64_t key, uint64_t *val);
void contend_keymap_free(contend_keymap *m);

#endif
