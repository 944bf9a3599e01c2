#include "halo.h"

#include <stdio.h>

static const char *const axis_n[3] = {"nx", "ny", "nz"};
static const char *const axis_p[3] = {"px", "py", "pz"};

static void read_grid(const contend_params *p, int ndims, long *ext, int *dims) {
  for (int d = 0; d < ndims; d++) {
    ext[d] = (long)contend_param_int(p, axis_n[d]);
    dims[d] = (int)contend_param_int(p, axis_p[d]);
  }
}

int halo_validate(const contend_params *p, int nranks, int ndims, char *err, size_t errlen) {
  long ext[3];
  int dims[3] = {0, 0, 0};
  read_grid(p, ndims, ext, dims);
  if (nranks <= 0)
    return 0;
  return wl_grid(nranks, ndims, ext, dims, err, errlen);
}

/* Group rank at grid coordinates q, or -1 outside a non-periodic grid or
 * when the neighbour would be the rank itself (a local copy, no message). */
static int rank_at(const halo_state *s, int *q, int periodic, int self) {
  int r = 0;
  for (int d = s->ndims - 1; d >= 0; d--) {
    int x = q[d];
    if (x < 0 || x >= s->dims[d]) {
      if (!periodic)
        return -1;
      x = (x + s->dims[d]) % s->dims[d];
    }
    r = r * s->dims[d] + x;
  }
  return r == self ? -1 : r;
}

int halo_setup(contend_ctx *c, int ndims) {
  halo_state *s = c->state;
  s->ndims = ndims;
  int dims[3] = {0, 0, 0};
  read_grid(c->params, ndims, s->ext, dims);
  if (wl_grid(c->size, ndims, s->ext, dims, c->error, sizeof c->error))
    return -1;
  const int periodic = contend_param_bool(c->params, "periodic");
  const size_t cell = (size_t)contend_param_int(c->params, "depth") *
                      (size_t)contend_param_int(c->params, "fields") *
                      (size_t)contend_param_int(c->params, "elem_bytes");
  int rest = c->rank;
  for (int d = 0; d < ndims; d++) {
    s->dims[d] = dims[d];
    s->coord[d] = rest % dims[d];
    rest /= dims[d];
    long start;
    wl_split(s->ext[d], dims[d], s->coord[d], &start, &s->loc[d]);
  }
  size_t biggest = 0;
  for (int dir = 0; dir < 2 * ndims; dir++) {
    const int axis = dir / 2, step = dir % 2 ? -1 : 1;
    int q[3] = {s->coord[0], s->coord[1], s->coord[2]};
    q[axis] = s->coord[axis] + step;
    s->send_peer[dir] = rank_at(s, q, periodic, c->rank);
    q[axis] = s->coord[axis] - step;
    s->recv_peer[dir] = rank_at(s, q, periodic, c->rank);
    size_t face = cell;
    for (int e = 0; e < ndims; e++)
      if (e != axis)
        face *= (size_t)s->loc[e];
    s->bytes[dir] = face;
    if (s->send_peer[dir] >= 0)
      s->sbuf[dir] = contend_alloc(c, face);
    if (s->recv_peer[dir] >= 0)
      s->rbuf[dir] = contend_alloc(c, face);
    biggest = face > biggest ? face : biggest;
  }
  c->msg_bytes = biggest;
  c->metric_scale = 1.0;
  return 0;
}

static size_t first_word(int dir) { return (size_t)dir << 40; }

void halo_prepare(contend_ctx *c) {
  halo_state *s = c->state;
  for (int dir = 0; dir < 2 * s->ndims; dir++)
    if (s->send_peer[dir] >= 0)
      contend_pattern_fill(s->sbuf[dir], s->bytes[dir], c->rank, c->iter, first_word(dir));
}

void halo_iterate(contend_ctx *c) {
  halo_state *s = c->state;
  const int n = 2 * s->ndims;
  for (int dir = 0; dir < n; dir++)
    if (s->recv_peer[dir] >= 0)
      contend_irecv(c, s->rbuf[dir], s->bytes[dir], s->recv_peer[dir], dir);
  for (int dir = 0; dir < n; dir++)
    if (s->send_peer[dir] >= 0)
      contend_isend(c, s->sbuf[dir], s->bytes[dir], s->send_peer[dir], dir);
  contend_waitall(c);
}

void halo_check(contend_ctx *c) {
  halo_state *s = c->state;
  for (int dir = 0; dir < 2 * s->ndims; dir++)
    if (s->recv_peer[dir] >= 0)
      contend_pattern_check(c, s->rbuf[dir], s->bytes[dir], s->recv_peer[dir], c->iter,
                            first_word(dir));
}
