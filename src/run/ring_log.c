/* Ring records (see ring_log.h): digests, whole rings, their way to rank 0
 * and their JSON. */
#include "ring_log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "contend/json.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv_bytes(uint64_t h, uint64_t v, int nbytes) {
  for (int b = 0; b < nbytes; b++) {
    h ^= (v >> (8 * b)) & 0xff;
    h *= FNV_PRIME;
  }
  return h;
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap)
    return p;
  size_t c = *cap ? *cap : 16;
  while (c < need)
    c *= 2;
  void *q = realloc(p, c * elem);
  if (!q)
    contend_fail("out of memory (ring records)");
  *cap = c;
  return q;
}

void contend_ring_log_add(contend_ring_log *l, long measurement, const int *order, int n,
                          const int *nodes) {
  if (l->n == 0) {
    l->n = n;
    l->nodes = malloc(sizeof(int) * (size_t)n);
    if (!l->nodes)
      contend_fail("out of memory (ring records)");
    memcpy(l->nodes, nodes, sizeof(int) * (size_t)n);
  } else if (n != l->n) {
    contend_fail("ring records: a ring of %d ranks after rings of %d", n, l->n);
  }
  if (l->nmeas == 0 || measurement != l->last) {
    size_t cap = l->cap_meas; /* rounds and hash grow together */
    l->rounds = grow(l->rounds, &cap, (size_t)l->nmeas + 1, sizeof *l->rounds);
    l->hash = grow(l->hash, &l->cap_meas, (size_t)l->nmeas + 1, sizeof *l->hash);
    l->rounds[l->nmeas] = 0;
    l->hash[l->nmeas] = FNV_OFFSET;
    l->nmeas++;
    l->last = measurement;
  }
  uint64_t h = l->hash[l->nmeas - 1];
  for (int i = 0; i < n; i++)
    h = fnv_bytes(h, (uint32_t)order[i], 4);
  l->hash[l->nmeas - 1] = h;
  l->rounds[l->nmeas - 1]++;
  if (l->whole) {
    l->orders = grow(l->orders, &l->cap_orders, (l->norders + 1) * (size_t)n, sizeof *l->orders);
    memcpy(l->orders + l->norders * (size_t)n, order, sizeof(int) * (size_t)n);
    l->norders++;
  }
}

uint64_t contend_ring_log_digest(const contend_ring_log *l) {
  uint64_t h = FNV_OFFSET;
  for (long m = 0; m < l->nmeas; m++)
    h = fnv_bytes(h, l->hash[m], 8);
  return h;
}

void contend_ring_hex(uint64_t h, char *hex) {
  snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

void contend_ring_log_free(contend_ring_log *l) {
  const int whole = l->whole;
  free(l->nodes);
  free(l->rounds);
  free(l->hash);
  free(l->orders);
  free(l->values);
  memset(l, 0, sizeof *l);
  l->whole = whole;
}

/* Wire format, 8-byte words: per non-empty log its index, n, nmeas,
 * norders, nvalues, then nodes[n], rounds[nmeas], hash[nmeas],
 * orders[norders * n], values[nvalues * n] (the doubles' bits). */
enum { WIRE_HEAD = 5 };
static size_t wire_words(const contend_ring_log *l) {
  return WIRE_HEAD + (size_t)l->n + 2 * (size_t)l->nmeas + (l->norders + l->nvalues) * (size_t)l->n;
}

void contend_ring_log_gather(contend_group *world, contend_ring_log *logs, int n) {
  size_t words = 0;
  if (!logs)
    n = 0;
  for (int i = 0; i < n; i++)
    if (logs[i].n > 0)
      words += wire_words(&logs[i]);
  int64_t *buf = malloc(sizeof(int64_t) * (words ? words : 1));
  if (!buf)
    contend_fail("out of memory (ring records)");
  size_t o = 0;
  for (int i = 0; i < n; i++) {
    const contend_ring_log *l = &logs[i];
    if (l->n <= 0)
      continue;
    buf[o++] = i;
    buf[o++] = l->n;
    buf[o++] = l->nmeas;
    buf[o++] = (int64_t)l->norders;
    buf[o++] = (int64_t)l->nvalues;
    for (int k = 0; k < l->n; k++)
      buf[o++] = l->nodes[k];
    for (long m = 0; m < l->nmeas; m++)
      buf[o++] = l->rounds[m];
    for (long m = 0; m < l->nmeas; m++)
      buf[o++] = (int64_t)l->hash[m];
    for (size_t k = 0; k < l->norders * (size_t)l->n; k++)
      buf[o++] = l->orders[k];
    if (l->nvalues)
      memcpy(buf + o, l->values, sizeof(double) * l->nvalues * (size_t)l->n);
    o += l->nvalues * (size_t)l->n;
  }
  /* at most one rank per test records: most ranks send nothing */
  size_t *counts = world->rank == 0 ? malloc(sizeof(size_t) * (size_t)world->size) : NULL;
  int64_t *all = contend_ggatherv(world, buf, sizeof(int64_t) * o, counts);
  free(buf);
  if (world->rank != 0)
    return;
  size_t total = 0;
  for (int r = 0; r < world->size; r++)
    total += counts[r] / sizeof(int64_t);
  free(counts);
  for (size_t q = 0; q + WIRE_HEAD <= total;) {
    const int i = (int)all[q], rn = (int)all[q + 1];
    const long nm = (long)all[q + 2];
    const size_t no = (size_t)all[q + 3], nv = (size_t)all[q + 4];
    const int64_t *p = all + q + WIRE_HEAD;
    q += WIRE_HEAD + (size_t)rn + 2 * (size_t)nm + (no + nv) * (size_t)rn;
    if (i < 0 || i >= n || logs[i].n > 0)
      continue; /* rank 0's own record, or a second one of the same test */
    contend_ring_log *l = &logs[i];
    l->n = rn;
    l->nmeas = nm;
    l->norders = no;
    l->cap_meas = (size_t)nm;
    l->cap_orders = no * (size_t)rn;
    l->nodes = malloc(sizeof(int) * (size_t)rn);
    l->rounds = malloc(sizeof(long) * ((size_t)nm + 1));
    l->hash = malloc(sizeof(uint64_t) * ((size_t)nm + 1));
    l->orders = no ? malloc(sizeof(int) * no * (size_t)rn) : NULL;
    l->values = nv ? malloc(sizeof(double) * nv * (size_t)rn) : NULL;
    if (!l->nodes || !l->rounds || !l->hash || (no && !l->orders) || (nv && !l->values))
      contend_fail("out of memory (ring records)");
    for (int k = 0; k < rn; k++)
      l->nodes[k] = (int)*p++;
    for (long m = 0; m < nm; m++)
      l->rounds[m] = (long)*p++;
    for (long m = 0; m < nm; m++)
      l->hash[m] = (uint64_t)*p++;
    for (size_t k = 0; k < no * (size_t)rn; k++)
      l->orders[k] = (int)*p++;
    if (nv)
      memcpy(l->values, p, sizeof(double) * nv * (size_t)rn);
    l->nvalues = nv;
    l->last = nm - 1;
  }
  free(all);
}

void contend_ring_log_values(contend_group *g, contend_ring_log *l, const double *mine,
                             long nmine) {
  size_t *counts = g->rank == 0 ? malloc(sizeof(size_t) * (size_t)g->size) : NULL;
  if (g->rank == 0 && !counts)
    contend_fail("out of memory (ring records)");
  double *all = contend_ggatherv(g, mine, sizeof(double) * (size_t)nmine, counts);
  if (g->rank != 0)
    return;
  size_t *first = malloc(sizeof(size_t) * (size_t)g->size);
  if (!first)
    contend_fail("out of memory (ring records)");
  size_t at = 0;
  for (int r = 0; r < g->size; r++) {
    first[r] = at;
    counts[r] /= sizeof(double);
    at += counts[r];
  }
  if (l && l->n == g->size && l->norders > 0) {
    free(l->values);
    l->values = malloc(sizeof(double) * l->norders * (size_t)l->n);
    if (!l->values)
      contend_fail("out of memory (ring records)");
    for (size_t q = 0; q < l->norders; q++)
      for (int k = 0; k < l->n; k++) {
        const int r = l->orders[q * (size_t)l->n + (size_t)k];
        l->values[q * (size_t)l->n + (size_t)k] = q < counts[r] ? all[first[r] + q] : NAN;
      }
    l->nvalues = l->norders;
  }
  free(first);
  free(counts);
  free(all);
}

/* One JSON array per measurement, one per round, n ints or doubles each. */
static void json_rounds(contend_json *j, const char *key, const contend_ring_log *l,
                        const int *ints, const double *doubles, size_t nrounds) {
  contend_json_arr_begin(j, key);
  size_t at = 0;
  for (long m = 0; m < l->nmeas; m++) {
    contend_json_arr_begin(j, NULL);
    for (long r = 0; r < l->rounds[m] && at < nrounds; r++, at++) {
      contend_json_arr_begin(j, NULL);
      for (int k = 0; k < l->n; k++) {
        const size_t i = at * (size_t)l->n + (size_t)k;
        if (ints)
          contend_json_int(j, NULL, ints[i]);
        else
          contend_json_double(j, NULL, doubles[i]);
      }
      contend_json_arr_end(j);
    }
    contend_json_arr_end(j);
  }
  contend_json_arr_end(j);
}

void contend_ring_log_json(contend_json *j, const char *key, const contend_ring_log *l,
                           const char *values_key) {
  if (l->n <= 0)
    return;
  char hex[17];
  contend_json_obj_begin(j, key);
  contend_ring_hex(contend_ring_log_digest(l), hex);
  contend_json_str(j, "digest", hex);
  contend_json_arr_begin(j, "digests");
  for (long m = 0; m < l->nmeas; m++) {
    contend_ring_hex(l->hash[m], hex);
    contend_json_str(j, NULL, hex);
  }
  contend_json_arr_end(j);
  contend_json_arr_begin(j, "rounds");
  for (long m = 0; m < l->nmeas; m++)
    contend_json_int(j, NULL, l->rounds[m]);
  contend_json_arr_end(j);
  contend_json_arr_begin(j, "nodes");
  for (int k = 0; k < l->n; k++)
    contend_json_int(j, NULL, l->nodes[k]);
  contend_json_arr_end(j);
  if (l->norders > 0)
    json_rounds(j, "orders", l, l->orders, NULL, l->norders);
  if (l->nvalues > 0 && values_key)
    json_rounds(j, values_key, l, NULL, l->values, l->nvalues);
  contend_json_obj_end(j);
}
