/* The state and preludes of the motifs that move one msg_bytes message
 * per peer and iteration through a send and a receive buffer: the GPCNeT
 * congestors (p2p_incast, pairwise_a2a, rma_put_incast, rma_get_bcast,
 * p2p_bcast), the alltoall canary and the job motif incast; with the
 * incast kernel that p2p_incast (root 0) and incast (root given) share. */
#ifndef CONTEND_MOTIFS_MSGBUF_H
#define CONTEND_MOTIFS_MSGBUF_H

#include "contend/motif.h"

typedef struct msgbuf_state {
  unsigned char *s; /* what this rank sends, or exposes in its window (rma_get_bcast) */
  unsigned char *r; /* where it receives: a buffer, or its window (rma_put_incast) */
  size_t bytes;     /* msg_bytes */
  int root;         /* incast: the receiving rank */
} msgbuf_state;

/* Parameter table: the GPCNeT loop counts and msg_bytes (4 KiB by default;
 * help says what one message is). */
#define MSGBUF_PARAMS(nm, nr, ni, wu, help)                                                        \
  {                                                                                                \
    CONTEND_LOOP_PARAMS(nm, nr, ni, wu),                                                           \
        {"msg_bytes", CONTEND_P_INT, "4096", "B", help, 1, 1 << 26}, CONTEND_PARAM_END             \
  }

/* setup prelude (c->state is the msgbuf_state, returned): reads msg_bytes,
 * sets c->msg_bytes and allocates s for nsend messages (none when 0); the
 * motif then allocates r and sets c->metric_scale. */
msgbuf_state *msgbuf_setup(contend_ctx *c, size_t nsend);
/* MiB in `messages` messages of s->bytes: for c->metric_scale. */
double msgbuf_mib(const msgbuf_state *s, int messages);
/* prepare hook: one message from this rank in s for iteration c->iter. */
void msgbuf_prepare(contend_ctx *c);

/* The incast kernel: every rank but root sends its message to root, which
 * posts one receive per sender into slot j of r.  Setup (msgbuf_setup for
 * one message, r at root; c->metric_scale is the caller's), iterate and
 * check hooks. */
msgbuf_state *msgbuf_incast_setup(contend_ctx *c, int root);
void msgbuf_incast_iterate(contend_ctx *c);
void msgbuf_incast_check(contend_ctx *c);

#endif
