#include "nodes.h"

#include <stdio.h>
#include <stdlib.h>

#include "error.h"

int contend_nodes_discover(MPI_Comm world, int k, contend_nodes *out, char *err, size_t errlen) {
  int rank, size;
  CONTEND_MPI_CHECK(MPI_Comm_rank(world, &rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(world, &size));
  out->node_of_rank = malloc(sizeof(int) * (size_t)size);
  if (!out->node_of_rank)
    contend_fail("out of memory");
  if (k > 0) {
    if (size % k) {
      snprintf(err, errlen,
               "--virtual-nodes %d: %d ranks do not divide into nodes of %d ranks (use a rank "
               "count that is a multiple of %d)",
               k, size, k, k);
      free(out->node_of_rank);
      out->node_of_rank = NULL;
      return -1;
    }
    out->my_node = rank / k;
    out->local_rank = rank % k;
    out->local_size = k;
    out->nnodes = size / k;
    for (int r = 0; r < size; r++)
      out->node_of_rank[r] = r / k;
    out->ppn_min = out->ppn_max = k;
    return 0;
  }
  MPI_Comm node, leaders;
  CONTEND_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  CONTEND_MPI_CHECK(MPI_Comm_rank(node, &out->local_rank));
  CONTEND_MPI_CHECK(MPI_Comm_size(node, &out->local_size));
  CONTEND_MPI_CHECK(
      MPI_Comm_split(world, out->local_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders));
  int id = 0;
  if (leaders != MPI_COMM_NULL) {
    CONTEND_MPI_CHECK(MPI_Comm_rank(leaders, &id));
    CONTEND_MPI_CHECK(MPI_Comm_free(&leaders));
  }
  CONTEND_MPI_CHECK(MPI_Bcast(&id, 1, MPI_INT, 0, node));
  CONTEND_MPI_CHECK(MPI_Comm_free(&node));
  out->my_node = id;
  CONTEND_MPI_CHECK(MPI_Allgather(&id, 1, MPI_INT, out->node_of_rank, 1, MPI_INT, world));
  int nn = 0;
  for (int r = 0; r < size; r++)
    if (out->node_of_rank[r] + 1 > nn)
      nn = out->node_of_rank[r] + 1;
  out->nnodes = nn;
  int *count = calloc((size_t)nn, sizeof(int));
  if (!count)
    contend_fail("out of memory");
  for (int r = 0; r < size; r++)
    count[out->node_of_rank[r]]++;
  out->ppn_min = size;
  out->ppn_max = 0;
  for (int i = 0; i < nn; i++) {
    if (count[i] < out->ppn_min)
      out->ppn_min = count[i];
    if (count[i] > out->ppn_max)
      out->ppn_max = count[i];
  }
  free(count);
  return 0;
}

void contend_nodes_free(contend_nodes *n) {
  free(n->node_of_rank);
  n->node_of_rank = NULL;
}
