/* io_write: each rank writes its block (block_bytes in transfer_bytes
 * calls) per iteration, to one shared file (N-1) or a file per rank (N-N),
 * through POSIX, MPI-IO (independent or collective) or HDF5.  The file is
 * created in the decompose phase and removed in the cleanup phase.  With
 * --verify the block is read back and checked after each iteration. */
#include "io.h"

static int setup(contend_ctx *c) {
  io_state *s = c->state;
  if (io_setup_common(c, 0))
    return -1;
  s->buf = contend_alloc(c, s->xfer);
  contend_pattern_fill(s->buf, s->xfer, c->rank, 0, 0);
  return 0;
}

static void iterate(contend_ctx *c) {
  io_state *s = c->state;
  io_write_block(c, s, s->fsync_each);
}

static void check(contend_ctx *c) {
  io_state *s = c->state;
  if (!s->fsync_each)
    contend_file_sync(c, s->fh); /* collective back ends: everyone's data is written */
  io_state one = *s;             /* check transfer by transfer through the write buffer */
  one.nxfer = 1;
  for (long t = 0; t < s->nxfer; t++) {
    const unsigned long long off = s->base + (unsigned long long)t * s->xfer;
    contend_file_read_at(c, s->fh, s->buf, s->xfer, off);
    io_check_block(c, &one, s->buf, c->rank, off);
  }
  contend_pattern_fill(s->buf, s->xfer, c->rank, 0, 0); /* the body for the next writes */
}

const contend_motif contend_motif_io_write = {
    .name = "io_write",
    .label = "File write",
    .help = "write block_bytes per rank per iteration: N-1 or N-N, POSIX, MPI-IO or HDF5",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = contend_io_params,
    .state_size = sizeof(io_state),
    .setup = setup,
    .iterate = iterate,
    .check = check,
    .flags = CONTEND_MOTIF_FILE_DATA,
    .cleanup = io_cleanup,
    .validate = io_validate,
};
