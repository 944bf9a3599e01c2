/* What the bully motifs of the fat-tree congestion study (bully_pairs,
 * bully_incast) share: their state, their first parameter rows, the bound
 * on what one rank has in flight, and the prepare and iterate hooks (one
 * iteration is the transfers setup prepared, exchanged at once). */
#ifndef CONTEND_MOTIFS_BULLY_H
#define CONTEND_MOTIFS_BULLY_H

#include "workload.h"

typedef struct bully_state {
  contend_xfer *x; /* the transfers of one iteration (engine memory) */
  int nx;
  unsigned char *sbuf; /* window x msg_bytes this rank sends; NULL: it sends nothing */
  unsigned char *rbuf; /* what it receives */
  size_t bytes;        /* msg_bytes */
  int window;
  int peer;      /* bully_pairs: the partner */
  int receivers; /* bully_incast: ranks 0 .. receivers-1 receive */
} bully_state;

/* The rows both start with; window_help says what the window counts. */
#define BULLY_PARAMS(window_help)                                                                  \
  WL_ITERS(4), {"msg_bytes", CONTEND_P_INT, "1048576", "B", "bytes per message", 1, 1LL << 30}, {  \
    "window", CONTEND_P_INT, "8", "count", window_help, 1, 4096                                    \
  }

/* validate helper: window x msg_bytes at most 4 GiB; per names what the
 * bound is for ("direction", "sender").  Returns 0, or -1 with err. */
int bully_window_validate(const contend_params *p, const char *per, char *err, size_t errlen);
/* setup prelude (c->state is the bully_state, returned): reads msg_bytes
 * and window, sets c->msg_bytes. */
bully_state *bully_setup(contend_ctx *c);
void bully_prepare(contend_ctx *c);
void bully_iterate(contend_ctx *c);

#endif
