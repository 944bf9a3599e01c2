/* The node split: pure functions shared by real runs and dry runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "suite.h"

/* Random stream 1 names the node shuffle. */
enum { STREAM_SPLIT = 1 };

static int fits(int n, double frac, int ncong, int cong_only) {
  if (ncong == 0)
    return n >= 2;
  if (cong_only)
    return n / ncong >= 2;
  int nc = (int)floor(frac * n + 0.5);
  return nc >= 2 && (n - nc) / ncong >= 2;
}

/* The last plan made in this process, shared read-only by every plan of
 * the same inputs while one holds it: the in-process engines play every
 * rank here, and each rank makes the same plan (16,384 ranks would hold
 * 16,384 copies of two arrays of 16,384 nodes).  Under MPI a process makes
 * one.  Not thread-safe (ranks are fibers of one thread). */
static struct {
  int refs, nnodes, ncong, cong_only;
  double frac;
  uint64_t seed;
  contend_plan plan;
} shared;

int contend_plan_make(const contend_config *cfg, int nnodes, uint64_t seed, contend_plan *plan,
                      char *err, size_t errlen) {
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int ncong = load ? cfg->ncong : 0;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const double frac = load ? contend_param_double(&cfg->load, "canary_fraction") : 1.0;
  plan->nnodes = nnodes;
  plan->order = NULL;
  plan->group_of_node = NULL;
  if (!fits(nnodes, frac, ncong, cong_only)) {
    int need = nnodes;
    while (need < 10000000 && !fits(need, frac, ncong, cong_only))
      need++;
    if (ncong == 0)
      snprintf(err, errlen, "too few nodes: %d node%s found, the tests need at least 2", nnodes,
               nnodes == 1 ? "" : "s");
    else if (cong_only)
      snprintf(err, errlen,
               "too few nodes for the split: %d nodes for %d congestors; each congestor needs "
               "at least 2 nodes: use at least %d nodes",
               nnodes, ncong, need);
    else
      snprintf(err, errlen,
               "too few nodes for the split: %d nodes with --canary-fraction %g give %d canary "
               "node(s) and %d for %d congestors; canaries and each congestor need at least 2 "
               "nodes: use at least %d nodes",
               nnodes, frac, (int)floor(frac * nnodes + 0.5),
               nnodes - (int)floor(frac * nnodes + 0.5), ncong, need);
    return -1;
  }
  if (shared.refs && shared.nnodes == nnodes && shared.seed == seed && shared.ncong == ncong &&
      shared.cong_only == cong_only && shared.frac == frac) {
    *plan = shared.plan;
    shared.refs++;
    return 0;
  }
  plan->order = malloc(sizeof(int) * (size_t)nnodes);
  plan->group_of_node = malloc(sizeof(int) * (size_t)nnodes);
  if (!plan->order || !plan->group_of_node) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  for (int i = 0; i < nnodes; i++)
    plan->order[i] = i;
  contend_rng rng;
  contend_rng_init(&rng, seed, STREAM_SPLIT, 0, 0, 0);
  contend_rng_shuffle(&rng, plan->order, nnodes);
  for (int g = 0; g <= CONTEND_MAX_LIST; g++)
    plan->group_nodes[g] = 0;
  int nc = ncong == 0 ? nnodes : cong_only ? 0 : (int)floor(frac * nnodes + 0.5);
  int pos = 0;
  for (; pos < nc; pos++)
    plan->group_of_node[plan->order[pos]] = 0;
  plan->group_nodes[0] = nc;
  if (ncong > 0) {
    int rest = nnodes - nc, per = rest / ncong, extra = rest % ncong;
    for (int k = 0; k < ncong; k++) {
      int take = per + (k < extra ? 1 : 0);
      for (int j = 0; j < take; j++)
        plan->group_of_node[plan->order[pos++]] = 1 + k;
      plan->group_nodes[1 + k] = take;
    }
  }
  if (!shared.refs) {
    shared.refs = 1;
    shared.nnodes = nnodes;
    shared.seed = seed;
    shared.ncong = ncong;
    shared.cong_only = cong_only;
    shared.frac = frac;
    shared.plan = *plan;
  }
  return 0;
}

void contend_plan_free(contend_plan *plan) {
  if (shared.refs && plan->order == shared.plan.order) {
    if (--shared.refs == 0) {
      free(shared.plan.order);
      free(shared.plan.group_of_node);
    }
  } else {
    free(plan->order);
    free(plan->group_of_node);
  }
  plan->order = plan->group_of_node = NULL;
}
