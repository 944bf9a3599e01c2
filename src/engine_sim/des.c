/* The event queue (see des.h): a 4-ary heap on (time, sequence). */
#include "des.h"

#include <stdlib.h>

#include "../core/error.h"

void sim_des_init(sim_des *d) { *d = (sim_des){0}; }

void sim_des_free(sim_des *d) {
  free(d->h);
  free(d->q);
  *d = (sim_des){0};
}

static inline int before(const sim_event *a, const sim_event *b) {
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

void sim_des_push(sim_des *d, sim_time t, uint32_t kind, uint32_t id) {
  if (t < d->now)
    contend_fail("internal error: simulator event in the past (%llu < %llu ps)",
                 (unsigned long long)t, (unsigned long long)d->now);
  if (t == d->now) { /* at once: the FIFO */
    if (d->qn == d->qcap) {
      const size_t cap = d->qcap ? 2 * d->qcap : 1024;
      sim_event *q = malloc(sizeof *q * cap);
      if (!q)
        contend_fail("out of memory (simulator event queue, %zu events)", cap);
      for (size_t i = 0; i < d->qn; i++)
        q[i] = d->q[(d->qh + i) & (d->qcap - 1)];
      free(d->q);
      d->q = q;
      d->qh = 0;
      d->qcap = cap;
    }
    d->q[(d->qh + d->qn++) & (d->qcap - 1)] = (sim_event){t, d->seq++, id, kind};
    return;
  }
  if (d->n == d->cap) {
    const size_t cap = d->cap ? 2 * d->cap : 1024;
    sim_event *h = realloc(d->h, sizeof *h * cap);
    if (!h)
      contend_fail("out of memory (simulator event queue, %zu events)", cap);
    d->h = h;
    d->cap = cap;
  }
  const sim_event e = {t, d->seq++, id, kind};
  size_t i = d->n++;
  while (i) {
    const size_t p = (i - 1) / 4;
    if (!before(&e, &d->h[p]))
      break;
    d->h[i] = d->h[p];
    i = p;
  }
  d->h[i] = e;
}

int sim_des_pop(sim_des *d, sim_event *out) {
  if (d->qn && !(d->n && d->h[0].t == d->now)) {
    *out = d->q[d->qh];
    d->qh = (d->qh + 1) & (d->qcap - 1);
    d->qn--;
    d->processed++;
    return 1;
  }
  if (!d->n)
    return 0;
  *out = d->h[0];
  d->now = out->t;
  d->processed++;
  const sim_event last = d->h[--d->n];
  size_t i = 0;
  const size_t n = d->n;
  for (;;) {
    const size_t c = 4 * i + 1;
    if (c >= n)
      break;
    size_t m = c;
    const size_t end = c + 4 < n ? c + 4 : n;
    for (size_t k = c + 1; k < end; k++)
      if (before(&d->h[k], &d->h[m]))
        m = k;
    if (!before(&d->h[m], &last))
      break;
    d->h[i] = d->h[m];
    i = m;
  }
  if (n)
    d->h[i] = last;
  return 1;
}
