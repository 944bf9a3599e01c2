/* Random-ring kernels of the ring canaries (see ring.h). */
#include "ring.h"

#include <string.h>

/* Tags: a message travelling rightwards uses tag 0, leftwards tag 1, so a
 * two-rank ring (left == right) still matches each stream separately. */
enum { TAG_RIGHTWARD = 0, TAG_LEFTWARD = 1 };

static void fill_xfers(ring_state *s);

int ring_setup(contend_ctx *c, ring_kind kind, int sync, int natural, double lat_divisor) {
  ring_state *s = c->state;
  s->kind = kind;
  s->sync = sync;
  s->natural = natural;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->nmsg = contend_params_find(c->params, "messages") >= 0
                ? (int)contend_param_int(c->params, "messages")
                : 1;
  s->sbuf = contend_alloc(c, s->bytes);
  if (kind == RING_TWO_SIDED) {
    s->rbuf = contend_alloc(c, 2 * (size_t)s->nmsg * s->bytes);
    s->xfer = contend_alloc(c, 4 * (size_t)s->nmsg * sizeof *s->xfer);
  }
  if (kind == RING_GET) {
    s->rbuf = contend_alloc(c, 2 * s->bytes);
    s->rma = contend_alloc(c, 2 * sizeof *s->rma);
    s->nrma = 2;
    s->win = contend_win_alloc(c, s->bytes);
    /* static content: the owner's pattern for "iteration 0" */
    contend_pattern_fill(s->win, s->bytes, c->rank, 0, 0);
    contend_barrier(c); /* content visible before anyone reads it */
  }
  if (kind == RING_PUT) {
    s->win = contend_win_alloc(c, 2 * (size_t)s->nmsg * s->bytes);
    s->rma = contend_alloc(c, 2 * (size_t)s->nmsg * sizeof *s->rma);
    s->nrma = 2 * s->nmsg;
  }
  c->msg_bytes = s->bytes;
  if (lat_divisor > 0)
    c->metric_scale = lat_divisor;
  else /* bytes this rank sends per iteration: nmsg to each neighbour */
    c->metric_scale = 2.0 * s->nmsg * (double)s->bytes / (1024.0 * 1024.0);
  s->left = s->right = c->rank;
  fill_xfers(s);
  return 0;
}

/* The transfers of one iteration with the current neighbours.  Two-sided:
 * all receives, then all sends.  Put: my slots at a neighbour (at the
 * right one I am its left: first half), alternating right and left.  Get:
 * the left neighbour's window, then the right one's. */
static void fill_xfers(ring_state *s) {
  const size_t n = s->bytes;
  if (s->kind == RING_PUT) {
    contend_rma *r = s->rma;
    for (int k = 0; k < s->nmsg; k++) {
      *r++ = (contend_rma){s->sbuf, n, s->right, (size_t)k * n, 1};
      *r++ = (contend_rma){s->sbuf, n, s->left, (size_t)(s->nmsg + k) * n, 1};
    }
    return;
  }
  if (s->kind == RING_GET) {
    s->rma[0] = (contend_rma){s->rbuf, n, s->left, 0, 0};
    s->rma[1] = (contend_rma){s->rbuf + n, n, s->right, 0, 0};
    return;
  }
  contend_xfer *x = s->xfer;
  for (int k = 0; k < s->nmsg; k++) {
    *x++ = (contend_xfer){s->rbuf + (size_t)k * n, n, s->left, TAG_RIGHTWARD, 0};
    *x++ = (contend_xfer){s->rbuf + (size_t)(s->nmsg + k) * n, n, s->right, TAG_LEFTWARD, 0};
  }
  for (int k = 0; k < s->nmsg; k++) {
    *x++ = (contend_xfer){s->sbuf, n, s->left, TAG_LEFTWARD, 1};
    *x++ = (contend_xfer){s->sbuf, n, s->right, TAG_RIGHTWARD, 1};
  }
}

void ring_round(contend_ctx *c, contend_rng *rng) {
  ring_state *s = c->state;
  contend_ring_neighbours(c, s->natural ? NULL : rng, &s->left, &s->right);
  fill_xfers(s);
}

/* The same draw as contend_ring_neighbours: the group ranks in order,
 * shuffled with the round's stream unless the ring is the natural one. */
int ring_order(const contend_ctx *c, contend_rng *rng, int *order) {
  const ring_state *s = c->state;
  for (int i = 0; i < c->size; i++)
    order[i] = i;
  if (!s->natural)
    contend_rng_shuffle(rng, order, c->size);
  return 1;
}

void ring_prepare(contend_ctx *c) {
  ring_state *s = c->state;
  if (s->kind != RING_GET)
    contend_pattern_fill(s->sbuf, s->bytes, c->rank, c->iter, 0);
}

void ring_iterate(contend_ctx *c) {
  ring_state *s = c->state;
  if (s->kind == RING_TWO_SIDED)
    contend_exchange(c, s->xfer, 4 * s->nmsg);
  else
    contend_rma_epoch(c, s->rma, s->nrma);
  if (s->sync)
    contend_barrier(c);
}

const contend_rma *ring_epoch(const contend_ctx *c, int *n) {
  const ring_state *s = c->state;
  if (s->kind == RING_TWO_SIDED || s->sync)
    return NULL;
  *n = s->nrma;
  return s->rma;
}

void ring_check(contend_ctx *c) {
  ring_state *s = c->state;
  const size_t n = s->bytes;
  switch (s->kind) {
  case RING_TWO_SIDED:
    for (int k = 0; k < s->nmsg; k++) {
      contend_pattern_check(c, s->rbuf + (size_t)k * n, n, s->left, c->iter, 0);
      contend_pattern_check(c, s->rbuf + (size_t)(s->nmsg + k) * n, n, s->right, c->iter, 0);
    }
    break;
  case RING_PUT:
    /* all puts of this iteration are complete once everyone passed the
     * barrier; the second barrier keeps the next iteration's puts out
     * until everyone has checked */
    contend_barrier(c);
    for (int k = 0; k < s->nmsg; k++) {
      contend_pattern_check(c, s->win + (size_t)k * n, n, s->left, c->iter, 0);
      contend_pattern_check(c, s->win + (size_t)(s->nmsg + k) * n, n, s->right, c->iter, 0);
    }
    contend_barrier(c);
    break;
  case RING_GET:
    contend_pattern_check(c, s->rbuf, n, s->left, 0, 0);
    contend_pattern_check(c, s->rbuf + n, n, s->right, 0, 0);
    break;
  }
}
