/* io_read: each rank reads a block per iteration (its own, or with
 * read_shift the block of rank r + read_shift) from one shared file (N-1)
 * or a file per rank (N-N), through POSIX, MPI-IO (independent or
 * collective) or HDF5, and the data are verified after every iteration
 * (untimed).  The decompose phase writes the files; the cleanup phase
 * removes them. */
#include "io.h"

static int setup(contend_ctx *c) {
  io_state *s = c->state;
  if (io_setup_common(c, (int)contend_param_int(c->params, "read_shift")))
    return -1;
  s->buf = contend_alloc(c, s->block);
  contend_pattern_fill(s->buf, s->xfer, c->rank, 0, 0);
  io_write_block(c, s, 1);
  contend_file_close(c, s->fh); /* complete on disk before anyone reads */
  s->fh = -1;
  contend_barrier(c);
  s->read_fh = contend_file_open(c, &s->read_spec);
  return s->read_fh < 0 ? -1 : 0;
}

static void iterate(contend_ctx *c) {
  io_state *s = c->state;
  for (long t = 0; t < s->nxfer; t++)
    contend_file_read_at(c, s->read_fh, s->buf + (size_t)t * s->xfer, s->xfer,
                         s->read_base + (unsigned long long)t * s->xfer);
}

static void check(contend_ctx *c) {
  io_state *s = c->state;
  io_check_block(c, s, s->buf, s->writer, s->read_base);
}

const contend_motif contend_motif_io_read = {
    .name = "io_read",
    .label = "File read",
    .help = "read and verify block_bytes per rank per iteration: N-1 or N-N, POSIX, MPI-IO, HDF5",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = contend_io_params,
    .state_size = sizeof(io_state),
    .setup = setup,
    .iterate = iterate,
    .check = check,
    .cleanup = io_cleanup,
    .validate = io_validate,
    .flags = CONTEND_MOTIF_ALWAYS_CHECK | CONTEND_MOTIF_FILE_DATA,
};
