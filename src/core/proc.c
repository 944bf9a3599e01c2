/* Facts about this process (see proc.h). */
#include "proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

double contend_peak_rss_mib(void) {
  /* VmHWM: this program's own peak.  getrusage's ru_maxrss keeps the
   * peak of the process that forked it across exec (a launcher's RSS,
   * as a Python driver's, would be reported as ours); it is only the
   * fallback where /proc is missing.  No scanf: every in-process rank
   * calls this on its small stack. */
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kib = -1;
  while (f && kib < 0 && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6))
      kib = strtol(line + 6, NULL, 10);
  if (f)
    fclose(f);
  if (kib >= 0)
    return (double)kib / 1024.0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}

int contend_launcher_size(void) {
  /* SLURM_STEP_NUM_TASKS: srun's tasks (with PMIx, srun sets no *_SIZE;
   * a batch script's own step has no such variable) */
  static const char *const vars[] = {
      "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
      "SLURM_STEP_NUM_TASKS", NULL};
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    const int n = v ? atoi(v) : 0;
    if (n > 1)
      return n;
  }
  return 1;
}

double contend_monotonic_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
