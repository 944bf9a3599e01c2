/* `contend sim` (sim_cmd.c): synthetic traffic on the simulated fabric. */
#ifndef CONTEND_SIM_CMD_H
#define CONTEND_SIM_CMD_H

/* argv[0] is "sim".  Returns the exit status (2: bad input, before any
 * simulation starts). */
int contend_sim_main(int argc, char **argv);

#endif
