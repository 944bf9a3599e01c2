/* `contend throttle`: the built-in command that runs a program under the
 * PMPI throttle (see cmd.c). */
#ifndef CONTEND_THROTTLE_CMD_H
#define CONTEND_THROTTLE_CMD_H

#include <stddef.h>

/* argv[0] is "throttle".  Execs the program on success (does not return);
 * returns 0 after --help, 2 on bad input (one message on stderr when
 * verbose), 3 on an internal error. */
int contend_throttle_main(int argc, char **argv, int verbose);

/* The absolute path of libcontend-throttle.so found relative to this
 * binary into out: 0, or -1 (out: where it was expected) when it is
 * missing or the throttle is not built. */
int contend_throttle_library(char *out, size_t len);

#endif
