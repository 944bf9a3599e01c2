/* Random-ring kernels shared by the ring canaries (GPCNeT section 3.1.1).
 * Each ring motif file is a contend_motif whose hooks are these functions;
 * the motif's own setup picks the transfer kind and options. */
#ifndef CONTEND_MOTIFS_RING_H
#define CONTEND_MOTIFS_RING_H

#include "contend/motif.h"

typedef enum { RING_TWO_SIDED, RING_PUT, RING_GET } ring_kind;

typedef struct ring_state {
  ring_kind kind;
  int sync;    /* barrier over the group at the end of each iteration */
  int natural; /* unshuffled ring */
  int left, right;
  int nmsg;     /* messages per neighbour per iteration */
  size_t bytes; /* per message */
  unsigned char *sbuf;
  unsigned char *rbuf; /* 2*nmsg receive slots: [0,nmsg) from left, then from right */
  unsigned char *win;  /* RMA window (PUT: 2*nmsg slots; GET: one message) */
  contend_xfer *xfer;  /* TWO_SIDED: the 4*nmsg transfers of one iteration */
  contend_rma *rma;    /* PUT: the 2*nmsg puts of one iteration; GET: the 2 gets */
  int nrma;            /* entries of rma */
} ring_state;

/* Parameter tables shared by the ring canaries (GPCNeT's counts). */
#define RING_LAT_PARAMS                                                                            \
  {                                                                                                \
    CONTEND_LOOP_PARAMS(10000, 30, 200, 200),                                                      \
        {"msg_bytes", CONTEND_P_INT, "8", "B", "message size", 1, 1 << 30}, CONTEND_PARAM_END      \
  }
#define RING_BW_PARAMS                                                                             \
  {                                                                                                \
    CONTEND_LOOP_PARAMS(10000, 30, 8, 1),                                                          \
        {"msg_bytes", CONTEND_P_INT, "131072", "B", "message size", 1, 1 << 30},                   \
        {"messages", CONTEND_P_INT, "8", "count", "messages to each neighbour per iteration",      \
         1,          4096},                                                                        \
        CONTEND_PARAM_END                                                                          \
  }

/* The hooks every ring canary shares (designated initializers); each
 * adds its own name, metric, parameters, setup and, for the RMA rings,
 * .epoch_of = ring_epoch. */
#define RING_MOTIF_HOOKS                                                                           \
  .role = CONTEND_ROLE_CANARY, .state_size = sizeof(ring_state), .round = ring_round,              \
  .ring_of = ring_order, .prepare = ring_prepare, .iterate = ring_iterate, .check = ring_check

/* Reads msg_bytes and messages (if the motif declares it), allocates
 * buffers, sets the metric scale.  lat_divisor > 0 makes it a latency
 * motif (time / divisor), otherwise a bandwidth motif. */
int ring_setup(contend_ctx *c, ring_kind kind, int sync, int natural, double lat_divisor);
void ring_round(contend_ctx *c, contend_rng *rng);
/* The motifs' ring_of hook: the ring ring_round takes from the same
 * stream (identity order for the natural ring); always 1. */
int ring_order(const contend_ctx *c, contend_rng *rng, int *order);
void ring_prepare(contend_ctx *c);
void ring_iterate(contend_ctx *c);
/* The motifs' epoch_of hook: the put or get ring's prepared epoch. */
const contend_rma *ring_epoch(const contend_ctx *c, int *n);
void ring_check(contend_ctx *c);

#endif
