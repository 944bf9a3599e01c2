/* Path enumeration on the simulated fabric (see paths.h): a depth-first
 * walk over sim_route_alternatives, with reservoir sampling when a pair
 * has more paths than asked for. */
#include "paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

#define MAX_TOTAL 1000000L

typedef struct walk {
  const sim_routing *R;
  const sim_topo *t;
  int src, dst, max_paths, max_depth;
  contend_rng *rng;
  long stack[64];
  int vstack[64];
  int depth;
  long total;
  /* kept paths: slot k holds depth[k] links at links[k * max_depth] */
  long *slots;
  int *vslots;
  int *slot_len;
  long *slot_order; /* enumeration index of the path in slot k */
  char *err;
  size_t errlen;
} walk;

static int step(walk *w, int r, int in_port, const sim_route_state *st);
static int step_alts(walk *w, int r, const sim_route_alt *alts, int n);

static void keep(walk *w) {
  long k = w->total;
  if (k >= w->max_paths) { /* reservoir: replace a slot with probability max/total */
    k = (long)contend_rng_below(w->rng, (uint64_t)w->total + 1);
    if (k >= w->max_paths)
      return;
  }
  memcpy(&w->slots[k * w->max_depth], w->stack, sizeof(long) * (size_t)w->depth);
  memcpy(&w->vslots[k * w->max_depth], w->vstack, sizeof(int) * (size_t)w->depth);
  w->slot_len[k] = w->depth;
  w->slot_order[k] = w->total;
}

/* One hop: every alternative at router r, recursively.  The choices are
 * listed in a buffer of the stack, or of the heap (freed here) when there
 * are more (valiant on a dragonfly of more than 256 groups). */
static int step(walk *w, int r, int in_port, const sim_route_state *st) {
  sim_route_alt local[256], *alts = local;
  int n = sim_route_alternatives(w->R, r, in_port, w->src, w->dst, st, SIM_ALT_ALL, alts,
                                 (int)(sizeof local / sizeof *local));
  if (n > (int)(sizeof local / sizeof *local)) {
    alts = malloc(sizeof *alts * (size_t)n);
    if (!alts)
      contend_fail("out of memory (paths)");
    n = sim_route_alternatives(w->R, r, in_port, w->src, w->dst, st, SIM_ALT_ALL, alts, n);
  }
  const int rc = step_alts(w, r, alts, n);
  if (alts != local)
    free(alts);
  return rc;
}

static int step_alts(walk *w, int r, const sim_route_alt *alts, int n) {
  const sim_topo *t = w->t;
  for (int i = 0; i < n; i++) {
    const int gp = t->port_base[r] + alts[i].port;
    if (w->depth >= w->max_depth) {
      snprintf(w->err, w->errlen, "paths: routing '%s' from node %d to %d exceeds %d hops",
               sim_routing_name(w->R), w->src, w->dst, w->max_depth);
      return -1;
    }
    w->vstack[w->depth] = alts[i].vc;
    w->stack[w->depth++] = gp;
    const int peer = t->peer[gp];
    if (peer == -1 - w->dst) {
      keep(w);
      if (++w->total > MAX_TOTAL) {
        snprintf(w->err, w->errlen, "paths: more than %ld paths from node %d to %d", MAX_TOTAL,
                 w->src, w->dst);
        return -1;
      }
    } else if (peer < 0) {
      snprintf(w->err, w->errlen, "paths: routing '%s' delivers node %d's packet for %d elsewhere",
               sim_routing_name(w->R), w->src, w->dst);
      return -1;
    } else {
      const int r2 = sim_port_router(t, peer);
      if (step(w, r2, peer - t->port_base[r2], &alts[i].st))
        return -1;
    }
    w->depth--;
  }
  return 0;
}

int sim_paths_enumerate(const sim_routing *R, int src, int dst, int max_paths, contend_rng *rng,
                        sim_path_set *out, char *err, size_t errlen) {
  const sim_topo *t = sim_routing_topo(R);
  memset(out, 0, sizeof *out);
  walk w = {.R = R,
            .t = t,
            .src = src,
            .dst = dst,
            .max_paths = max_paths,
            .rng = rng,
            .err = err,
            .errlen = errlen};
  w.max_depth = sim_routing_max_hops(R) + 3; /* + injection, ejection, slack */
  if (w.max_depth > (int)(sizeof w.stack / sizeof *w.stack))
    w.max_depth = (int)(sizeof w.stack / sizeof *w.stack);
  w.slots = malloc(sizeof(long) * (size_t)max_paths * (size_t)w.max_depth);
  w.vslots = malloc(sizeof(int) * (size_t)max_paths * (size_t)w.max_depth);
  w.slot_len = malloc(sizeof(int) * (size_t)max_paths);
  w.slot_order = malloc(sizeof(long) * (size_t)max_paths);
  if (!w.slots || !w.vslots || !w.slot_len || !w.slot_order)
    contend_fail("out of memory (paths)");
  w.vstack[w.depth] = 0; /* the NIC injects on VC 0 */
  w.stack[w.depth++] = (long)t->nports + src;
  sim_route_state st;
  memset(&st, 0, sizeof st);
  st.inter = -1;
  const int rc = step(&w, t->node_router[src], t->node_port[src], &st);
  if (rc == 0) {
    const int kept = w.total < max_paths ? (int)w.total : max_paths;
    /* enumeration order: sort slot indices by slot_order (kept is small) */
    int *ord = malloc(sizeof(int) * (size_t)(kept ? kept : 1));
    if (!ord)
      contend_fail("out of memory (paths)");
    for (int k = 0; k < kept; k++) {
      int j = k;
      while (j > 0 && w.slot_order[ord[j - 1]] > w.slot_order[k]) {
        ord[j] = ord[j - 1];
        j--;
      }
      ord[j] = k;
    }
    long nl = 0;
    for (int k = 0; k < kept; k++)
      nl += w.slot_len[k];
    out->links = malloc(sizeof(long) * (size_t)(nl ? nl : 1));
    out->vcs = malloc(sizeof(int) * (size_t)(nl ? nl : 1));
    out->start = malloc(sizeof(int) * (size_t)(kept + 1));
    if (!out->links || !out->vcs || !out->start)
      contend_fail("out of memory (paths)");
    long at = 0;
    for (int k = 0; k < kept; k++) {
      out->start[k] = (int)at;
      memcpy(&out->links[at], &w.slots[(long)ord[k] * w.max_depth],
             sizeof(long) * (size_t)w.slot_len[ord[k]]);
      memcpy(&out->vcs[at], &w.vslots[(long)ord[k] * w.max_depth],
             sizeof(int) * (size_t)w.slot_len[ord[k]]);
      at += w.slot_len[ord[k]];
    }
    out->start[kept] = (int)at;
    out->npaths = kept;
    out->total = w.total;
    free(ord);
  }
  free(w.slots);
  free(w.vslots);
  free(w.slot_len);
  free(w.slot_order);
  return rc;
}

void sim_path_set_free(sim_path_set *p) {
  free(p->links);
  free(p->vcs);
  free(p->start);
  memset(p, 0, sizeof *p);
}
