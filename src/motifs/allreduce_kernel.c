/* The allreduce kernel (see allreduce_kernel.h). */
#include "allreduce_kernel.h"

#include <stdio.h>

int contend_allreduce_msg_bytes_validate(const contend_params *p, int nranks, char *err,
                                         size_t errlen) {
  (void)nranks;
  const char *const key = "msg_bytes";
  const long long b = (long long)contend_param_int(p, key), e = (long long)sizeof(double);
  if (b % e == 0)
    return 0;
  const long long below = b / e * e; /* the row's minimum keeps it >= e */
  snprintf(err, errlen,
           "%s=%lld is not a multiple of %lld (the reduction is over %lld-byte doubles): use "
           "%lld or %lld",
           key, b, e, e, below, below + e);
  return -1;
}

int contend_allreduce_msg_bytes_setup(contend_ctx *c) {
  contend_allreduce_kernel_setup(c, c->state, (int)(contend_param_int(c->params, "msg_bytes") / 8),
                                 CONTEND_OP_SUM);
  return 0;
}

void contend_allreduce_kernel_setup(contend_ctx *c, contend_allreduce_kernel *k, int count,
                                    contend_op op) {
  k->count = count;
  k->op = op;
  k->s = contend_alloc(c, sizeof(double) * (size_t)count);
  k->r = contend_alloc(c, sizeof(double) * (size_t)count);
  c->msg_bytes = sizeof(double) * (size_t)count;
  c->metric_scale = 1.0;
}

/* Small integers keep the double sum exact whatever the reduction order. */
static double contribution(int rank, long iter, int i) {
  return (double)((rank * 7 + 3) % 101 + (iter & 1023) + i % 5);
}

void contend_allreduce_kernel_prepare(contend_ctx *c, contend_allreduce_kernel *k) {
  for (int i = 0; i < k->count; i++)
    k->s[i] = contribution(c->rank, c->iter, i);
}

void contend_allreduce_kernel_iterate(contend_ctx *c, contend_allreduce_kernel *k) {
  contend_allreduce(c, k->s, k->r, k->count, CONTEND_DT_DOUBLE, k->op);
}

void contend_allreduce_kernel_check(contend_ctx *c, contend_allreduce_kernel *k) {
  int bad = 0;
  if (c->verify_inject > 0 && (c->verify_checked + 1) % (uint64_t)c->verify_inject == 0)
    k->r[0] += 1.0;
  for (int i = 0; i < k->count && !bad; i++) {
    double want = contribution(0, c->iter, i);
    for (int r = 1; r < c->size; r++) {
      const double v = contribution(r, c->iter, i);
      if (k->op == CONTEND_OP_SUM)
        want += v;
      else if (k->op == CONTEND_OP_MIN)
        want = v < want ? v : want;
      else
        want = v > want ? v : want;
    }
    bad = k->r[i] != want;
  }
  c->verify_checked++;
  c->verify_errors += (uint64_t)bad;
}

void contend_allreduce_state_prepare(contend_ctx *c) {
  contend_allreduce_kernel_prepare(c, c->state);
}
void contend_allreduce_state_iterate(contend_ctx *c) {
  contend_allreduce_kernel_iterate(c, c->state);
}
void contend_allreduce_state_check(contend_ctx *c) { contend_allreduce_kernel_check(c, c->state); }
