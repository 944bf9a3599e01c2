/* `contend topology` (topo_cmd.c): facts about a simulated-fabric
 * topology without simulating it; `contend topology paths` writes the
 * routing's paths between node pairs (the Netscope latency model's input);
 * `contend topology partition` how it splits over processes. */
#ifndef CONTEND_SIM_TOPO_CMD_H
#define CONTEND_SIM_TOPO_CMD_H

#include "netparams.h"

/* argv[0] is "topology".  Returns the exit status (2: bad input). */
int contend_topology_main(int argc, char **argv);

/* `contend topology partition` (partition_cmd.c); argv[0] is "partition". */
int contend_topology_partition_main(int argc, char **argv);

/* A `contend topology NAME` subcommand over the fabric's options: its rows
 * joined to the fabric's (netparams.c), parsed from argv; the fabric built
 * with the row "seed"; the files the options name checked (-o never over
 * an input).  sim_topology_cmd_open returns -1 when the fabric is built
 * (c->p and c->su valid: the caller ends with sim_topology_cmd_close),
 * else the exit status, everything freed: 0 after --help (help(p)
 * printed), 2 after a usage error (sim_topology_cmd_usage printed). */
typedef struct sim_topology_cmd {
  const char *name; /* "paths", "partition" */
  contend_param_def *defs;
  contend_params p;
  sim_setup su;
} sim_topology_cmd;
int sim_topology_cmd_open(sim_topology_cmd *c, const char *name, const contend_param_def *rows,
                          void (*help)(const contend_params *), int argc, char **argv);
void sim_topology_cmd_close(sim_topology_cmd *c);
/* Prints "contend topology NAME: error: MSG (see ... --help)"; returns 2. */
int sim_topology_cmd_usage(const sim_topology_cmd *c, const char *msg);

#endif
