/* pf3d_like: the communication skeleton of pF3D (laser-plasma interaction)
 * as the fat-tree congestion study describes it
 * (seeds/fattree-congestion-poster.md): 2-D FFTs across xy slabs, each
 * slab on px x py ranks (18 x 8 = 144 on Quartz).  The job's ranks form
 * size / (px py) slab groups of consecutive ranks; within a slab, rank
 * l = x + px y (x fastest).  So the px ranks of an x row are consecutive
 * (node-local with 36 ranks per node), the py ranks of a y column are px
 * apart (four nodes of 36 ranks, one leaf with a leaf-local placement).
 *
 * Every rank holds lx x ly x lz points of elem_bytes (8: single-precision
 * complex) per slab group.  One iteration is a forward and (backward=1) a
 * backward 2-D FFT: the 1-D FFTs along x need an all-to-all among the px
 * ranks of the row, those along y one among the py ranks of the column;
 * each rank sends local_bytes / group size (rounded up) to every other
 * member of the group (pairwise isend/irecv, waited for together), with
 * stage_time of compute before each all-to-all and after the last:
 *   compute, row a2a, compute, column a2a, compute
 *   [backward: column a2a, compute, row a2a, compute].
 * Job sizes that are not a multiple of px x py are refused. */
#include <stdio.h>

#include "workload.h"

typedef struct {
  int px, py, base, x, y; /* base: first rank of my slab group */
  size_t block[2];        /* bytes per peer: [0] row (x), [1] column (y) */
  unsigned char *sbuf[2], *rbuf[2];
  contend_xfer *xf[2]; /* per kind: receives then sends, 2 (g - 1) each */
  int nxf[2];
  int backward;
  double stage_s;
} state;

static const contend_param_def params[] = {
    WL_ITERS(4),
    {"px", CONTEND_P_INT, "18", "ranks", "slab decomposition, x (ranks of a row group)", 1, 1e6},
    {"py", CONTEND_P_INT, "8", "ranks", "slab decomposition, y (ranks of a column group)", 1, 1e6},
    {"lx", CONTEND_P_INT, "64", "points", "local block per rank, x", 1, 1e6},
    {"ly", CONTEND_P_INT, "64", "points", "local block per rank, y", 1, 1e6},
    {"lz", CONTEND_P_INT, "8", "points", "local block per rank, z (planes of the slab)", 1, 1e6},
    {"elem_bytes", CONTEND_P_INT, "8", "B", "bytes per point (8: single-precision complex)", 1,
     1024},
    {"backward", CONTEND_P_BOOL, "1", "", "also run the backward transform", 1, 0},
    {"stage_time", CONTEND_P_DOUBLE, "100e-6", "s", "compute before and after each all-to-all", 0,
     3600},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  const long long px = contend_param_int(p, "px"), py = contend_param_int(p, "py");
  const double local = (double)contend_param_int(p, "lx") * contend_param_int(p, "ly") *
                       contend_param_int(p, "lz") * contend_param_int(p, "elem_bytes");
  if (local > (double)(1LL << 32)) {
    snprintf(err, errlen, "lx x ly x lz x elem_bytes = %.0f B is more than 4 GiB per rank", local);
    return -1;
  }
  if (nranks > 0 && nranks % (px * py)) {
    snprintf(err, errlen,
             "the job's %d ranks do not split into slab groups of px x py = %lld x %lld = %lld "
             "ranks (use a multiple of %lld, or other px, py)",
             nranks, px, py, px * py, px * py);
    return -1;
  }
  return 0;
}

static int member(const state *s, int kind, int i) {
  return kind == 0 ? s->base + s->y * s->px + i : s->base + i * s->px + s->x;
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  if (validate(c->params, c->size, c->error, sizeof c->error))
    return -1;
  const contend_params *p = c->params;
  s->px = (int)contend_param_int(p, "px");
  s->py = (int)contend_param_int(p, "py");
  const int P = s->px * s->py;
  s->base = c->rank / P * P;
  s->x = (c->rank - s->base) % s->px;
  s->y = (c->rank - s->base) / s->px;
  s->backward = contend_param_bool(p, "backward");
  s->stage_s = contend_param_double(p, "stage_time");
  const size_t local = (size_t)contend_param_int(p, "lx") * (size_t)contend_param_int(p, "ly") *
                       (size_t)contend_param_int(p, "lz") *
                       (size_t)contend_param_int(p, "elem_bytes");
  for (int kind = 0; kind < 2; kind++) {
    const int g = kind == 0 ? s->px : s->py, me = kind == 0 ? s->x : s->y;
    const size_t b = (local + (size_t)g - 1) / (size_t)g;
    s->block[kind] = b;
    s->sbuf[kind] = contend_alloc(c, b * (size_t)g);
    s->rbuf[kind] = contend_alloc(c, b * (size_t)g);
    s->xf[kind] = contend_alloc(c, sizeof(contend_xfer) * 2 * (size_t)(g > 1 ? g - 1 : 1));
    int n = 0;
    for (int i = 0; i < g; i++)
      if (i != me)
        s->xf[kind][n++] =
            (contend_xfer){s->rbuf[kind] + (size_t)i * b, b, member(s, kind, i), kind, 0};
    for (int i = 0; i < g; i++)
      if (i != me)
        s->xf[kind][n++] =
            (contend_xfer){s->sbuf[kind] + (size_t)i * b, b, member(s, kind, i), kind, 1};
    s->nxf[kind] = n;
  }
  c->msg_bytes = s->block[0] > s->block[1] ? s->block[0] : s->block[1];
  c->metric_scale = 1.0;
  return 0;
}

/* Block i of my send buffer of a kind carries pattern words from
 * i x (block / 8 + 1) on, so a misplaced block is caught. */
static size_t first_word(const state *s, int kind, int to) {
  return (size_t)to * (s->block[kind] / 8 + 1);
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int kind = 0; kind < 2; kind++) {
    const int g = kind == 0 ? s->px : s->py;
    for (int i = 0; i < g; i++)
      contend_pattern_fill(s->sbuf[kind] + (size_t)i * s->block[kind], s->block[kind], c->rank,
                           c->iter, first_word(s, kind, i));
  }
}

static void stage(contend_ctx *c) {
  state *s = c->state;
  if (s->stage_s > 0)
    contend_compute(c, s->stage_s);
}

static void a2a(contend_ctx *c, int kind) {
  state *s = c->state;
  if (s->nxf[kind])
    contend_exchange(c, s->xf[kind], s->nxf[kind]);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  stage(c);
  a2a(c, 0); /* 1-D FFTs along x: row all-to-all */
  stage(c);
  a2a(c, 1); /* along y: column all-to-all */
  stage(c);
  if (s->backward) {
    a2a(c, 1);
    stage(c);
    a2a(c, 0);
    stage(c);
  }
}

/* The last all-to-all of each kind left every block in place. */
static void check(contend_ctx *c) {
  state *s = c->state;
  for (int kind = 0; kind < 2; kind++) {
    const int g = kind == 0 ? s->px : s->py, me = kind == 0 ? s->x : s->y;
    for (int i = 0; i < g; i++)
      if (i != me)
        contend_pattern_check(c, s->rbuf[kind] + (size_t)i * s->block[kind], s->block[kind],
                              member(s, kind, i), c->iter, first_word(s, kind, me));
  }
}

const contend_motif contend_motif_pf3d_like = {
    .name = "pf3d_like",
    .label = "pF3D-like slab FFTs",
    .help = "pF3D-like: 2-D FFTs across slabs of px x py ranks (18 x 8), all-to-all within each "
            "row and column group",
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
