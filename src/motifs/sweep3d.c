/* sweep3d: KBA wavefront sweeps (Sweep3D) over a px x py process grid.
 * The nx x ny x nz domain is split in x and y; z is swept in blocks of
 * kblock planes.  For each of the 8 octants (directions +-x, +-y, +-z) and
 * each z block, a rank receives the inflow faces from its upstream x and y
 * neighbours, computes (cell_time per cell and angle) and sends the outflow
 * faces downstream: ly x kb x angles x elem_bytes bytes in x, lx x ... in
 * y.  Octants run one after the other (no pipelining between them). */
#include <stdio.h>

#include "workload.h"

typedef struct {
  int px, py, x, y;
  long lx, ly, nz, kblock;
  int nblocks;
  int angles;
  size_t elem;
  double cell_time;
  unsigned char *sx, *sy; /* outflow faces (largest block) */
  unsigned char *rx, *ry; /* inflow faces: one slot per (octant, block) */
  size_t face_x, face_y;  /* bytes of a full block's face */
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    WL_DOMAIN("nx", "100", "global domain, x"),
    WL_DOMAIN("ny", "100", "global domain, y"),
    WL_DOMAIN("nz", "100", "global domain, z (swept in blocks)"),
    WL_PGRID_XY,
    {"kblock", CONTEND_P_INT, "10", "cells", "blocking factor: z planes per wavefront step", 1,
     1e9},
    {"angles", CONTEND_P_INT, "6", "count", "angles per octant carried in each face", 1, 1e5},
    {"elem_bytes", CONTEND_P_INT, "8", "B", "bytes per cell and angle", 1, 1024},
    {"cell_time", CONTEND_P_DOUBLE, "0", "s", "compute time per cell and angle of a block", 0, 1},
    CONTEND_PARAM_END};

/* The x and y split of the domain (z is swept, not split). */
static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return wl_domain_validate(p, nranks, 2, err, errlen);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  long ext[2];
  int dims[2];
  if (wl_domain_grid(c->params, c->size, 2, ext, dims, c->error, sizeof c->error))
    return -1;
  s->px = dims[0], s->py = dims[1];
  s->x = c->rank % s->px, s->y = c->rank / s->px;
  long start;
  wl_split(ext[0], s->px, s->x, &start, &s->lx);
  wl_split(ext[1], s->py, s->y, &start, &s->ly);
  s->nz = (long)contend_param_int(c->params, "nz");
  s->kblock = (long)contend_param_int(c->params, "kblock");
  if (s->kblock > s->nz)
    s->kblock = s->nz;
  s->nblocks = (int)((s->nz + s->kblock - 1) / s->kblock);
  s->angles = (int)contend_param_int(c->params, "angles");
  s->elem = (size_t)contend_param_int(c->params, "elem_bytes");
  s->cell_time = contend_param_double(c->params, "cell_time");
  s->face_x = (size_t)s->ly * (size_t)s->kblock * (size_t)s->angles * s->elem;
  s->face_y = (size_t)s->lx * (size_t)s->kblock * (size_t)s->angles * s->elem;
  s->sx = contend_alloc(c, s->face_x);
  s->sy = contend_alloc(c, s->face_y);
  s->rx = contend_alloc(c, s->face_x * 8 * (size_t)s->nblocks);
  s->ry = contend_alloc(c, s->face_y * 8 * (size_t)s->nblocks);
  c->msg_bytes = s->face_x > s->face_y ? s->face_x : s->face_y;
  c->metric_scale = 1.0;
  return 0;
}

/* Planes of z block b (the last one may be short). */
static long block_planes(const state *s, int b) {
  long rest = s->nz - (long)b * s->kblock;
  return rest < s->kblock ? rest : s->kblock;
}

/* Upstream/downstream neighbours of octant o (bit 0: -x, bit 1: -y;
 * bit 2, -z, only reverses the order of the z blocks). */
static void neighbours(const state *s, int o, int *ux, int *uy, int *dx, int *dy) {
  const int sx = o & 1 ? -1 : 1, sy = o & 2 ? -1 : 1;
  const int xu = s->x - sx, xd = s->x + sx, yu = s->y - sy, yd = s->y + sy;
  *ux = xu >= 0 && xu < s->px ? s->y * s->px + xu : -1;
  *dx = xd >= 0 && xd < s->px ? s->y * s->px + xd : -1;
  *uy = yu >= 0 && yu < s->py ? yu * s->px + s->x : -1;
  *dy = yd >= 0 && yd < s->py ? yd * s->px + s->x : -1;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_fill(s->sx, s->face_x, c->rank, c->iter, 0);
  contend_pattern_fill(s->sy, s->face_y, c->rank, c->iter, (size_t)1 << 40);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  for (int o = 0; o < 8; o++) {
    int ux, uy, dx, dy;
    neighbours(s, o, &ux, &uy, &dx, &dy);
    for (int step = 0; step < s->nblocks; step++) {
      const int b = o & 4 ? s->nblocks - 1 - step : step; /* -z octants sweep z downwards */
      const long kb = block_planes(s, b);
      const size_t bx = (size_t)s->ly * (size_t)kb * (size_t)s->angles * s->elem;
      const size_t by = (size_t)s->lx * (size_t)kb * (size_t)s->angles * s->elem;
      const size_t slot = (size_t)o * (size_t)s->nblocks + (size_t)b;
      if (ux >= 0)
        contend_irecv(c, s->rx + slot * s->face_x, bx, ux, o);
      if (uy >= 0)
        contend_irecv(c, s->ry + slot * s->face_y, by, uy, 8 + o);
      contend_waitall(c);
      if (s->cell_time > 0)
        contend_compute(c, s->cell_time * (double)(s->lx * s->ly * kb) * s->angles);
      if (dx >= 0)
        contend_isend(c, s->sx, bx, dx, o);
      if (dy >= 0)
        contend_isend(c, s->sy, by, dy, 8 + o);
      contend_waitall(c);
    }
  }
}

static void check(contend_ctx *c) {
  state *s = c->state;
  for (int o = 0; o < 8; o++) {
    int ux, uy, dx, dy;
    neighbours(s, o, &ux, &uy, &dx, &dy);
    for (int b = 0; b < s->nblocks; b++) {
      const long kb = block_planes(s, b);
      const size_t slot = (size_t)o * (size_t)s->nblocks + (size_t)b;
      if (ux >= 0)
        contend_pattern_check(c, s->rx + slot * s->face_x,
                              (size_t)s->ly * (size_t)kb * (size_t)s->angles * s->elem, ux, c->iter,
                              0);
      if (uy >= 0)
        contend_pattern_check(c, s->ry + slot * s->face_y,
                              (size_t)s->lx * (size_t)kb * (size_t)s->angles * s->elem, uy, c->iter,
                              (size_t)1 << 40);
    }
  }
}

const contend_motif contend_motif_sweep3d = {
    .name = "sweep3d",
    .label = "Sweep3D (KBA)",
    .help = "KBA wavefront over a px x py grid, 8 octants, z in blocks of kblock planes",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
};
