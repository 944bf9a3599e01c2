/* Degraded links of the simulated fabric (--degrade, --degrade-random):
 * ground truth for localisation.  A degraded link carries `fraction` of
 * its class's bandwidth in both directions; links are named as the
 * counter CSV names output ports (component:port, the channel leaving
 * that port), and the opposite channel of the same cable is degraded too.
 * Resolved once, before any simulation; the net reads the per-channel
 * bandwidth factors (sim_net_config.link_scale). */
#ifndef CONTEND_SIM_DEGRADE_H
#define CONTEND_SIM_DEGRADE_H

#include <stddef.h>

#include "../fabric/topo.h"

struct contend_json;

/* A router label's buffer (slurm switch names have up to 255 characters). */
#define SIM_LABEL_MAX 256

/* The most links one run may degrade (--degrade items and --degrade-random N). */
#define SIM_DEGRADE_MAX 4096

typedef struct sim_degraded {
  long chan, back; /* the named channel and the opposite one of its link */
  double fraction; /* of the class bandwidth, (0, 1] */
} sim_degraded;

typedef struct sim_degrade {
  double *scale;      /* nports + nnodes bandwidth factors; NULL when nothing is degraded */
  sim_degraded *link; /* the degraded links, in the order given (random ones last) */
  int n;
} sim_degrade;

/* Parses `list` (COMPONENT:PORT=FRACTION items, comma-separated) and
 * `random` ("" or N,FRACTION,SEED[,local|global]: N distinct
 * router-to-router links, of that link class if given, drawn with SEED)
 * against t.  routing names the routing in the refusal of a
 * down link (fraction 0: no routing of the fabric routes around one).
 * Returns 0, or -1 with one line in err (unknown component, port out of
 * range, unconnected port, bad fraction, a link given twice, too many).
 * The caller frees d with sim_degrade_free. */
int sim_degrade_parse(const sim_topo *t, const char *list, const char *random, const char *routing,
                      sim_degrade *d, char *err, size_t errlen);
void sim_degrade_free(sim_degrade *d);
/* Writes "degraded": [{component, port, peer_component, peer_port,
 * fraction}] (nothing when no link is degraded). */
void sim_degrade_json(struct contend_json *j, const sim_topo *t, const sim_degrade *d);

#endif
