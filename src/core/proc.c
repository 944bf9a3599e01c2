/* Facts about this process (see proc.h). */
#include "proc.h"

#include <sys/resource.h>

double contend_peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0; /* Linux: KiB */
}
