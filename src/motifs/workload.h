/* Helpers shared by the workload motifs (`contend jobs`): random
 * distributions for compute noise, process grids and block splits. */
#ifndef CONTEND_MOTIFS_WORKLOAD_H
#define CONTEND_MOTIFS_WORKLOAD_H

#include "contend/motif.h"

/* The iteration count of a workload motif: one invocation per [REPEAT]. */
#define WL_ITERS(def)                                                                              \
  {                                                                                                \
    "iters", CONTEND_P_INT, #def, "count",                                                         \
        "iterations per invocation (one invocation per repeat)", 1, 1e9                            \
  }

/* A process-grid row: the ranks along one axis (key px, py, pz or pt),
 * 0 for the motif to choose; note completes the help text, e.g.
 * WL_PGRID("px", "x", " with py") is "process grid, x (0: chosen with py)". */
#define WL_PGRID(key, axis, note)                                                                  \
  { key, CONTEND_P_INT, "0", "ranks", "process grid, " axis " (0: chosen" note ")", 0, 1e7 }
/* The process grid of a 2-D domain split (halo2d, sweep3d). */
#define WL_PGRID_XY WL_PGRID("px", "x", " with py"), WL_PGRID("py", "y", " with px")
/* A global-domain row: cells along one axis (key nx, ny or nz). */
#define WL_DOMAIN(key, def, help)                                                                  \
  { key, CONTEND_P_INT, def, "cells", help, 1, 1e9 }

/* Random streams of workload motifs: contend_rng_init(seed, WL_STREAM_*, ...). */
enum { WL_STREAM_COMPUTE = 0x636f6d70, WL_STREAM_GRAPH = 0x67726168, WL_STREAM_SIZE = 0x73697a65 };

typedef enum { WL_DIST_FIXED, WL_DIST_GAUSSIAN, WL_DIST_UNIFORM, WL_DIST_EXPONENTIAL } wl_dist;

/* Parses "fixed|gaussian|normal|uniform|exponential"; returns 0 or -1. */
int wl_parse_dist(const char *s, wl_dist *d);
/* A standard normal deviate (Box-Muller on two uniforms of r). */
double wl_normal(contend_rng *r);
/* An exponential deviate of the given mean. */
double wl_exponential(contend_rng *r, double mean);

/* Cells [*start, *start + *len) of part i when n cells are split into p
 * near-equal parts (the first n % p parts get one more). */
void wl_split(long n, int p, int i, long *start, long *len);

/* A process grid of `nranks` over `ndims` (2 or 3) dimensions for a
 * domain of ext[] cells: dims[d] > 0 are fixed by the user, 0 are chosen
 * to minimise the halo surface per rank.  Returns 0, or -1 with err when no
 * grid fits (product != nranks, or more parts than cells). */
int wl_grid(int nranks, int ndims, const long *ext, int *dims, char *err, size_t errlen);

/* The keys of the process-grid rows, axis 0 first: px, py, pz, pt. */
extern const char *const wl_pgrid_keys[4];
/* Reads the process-grid rows of the first ndims (<= 4) axes into dims. */
void wl_read_dims(const contend_params *p, int ndims, int *dims);
/* The process grid of a motif that splits a global domain (halo2d,
 * halo3d, sweep3d): reads nx, ny (, nz) into ext and the process-grid rows
 * into dims for ndims (2 or 3) axes, then, when nranks > 0 (the group size
 * is known), chooses the grid with wl_grid.  Returns 0, or -1 with err. */
int wl_domain_grid(const contend_params *p, int nranks, int ndims, long *ext, int *dims, char *err,
                   size_t errlen);
/* validate hook helper: wl_domain_grid's refusal, if any. */
int wl_domain_validate(const contend_params *p, int nranks, int ndims, char *err, size_t errlen);

/* The value of SEED parameter key, or fallback (the run seed) when it is
 * "time" (its default). */
uint64_t wl_seed(const contend_params *p, const char *key, uint64_t fallback);

/* Ping-pong pairs: pairs=one pairs rank 0 with rank size/2; pairs=all
 * pairs rank i with i + size/2 (i < size/2; with an odd size the last rank
 * idles).  Returns 1 if rank takes part (peer and whether it starts each
 * round trip set), 0 if it idles, -1 if mode is not one|all. */
int wl_pair(const char *mode, int rank, int size, int *peer, int *initiator);
/* The pairs row (pingpong, pingpong_sweep). */
#define WL_PAIRS_PARAM                                                                             \
  { "pairs", CONTEND_P_STRING, "one", "", "one: ranks 0 and size/2; all: i and i + size/2", 1, 0 }
/* validate helper for the pairs parameter and a group of >= 2 ranks */
int wl_pair_validate(const contend_params *p, int nranks, char *err, size_t errlen);
/* A ping-pong rank: whether it takes part, its peer and role, its send
 * and receive buffers. */
typedef struct wl_pair_state {
  unsigned char *s, *r; /* engine memory; NULL when not active */
  int active, peer, initiator;
} wl_pair_state;
/* setup helper: places c->rank by the pairs parameter, allocates buffers
 * of `bytes` when it takes part, sets c->msg_bytes = bytes and
 * c->metric_scale (2: latency = round trip / 2, on initiators only). */
void wl_pair_setup(contend_ctx *c, wl_pair_state *ps, size_t bytes);
/* `times` round trips of `bytes` with peer, in one engine call
 * (contend_repeat): the initiator posts the receive of the reply (tag 1),
 * sends from sbuf (tag 0) and waits for both; the responder receives into
 * rbuf, then replies from sbuf. */
void wl_pingpong(contend_ctx *c, void *sbuf, void *rbuf, size_t bytes, int peer, int initiator,
                 long times);

#endif
