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

/* validate hook helper: the byte size in parameter `key` must hold whole
 * doubles (the kernel reduces doubles; a remainder would be dropped while
 * the results record the size asked for).  Returns 0, or -1 with
 * "key=N is not a multiple of 8 ..." in err. */
int contend_allreduce_bytes_validate(const contend_params *p, const char *key, char *err,
                                     size_t errlen);
/* setup: count doubles reduced with op; sets msg_bytes and metric_scale. */
void contend_allreduce_kernel_setup(contend_ctx *c, contend_allreduce_kernel *k, int count,
                                    contend_op op);
/* prepare (verification): this rank's contribution for iteration c->iter. */
void contend_allreduce_kernel_prepare(contend_ctx *c, contend_allreduce_kernel *k);
void contend_allreduce_kernel_iterate(contend_ctx *c, contend_allreduce_kernel *k);
/* check (verification): the result against every rank's contribution. */
void contend_allreduce_kernel_check(contend_ctx *c, contend_allreduce_kernel *k);

#endif
