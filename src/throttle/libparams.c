/* The PMPI library's parameter rows and their environment variables
 * (see libparams.h). */
#include "libparams.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contend/files.h"
#include "params.h"

const contend_param_def ct_lib_param_defs[] = {
    {"throttle_source", CONTEND_P_STRING, "auto", "",
     "where the library reads the node's injection stall (one process per node): auto (the "
     "first readable of ib, cxi; else off with one warning) | ib:HCA:PORT (port_xmit_wait) | "
     "cxi:DEV (hni_tx_paused_*) | cluster[:IF] (the emulated cluster's egress queue of IF, "
     "default eth0) | file:PATH (a cumulative stall time in ns)",
     1, 0},
    {"throttle_seed", CONTEND_P_SEED, "time", "",
     "seed of the probabilistic delays (rank r uses stream r); printed at start when a log is "
     "written",
     1, 0},
    {"throttle_tick_ns", CONTEND_P_DOUBLE, "4", "ns",
     "length of one port_xmit_wait tick (ib source; docs/telemetry.md: 4 ns is the IBA symbol "
     "time at SDR, adapters differ)",
     1e-6, 1e6},
    {"throttle_sysfs_root", CONTEND_P_STRING, "/sys", "path",
     "where the ib and cxi sources find class/infiniband and class/cxi (tests use fixture trees)",
     1, 0},
    {"throttle_job", CONTEND_P_STRING, "", "",
     "this job's name, to pick its c_a from --throttle-ca JOB=C_A,...", 1, 0},
    CONTEND_PARAM_END};

contend_param_def *ct_all_param_defs(void) {
  return contend_param_defs_join(ct_param_defs, ct_lib_param_defs);
}

void ct_env_name(const char *key, char *out, size_t len) {
  size_t n = (size_t)snprintf(out, len, "CONTEND_%s", key);
  for (size_t i = 8; i < n && i < len; i++)
    out[i] = (char)toupper((unsigned char)out[i]);
}

int ct_files_check(const contend_params *p, int env, int flags, char *err, size_t errlen) {
  const char *src = contend_param_str(p, "throttle_source");
  contend_files fs;
  contend_files_init(&fs);
  contend_files_input(&fs,
                      env ? "CONTEND_THROTTLE_SOURCE=file:PATH" : "--throttle-source file:PATH",
                      strncmp(src, "file:", 5) ? NULL : src + 5, env ? 0 : CONTEND_FILE_POLLED);
  contend_files_output(&fs, env ? "CONTEND_THROTTLE_LOG" : "--throttle-log",
                       contend_param_str(p, "throttle_log"));
  return contend_files_check(&fs, flags, err, errlen);
}

int ct_params_from_env(contend_params *p, char *err, size_t errlen) {
  for (size_t i = 0; i < p->n; i++) {
    char name[96], why[512];
    ct_env_name(p->defs[i].key, name, sizeof name);
    const char *v = getenv(name);
    if (v && contend_params_set(p, (int)i, v, why, sizeof why)) {
      snprintf(err, errlen, "%s=%s: %s", name, v, why);
      return -1;
    }
  }
  return 0;
}
