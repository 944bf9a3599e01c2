#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int world_rank(void) {
  int init = 0, fin = 0, r = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static void (*g_abort_hook)(void);

void contend_set_abort_hook(void (*hook)(void)) { g_abort_hook = hook; }

static void die(void) __attribute__((noreturn));
static void die(void) {
  void (*hook)(void) = g_abort_hook;
  g_abort_hook = NULL; /* once, even if the hook itself fails */
  if (hook)
    hook();
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  fflush(stdout);
  if (init && !fin)
    MPI_Abort(MPI_COMM_WORLD, CONTEND_EXIT_FAIL);
  exit(CONTEND_EXIT_FAIL);
}

void contend_mpi_fail(const char *file, int line, const char *call, int rc) {
  char msg[MPI_MAX_ERROR_STRING] = "";
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fprintf(stderr, "contend: rank %d: %s:%d: %s failed: %s\n", world_rank(), file, line, call, msg);
  die();
}

void contend_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "contend: rank %d: ", world_rank());
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  die();
}
