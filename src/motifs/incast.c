/* incast: every rank but the root Isends msg_bytes to the root, which
 * posts one receive per sender (StressBench's Incast; the GPCNeT congestor
 * p2p_incast is the same kernel with the benchmark's loop counts). */
#include <stdio.h>

#include "msgbuf.h"
#include "workload.h"

static const contend_param_def params[] = {
    WL_ITERS(1),
    {"msg_bytes", CONTEND_P_INT, "4096", "B", "bytes each sender sends per iteration", 0, 1 << 30},
    {"root", CONTEND_P_INT, "0", "rank", "receiving rank (in the job)", 0, 1e7},
    CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  if (nranks > 0 && contend_param_int(p, "root") >= nranks) {
    snprintf(err, errlen, "root=%lld but the job has %d ranks",
             (long long)contend_param_int(p, "root"), nranks);
    return -1;
  }
  return 0;
}

static int setup(contend_ctx *c) {
  msgbuf_incast_setup(c, (int)contend_param_int(c->params, "root"));
  c->metric_scale = 1.0;
  return 0;
}

const contend_motif contend_motif_incast = {
    .name = "incast",
    .label = "Incast",
    .help = "every rank sends msg_bytes to the root rank of the job",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(msgbuf_state),
    .setup = setup,
    .prepare = msgbuf_prepare,
    .iterate = msgbuf_incast_iterate,
    .check = msgbuf_incast_check,
    .validate = validate,
};
