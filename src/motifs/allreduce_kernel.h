/* The allreduce kernel shared by the GPCNeT canary `allreduce` and the job
 * motif `wl_allreduce`: buffers, the verified contributions and the check.
 * The two motifs differ in parameters and loop counts, not in the steps.
 * The congestor dl_allreduce (its own contributions) and the application
 * proxies (one kernel inside their state) use its buffers and call. */
#ifndef CONTEND_ALLREDUCE_KERNEL_H
#define CONTEND_ALLREDUCE_KERNEL_H

#include "contend/motif.h"

typedef struct contend_allreduce_kernel {
  double *s, *r; /* engine memory */
  int count;
  contend_op op;
} contend_allreduce_kernel;

/* The motifs that sum msg_bytes of doubles (allreduce, dl_allreduce):
 * their msg_bytes row, validate hook (msg_bytes must hold whole doubles: a
 * remainder would be dropped while the results record the size asked for;
 * -1 with "msg_bytes=N is not a multiple of 8 ..." in err) and setup hook
 * (the kernel over msg_bytes / 8 doubles, op sum). */
#define ALLREDUCE_MSG_BYTES(def)                                                                   \
  { "msg_bytes", CONTEND_P_INT, def, "B", "reduction size (multiple of 8: doubles)", 8, 1 << 30 }
int contend_allreduce_msg_bytes_validate(const contend_params *p, int nranks, char *err,
                                         size_t errlen);
int contend_allreduce_msg_bytes_setup(contend_ctx *c);
/* setup: count doubles reduced with op; sets msg_bytes and metric_scale. */
void contend_allreduce_kernel_setup(contend_ctx *c, contend_allreduce_kernel *k, int count,
                                    contend_op op);
/* prepare (verification): this rank's contribution for iteration c->iter. */
void contend_allreduce_kernel_prepare(contend_ctx *c, contend_allreduce_kernel *k);
void contend_allreduce_kernel_iterate(contend_ctx *c, contend_allreduce_kernel *k);
/* check (verification): the result against every rank's contribution. */
void contend_allreduce_kernel_check(contend_ctx *c, contend_allreduce_kernel *k);

/* The hooks of a motif whose state is one kernel (c->state; allreduce,
 * wl_allreduce), as designated initializers with the state size and the
 * flag that skips the check where collectives are not computed. */
void contend_allreduce_state_prepare(contend_ctx *c);
void contend_allreduce_state_iterate(contend_ctx *c);
void contend_allreduce_state_check(contend_ctx *c);
#define ALLREDUCE_MOTIF_HOOKS                                                                      \
  .state_size = sizeof(contend_allreduce_kernel), .prepare = contend_allreduce_state_prepare,      \
  .iterate = contend_allreduce_state_iterate, .check = contend_allreduce_state_check,              \
  .flags = CONTEND_MOTIF_COLL_DATA

#endif
