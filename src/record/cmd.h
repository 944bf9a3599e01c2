/* `contend record`: the built-in command that runs a program under the
 * PMPI recorder and writes an OTF2 archive (see cmd.c). */
#ifndef CONTEND_RECORD_CMD_H
#define CONTEND_RECORD_CMD_H

/* argv[0] is "record".  first: this is the launcher's first rank (it alone
 * checks that the archive does not exist yet, and prints).  Execs the
 * program on success (does not return); returns 0 after --help, 2 on bad
 * input (one message on stderr when first). */
int contend_record_main(int argc, char **argv, int first);

#endif
