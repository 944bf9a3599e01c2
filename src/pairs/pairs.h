/* `contend pairs`: all-pairs bandwidth and latency, mpiGraph's method, on
 * every engine (pairs.c). */
#ifndef CONTEND_PAIRS_H
#define CONTEND_PAIRS_H

/* argv[0] is "pairs"; print: this process writes help and option errors
 * (rank 0 of the launcher).  Returns the exit status (every rank). */
int contend_pairs_main(int argc, char **argv, int print);

#endif
