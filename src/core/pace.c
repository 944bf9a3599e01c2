/* Paced busy waits (pace.h). */
#include "pace.h"

double contend_pace_busy(contend_pace *p, double seconds, double (*now)(void)) {
  if (!(seconds > 0))
    return 0;
  const double want = seconds - p->debt;
  if (want <= 0) { /* paid by earlier overruns */
    p->debt = -want;
    return 0;
  }
  const double t0 = now(), end = t0 + want;
  double t;
  while ((t = now()) < end) {
  }
  p->debt = t - end;
  return t - t0;
}
