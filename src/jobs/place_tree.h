/* The tree placements of job files (compact, spread, every_leaf, pairs,
 * incast; docs/jobfile.md): internal to src/jobs/place.c, which owns the
 * order of placement and the free-node bookkeeping.  Pure: no MPI. */
#ifndef CONTEND_JOBS_PLACE_TREE_H
#define CONTEND_JOBS_PLACE_TREE_H

#include <stddef.h>

#include "../fabric/tree.h"
#include "jobs.h"

/* The run's nodes seen through the tree: leaf of each run node, and the
 * run nodes of each leaf (ascending).  Leaves without run nodes (a dry run
 * on fewer nodes than the topology has) are left out of every placement. */
typedef struct place_tree_view {
  const contend_tree *t;
  int nnodes;
  int *leaf_of; /* [nnodes] */
  int *lfirst;  /* [nleaves + 1]: CSR into lnode */
  int *lnode;   /* [nnodes] */
  int *pod_has; /* [npods]: run nodes in the pod */
} place_tree_view;

/* tree_node: run node -> tree node (NULL: identity; the caller checked the
 * range).  place_tree_view_free releases the arrays. */
void place_tree_view_init(place_tree_view *v, const contend_tree *t, const int *tree_node,
                          int nnodes);
void place_tree_view_free(place_tree_view *v);

/* Places job k of jf (a tree kind) on free nodes (owner[i] < 0), sets its
 * nodes (in job rank order), nnodes and placement_seed, marks owner.
 * Returns 0, or -1 with "path:line: job 'x' ..." in err. */
int place_tree_job(const place_tree_view *v, contend_jobfile *jf, int k, int *owner, char *err,
                   size_t errlen);

#endif
