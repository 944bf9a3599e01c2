/* The PMPI library's own parameters (ct_lib_param_defs: counter source,
 * seed, tick length, sysfs root, job name), beside the controller's rows
 * in ct_param_defs, and the reading of both from the environment:
 * CONTEND_ + the upper-cased key (throttle_source -> CONTEND_THROTTLE_SOURCE).
 * `contend throttle` takes the same rows as options and sets these
 * variables. */
#ifndef CONTEND_THROTTLE_LIBPARAMS_H
#define CONTEND_THROTTLE_LIBPARAMS_H

#include <stddef.h>

#include "contend/param.h"

extern const contend_param_def ct_lib_param_defs[];

/* A new table: ct_param_defs then ct_lib_param_defs.  The caller frees it
 * (free()) after the contend_params made from it. */
contend_param_def *ct_all_param_defs(void);

/* The environment variable of a key ("CONTEND_THROTTLE_WINDOW_US"). */
void ct_env_name(const char *key, char *out, size_t len);

/* Sets every row of p whose variable is in the environment.  Returns 0, or
 * -1 with one line in err naming the variable, its value and what is
 * valid. */
int ct_params_from_env(contend_params *p, char *err, size_t errlen);

/* contend_files_check (flags) of the throttle's files: the counter source
 * of throttle_source file:PATH (re-read every window: a FIFO or a device
 * is refused) and the log throttle_log, named by their options (env 0:
 * --throttle-source) or variables (env 1: CONTEND_THROTTLE_SOURCE; the
 * library, whose source reader refuses a file that is not regular itself
 * with the throttle off: there the source only counts against the log).
 * Returns 0, or -1 with one line in err. */
int ct_files_check(const contend_params *p, int env, int flags, char *err, size_t errlen);

#endif
