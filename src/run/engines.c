/* The engine registry: every engine by name, as `--engine NAME` selects it
 * (IOR-style back ends).  Adding an engine = its files (a const
 * contend_engine with its options and capabilities, contend/world.h), one
 * line here and its sources in CMakeLists.txt.  A part configured out of
 * the build registers a stand-in that says why (src/engine_sim/sim_off.c).
 * The only place that looks engines up by name. */
#include <string.h>

#include "contend/world.h"

extern const contend_engine contend_engine_mpi;
extern const contend_engine contend_engine_trace;
extern const contend_engine contend_engine_sim;

const contend_engine *const contend_engines[] = {&contend_engine_mpi, &contend_engine_trace,
                                                 &contend_engine_sim, NULL};

const contend_engine *contend_engine_registered(const char *name) {
  for (int i = 0; contend_engines[i]; i++)
    if (!strcmp(contend_engines[i]->name, name))
      return contend_engines[i];
  return NULL;
}

const contend_engine *contend_engine_find(const char *name) {
  const contend_engine *e = contend_engine_registered(name);
  return e && !e->not_built ? e : NULL;
}

const contend_engine *contend_engine_for_dry_run(void) {
  for (int i = 0; contend_engines[i]; i++)
    if (contend_engines[i]->dry_run && !contend_engines[i]->not_built)
      return contend_engines[i];
  return NULL;
}
