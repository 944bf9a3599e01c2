/* dl_allreduce congestor (optional): large-message MPI_Allreduce, like the
 * gradient reductions of deep-learning training. */
#include "allreduce_kernel.h"

static const contend_param_def params[] = {CONTEND_LOOP_PARAMS(256, 1, 16, 1),
                                           ALLREDUCE_MSG_BYTES("4194304"), CONTEND_PARAM_END};

static int setup(contend_ctx *c) {
  contend_allreduce_msg_bytes_setup(c);
  c->metric_scale = (double)c->msg_bytes / 1048576.0;
  return 0;
}

/* Its own contributions (not the kernel's): rank + (i mod 16). */
static void prepare(contend_ctx *c) {
  contend_allreduce_kernel *s = c->state;
  for (int i = 0; i < s->count; i++)
    s->s[i] = (double)(c->rank + (i & 15));
}

static void check(contend_ctx *c) {
  contend_allreduce_kernel *s = c->state;
  double ranks = (double)c->size * (c->size - 1) / 2.0;
  int bad = 0;
  if (c->verify_inject > 0 && (c->verify_checked + 1) % (uint64_t)c->verify_inject == 0)
    s->r[s->count / 2] += 1.0;
  for (int i = 0; i < s->count && !bad; i++)
    bad = s->r[i] != ranks + (double)c->size * (i & 15);
  c->verify_checked++;
  c->verify_errors += (uint64_t)bad;
}

const contend_motif contend_motif_dl_allreduce = {
    .name = "dl_allreduce",
    .label = "Allreduce (large)",
    .help = "congestor (optional): large-message MPI_Allreduce, deep-learning like",
    .role = CONTEND_ROLE_CONGESTOR,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .params = params,
    .state_size = sizeof(contend_allreduce_kernel),
    .setup = setup,
    .prepare = prepare,
    .iterate = contend_allreduce_state_iterate,
    .check = check,
    .validate = contend_allreduce_msg_bytes_validate,
    .flags = CONTEND_MOTIF_COLL_DATA,
};
