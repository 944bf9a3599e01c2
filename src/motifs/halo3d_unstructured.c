/* halo3d_unstructured: an irregular 3-D halo exchange (LULESH-like
 * unstructured meshes).  Ranks sit on a 3-D process grid; each of the up
 * to 26 neighbours of the 27-point neighbourhood is linked with
 * probability `density`, decided per unordered pair from the seed, so
 * both ends agree without communication.  The message a -> b carries
 * msg_bytes x (1 +- variation), drawn per ordered pair (a multiple of 8
 * bytes).  Every rank exchanges one message with each linked neighbour
 * per iteration. */
#include <stdio.h>

#include "workload.h"

enum { MAXNB = 26 };

typedef struct {
  int n;
  int peer[MAXNB];
  size_t sbytes[MAXNB], rbytes[MAXNB];
  unsigned char *sbuf[MAXNB], *rbuf[MAXNB];
} state;

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"msg_bytes", CONTEND_P_INT, "8192", "B", "mean message size per neighbour", 8, 1 << 28},
    {"variation", CONTEND_P_DOUBLE, "0.5", "fraction",
     "message sizes are uniform in msg_bytes x [1 - variation, 1 + variation]", 0, 1},
    {"density", CONTEND_P_DOUBLE, "0.5", "fraction",
     "probability that two adjacent ranks (of 26) exchange a halo", 0, 1},
    WL_PGRID("px", "x", ""),
    WL_PGRID("py", "y", ""),
    WL_PGRID("pz", "z", ""),
    {"seed", CONTEND_P_SEED, "time", "", "seed of the graph ('time': the run's --seed)", 1, 0},
    CONTEND_PARAM_END};

static int grid(const contend_params *p, int nranks, int *dims, char *err, size_t errlen) {
  const long ext[3] = {1L << 20, 1L << 20, 1L << 20}; /* a cube: balanced grid */
  wl_read_dims(p, 3, dims);
  return wl_grid(nranks, 3, ext, dims, err, errlen);
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  int dims[3];
  return nranks > 0 ? grid(p, nranks, dims, err, errlen) : 0;
}

static int linked(uint64_t seed, uint64_t stream, int a, int b, double density) {
  contend_rng r;
  int lo = a < b ? a : b, hi = a < b ? b : a;
  contend_rng_init(&r, seed, WL_STREAM_GRAPH, stream, (uint64_t)lo, (uint64_t)hi);
  return contend_rng_uniform(&r) < density;
}

static size_t size_of(uint64_t seed, uint64_t stream, int from, int to, double mean, double var) {
  contend_rng r;
  contend_rng_init(&r, seed, WL_STREAM_SIZE, stream, (uint64_t)from, (uint64_t)to);
  double b = mean * (1.0 + var * (2.0 * contend_rng_uniform(&r) - 1.0));
  size_t words = (size_t)(b / 8.0 + 0.5);
  return 8 * (words ? words : 1);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  int dims[3];
  if (grid(c->params, c->size, dims, c->error, sizeof c->error))
    return -1;
  const uint64_t seed = wl_seed(c->params, "seed", c->seed);
  const double density = contend_param_double(c->params, "density");
  const double mean = (double)contend_param_int(c->params, "msg_bytes");
  const double var = contend_param_double(c->params, "variation");
  const int x = c->rank % dims[0], y = c->rank / dims[0] % dims[1], z = c->rank / dims[0] / dims[1];
  size_t biggest = 0;
  for (int dz = -1; dz <= 1; dz++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        int qx = x + dx, qy = y + dy, qz = z + dz;
        if ((!dx && !dy && !dz) || qx < 0 || qy < 0 || qz < 0 || qx >= dims[0] || qy >= dims[1] ||
            qz >= dims[2])
          continue;
        int peer = qx + dims[0] * (qy + dims[1] * qz);
        if (!linked(seed, c->stream, c->rank, peer, density))
          continue;
        int k = s->n++;
        s->peer[k] = peer;
        s->sbytes[k] = size_of(seed, c->stream, c->rank, peer, mean, var);
        s->rbytes[k] = size_of(seed, c->stream, peer, c->rank, mean, var);
        s->sbuf[k] = contend_alloc(c, s->sbytes[k]);
        s->rbuf[k] = contend_alloc(c, s->rbytes[k]);
        biggest = s->sbytes[k] > biggest ? s->sbytes[k] : biggest;
      }
  c->msg_bytes = biggest;
  c->metric_scale = 1.0;
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  for (int k = 0; k < s->n; k++)
    contend_pattern_fill(s->sbuf[k], s->sbytes[k], c->rank, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  for (int k = 0; k < s->n; k++)
    contend_irecv(c, s->rbuf[k], s->rbytes[k], s->peer[k], 0);
  for (int k = 0; k < s->n; k++)
    contend_isend(c, s->sbuf[k], s->sbytes[k], s->peer[k], 0);
  contend_waitall(c);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  for (int k = 0; k < s->n; k++)
    contend_pattern_check(c, s->rbuf[k], s->rbytes[k], s->peer[k], c->iter, 0);
}

const contend_motif contend_motif_halo3d_unstructured = {
    .name = "halo3d_unstructured",
    .label = "Halo 3-D unstructured",
    .help = "irregular 3-D halo: seeded links among the 26 grid neighbours, sizes per link",
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
