/* Finding a library contend ships (the PMPI throttle, the recorder) next
 * to the running binary, and running a program with it preloaded: one rule
 * for every command that preloads one. */
#ifndef CONTEND_CORE_LIBPATH_H
#define CONTEND_CORE_LIBPATH_H

#include <stddef.h>

/* The absolute path of library `name` (e.g. "libcontend-record.so") into
 * out: looked for in BIN/../lib, BIN/../lib64, BIN/../<install libdir>
 * and BIN/../lib/contend, BIN being the directory of this binary (the
 * build tree and an installed prefix, copied or not).  Returns 0, or -1
 * with out set to where it was expected. */
int contend_library_path(const char *name, char *out, size_t len);

struct contend_params;
/* The command line of a command that runs a program: options up to "--",
 * parsed into p, then the program and its arguments.  Returns 1 for --help,
 * 0 with *prog the index of the program in argv, or -1 with one line in
 * err (a bad option; no "--"; nothing after it: "the program to `what`"). */
int contend_parse_program_argv(struct contend_params *p, int argc, char **argv, const char *what,
                               int *prog, char *err, size_t errlen);

/* Puts library lib first in LD_PRELOAD (keeping what is there) and execs
 * argv[0] with argv (PATH searched).  Returns only on failure: -1, errno
 * set. */
int contend_exec_preloaded(const char *lib, char **argv);

#endif
