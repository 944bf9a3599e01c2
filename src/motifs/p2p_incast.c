/* p2p_incast congestor: every rank sends one message to rank 0, which
 * posts one receive per sender (GPCNeT section 3.2.3).  Only the root takes
 * samples, the MiB/s it receives: a sender's 4 KiB Isend completes eagerly,
 * before its data arrives, so its own rate would mean nothing.  The root's
 * rate is over whole rounds (CONTEND_MOTIF_ROUND_TIMING): the senders run
 * ahead of it, their eager messages arrive before the receives that take
 * them are posted, and per-iteration rates counted that data in too short
 * a time (above the root's link rate). */
#include "msgbuf.h"

static const contend_param_def params[] =
    MSGBUF_PARAMS(256, 1, 512, 1, "bytes each sender sends per iteration");

static int setup(contend_ctx *c) {
  msgbuf_state *s = msgbuf_incast_setup(c, 0);
  c->metric_scale = c->rank == 0 ? msgbuf_mib(s, c->size - 1) : 0.0;
  return 0;
}

const contend_motif contend_motif_p2p_incast = {
    .name = "p2p_incast",
    .label = "P2P Incast",
    .help =
        "congestor: every rank Isends to rank 0 of its sub-communicator; MiB/s received at rank 0",
    .role = CONTEND_ROLE_CONGESTOR,
    .iters_base_ranks = 32,
    .metric = CONTEND_METRIC_BW_MIB_S,
    .flags = CONTEND_MOTIF_ROUND_TIMING,
    .params = params,
    .state_size = sizeof(msgbuf_state),
    .setup = setup,
    .prepare = msgbuf_prepare,
    .iterate = msgbuf_incast_iterate,
    .check = msgbuf_incast_check,
};
