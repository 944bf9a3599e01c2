/* contend: the files a command reads and writes -- one rule for every C
 * command and every secondary output.
 *
 * Checking (before any work).  A command registers each file it reads
 * (job file, topology.conf, a counter source) and each file it writes
 * (-o, --counters, --throttle-log, ...) with the option that names it,
 * then checks them all at once:
 *   - a path has at most CONTEND_PATH_LEN_MAX characters (an output's
 *     last component at most CONTEND_NAME_LEN_MAX), so that the
 *     temporary beside an output always fits;
 *   - no output is the same file as an input or as another output: the
 *     same device and inode after symbolic links are resolved, or, for a
 *     file not created yet, the same resolved directory and name;
 *   - no path is a symbolic-link loop;
 *   - an input re-read during the run (CONTEND_FILE_POLLED, a counter
 *     source) that exists is a regular file: a FIFO or a device could
 *     block its reader (a missing one is the reader's to report);
 *   - with CONTEND_FILES_CREATE, each output is creatable: a regular file
 *     or nothing yet, in an existing, writable directory, where a
 *     temporary file is created and removed (this names pseudo file
 *     systems such as /proc).
 * A failed check is one line (no newline) naming the option(s) and the
 * path; a path too long to show whole is abbreviated explicitly
 * (contend_path_show), never cut silently.  Existence and readability of
 * ordinary inputs stay with the reader that opens them right after.
 *
 * Writing.  Every output is written through a temporary "PATH.tmp.PID.K"
 * in the target's directory, renamed over PATH at commit: contend_out_*
 * for streams, contend_write_file_atomic for a whole text.  Temporaries
 * not yet committed are removed by contend_out_remove_all, which runs at
 * exit, in contend_die and on a termination signal
 * (contend_catch_termination), so that a failed, refused or ended run
 * leaves no partial or header-only file. */
#ifndef CONTEND_FILES_H
#define CONTEND_FILES_H

#include <stdio.h>

#include "contend/param.h"

/* Room kept for the temporary's suffix (".tmp.PID.K"). */
#define CONTEND_TMP_SUFFIX_MAX 24
/* The longest path a command accepts, and the longest last component of
 * an output (PATH_MAX 4096 and NAME_MAX 255 less the temporary's suffix). */
#define CONTEND_PATH_LEN_MAX (4096 - 1 - CONTEND_TMP_SUFFIX_MAX)
#define CONTEND_NAME_LEN_MAX (255 - CONTEND_TMP_SUFFIX_MAX)
/* Files one command may register. */
#define CONTEND_FILES_MAX 32

enum {
  CONTEND_FILE_POLLED = 1, /* contend_files_input: re-read during the run */
  CONTEND_FILE_DATA = 2,   /* contend_files_data: see there */
  CONTEND_FILE_PLANNED = 4 /* an output this run does not create: not checked for creatability */
};
enum { CONTEND_FILES_CREATE = 1 }; /* contend_files_check flag */

typedef struct contend_file_entry {
  char role[256];   /* the option that names it: "-o/--output", "the job file" */
  const char *path; /* borrowed: must outlive the checks */
  int output, flags;
} contend_file_entry;

typedef struct contend_files {
  contend_file_entry e[CONTEND_FILES_MAX];
  int n;
  int overflow; /* more than CONTEND_FILES_MAX registered (a programming error) */
} contend_files;

void contend_files_init(contend_files *fs);
/* Registers a file read / written under role.  NULL or "" paths are
 * skipped (an option not given). */
void contend_files_input(contend_files *fs, const char *role, const char *path, int flags);
void contend_files_output(contend_files *fs, const char *role, const char *path);
/* Registers a data file the run writes (an I/O motif's): an output like
 * the others, except that data files may name one file among themselves
 * (a job writes a file, then reads it back).  planned: the run only
 * plans or counts it (a dry run, an in-process engine), so it is checked
 * against the other files but not for creatability (its directory may
 * exist only on the machine the job file is meant for). */
void contend_files_data(contend_files *fs, const char *role, const char *path, int planned);
/* Registers every row of p typed CONTEND_P_FILE_IN / CONTEND_P_FILE_OUT
 * whose value is not empty, under the row's option name (--key, and
 * -o/--output for the key output). */
void contend_files_from_params(contend_files *fs, const contend_params *p);
/* Appends the registrations of src to fs. */
void contend_files_add(contend_files *fs, const contend_files *src);

/* The checks above (flags: CONTEND_FILES_CREATE).  Returns 0, or -1 with
 * one line in err. */
int contend_files_check(const contend_files *fs, int flags, char *err, size_t errlen);
/* contend_files_check of the files in extra (NULL: none) and of the
 * CONTEND_P_FILE_* rows of p. */
int contend_files_check_params(const contend_params *p, const contend_files *extra, int flags,
                               char *err, size_t errlen);

/* path for a message: whole when short, else its head and tail with the
 * number of characters between ("/a/b...z.json (6000 characters)"). */
const char *contend_path_show(const char *path, char *buf, size_t len);

/* An output written as a stream through its temporary. */
typedef struct contend_out {
  FILE *f;          /* the temporary, open for writing */
  char *path, *tmp; /* owned */
  char role[256];
  int slot; /* in the list of temporaries removed on a failed exit */
} contend_out;

/* Creates the temporary beside path (mode 0666 less the umask).  Returns
 * 0, or -1 with "ROLE: cannot write 'PATH': reason" in err. */
int contend_out_open(contend_out *o, const char *role, const char *path, char *err, size_t errlen);
/* Flushes, syncs, closes and renames the temporary over the target.
 * Returns 0, or -1 with a message (the temporary is then removed).  The
 * struct is released either way. */
int contend_out_commit(contend_out *o, char *err, size_t errlen);
/* Closes and removes the temporary (a run that failed or was refused);
 * the target is untouched.  Safe on a zeroed or released struct. */
void contend_out_abandon(contend_out *o);
/* Removes every temporary not yet committed or abandoned (only unlink:
 * async-signal-safe).  Runs at exit and in contend_die. */
void contend_out_remove_all(void);

/* Writes text to the -o path through a temporary and rename().  Returns
 * 0, or -1 with "-o/--output: cannot write 'PATH': reason" in err. */
int contend_write_file_atomic(const char *path, const char *text, size_t len, char *err,
                              size_t errlen);
/* Whether a regular file can be created (or replaced) at path, judged
 * from the file system without creating anything: returns 0, or -1 with
 * the reason in why, one phrase without the path itself ("it is a
 * directory, expected a file", "directory 'D' does not exist", "directory
 * 'D' is not writable: ...").  For messages after a failed create too. */
int contend_path_creatable(const char *path, char *why, size_t len);
/* The -o/--output check before a run: contend_files_check of that one
 * output with CONTEND_FILES_CREATE.  Returns 0, or -1 with
 * "-o/--output: cannot write 'PATH': reason" in err.  Leaves no file. */
int contend_check_writable(const char *path, char *err, size_t errlen);

#endif
