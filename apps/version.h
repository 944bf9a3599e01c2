/* `contend version` (version.c). */
#ifndef CONTEND_APP_VERSION_H
#define CONTEND_APP_VERSION_H

/* argv[0] is "version" or "--version".  Prints the version report (or the
 * command's help after --help) on stdout when print (the launcher's rank
 * 0); returns the exit status (2: an argument other than --help, said
 * once). */
int contend_version_main(int argc, char **argv, int print);

/* 1 when the optional part ("sim", "throttle", "hdf5") is built. */
int contend_part_built(const char *part);

#endif
