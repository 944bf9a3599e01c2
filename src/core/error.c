/* Error reporting: the one way a rank ends the run on a runtime failure,
 * and the cleanup when a signal ends it. */
#include "error.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "contend/files.h"

static void (*g_abort_hook)(void);
static int (*g_rank)(void);
static void (*g_end)(int status);

void contend_set_abort_hook(void (*hook)(void)) { g_abort_hook = hook; }

void contend_set_fail_handler(int (*rank)(void), void (*end)(int status)) {
  g_rank = rank;
  g_end = end;
}

int contend_fail_rank(void) { return g_rank ? g_rank() : -1; }

static void run_abort_hook(void) {
  void (*hook)(void) = g_abort_hook;
  g_abort_hook = NULL; /* once, even if the hook itself fails */
  if (hook)
    hook();
}

static void on_term(int sig) {
  run_abort_hook();
  contend_out_remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

void contend_catch_termination(void) {
  static const int sigs[] = {SIGTERM, SIGINT, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old;
    if (sigaction(sigs[i], NULL, &old) || old.sa_handler != SIG_DFL)
      continue;
    struct sigaction sa = {0};
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(sigs[i], &sa, NULL);
  }
}

void contend_die(void) {
  run_abort_hook();
  contend_out_remove_all(); /* outputs not committed: no partial files */
  fflush(stdout);
  if (g_end)
    g_end(CONTEND_EXIT_FAIL);
  exit(CONTEND_EXIT_FAIL);
}

void contend_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "contend: rank %d: ", contend_fail_rank());
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  contend_die();
}
