/* Collectives as point-to-point rounds (see coll_expand.h). */
#include "coll_expand.h"

static int ceil_log2(int n) {
  int k = 0;
  while ((1 << k) < n)
    k++;
  return k;
}

int contend_coll_rounds(contend_coll_kind k, int n) {
  if (n <= 1)
    return 0;
  return k == CONTEND_COLL_ALLTOALL ? n - 1 : ceil_log2(n);
}

void contend_coll_round(contend_coll_kind k, int r, int n, int round, int *to, int *from) {
  switch (k) {
  case CONTEND_COLL_BARRIER: { /* dissemination */
    const int d = 1 << round;
    *to = (r + d) % n;
    *from = ((r - d) % n + n) % n;
    return;
  }
  case CONTEND_COLL_ALLREDUCE: { /* recursive doubling */
    const int partner = r ^ (1 << round);
    *to = *from = partner < n ? partner : -1;
    return;
  }
  case CONTEND_COLL_ALLTOALL: /* pairwise exchange */
    *to = (r + round + 1) % n;
    *from = (r - round - 1 + n) % n;
    return;
  case CONTEND_COLL_N:
    break;
  }
  *to = *from = -1;
}
