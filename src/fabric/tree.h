/* The tree view of a machine: nodes -> leaf switch -> pod -> top, for the
 * topology-aware placements of job files and `contend topology show`.
 *
 * Built from a fabric topology (topo.h): a Slurm
 * topology.conf ("slurm:FILE", or a plain path), a fat-tree or XGFT spec
 * (fattree:..., xgft:..., switch:...), or a dragonfly (leaf = router, pod =
 * group).  The emulated cluster (python/contend/cluster/) writes a
 * topology.conf of its own into its state directory, so it is read the
 * same way.
 *
 * Definitions: a leaf is a switch that nodes attach to; a pod is a set of
 * leaves joined by level-2 switches (the connected components of the
 * leaves and the level-2 switches; a 2-level tree is one pod, a single
 * switch one leaf and one pod).  Leaves are numbered pod by pod, in the
 * order of their routers; pods in the order of their first leaf.
 *
 * Taper of level l: the links of its switches going down (to nodes or to
 * level l-1) divided by those going up, counted from the topology's links
 * (equal link speeds assumed).  A topology.conf names the switch graph but
 * not how many cables each Switches= entry stands for: its taper is
 * unknown (0).
 *
 * Ownership: contend_tree_load / contend_tree_from_topo fill a tree with
 * arrays they allocate; contend_tree_free releases them.  Pure: no MPI. */
#ifndef CONTEND_JOBS_TREE_H
#define CONTEND_JOBS_TREE_H

#include <stddef.h>

#include "topo.h"

typedef struct contend_tree {
  char source[300]; /* the topology's canonical spec */
  char kind[16];    /* "slurm", "xgft", "switch", "dragonfly" */
  int nnodes, nleaves, npods;
  int levels;                     /* switch levels (1 = leaves only) */
  int switches[SIM_MAX_LEVELS];   /* [l - 1]: switches at level l */
  double taper[SIM_MAX_LEVELS];   /* [l - 1]: down links / up links; 0 = unknown or top */
  int node_links[SIM_MAX_LEVELS]; /* [l - 1]: links down from level l (0 = unknown) */
  int up_links[SIM_MAX_LEVELS];   /* [l - 1]: links up from level l (0 = top or unknown) */
  int links_known;                /* 1: spec topologies; 0: topology.conf */
  /* a dragonfly's global ports, and those with a link (fewer groups than
   * a*h+1 leave the rest unconnected); 0 and 0 for other topologies */
  int global_ports, global_wired;
  int *node_leaf;   /* [nnodes] */
  int *leaf_pod;    /* [nleaves] */
  int *leaf_first;  /* [nleaves + 1]: CSR into leaf_node */
  int *leaf_node;   /* [nnodes]: nodes of each leaf, ascending */
  int *pod_first;   /* [npods + 1]: leaves of pod p are pod_first[p] .. */
  char **leaf_name; /* [nleaves] (switch name or router label) */
  char **node_name; /* [nnodes] host names (topology.conf), else NULL */
} contend_tree;

/* Parses spec (a topology spec, "slurm:FILE", or a path to a
 * topology.conf) and builds the tree.  Returns 0, or -1 with one line in
 * err (a topology.conf's message names the line). */
int contend_tree_load(const char *spec, contend_tree *t, char *err, size_t errlen);
/* The topology.conf that spec names (for contend_tree_load: the path, or
 * the part after "slurm:"), or NULL for a generated topology. */
const char *contend_tree_file(const char *spec);
/* The tree of a built topology (t is only read). */
int contend_tree_from_topo(const sim_topo *topo, contend_tree *t, char *err, size_t errlen);
void contend_tree_free(contend_tree *t);

/* The node whose host name is name (exact, else the short names before
 * the first '.' compared), or -1. */
int contend_tree_find_node(const contend_tree *t, const char *name);

/* Nodes per leaf, leaves per pod: min and max. */
void contend_tree_ranges(const contend_tree *t, int *npl_min, int *npl_max, int *lpp_min,
                         int *lpp_max);

#endif
