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

#include "bully.h"

static const contend_param_def params[] = {
    BULLY_PARAMS("messages in flight each way per iteration"),
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
  return bully_window_validate(p, "direction", err, errlen);
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

/* The transfers: window receives, then window sends. */
static int setup(contend_ctx *c) {
  bully_state *s = c->state;
  if (validate(c->params, c->size, c->error, sizeof c->error))
    return -1;
  if (!strcmp(contend_param_str(c->params, "pairing"), "nodes")) {
    s->peer = node_partner(c);
    if (s->peer < 0)
      return -1;
  } else {
    s->peer = c->rank ^ 1;
  }
  bully_setup(c);
  const size_t all = s->bytes * (size_t)s->window;
  s->sbuf = contend_alloc(c, all);
  s->rbuf = contend_alloc(c, all);
  s->nx = 2 * s->window;
  s->x = contend_alloc(c, sizeof(contend_xfer) * (size_t)s->nx);
  for (int w = 0; w < s->window; w++) {
    const size_t off = (size_t)w * s->bytes;
    s->x[w] = (contend_xfer){s->rbuf + off, s->bytes, s->peer, w, 0};
    s->x[s->window + w] = (contend_xfer){s->sbuf + off, s->bytes, s->peer, w, 1};
  }
  c->metric_scale = (double)all / 1048576.0; /* MiB sent per iteration */
  return 0;
}

static void check(contend_ctx *c) {
  bully_state *s = c->state;
  contend_pattern_check(c, s->rbuf, s->bytes * (size_t)s->window, s->peer, c->iter, 0);
}

const contend_motif contend_motif_bully_pairs = {
    .name = "bully_pairs",
    .label = "Bully pairs",
    .help = "pairs bully: rank pairs stream window x msg_bytes both ways per iteration "
            "(bandwidth in Gb/s per rank)",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(bully_state),
    .setup = setup,
    .prepare = bully_prepare,
    .iterate = bully_iterate,
    .check = check,
    .validate = validate,
};
