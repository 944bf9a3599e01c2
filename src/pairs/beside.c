/* `contend pairs --bully`: a job-file motif (a bully) run on some nodes of
 * the run, the last --bully-nodes or as many drawn with the seed, while
 * the pairs are measured among the other nodes (or, with --bully-share,
 * among all nodes, the bully on other ranks of its nodes, so that the
 * links it stalls at its own NICs are measured too): the traffic a congested
 * machine adds, with its hotspot known to the simulator's counters.  The
 * bully warms up with one invocation before the first round and runs
 * until the last round ends (engine-neutral: the world's signals). */
#include "beside.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../jobs/jobs.h"
#include "contend/rng.h"

int pairs_bully_parse(pairs_bully *b, const contend_params *opts, char *err, size_t errlen) {
  memset(b, 0, sizeof *b);
  const char *spec = contend_param_str(opts, "bully");
  b->nodes = (long)contend_param_int(opts, "bully_nodes");
  const char *place = contend_param_str(opts, "bully_place");
  if (strcmp(place, "last") && strcmp(place, "random")) {
    snprintf(err, errlen, "--bully-place %s: expected last or random", place);
    return -1;
  }
  b->random = !strcmp(place, "random");
  b->share = contend_param_bool(opts, "bully_share");
  if (!spec || !*spec) {
    if (b->nodes > 0 || b->share || contend_param_is_set(opts, "bully_place")) {
      snprintf(err, errlen, "--bully-nodes, --bully-place and --bully-share need --bully MOTIF");
      return -1;
    }
    return 0;
  }
  if (b->nodes < 1) {
    snprintf(err, errlen, "--bully %s needs --bully-nodes N (the nodes it runs on)", spec);
    return -1;
  }
  char name[128];
  const size_t len = strcspn(spec, ":");
  if (len >= sizeof name) {
    snprintf(err, errlen, "--bully: the motif name has %zu characters, more than the limit of %zu",
             len, sizeof name - 1);
    return -1;
  }
  memcpy(name, spec, len);
  name[len] = 0;
  const contend_motif *m = contend_job_motif_find(name);
  if (!m) {
    snprintf(err, errlen, "--bully: unknown motif '%s' (see contend jobs --list)", name);
    return -1;
  }
  if (m->flags & CONTEND_MOTIF_FILE_DATA) {
    snprintf(err, errlen, "--bully: motif '%s' does file I/O: the bully must be a network motif",
             name);
    return -1;
  }
  char perr[1024];
  if (contend_params_init(&b->params, m->params, m->name, perr, sizeof perr)) {
    snprintf(err, errlen, "internal error: %s", perr);
    return -1;
  }
  b->m = m; /* params now owned */
  if (spec[len] == ':' &&
      contend_params_set_items(&b->params, spec + len + 1, ',', perr, sizeof perr)) {
    snprintf(err, errlen, "--bully %s: %s", name, perr);
    return -1;
  }
  if (m->validate && m->validate(&b->params, 0, perr, sizeof perr)) {
    snprintf(err, errlen, "--bully %s: %s", name, perr);
    return -1;
  }
  return 0;
}

void pairs_bully_free(pairs_bully *b) {
  if (b->m)
    contend_params_free(&b->params);
  b->m = NULL;
}

int pairs_bully_place(const pairs_bully *b, const contend_nodes *nodes, int nranks, uint64_t seed,
                      char *is_bully, char *role, char *err, size_t errlen) {
  const int n = nodes->nnodes;
  memset(is_bully, 0, (size_t)n);
  memset(role, PAIRS_ROLE_PAIRS, (size_t)nranks);
  if (!b->m)
    return 0;
  const int most = b->share ? n : n - 2;
  if (b->nodes > most) {
    snprintf(err, errlen, "--bully-nodes %ld: the run has %d nodes%s (give at most %d)", b->nodes,
             n, b->share ? "" : ", and the pairs need at least 2 of them", most > 0 ? most : 0);
    return -1;
  }
  if (!b->random) {
    for (long i = n - b->nodes; i < n; i++)
      is_bully[i] = 1;
  } else { /* partial Fisher-Yates over the nodes */
    int *order = malloc(sizeof *order * (size_t)n);
    if (!order) {
      snprintf(err, errlen, "out of memory (%d nodes)", n);
      return -1;
    }
    for (int i = 0; i < n; i++)
      order[i] = i;
    contend_rng r;
    contend_rng_init(&r, seed, 0x62756c6c79, 0, 0, 0);
    for (long i = 0; i < b->nodes; i++) {
      const long j = i + (long)contend_rng_below(&r, (uint64_t)(n - i));
      const int t = order[i];
      order[i] = order[j];
      order[j] = t;
      is_bully[order[i]] = 1;
    }
    free(order);
  }
  char *seen = calloc((size_t)n, 1); /* share: the node's first rank is taken */
  if (!seen) {
    snprintf(err, errlen, "out of memory (%d nodes)", n);
    return -1;
  }
  int ranks = 0;
  for (int r = 0; r < nranks; r++) {
    const int node = nodes->node_of_rank[r];
    if (b->share && !seen[node])
      role[r] = PAIRS_ROLE_PAIRS;
    else
      role[r] = is_bully[node] ? PAIRS_ROLE_BULLY : b->share ? PAIRS_ROLE_IDLE : PAIRS_ROLE_PAIRS;
    seen[node] = 1;
    ranks += role[r] == PAIRS_ROLE_BULLY;
  }
  int lone = -1; /* share: a bully node with one rank, the pairs' */
  if (b->share) {
    memset(seen, 0, (size_t)n); /* now: the node has a bully rank */
    for (int r = 0; r < nranks; r++)
      seen[nodes->node_of_rank[r]] |= role[r] == PAIRS_ROLE_BULLY;
    for (int i = 0; i < n && lone < 0; i++)
      lone = is_bully[i] && !seen[i] ? i : -1;
  }
  free(seen);
  if (lone >= 0) {
    snprintf(err, errlen,
             "--bully-share: node %d has one rank, the pairs', and none for the bully: give "
             "--ranks-per-node 2 or more",
             lone);
    return -1;
  }
  char perr[512];
  if (b->m->validate && b->m->validate(&b->params, ranks, perr, sizeof perr)) {
    snprintf(err, errlen, "--bully %s on %ld nodes (%d ranks): %s", b->m->name, b->nodes, ranks,
             perr);
    return -1;
  }
  return 0;
}

pairs_bully_stats pairs_bully_run(const pairs_bully *b, contend_ctx *c, contend_group *world,
                                  contend_group *own, int my_node, uint64_t seed) {
  pairs_bully_stats st = {0};
  const contend_ctx job = {.job_name = "bully", .job_phase = CONTEND_JOB_DECOMPOSE};
  if (own->ops->ctx_open(c, b->m, &b->params, own, my_node, seed, &job))
    contend_fail("contend pairs: --bully %s: setup failed: %s", b->m->name,
                 *c->error ? c->error : "(on another rank)");
  const contend_job_exec x = {.clock = own};
  double timed = contend_job_invoke(c, b->m, 0, &x); /* warm: before the first round */
  long rep = 1, iters_done = 0;
  contend_signal *ready = contend_signal_post(world), *stop = contend_signal_post(world);
  for (int64_t done = 0; !done; rep++) {
    timed += contend_job_invoke(c, b->m, rep, &x);
    long rings, warmup, iters;
    contend_job_loop(c, &rings, &warmup, &iters);
    iters_done += rings * iters;
    done = contend_signal_test(world, stop);
    contend_gallreduce(own, &done, 1, CONTEND_DT_INT64, CONTEND_OP_MAX); /* stop together */
  }
  contend_signal_wait(world, ready, 0);
  contend_signal_wait(world, stop, 0);
  contend_signal_free(world, ready);
  contend_signal_free(world, stop);
  st.invocations = (double)rep;
  if (c->metric_scale > 0 && timed > 0) { /* MiB per timed iteration over the timed time */
    long rings, warmup, iters;
    contend_job_loop(c, &rings, &warmup, &iters);
    st.mib_s_sum = c->metric_scale * (double)(iters_done + rings * iters) / timed;
    st.sampling_ranks = 1;
  }
  return st;
}

pairs_bully_stats pairs_bully_stats_sum(contend_group *world, pairs_bully_stats mine) {
  double v[2] = {mine.mib_s_sum, mine.sampling_ranks};
  contend_gallreduce(world, v, 2, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  double inv = mine.invocations;
  contend_gallreduce(world, &inv, 1, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
  return (pairs_bully_stats){inv, v[0], v[1]};
}

double pairs_bully_mib_s(const pairs_bully_stats *st) {
  return st->sampling_ranks > 0 ? st->mib_s_sum / st->sampling_ranks : 0.0;
}

void pairs_bully_json(contend_json *j, const pairs_bully *b, const char *is_bully, int nnodes,
                      long ranks, const pairs_bully_stats *st, uint64_t seed) {
  contend_json_obj_begin(j, "bully");
  contend_json_str(j, "motif", b->m->name);
  contend_params_json(j, "params", &b->params, seed);
  contend_json_str(j, "place", b->random ? "random" : "last");
  contend_json_bool(j, "share", b->share);
  contend_json_arr_begin(j, "nodes");
  for (int i = 0; i < nnodes; i++)
    if (is_bully[i])
      contend_json_int(j, NULL, i);
  contend_json_arr_end(j);
  contend_json_int(j, "ranks", ranks);
  contend_json_int(j, "invocations", (int64_t)st->invocations);
  contend_json_double(j, "mib_s_per_rank", pairs_bully_mib_s(st));
  contend_json_obj_end(j);
}
