/* The point-to-point expansion of collectives that the in-process engines
 * share: the trace engine counts its steps as estimated node pairs, the
 * simulated fabric performs them, so both count the same bytes.  Textbook
 * algorithms (MPI libraries choose their own): dissemination barrier,
 * recursive-doubling allreduce (ranks whose partner is beyond the group
 * skip that round), pairwise-exchange alltoall. */
#ifndef CONTEND_CORE_COLL_EXPAND_H
#define CONTEND_CORE_COLL_EXPAND_H

#include <stddef.h>

#include "contend/traffic.h"

/* Rounds of collective k on a group of n ranks. */
int contend_coll_rounds(contend_coll_kind k, int n);
/* Round `round` at rank r of n: this rank sends `bytes` to *to and
 * receives `bytes` from *from (-1: not this round).  bytes is the
 * payload of one step: allreduce: the whole vector; alltoall: one peer's
 * block; barrier: 0. */
void contend_coll_round(contend_coll_kind k, int r, int n, int round, int *to, int *from);

#endif
