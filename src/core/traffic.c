/* Traffic accounting shared by the engines (contend/traffic.h). */
#include "contend/traffic.h"

#include <stdlib.h>
#include <string.h>

const char *const contend_coll_names[CONTEND_COLL_N] = {"barrier", "allreduce", "alltoall"};

static size_t hash(int src, int dst) {
  uint64_t z = ((uint64_t)(uint32_t)src << 32) | (uint32_t)dst;
  z = (z ^ (z >> 31)) * 0x7fb5d329728ea185ULL;
  z = (z ^ (z >> 27)) * 0x81dadef4bc2dd44dULL;
  return (size_t)(z ^ (z >> 33));
}

static void grow(contend_flowmap *m) {
  size_t cap = m->cap ? 2 * m->cap : 64;
  contend_flow *s = malloc(sizeof *s * cap);
  if (!s)
    abort();
  for (size_t i = 0; i < cap; i++)
    s[i].src = -1;
  for (size_t i = 0; i < m->cap; i++) {
    if (m->slot[i].src < 0)
      continue;
    size_t h = hash(m->slot[i].src, m->slot[i].dst) & (cap - 1);
    while (s[h].src >= 0)
      h = (h + 1) & (cap - 1);
    s[h] = m->slot[i];
  }
  free(m->slot);
  m->slot = s;
  m->cap = cap;
  m->last = 0;
}

void contend_flow_add(contend_flowmap *m, int src, int dst, double bytes, double msgs) {
  if (m->cap && m->slot[m->last].src == src && m->slot[m->last].dst == dst) {
    m->slot[m->last].bytes += bytes;
    m->slot[m->last].msgs += msgs;
    return;
  }
  if (2 * (m->n + 1) > m->cap)
    grow(m);
  size_t h = hash(src, dst) & (m->cap - 1);
  while (m->slot[h].src >= 0 && (m->slot[h].src != src || m->slot[h].dst != dst))
    h = (h + 1) & (m->cap - 1);
  if (m->slot[h].src < 0) {
    m->slot[h] = (contend_flow){.src = src, .dst = dst, .bytes = 0, .msgs = 0};
    m->n++;
  }
  m->slot[h].bytes += bytes;
  m->slot[h].msgs += msgs;
  m->last = h;
}

void contend_traffic_init(contend_traffic *t) { memset(t, 0, sizeof *t); }

void contend_traffic_free(contend_traffic *t) {
  free(t->flows.slot);
  free(t->estimated.slot);
  memset(t, 0, sizeof *t);
}

void contend_traffic_reset(contend_traffic *t) {
  contend_traffic_free(t);
  contend_traffic_init(t);
}

static void merge_map(contend_flowmap *into, const contend_flowmap *from) {
  for (size_t i = 0; i < from->cap; i++)
    if (from->slot[i].src >= 0)
      contend_flow_add(into, from->slot[i].src, from->slot[i].dst, from->slot[i].bytes,
                       from->slot[i].msgs);
}

void contend_traffic_merge(contend_traffic *into, const contend_traffic *from) {
  merge_map(&into->flows, &from->flows);
  merge_map(&into->estimated, &from->estimated);
  double s[CONTEND_TRAFFIC_NSCALARS];
  contend_traffic_scalars(from, s);
  contend_traffic_add_scalars(into, s);
}

static int cmp_flow(const void *a, const void *b) {
  const contend_flow *x = a, *y = b;
  if (x->src != y->src)
    return x->src < y->src ? -1 : 1;
  return x->dst < y->dst ? -1 : x->dst > y->dst;
}

contend_flow *contend_flows_sorted(const contend_flowmap *m, size_t *n) {
  contend_flow *out = malloc(sizeof *out * (m->n ? m->n : 1));
  if (!out)
    abort();
  size_t k = 0;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slot[i].src >= 0)
      out[k++] = m->slot[i];
  qsort(out, k, sizeof *out, cmp_flow);
  *n = k;
  return out;
}

void contend_flows_total(const contend_flowmap *m, double *bytes, double *msgs) {
  *bytes = *msgs = 0;
  for (size_t i = 0; i < m->cap; i++)
    if (m->slot[i].src >= 0) {
      *bytes += m->slot[i].bytes;
      *msgs += m->slot[i].msgs;
    }
}

size_t contend_dtype_bytes(contend_dtype dt) { return dt == CONTEND_DT_BYTE ? 1 : 8; }

void contend_traffic_coll(contend_traffic *t, contend_coll_kind k, double bytes) {
  if (!t)
    return;
  t->coll_calls[k] += 1;
  t->coll_bytes[k] += bytes;
}

void contend_traffic_scalars(const contend_traffic *t, double *out) {
  int k = 0;
  for (int i = 0; i < CONTEND_COLL_N; i++)
    out[k++] = t->coll_calls[i];
  for (int i = 0; i < CONTEND_COLL_N; i++)
    out[k++] = t->coll_bytes[i];
  out[k++] = t->io_write_bytes;
  out[k++] = t->io_read_bytes;
  out[k++] = t->io_write_ops;
  out[k++] = t->io_read_ops;
  out[k++] = t->compute_s;
}

void contend_traffic_add_scalars(contend_traffic *t, const double *in) {
  int k = 0;
  for (int i = 0; i < CONTEND_COLL_N; i++)
    t->coll_calls[i] += in[k++];
  for (int i = 0; i < CONTEND_COLL_N; i++)
    t->coll_bytes[i] += in[k++];
  t->io_write_bytes += in[k++];
  t->io_read_bytes += in[k++];
  t->io_write_ops += in[k++];
  t->io_read_ops += in[k++];
  t->compute_s += in[k++];
}
