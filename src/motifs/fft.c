/* fft: the communication of a distributed 3-D FFT with 2-D pencil
 * decomposition (SWFFT / HACC-like).  Ranks form a pr x pc grid (rank =
 * r x pc + c).  A forward transform goes from x-pencils (nx, ny/pr, nz/pc)
 * to y-pencils (nx/pr, ny, nz/pc) by an all-to-all among the pr ranks of a
 * column, then to z-pencils (nx/pr, ny/pc, nz) among the pc ranks of a
 * row; the backward transform returns the same way.  Each transpose is a
 * pairwise exchange of equal blocks (elem_bytes per element, 16: complex
 * double); stage_time stands for each 1-D FFT stage's computation. */
#include <stdio.h>
#include <string.h>

#include "workload.h"

typedef struct {
  int pr, pc, r, col;
  int backward;
  double stage_time;
  size_t block[2];        /* bytes per peer: [0] x<->y (column group), [1] y<->z (row group) */
  unsigned char *sbuf[2]; /* per group kind: block i goes to group index i */
  unsigned char *rbuf[4]; /* one receive area per transpose of the iteration */
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"nx", CONTEND_P_INT, "128", "cells", "grid, x", 1, 1e9},
    {"ny", CONTEND_P_INT, "128", "cells", "grid, y", 1, 1e9},
    {"nz", CONTEND_P_INT, "128", "cells", "grid, z", 1, 1e9},
    {"pr", CONTEND_P_INT, "0", "ranks", "process grid rows (0: chosen with pc)", 0, 1e7},
    {"pc", CONTEND_P_INT, "0", "ranks", "process grid columns (0: chosen with pr)", 0, 1e7},
    {"elem_bytes", CONTEND_P_INT, "16", "B", "bytes per grid point (16: complex double)", 1, 1024},
    {"backward", CONTEND_P_BOOL, "1", "", "also run the backward transform", 1, 0},
    {"stage_time", CONTEND_P_DOUBLE, "0", "s", "compute time of each 1-D FFT stage", 0, 3600},
    CONTEND_PARAM_END};

/* pr x pc = nranks with nx, ny divisible by pr and ny, nz by pc; the most
 * square grid among those allowed. */
static int grid(const contend_params *p, int nranks, int *pr, int *pc, char *err, size_t errlen) {
  const long nx = (long)contend_param_int(p, "nx"), ny = (long)contend_param_int(p, "ny"),
             nz = (long)contend_param_int(p, "nz");
  const int want_r = (int)contend_param_int(p, "pr"), want_c = (int)contend_param_int(p, "pc");
  int best = -1, best_gap = 1 << 30;
  for (int r = 1; r <= nranks; r++) {
    if (nranks % r)
      continue;
    int c = nranks / r;
    if ((want_r && want_r != r) || (want_c && want_c != c))
      continue;
    if (nx % r || ny % r || ny % c || nz % c)
      continue;
    int gap = r > c ? r - c : c - r;
    if (gap < best_gap)
      best_gap = gap, best = r;
  }
  if (best < 0) {
    snprintf(err, errlen,
             "no %d-rank pencil grid pr x pc fits %ld x %ld x %ld (pr=%d pc=%d given; needs "
             "nx, ny divisible by pr and ny, nz by pc)",
             nranks, nx, ny, nz, want_r, want_c);
    return -1;
  }
  *pr = best;
  *pc = nranks / best;
  return 0;
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  int pr, pc;
  return nranks > 0 ? grid(p, nranks, &pr, &pc, err, errlen) : 0;
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  if (grid(c->params, c->size, &s->pr, &s->pc, c->error, sizeof c->error))
    return -1;
  s->r = c->rank / s->pc;
  s->col = c->rank % s->pc;
  s->backward = contend_param_bool(c->params, "backward");
  s->stage_time = contend_param_double(c->params, "stage_time");
  const size_t e = (size_t)contend_param_int(c->params, "elem_bytes");
  const size_t nx = (size_t)contend_param_int(c->params, "nx"),
               ny = (size_t)contend_param_int(c->params, "ny"),
               nz = (size_t)contend_param_int(c->params, "nz");
  const size_t pr = (size_t)s->pr, pc = (size_t)s->pc;
  s->block[0] = (nx / pr) * (ny / pr) * (nz / pc) * e; /* x-pencil <-> y-pencil */
  s->block[1] = (nx / pr) * (ny / pc) * (nz / pc) * e; /* y-pencil <-> z-pencil */
  const size_t local = nx * ny * nz * e / ((size_t)c->size);
  s->sbuf[0] = contend_alloc(c, local);
  s->sbuf[1] = contend_alloc(c, local);
  for (int t = 0; t < 4; t++)
    s->rbuf[t] = contend_alloc(c, local);
  c->msg_bytes = s->block[0] > s->block[1] ? s->block[0] : s->block[1];
  c->metric_scale = 1.0;
  return 0;
}

/* Members of the transpose group: kind 0 = my column (pr ranks, index r),
 * kind 1 = my row (pc ranks, index col). */
static int group_size(const state *s, int kind) { return kind == 0 ? s->pr : s->pc; }
static int group_index(const state *s, int kind) { return kind == 0 ? s->r : s->col; }
static int member(const state *s, int kind, int i) {
  return kind == 0 ? i * s->pc + s->col : s->r * s->pc + i;
}

/* First pattern word of the block for group index `to` (blocks of a send
 * buffer are distinct, so a misplaced block is caught). */
static size_t first_word(const state *s, int kind, int to) {
  return (size_t)to * (s->block[kind] / 8 + 1);
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int kind = 0; kind < 2; kind++)
    for (int i = 0; i < group_size(s, kind); i++)
      contend_pattern_fill(s->sbuf[kind] + (size_t)i * s->block[kind], s->block[kind], c->rank,
                           c->iter, first_word(s, kind, i));
}

static void transpose(contend_ctx *c, int t, int kind) {
  state *s = c->state;
  const int g = group_size(s, kind), me = group_index(s, kind);
  const size_t b = s->block[kind];
  for (int i = 0; i < g; i++)
    if (i != me)
      contend_irecv(c, s->rbuf[t] + (size_t)i * b, b, member(s, kind, i), t);
  for (int i = 0; i < g; i++)
    if (i != me)
      contend_isend(c, s->sbuf[kind] + (size_t)i * b, b, member(s, kind, i), t);
  memcpy(s->rbuf[t] + (size_t)me * b, s->sbuf[kind] + (size_t)me * b, b); /* own block */
  contend_waitall(c);
}

static void stage(contend_ctx *c) {
  state *s = c->state;
  if (s->stage_time > 0)
    contend_compute(c, s->stage_time);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  stage(c);           /* 1-D FFTs along x */
  transpose(c, 0, 0); /* x-pencils -> y-pencils */
  stage(c);
  transpose(c, 1, 1); /* y-pencils -> z-pencils */
  stage(c);
  if (s->backward) {
    transpose(c, 2, 1); /* z -> y */
    stage(c);
    transpose(c, 3, 0); /* y -> x */
    stage(c);
  }
}

static void check(contend_ctx *c) {
  state *s = c->state;
  for (int t = 0; t < (s->backward ? 4 : 2); t++) {
    const int kind = t == 0 || t == 3 ? 0 : 1;
    const int g = group_size(s, kind), me = group_index(s, kind);
    for (int i = 0; i < g; i++)
      contend_pattern_check(c, s->rbuf[t] + (size_t)i * s->block[kind], s->block[kind],
                            member(s, kind, i), c->iter, first_word(s, kind, me));
  }
}

const contend_motif contend_motif_fft = {
    .name = "fft",
    .label = "FFT pencil transposes",
    .help = "3-D FFT communication: pencil transposes over a pr x pc grid (SWFFT-like)",
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
