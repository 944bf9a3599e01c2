/* File I/O motifs (io_write, io_read): shared parameters, file layout and
 * data pattern.  Layout shared (N-1): one file, rank r's block at offset
 * r x block_bytes; per_rank (N-N): one file per rank, its block at 0.  A
 * block moves in block_bytes / transfer_bytes transfers.  Each transfer's
 * first 8 bytes stamp its writer and file offset, the rest is the writer's
 * pattern, so a read checks that the right data sits at the right place. */
#ifndef CONTEND_MOTIFS_IO_H
#define CONTEND_MOTIFS_IO_H

#include "workload.h"

extern const contend_param_def contend_io_params[];

/* The longest {job} and {run} (job names and run ids of src/jobs/jobs.h
 * are shorter: 63 characters at most) */
#define IO_JOB_NAME_MAX 64
#define IO_RUN_ID_MAX 64

typedef struct io_state {
  contend_io_spec spec;      /* this rank's file (create) */
  contend_io_spec read_spec; /* io_read: the file it reads (may be another rank's) */
  char path[1024], read_path[1024];
  int fh, read_fh;
  size_t block, xfer;
  long nxfer;
  int writer;                   /* io_read: whose block this rank reads */
  unsigned long long base;      /* offset of this rank's block in its file */
  unsigned long long read_base; /* offset of the block it reads */
  int fsync_each, keep;
  unsigned char *buf; /* write: one transfer; read: the whole block */
} io_state;

int io_validate(const contend_params *p, int nranks, char *err, size_t errlen);
/* Resolves the layout and the paths (read_shift: whose block this rank
 * reads back, io_read) and opens this rank's file for writing
 * (collective).  Returns 0 or -1 (reason in c->error). */
int io_setup_common(contend_ctx *c, int read_shift);
/* Writes this rank's block from s->buf (one transfer, body already
 * filled; word 0 is stamped per transfer), then syncs if asked. */
void io_write_block(contend_ctx *c, io_state *s, int sync);
/* Verifies one block read into buf, written by rank `writer` at `base`. */
void io_check_block(contend_ctx *c, const io_state *s, unsigned char *buf, int writer,
                    unsigned long long base);
/* Closes what is open and removes this rank's file unless keep=1.
 * Collective. */
void io_cleanup(contend_ctx *c);

#endif
