/* Node discovery: which ranks share a node.
 *
 * Nodes are numbered by the lowest world rank they hold.  With
 * virtual_nodes = K > 0, K consecutive world ranks form one node (single-
 * host runs and tests); otherwise MPI_Comm_split_type(SHARED) decides.
 * Collective over world. */
#ifndef CONTEND_NODES_H
#define CONTEND_NODES_H

#include <mpi.h>
#include <stddef.h>

typedef struct contend_nodes {
  int nnodes;
  int my_node;
  int local_rank, local_size;
  int ppn_min, ppn_max;
  int *node_of_rank; /* world size entries */
} contend_nodes;

/* Returns 0, or -1 with a message (same on every rank) for bad input. */
int contend_nodes_discover(MPI_Comm world, int virtual_nodes, contend_nodes *out, char *err,
                           size_t errlen);
void contend_nodes_free(contend_nodes *n);

#endif
