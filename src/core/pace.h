/* Paced busy waits: compute steps that keep their total on a shared host.
 *
 * A busy wait against a deadline overruns it whenever the rank is
 * descheduled across its end; for steps far shorter than the scheduler's
 * time slice (a recorded program's gaps between MPI calls: tenths of a
 * millisecond) nearly every preemption is added to the step whole.
 * contend_pace_busy carries the overrun to the next steps of the same
 * pace instead (they are shortened by it, down to zero), so that a
 * sequence of steps lasts its sum plus at most the last overrun, as the
 * program whose gaps were recorded (their wall time already holds the
 * time that program was descheduled) spent them. */
#ifndef CONTEND_CORE_PACE_H
#define CONTEND_CORE_PACE_H

/* Per sequence of steps (e.g. per context); zero it to start. */
typedef struct contend_pace {
  double debt; /* seconds the steps so far ran past their total */
} contend_pace;

/* Busy-waits on clock now (seconds) for `seconds` less p's debt; the time
 * it ran past its end becomes the debt.  Returns the time it waited (0
 * when the debt covered the step: the clock is then not read). */
double contend_pace_busy(contend_pace *p, double seconds, double (*now)(void));

#endif
