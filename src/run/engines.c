/* The engine registry: every engine by name, as `--engine NAME` selects it
 * (IOR-style back ends).  Adding an engine = its files + one line here. */
#include <string.h>

#include "contend/world.h"

extern const contend_engine contend_engine_mpi;
extern const contend_engine contend_engine_trace;
#ifndef CONTEND_NO_SIM
extern const contend_engine contend_engine_sim;
#endif

const contend_engine *const contend_engines[] = {&contend_engine_mpi, &contend_engine_trace,
#ifndef CONTEND_NO_SIM
                                                 &contend_engine_sim,
#endif
                                                 NULL};

const contend_engine *contend_engine_find(const char *name) {
  for (int i = 0; contend_engines[i]; i++)
    if (!strcmp(contend_engines[i]->name, name))
      return contend_engines[i];
  return NULL;
}
