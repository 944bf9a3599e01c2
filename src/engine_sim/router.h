/* Router models of the simulated fabric, chosen by name (--router): what
 * happens to a packet between its arrival at a router input and its start
 * on an output link.  Each model is one file (router_iq.c, router_voq.c,
 * router_oq.c) exporting a const sim_router_model; router.c lists them.
 * net.c owns channels, wires, credits and NICs and calls a model only
 * through these hooks.  Models share net.c's state (net_impl.h) and keep
 * their own in n->rm. */
#ifndef CONTEND_SIM_ROUTER_H
#define CONTEND_SIM_ROUTER_H

#include <stddef.h>
#include <stdint.h>

struct sim_net;
struct sim_net_config;

typedef struct sim_router_model {
  const char *name;
  const char *help; /* one line: where packets wait, how they are scheduled */
  /* The model's own defaults, used where the user gave 0: --speedup (0:
   * the option does not apply to the model) and --output-buffer-bytes in
   * packets of mtu + header (0: the model has no output buffers). */
  uint32_t speedup;
  uint32_t output_packets;
  /* The UGAL bias toward the minimal path (--ugal-threshold-bytes -1), in
   * input buffers of one VC (--buffer-bytes): how much more a minimal
   * path's queue must hold before a non-minimal path wins. */
  uint32_t ugal_bias_buffers;
  /* Validates the model's parameters against the topology and routing
   * (sizes, bounds): 0, or -1 with one line in err.  NULL: nothing to check. */
  int (*check)(const struct sim_net_config *cfg, char *err, size_t errlen);
  /* Allocates the model's state into n->rm (the net is built but no
   * packet has moved); out-of-memory is fatal.  NULL: no state. */
  void (*init)(struct sim_net *n);
  void (*free)(struct sim_net *n); /* frees n->rm; NULL: nothing */
  /* Packet p has arrived (head in, router latency spent) at the router
   * input fed by channel c, on VC n->pkt[p].vc; the input buffer's credits
   * for it were taken by the upstream sender. */
  void (*arrive)(struct sim_net *n, uint32_t c, uint32_t p);
  /* An EV_ARB event of router output channel oc fired: the link may be
   * free, credits may have come back. */
  void (*arbitrate)(struct sim_net *n, uint32_t oc);
  /* An EV_ROUTER event the model scheduled fired (id is the model's).
   * NULL: the model schedules none. */
  void (*event)(struct sim_net *n, uint32_t id);
  /* A hint: an event (EV_ARRIVE or EV_ARB) of channel c comes soon;
   * prefetch the model's state it reads.  stage 0: far ahead (the
   * channel's own state is not in cache yet: touch only arrays indexed by
   * c); stage 1: nearer (the channel's state may be read).  Also, far
   * ahead only, the model's own EV_ROUTER events (c: the event's id).
   * NULL: none. */
  void (*prefetch)(const struct sim_net *n, uint32_t c, uint32_t kind, int stage);
  /* A hint: packet p, the next to arrive on router-bound channel c, will
   * likely leave by local output port op; prefetch the model's state of
   * the arrival.  Called a few events ahead at any fabric size (the
   * packet is in cache).  NULL: none. */
  void (*prefetch_arrival)(const struct sim_net *n, uint32_t c, uint32_t p, int op);
  /* Bytes queued for or held downstream of router's local output port
   * (the occupancy adaptive routings read, sim_occ_fn). */
  uint32_t (*occupancy)(void *net, int router, int port);
} sim_router_model;

/* The model called name, or NULL. */
const sim_router_model *sim_router_find(const char *name);
/* The default model (iq). */
const sim_router_model *sim_router_default(void);
/* Fills cfg's router parameters left 0 with cfg->router's defaults (the
 * model must be set; mtu and header read). */
void sim_router_resolve(struct sim_net_config *cfg);
/* Writes "router" and the model's resolved parameters ("speedup",
 * "output_buffer_bytes" where the model has them) into the open object. */
struct contend_json;
void sim_router_json(struct contend_json *j, const struct sim_net_config *cfg);
/* Names of the models, comma-separated (help, errors). */
const char *sim_router_names(void);

extern const sim_router_model sim_router_iq, sim_router_voq, sim_router_oq;

#endif
