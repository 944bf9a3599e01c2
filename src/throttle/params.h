/* The throttle's parameters, declared once (ct_param_defs): the same rows
 * are the simulator's --throttle* options (contend jobs/network/load
 * --engine sim), the PMPI library's CONTEND_THROTTLE* environment
 * variables (key upper-cased, CONTEND_ prefixed: throttle_window_us is
 * CONTEND_THROTTLE_WINDOW_US), `contend throttle --help` and the
 * configuration recorded in the results. */
#ifndef CONTEND_THROTTLE_PARAMS_H
#define CONTEND_THROTTLE_PARAMS_H

#include <stddef.h>

#include "contend/param.h"
#include "controller.h"

extern const contend_param_def ct_param_defs[];

/* What the rows do as run options of the simulated engine, for the
 * refusal with another engine (contend_engine_options.what). */
#define CT_PARAM_WHAT "throttles the simulated NICs (on real MPI: contend throttle -- APP)"

/* Fills c from the rows of ct_param_defs found in p (mode, window, gain,
 * increase, floor, threshold, line rate; c_a when one number is given,
 * else ca_per_job and each job's from ct_ca_for).
 * line_default_gbps is used when throttle_line_gbps is 0.  Returns 0, or
 * -1 with one line in err. */
int ct_config_from_params(const contend_params *p, double line_default_gbps, ct_config *c,
                          char *err, size_t errlen);

/* c_a for a job from a throttle_ca value: "C" (every job), or
 * "JOB=C,JOB=C,..." (jobs not named: 0; job may be NULL outside jobs
 * runs).  Returns 0, or -1 with one line in err (malformed, negative, not
 * a number).  With job NULL it only validates. */
int ct_ca_for(const char *spec, const char *job, double *ca, char *err, size_t errlen);

#endif
