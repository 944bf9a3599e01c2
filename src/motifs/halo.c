/* Structured halo exchange over a Cartesian process grid (see halo.h). */
#include "halo.h"

#include <stdio.h>
#include <string.h>

/* Group rank at grid coordinates q, or -1 outside a non-periodic grid or
 * when the neighbour would be the rank itself (a local copy, no message). */
static int rank_at(const halo_state *s, int *q, int periodic, int self) {
  int r = 0;
  for (int d = s->ndims - 1; d >= 0; d--) {
    int x = q[d];
    if (x < 0 || x >= s->dims[d]) {
      if (!periodic)
        return -1;
      x = (x % s->dims[d] + s->dims[d]) % s->dims[d];
    }
    r = r * s->dims[d] + x;
  }
  return r == self ? -1 : r;
}

void halo_place(halo_state *s, int ndims, const int *dims, int rank) {
  s->ndims = ndims;
  int rest = rank;
  for (int d = 0; d < ndims; d++) {
    s->dims[d] = dims[d];
    s->coord[d] = rest % dims[d];
    rest /= dims[d];
  }
}

void halo_connect(contend_ctx *c, halo_state *s, int periodic, int dist, const size_t *bytes,
                  int tag0) {
  s->tag0 = tag0;
  for (int dir = 0; dir < 2 * s->ndims; dir++) {
    const int axis = dir / 2, step = dir % 2 ? -dist : dist;
    int q[HALO_MAXD];
    memcpy(q, s->coord, sizeof q);
    q[axis] = s->coord[axis] + step;
    s->send_peer[dir] = rank_at(s, q, periodic, c->rank);
    q[axis] = s->coord[axis] - step;
    s->recv_peer[dir] = rank_at(s, q, periodic, c->rank);
    s->bytes[dir] = bytes[dir];
    s->sbuf[dir] = s->send_peer[dir] >= 0 ? contend_alloc(c, bytes[dir]) : NULL;
    s->rbuf[dir] = s->recv_peer[dir] >= 0 ? contend_alloc(c, bytes[dir]) : NULL;
  }
}

int halo_setup(contend_ctx *c, int ndims) {
  halo_state *s = c->state;
  int dims[3] = {0, 0, 0};
  if (wl_domain_grid(c->params, c->size, ndims, s->ext, dims, c->error, sizeof c->error))
    return -1;
  const int periodic = contend_param_bool(c->params, "periodic");
  const size_t cell = (size_t)contend_param_int(c->params, "depth") *
                      (size_t)contend_param_int(c->params, "fields") *
                      (size_t)contend_param_int(c->params, "elem_bytes");
  halo_place(s, ndims, dims, c->rank);
  for (int d = 0; d < ndims; d++) {
    long start;
    wl_split(s->ext[d], dims[d], s->coord[d], &start, &s->loc[d]);
  }
  size_t bytes[2 * HALO_MAXD], biggest = 0;
  for (int dir = 0; dir < 2 * ndims; dir++) {
    size_t face = cell;
    for (int e = 0; e < ndims; e++)
      if (e != dir / 2)
        face *= (size_t)s->loc[e];
    bytes[dir] = face;
    biggest = face > biggest ? face : biggest;
  }
  halo_connect(c, s, periodic, 1, bytes, 0);
  c->msg_bytes = biggest;
  c->metric_scale = 1.0;
  return 0;
}

/* Enumerates the grids of `left` ranks over axes d.. (fixed axes kept) and
 * keeps the most even one in best (see halo_grid). */
static void grid_search(int ndims, int d, int left, const int *want, int *cand, int *best,
                        int *found) {
  if (d == ndims - 1) {
    if (want[d] && want[d] != left)
      return;
    cand[d] = left;
    int mx = 0, sum = 0, bmx = 0, bsum = 0;
    for (int e = 0; e < ndims; e++) {
      mx = cand[e] > mx ? cand[e] : mx;
      sum += cand[e];
      bmx = best[e] > bmx ? best[e] : bmx;
      bsum += best[e];
    }
    if (!*found || mx < bmx || (mx == bmx && sum < bsum)) {
      memcpy(best, cand, sizeof(int) * (size_t)ndims);
      *found = 1;
    }
    return;
  }
  for (int a = 1; a <= left; a++) {
    if (left % a || (want[d] && want[d] != a))
      continue;
    cand[d] = a;
    grid_search(ndims, d + 1, left / a, want, cand, best, found);
  }
}

int halo_grid(int nranks, int ndims, int *dims, char *err, size_t errlen) {
  int cand[HALO_MAXD], best[HALO_MAXD] = {0, 0, 0, 0}, found = 0;
  grid_search(ndims, 0, nranks, dims, cand, best, &found);
  if (!found) {
    char given[128] = "";
    size_t n = 0;
    for (int d = 0; d < ndims; d++)
      n += (size_t)snprintf(given + n, sizeof given - n, "%s%s=%d", d ? " " : "", wl_pgrid_keys[d],
                            dims[d]);
    snprintf(err, errlen,
             "%s (0: chosen) give no process grid of %d ranks: the grid's product must equal the "
             "rank count",
             given, nranks);
    return -1;
  }
  memcpy(dims, best, sizeof(int) * (size_t)ndims);
  return 0;
}

int halo_grid_of(const contend_params *p, int nranks, int ndims, int *dims, char *err,
                 size_t errlen) {
  wl_read_dims(p, ndims, dims);
  return halo_grid(nranks, ndims, dims, err, errlen);
}

int halo_grid_validate(const contend_params *p, int nranks, int ndims, char *err, size_t errlen) {
  int dims[HALO_MAXD];
  return nranks > 0 ? halo_grid_of(p, nranks, ndims, dims, err, errlen) : 0;
}

static size_t first_word(const halo_state *s, int dir) { return (size_t)(s->tag0 + dir) << 40; }

void halo_post(contend_ctx *c, const halo_state *s) {
  const int n = 2 * s->ndims;
  for (int dir = 0; dir < n; dir++)
    if (s->recv_peer[dir] >= 0)
      contend_irecv(c, s->rbuf[dir], s->bytes[dir], s->recv_peer[dir], s->tag0 + dir);
  for (int dir = 0; dir < n; dir++)
    if (s->send_peer[dir] >= 0)
      contend_isend(c, s->sbuf[dir], s->bytes[dir], s->send_peer[dir], s->tag0 + dir);
}

void halo_exchange(contend_ctx *c, const halo_state *s) {
  halo_post(c, s);
  contend_waitall(c);
}

void halo_axis(contend_ctx *c, const halo_state *s, int axis) {
  for (int dir = 2 * axis; dir < 2 * axis + 2; dir++)
    if (s->recv_peer[dir] >= 0)
      contend_irecv(c, s->rbuf[dir], s->bytes[dir], s->recv_peer[dir], s->tag0 + dir);
  for (int dir = 2 * axis; dir < 2 * axis + 2; dir++)
    if (s->send_peer[dir] >= 0)
      contend_isend(c, s->sbuf[dir], s->bytes[dir], s->send_peer[dir], s->tag0 + dir);
  contend_waitall(c);
}

void halo_fill(contend_ctx *c, const halo_state *s) {
  for (int dir = 0; dir < 2 * s->ndims; dir++)
    if (s->send_peer[dir] >= 0)
      contend_pattern_fill(s->sbuf[dir], s->bytes[dir], c->rank, c->iter, first_word(s, dir));
}

void halo_verify(contend_ctx *c, const halo_state *s) {
  for (int dir = 0; dir < 2 * s->ndims; dir++)
    if (s->recv_peer[dir] >= 0)
      contend_pattern_check(c, s->rbuf[dir], s->bytes[dir], s->recv_peer[dir], c->iter,
                            first_word(s, dir));
}

size_t halo_biggest(const halo_state *s) {
  size_t b = 0;
  for (int dir = 0; dir < 2 * s->ndims; dir++)
    if (s->send_peer[dir] >= 0 && s->bytes[dir] > b)
      b = s->bytes[dir];
  return b;
}

void halo_prepare(contend_ctx *c) { halo_fill(c, c->state); }
void halo_iterate(contend_ctx *c) { halo_exchange(c, c->state); }
void halo_check(contend_ctx *c) { halo_verify(c, c->state); }

int halo_proxy_place(contend_ctx *c, int ndims) {
  halo_proxy *s = c->state;
  int dims[HALO_MAXD];
  if (halo_grid_of(c->params, c->size, ndims, dims, c->error, sizeof c->error))
    return -1;
  halo_place(&s->h, ndims, dims, c->rank);
  return 0;
}

void halo_proxy_finish(contend_ctx *c, int reduce, double compute_s) {
  halo_proxy *s = c->state;
  s->reduce = reduce;
  if (reduce > 0)
    contend_allreduce_kernel_setup(c, &s->red, reduce, CONTEND_OP_SUM);
  s->compute_s = compute_s;
  c->msg_bytes = halo_biggest(&s->h);
  c->metric_scale = 1.0;
}

void halo_proxy_prepare(contend_ctx *c) {
  halo_proxy *s = c->state;
  halo_fill(c, &s->h);
  if (s->reduce > 0)
    contend_allreduce_kernel_prepare(c, &s->red);
}

void halo_proxy_check(contend_ctx *c) {
  halo_proxy *s = c->state;
  halo_verify(c, &s->h);
  if (s->reduce > 0 && c->ops->colls_compute)
    contend_allreduce_kernel_check(c, &s->red);
}
