/* The simulated fabric's parameters, declared once (netparams.c): one
 * table drives `contend sim`'s options, the `--engine sim` run options,
 * --help, validation and the configuration recorded in results; and the
 * three presets (--network).  sim_setup turns parsed values into a built
 * topology, routing and fabric configuration. */
#ifndef CONTEND_SIM_NETPARAMS_H
#define CONTEND_SIM_NETPARAMS_H

#include <stddef.h>

#include "contend/files.h"
#include "contend/param.h"
#include "degrade.h"
#include "net.h"

extern const contend_param_def sim_param_defs[]; /* CONTEND_PARAM_END-terminated */

typedef struct sim_setup {
  sim_topo topo;
  sim_routing *routing;
  sim_net_config net;
  uint64_t eager_bytes;  /* MPI semantics: rendezvous from this size on */
  uint64_t rndv_window;  /* receiver-paced rendezvous: bytes per CTS (0: whole message) */
  int rndv_max_active;   /* rendezvous messages received at once per rank (0: no limit) */
  sim_time mpi_overhead; /* MPI semantics: host time per message sent or received */
  const char *counters;  /* CSV path or NULL */
  sim_time counter_interval;
  uint64_t counters_max_bytes; /* the CSV's bound (--counters-max-mib) */
  const char *preset;          /* "" for none */
  sim_degrade degrade;         /* --degrade, --degrade-random (net.link_scale points into it) */
  double setup_s;              /* wall time of sim_setup_from_params: topology, routing, check */
  double deadlock_check_s;     /* of which the deadlock check */
} sim_setup;

/* Applies the preset named by --network to every row the user did not
 * set, then validates and builds.  Returns 0, or -1 with one line in err
 * (exit status 2).  On success the caller frees with sim_setup_free. */
int sim_setup_from_params(contend_params *p, uint64_t seed, sim_setup *s, char *err, size_t errlen);
void sim_setup_free(sim_setup *s);

/* Registers the files the rows of p name beyond their CONTEND_P_FILE_*
 * rows: the topology.conf of --topology slurm:FILE. */
void sim_params_files(const contend_params *p, contend_files *fs);

/* Names of the presets, comma-separated (help, errors). */
const char *sim_preset_names(void);

#endif
