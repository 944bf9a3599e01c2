/* Structured halo exchange over a Cartesian process grid of 1 to 4
 * dimensions: one face message per existing neighbour and direction.
 *
 * Two ways to build one:
 * - halo2d (5-point, TeaLeaf-like) and halo3d (7-point): halo_setup splits
 *   a global domain (parameters nx, ny, nz, px, py, pz, depth, fields,
 *   elem_bytes, periodic) and sizes each face from the local block;
 * - the application proxies (milc_like, lammps_like, amg_like): a fixed
 *   local block per rank (weak scaling), halo_grid picks the process grid,
 *   halo_place the rank's coordinates, halo_connect the neighbours at a
 *   given grid distance and the face bytes the caller computed.  A proxy
 *   may hold several halo_state (levels, forward and reverse exchanges),
 *   told apart by their tag base; milc_like and umt_like, one halo, a
 *   compute phase and an allreduce per iteration, share halo_proxy. */
#ifndef CONTEND_MOTIFS_HALO_H
#define CONTEND_MOTIFS_HALO_H

#include "allreduce_kernel.h"
#include "workload.h"

#define HALO_MAXD 4

typedef struct halo_state {
  int ndims;
  int dims[HALO_MAXD], coord[HALO_MAXD];
  long ext[HALO_MAXD], loc[HALO_MAXD];
  /* direction d: axis d / 2, towards +dist (d even) or -dist (d odd);
   * message tag tag0 + d */
  int tag0;
  int send_peer[2 * HALO_MAXD], recv_peer[2 * HALO_MAXD]; /* -1: none */
  size_t bytes[2 * HALO_MAXD];
  unsigned char *sbuf[2 * HALO_MAXD], *rbuf[2 * HALO_MAXD];
} halo_state;

/* halo2d / halo3d (c->state is the halo_state; validate with
 * wl_domain_validate) */
int halo_setup(contend_ctx *c, int ndims);
void halo_prepare(contend_ctx *c);
void halo_iterate(contend_ctx *c);
void halo_check(contend_ctx *c);
/* Their rows after the domain and the process grid: the face sizes and the
 * boundary. */
#define HALO_FACE_PARAMS                                                                           \
  {"depth", CONTEND_P_INT, "1", "cells", "halo depth", 1, 64},                                     \
      {"fields", CONTEND_P_INT, "1", "count", "fields exchanged together", 1, 1024},               \
      {"elem_bytes", CONTEND_P_INT, "8", "B", "bytes per cell and field", 1, 1024}, {              \
    "periodic", CONTEND_P_BOOL, "0", "", "wrap around the domain edges", 1, 0                      \
  }
/* Their hooks but setup and validate (designated initializers). */
#define HALO_MOTIF_HOOKS                                                                           \
  .role = CONTEND_ROLE_WORKLOAD, .metric = CONTEND_METRIC_LAT_US,                                  \
  .state_size = sizeof(halo_state), .prepare = halo_prepare, .iterate = halo_iterate,              \
  .check = halo_check

/* The most even process grid of nranks over ndims (<= HALO_MAXD)
 * dimensions for a fixed local block per rank: dims[d] > 0 are fixed by the
 * user, 0 are chosen (smallest largest dimension, then smallest sum, then
 * the first in enumeration order, which puts larger counts on later axes).
 * Returns 0, or -1 with err naming the given dims when no grid fits. */
int halo_grid(int nranks, int ndims, int *dims, char *err, size_t errlen);
/* halo_grid of the motif's process-grid rows (wl_read_dims). */
int halo_grid_of(const contend_params *p, int nranks, int ndims, int *dims, char *err,
                 size_t errlen);
/* validate hook helper: halo_grid_of's refusal once the group size is known. */
int halo_grid_validate(const contend_params *p, int nranks, int ndims, char *err, size_t errlen);
/* The process-grid rows of the 3-D proxies (milc_like adds pt). */
#define HALO_PROXY_PGRID                                                                           \
  WL_PGRID("px", "x", ", the most even grid"), WL_PGRID("py", "y", ""), WL_PGRID("pz", "z", "")
/* Sets s->ndims, s->dims and the coordinates of `rank` (axis 0 fastest). */
void halo_place(halo_state *s, int ndims, const int *dims, int rank);
/* Neighbours at grid distance dist along each axis (periodic: wrapping;
 * otherwise none past the edge; none when the neighbour is the rank
 * itself), face bytes bytes[dir] (2 x ndims entries), buffers from the
 * engine, message tags tag0 + dir. */
void halo_connect(contend_ctx *c, halo_state *s, int periodic, int dist, const size_t *bytes,
                  int tag0);
/* The state of a proxy of one halo, a compute phase and an allreduce per
 * iteration (milc_like, umt_like; c->state): */
typedef struct halo_proxy {
  halo_state h;
  contend_allreduce_kernel red; /* `reduce` doubles; none when 0 */
  int reduce;
  double compute_s; /* compute per iteration */
} halo_proxy;
/* setup, first: the process grid of the rows (halo_grid_of) and the
 * rank's place on it in h; returns 0, or -1 with c->error.  The proxy then
 * sizes h.loc and connects h. */
int halo_proxy_place(contend_ctx *c, int ndims);
/* setup, last: the allreduce, the compute, c->msg_bytes and metric_scale. */
void halo_proxy_finish(contend_ctx *c, int reduce, double compute_s);
/* prepare and check hooks: h's faces, and the allreduce (its check only
 * where the engine computes collectives). */
void halo_proxy_prepare(contend_ctx *c);
void halo_proxy_check(contend_ctx *c);

/* Messages of one state: posting all receives and sends of every
 * direction (halo_post, no wait), of one axis and waiting (halo_axis), of
 * every direction and waiting (halo_exchange). */
void halo_post(contend_ctx *c, const halo_state *s);
void halo_axis(contend_ctx *c, const halo_state *s, int axis);
void halo_exchange(contend_ctx *c, const halo_state *s);
/* Verification of one state: fill the send faces for c->iter; check the
 * received ones (each face's pattern depends on sender, iteration and tag). */
void halo_fill(contend_ctx *c, const halo_state *s);
void halo_verify(contend_ctx *c, const halo_state *s);
/* The largest face a state sends (0: none), for c->msg_bytes. */
size_t halo_biggest(const halo_state *s);

#endif
