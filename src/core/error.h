/* contend: error reporting and exit statuses (no MPI: the engine that runs
 * the ranks registers how to name the failing rank and how to end the run).
 *
 * Exit statuses: 0 success; 1 --verify found corrupted data; 2 bad input
 * (usage, values, too few nodes, unwritable output); 3 runtime failure. */
#ifndef CONTEND_ERROR_H
#define CONTEND_ERROR_H

enum {
  CONTEND_EXIT_OK = 0,
  CONTEND_EXIT_VERIFY = 1,
  CONTEND_EXIT_USAGE = 2,
  CONTEND_EXIT_FAIL = 3
};

/* A function run once just before a failing rank aborts the run (e.g. to
 * remove the files it created); NULL clears it.  Not thread-safe. */
void contend_set_abort_hook(void (*hook)(void));

/* Set by the engine that runs the ranks: rank() names the calling rank in
 * messages (-1: unknown), end(status) ends the whole run (MPI_Abort, or
 * exit for engines that play every rank in one process).  NULLs restore
 * the defaults (rank -1, exit). */
void contend_set_fail_handler(int (*rank)(void), void (*end)(int status));

/* Prints "contend: rank R: message" and ends the run with status 3. */
void contend_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* The rank named in messages (the registered rank(), or -1). */
int contend_fail_rank(void);

/* Runs the abort hook (once), removes the outputs not yet committed
 * (contend_out_remove_all) and ends the run with status 3 (after a
 * message the caller printed itself). */
void contend_die(void) __attribute__((noreturn));

/* Takes SIGTERM, SIGINT and SIGHUP where nothing else has (a handler set
 * before, or the signal ignored as under nohup, is left as it is).  The
 * handler does what contend_die does but end the run: runs the abort
 * hook (hooks must be async-signal-safe), removes the outputs not yet
 * committed, then ends the process as the signal would have (a batch
 * system's time limit sends SIGTERM, then SIGKILL).  Idempotent; the
 * first tracked output calls it, the MPI engine at MPI_Init. */
void contend_catch_termination(void);

#endif
