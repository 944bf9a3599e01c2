/* The allreduce kernel shared by the GPCNeT canary `allreduce` and the job
 * motif `wl_allreduce`: buffers, the verified contributions and the check.
 * The two motifs differ in parameters and loop counts, not in the steps. */
#ifndef CONTEND_ALLREDUCE_KERNEL_H
#define CONTEND_ALLREDUCE_KERNEL_H

#include "contend/motif.h"

typedef struct contend_allreduce_kernel {
  double *s, *r; /* engine memory */
  int count;
  contend_op op;
} contend_allreduce_kernel;

/* setup: count doubles reduced with op; sets msg_bytes and metric_scale. */
void contend_allreduce_kernel_setup(contend_ctx *c, contend_allreduce_kernel *k, int count,
                                    contend_op op);
/* prepare (verification): this rank's contribution for iteration c->iter. */
void contend_allreduce_kernel_prepare(contend_ctx *c, contend_allreduce_kernel *k);
void contend_allreduce_kernel_iterate(contend_ctx *c, contend_allreduce_kernel *k);
/* check (verification): the result against every rank's contribution. */
void contend_allreduce_kernel_check(contend_ctx *c, contend_allreduce_kernel *k);

#endif
