/* The bully motifs' shared state, bound and hooks (see bully.h). */
#include "bully.h"

#include <stdio.h>

int bully_window_validate(const contend_params *p, const char *per, char *err, size_t errlen) {
  const double total = (double)contend_param_int(p, "msg_bytes") * contend_param_int(p, "window");
  if (total > (double)(1LL << 32)) {
    snprintf(err, errlen, "window x msg_bytes = %.0f B is more than 4 GiB per %s", total, per);
    return -1;
  }
  return 0;
}

bully_state *bully_setup(contend_ctx *c) {
  bully_state *s = c->state;
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->window = (int)contend_param_int(c->params, "window");
  c->msg_bytes = s->bytes;
  return s;
}

void bully_prepare(contend_ctx *c) {
  bully_state *s = c->state;
  if (s->sbuf)
    contend_pattern_fill(s->sbuf, s->bytes * (size_t)s->window, c->rank, c->iter, 0);
}

void bully_iterate(contend_ctx *c) {
  bully_state *s = c->state;
  contend_exchange(c, s->x, s->nx);
}
