/* Facts about this process that engines and commands report. */
#ifndef CONTEND_CORE_PROC_H
#define CONTEND_CORE_PROC_H

/* Peak resident memory of this program so far, MiB (VmHWM; getrusage
 * where /proc is missing). */
double contend_peak_rss_mib(void);

/* The number of processes an MPI launcher (mpirun, mpiexec, srun) started
 * together with this one, read from the environment it sets (Open MPI,
 * MPICH/Hydra, PMIx, Slurm's PMI); 1 when none did.  Needs no MPI. */
int contend_launcher_size(void);

/* Seconds on CLOCK_MONOTONIC: for wall-time intervals that commands and
 * engines report (not the engine's own clock, which motifs read). */
double contend_monotonic_s(void);

#endif
