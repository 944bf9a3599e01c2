/* `contend sim` (sim_cmd.c): synthetic traffic on the simulated fabric. */
#ifndef CONTEND_SIM_CMD_H
#define CONTEND_SIM_CMD_H

#include <stddef.h>

#include "contend/param.h"
#include "netparams.h"
#include "synth.h"

/* What `contend sim`'s options describe, parsed and checked; owned by the
 * struct (sim_cmd_args_free, also after a failed parse). */
typedef struct sim_cmd_args {
  contend_param_def *defs;
  contend_params p;
  int have_params, have_setup;
  double *loads; /* --load, or the --sweep points */
  int nloads;
  sim_setup su; /* the fabric (--topology, --routing, ...) */
  synth_spec spec;
} sim_cmd_args;

/* Parses argv (argv[0] is "sim"): 0 ready to run, 1 --help asked, -1 bad
 * input, -2 internal error (message in err).  Builds the fabric (reading a
 * topology file the options name) but writes no file. */
int sim_cmd_parse(sim_cmd_args *a, int argc, char **argv, char *err, size_t errlen);
void sim_cmd_args_free(sim_cmd_args *a);

/* argv[0] is "sim".  Returns the exit status (2: bad input, before any
 * simulation starts). */
int contend_sim_main(int argc, char **argv);

#endif
