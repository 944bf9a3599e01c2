/* The per-peer message motifs' state, preludes and incast kernel (see
 * msgbuf.h). */
#include "msgbuf.h"

msgbuf_state *msgbuf_setup(contend_ctx *c, size_t nsend) {
  msgbuf_state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  if (nsend)
    s->s = contend_alloc(c, s->bytes * nsend);
  c->msg_bytes = s->bytes;
  return s;
}

double msgbuf_mib(const msgbuf_state *s, int messages) {
  return (double)messages * (double)s->bytes / 1048576.0;
}

void msgbuf_prepare(contend_ctx *c) {
  msgbuf_state *s = c->state;
  contend_pattern_fill(s->s, s->bytes, c->rank, c->iter, 0);
}

msgbuf_state *msgbuf_incast_setup(contend_ctx *c, int root) {
  msgbuf_state *s = msgbuf_setup(c, 1);
  s->root = root;
  if (c->rank == root)
    s->r = contend_alloc(c, s->bytes * (size_t)c->size);
  return s;
}

void msgbuf_incast_iterate(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank == s->root) {
    for (int j = 0; j < c->size; j++)
      if (j != s->root)
        contend_irecv(c, s->r + (size_t)j * s->bytes, s->bytes, j, 0);
  } else {
    contend_isend(c, s->s, s->bytes, s->root, 0);
  }
  contend_waitall(c);
}

void msgbuf_incast_check(contend_ctx *c) {
  msgbuf_state *s = c->state;
  if (c->rank == s->root)
    for (int j = 0; j < c->size; j++)
      if (j != s->root)
        contend_pattern_check(c, s->r + (size_t)j * s->bytes, s->bytes, j, c->iter, 0);
}
