/* The records one process of a simulation over several processes has for
 * each process (itself included), gathered between two swaps: a growable
 * byte buffer per process.  Used by the control plane (inproc_procs.c),
 * simulated MPI (sim_mpi.c), the engine's figures (engine_par.c) and the
 * fabric's parts (net_part.c); sim_par.c swaps them.  Zero-initialised: no
 * boxes (every get gives nothing).  Not thread-safe. */
#ifndef CONTEND_CORE_OUTBOX_H
#define CONTEND_CORE_OUTBOX_H

#include <stddef.h>

#include "contend/strbuf.h"

typedef struct contend_outbox {
  contend_strbuf *box; /* per process */
  int procs;
} contend_outbox;

/* procs empty boxes; ends the run naming what when out of memory.  Frees
 * what o held before. */
void contend_outbox_init(contend_outbox *o, int procs, const char *what);
/* Appends len bytes to process q's box. */
void contend_outbox_put(contend_outbox *o, int q, const void *rec, size_t len);
/* Process q's records and their length (NULL and 0: none, or q out of
 * range); valid until the next put or clear. */
const void *contend_outbox_get(const contend_outbox *o, int q, size_t *len);
/* Empties every box (keeps their memory for the next window). */
void contend_outbox_clear(contend_outbox *o);
/* Frees the boxes; o is then empty. */
void contend_outbox_free(contend_outbox *o);

#endif
