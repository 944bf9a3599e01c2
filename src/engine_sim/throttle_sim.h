/* The throttle on the simulated fabric (--throttle with --engine sim): the
 * controller of src/throttle/controller.c, one per node, fed every window
 * with the node's NIC injection stall (the share of the window the NIC had
 * a packet and no credit into its leaf router: the paper's nic2hsn; or,
 * --throttle-signal occupancy, the mean share of those credits in use; or
 * blocked, the share of the window the NIC's packet at the head of that
 * router's input buffer waited for the network), and
 * applied as the PMPI library applies it: a delay before each message a
 * rank of the node posts (sim_throttle_delay: ct_pace's reservations, so
 * the node's ranks together send at the node's rate R), on the host side
 * of the simulated NIC.  Pacing the NIC's packets instead
 * does not lower the load of congestors that keep one message in flight
 * (pairwise all-to-all, RMA put incast): it only spaces the packets of
 * that message.  Simulated delays are exact, not whole microseconds (the
 * library's quantization keeps the mean delay; the simulator needs no
 * sleep).
 *
 * A node takes the c_a of the job whose rank it runs (--throttle-ca
 * JOB=C_A,...; one number applies to every node).  Windows are timer
 * events of the engine; they stop being scheduled once the fabric has no
 * other event pending, so a stuck run is still found stuck. */
#ifndef CONTEND_SIM_THROTTLE_H
#define CONTEND_SIM_THROTTLE_H

#include <stddef.h>

#include "../throttle/controller.h"
#include "contend/json.h"
#include "contend/param.h"
#include "net.h"

typedef struct sim_throttle sim_throttle;

/* Reads the throttle rows of the run options (line rate default: the
 * node links' bandwidth; *signal: which --throttle-signal).
 * Returns 0, or -1 with one line in err (exit status 2). */
int sim_throttle_config(const contend_params *opts, double node_gbps, ct_config *cfg, int *signal,
                        char *err, size_t errlen);

/* Starts the controllers of nodes 0..nnodes-1 on net (*out NULL when the
 * mode is off): static pacing at once, AIMD windows from now on (the
 * first timer is set with timer_kind).  ca_spec and log_path are copied.
 * Returns 0, or -1 with err (the log cannot be written). */
int sim_throttle_open(sim_throttle **out, sim_net *net, const ct_config *cfg, int signal,
                      const char *ca_spec, const char *log_path, uint32_t timer_kind, char *err,
                      size_t errlen);
/* Node runs a rank of job (NULL: no job): takes the job's c_a. */
void sim_throttle_bind(sim_throttle *t, int node, const char *job);
/* Delay before a message of `bytes` that a rank on node posts now
 * (ps; 0 when off or not throttled). */
sim_time sim_throttle_delay(sim_throttle *t, int node, uint64_t bytes);
/* The window timer fired: one controller step per node, the next timer. */
void sim_throttle_window(sim_throttle *t);
/* "throttle": {mode, window_us, ..., per job: c_a, mean rate, cuts} */
void sim_throttle_json(const sim_throttle *t, contend_json *j);
/* Frees t (NULL: nothing), renaming the log into place when commit, else
 * removing its temporary (a run that failed).  Returns 0 or -1 with err. */
int sim_throttle_close(sim_throttle *t, int commit, char *err, size_t errlen);

#endif
