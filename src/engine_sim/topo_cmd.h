/* `contend topology` (topo_cmd.c): facts about a simulated-fabric
 * topology without simulating it; `contend topology paths` writes the
 * routing's paths between node pairs (the Netscope latency model's input);
 * `contend topology partition` how it splits over processes. */
#ifndef CONTEND_SIM_TOPO_CMD_H
#define CONTEND_SIM_TOPO_CMD_H

/* argv[0] is "topology".  Returns the exit status (2: bad input). */
int contend_topology_main(int argc, char **argv);

/* `contend topology partition` (partition_cmd.c); argv[0] is "partition". */
int contend_topology_partition_main(int argc, char **argv);

#endif
