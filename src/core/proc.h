/* Facts about this process that engines and commands report. */
#ifndef CONTEND_CORE_PROC_H
#define CONTEND_CORE_PROC_H

/* Peak resident memory of this program so far, MiB (VmHWM; getrusage
 * where /proc is missing). */
double contend_peak_rss_mib(void);

#endif
