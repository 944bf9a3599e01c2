/* bully_pairs: the pairs bully of the fat-tree congestion study
 * (seeds/fattree-congestion-poster.md): ranks in pairs stream large
 * messages to each other in both directions without pause.  The motif
 * only knows rank pairs; the placement decides what the traffic crosses
 * (pair nodes on adjacent leaves: the "light"/"full" adjacent-leaf bully;
 * in different pods: the bisection bully).
 *
 * Pairing:
 *   pairing=ranks  rank 2i <-> rank 2i+1 (one rank per node: node pairs);
 *   pairing=nodes  the k-th rank of the job's node 2j <-> the k-th rank of
 *                  its node 2j+1, nodes numbered in the order of their
 *                  first rank, so the traffic leaves the node with several
 *                  ranks per node too.
 * One iteration: each rank posts `window` receives and `window` sends of
 * msg_bytes with its partner and waits for all of them (window messages
 * in flight each way).  The rank's achieved bandwidth (jobs results:
 * bandwidth_gbps_per_rank) is window x msg_bytes per iteration over the
 * iteration time: what it sends, which equals what it receives. */
#include <stdio.h>
#include <string.h>

#include "workload.h"

typedef struct {
  contend_xfer *x; /* window receives, then window sends */
  unsigned char *s, *r;
  size_t bytes;
  int window, peer;
} state;

static const contend_param_def params[] = {
    WL_ITERS(4),
    {"msg_bytes", CONTEND_P_INT, "1048576", "B", "bytes per message", 1, 1LL << 30},
    {"window", CONTEND_P_INT, "8", "count", "messages in flight each way per iteration", 1, 4096},
    {"pairing", CONTEND_P_STRING, "ranks", "",
     "ranks: rank 2i with 2i+1; nodes: the k-th rank of node 2j with the k-th of node 2j+1", 0, 0},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  const char *mode = contend_param_str(p, "pairing");
  if (strcmp(mode, "ranks") && strcmp(mode, "nodes")) {
    snprintf(err, errlen, "pairing='%s' is not valid: expected ranks or nodes", mode);
    return -1;
  }
  if (nranks > 0 && (nranks < 2 || nranks % 2)) {
    snprintf(err, errlen, "needs an even number of ranks (rank pairs); the job has %d", nranks);
    return -1;
  }
  const double total = (double)contend_param_int(p, "msg_bytes") * contend_param_int(p, "window");
  if (total > (double)(1LL << 32)) {
    snprintf(err, errlen, "window x msg_bytes = %.0f B is more than 4 GiB per direction", total);
    return -1;
  }
  return 0;
}

/* The partner of c->rank with pairing=nodes, or -1 with c->error set.
 * Nodes are the runs of consecutive group ranks on the same node (the
 * jobs runner puts a node's ranks next to each other); run j holds ranks
 * start[j] .. start[j+1]-1. */
static int node_partner(contend_ctx *c) {
  int nruns = 0, my_run = 0, my_k = 0, start = 0;
  for (int i = 0; i < c->size; i++) {
    if (i == 0 || c->node_of[i] != c->node_of[i - 1])
      nruns++, start = i;
    if (i == c->rank)
      my_run = nruns - 1, my_k = i - start;
  }
  if (nruns % 2) {
    snprintf(c->error, sizeof c->error,
             "pairing=nodes needs an even number of nodes; the job has %d", nruns);
    return -1;
  }
  const int want = my_run ^ 1;
  int run = -1, want_start = 0, want_len = 0;
  for (int i = 0; i < c->size; i++) {
    if (i == 0 || c->node_of[i] != c->node_of[i - 1])
      if (++run == want)
        want_start = i;
    want_len += run == want;
  }
  if (my_k >= want_len) {
    snprintf(c->error, sizeof c->error,
             "pairing=nodes: node %d of the job has %d ranks, node %d more", want, want_len,
             my_run);
    return -1;
  }
  return want_start + my_k;
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  if (validate(c->params, c->size, c->error, sizeof c->error))
    return -1;
  if (!strcmp(contend_param_str(c->params, "pairing"), "nodes")) {
    s->peer = node_partner(c);
    if (s->peer < 0)
      return -1;
  } else {
    s->peer = c->rank ^ 1;
  }
  s->bytes = (size_t)contend_param_int(c->params, "msg_bytes");
  s->window = (int)contend_param_int(c->params, "window");
  const size_t all = s->bytes * (size_t)s->window;
  s->s = contend_alloc(c, all);
  s->r = contend_alloc(c, all);
  s->x = contend_alloc(c, sizeof(contend_xfer) * 2 * (size_t)s->window);
  for (int w = 0; w < s->window; w++) {
    const size_t off = (size_t)w * s->bytes;
    s->x[w] = (contend_xfer){s->r + off, s->bytes, s->peer, w, 0};
    s->x[s->window + w] = (contend_xfer){s->s + off, s->bytes, s->peer, w, 1};
  }
  c->msg_bytes = s->bytes;
  c->metric_scale = (double)all / 1048576.0; /* MiB sent per iteration */
  return 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_fill(s->s, s->bytes * (size_t)s->window, c->rank, c->iter, 0);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  contend_exchange(c, s->x, 2 * s->window);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  contend_pattern_check(c, s->r, s->bytes * (size_t)s->window, s->peer, c->iter, 0);
}

const contend_motif contend_motif_bully_pairs = {
    .name = "bully_pairs",
    .label = "Bully pairs",
    .help = "pairs bully: rank pairs stream window x msg_bytes both ways per iteration "
            "(bandwidth in Gb/s per rank)",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
};
