/* The registry of router models (router.h): one line per model. */
#include "router.h"

#include "contend/json.h"
#include "net.h"

#include <stdio.h>
#include <string.h>

static const sim_router_model *const models[] = {&sim_router_iq, &sim_router_voq, &sim_router_oq};
#define NMODELS (sizeof models / sizeof models[0])

const sim_router_model *sim_router_find(const char *name) {
  for (size_t i = 0; i < NMODELS; i++)
    if (!strcmp(models[i]->name, name))
      return models[i];
  return NULL;
}

const sim_router_model *sim_router_default(void) { return &sim_router_iq; }

const char *sim_router_names(void) {
  static char names[128];
  if (!names[0])
    for (size_t i = 0; i < NMODELS; i++) {
      const size_t len = strlen(names);
      snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", models[i]->name);
    }
  return names;
}

void sim_router_resolve(struct sim_net_config *cfg) {
  const sim_router_model *rm = cfg->router;
  if (!cfg->speedup)
    cfg->speedup = rm->speedup ? rm->speedup : 1;
  if (!cfg->output_buffer_bytes && rm->output_packets)
    cfg->output_buffer_bytes = rm->output_packets * (cfg->mtu + cfg->header);
}

void sim_router_json(struct contend_json *j, const struct sim_net_config *cfg) {
  const sim_router_model *rm = cfg->router ? cfg->router : sim_router_default();
  contend_json_str(j, "router", rm->name);
  if (rm->speedup)
    contend_json_int(j, "speedup", (int64_t)cfg->speedup);
  if (rm->output_packets)
    contend_json_int(j, "output_buffer_bytes", (int64_t)cfg->output_buffer_bytes);
}
