/* A simulation process's records for each process between swaps (outbox.h). */
#include "outbox.h"

#include <stdlib.h>

#include "error.h"

void contend_outbox_init(contend_outbox *o, int procs, const char *what) {
  contend_outbox_free(o);
  if (procs <= 0)
    return;
  if (!(o->box = calloc((size_t)procs, sizeof *o->box)))
    contend_fail("out of memory (%s)", what);
  o->procs = procs;
}

void contend_outbox_put(contend_outbox *o, int q, const void *rec, size_t len) {
  if (q < 0 || q >= o->procs)
    contend_fail("internal error: a record for process %d of %d", q, o->procs);
  contend_sb_append(&o->box[q], rec, len);
}

const void *contend_outbox_get(const contend_outbox *o, int q, size_t *len) {
  *len = o->box && q >= 0 && q < o->procs ? o->box[q].len : 0;
  return *len ? o->box[q].s : NULL;
}

void contend_outbox_clear(contend_outbox *o) {
  for (int q = 0; o->box && q < o->procs; q++)
    o->box[q].len = 0;
}

void contend_outbox_free(contend_outbox *o) {
  for (int q = 0; o->box && q < o->procs; q++)
    contend_sb_free(&o->box[q]);
  free(o->box);
  o->box = NULL;
  o->procs = 0;
}
