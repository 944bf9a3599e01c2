/* The registry of routings: every routing the simulated fabric knows, in
 * one table (the first row of a topology kind is its default).  Routing
 * names are parsed here and nowhere else; the names in errors and the
 * routing list of --help are made from the same rows.  A new routing is
 * its sim_routing_def (routing_impl.h) plus two lines below: its
 * declaration and its row. */
#include <stdio.h>
#include <string.h>

#include "contend/strbuf.h"
#include "routing_impl.h"

/* The routings, by family (routing_switch.c, routing_tree.c,
 * routing_dragonfly.c). */
extern const sim_routing_def sim_routing_switch_minimal;
extern const sim_routing_def sim_routing_tree_dmodk, sim_routing_tree_random,
    sim_routing_tree_adaptive, sim_routing_tree_dmodk_adaptive;
extern const sim_routing_def sim_routing_df_minimal, sim_routing_df_valiant, sim_routing_df_ugal,
    sim_routing_df_ugal_g, sim_routing_df_par;

/* One routing a line. */
/* clang-format off */
static const sim_routing_def *const registry[] = {
    &sim_routing_switch_minimal,
    &sim_routing_tree_dmodk, /* fat trees' default */
    &sim_routing_tree_random,
    &sim_routing_tree_adaptive,
    &sim_routing_tree_dmodk_adaptive,
    &sim_routing_df_minimal, /* dragonfly's default */
    &sim_routing_df_valiant,
    &sim_routing_df_ugal,
    &sim_routing_df_ugal_g,
    &sim_routing_df_par,
};
/* clang-format on */
#define NREG (sizeof registry / sizeof registry[0])

/* The topology families, as --help lists them. */
static const struct {
  const char *what;
  sim_topo_kind kind;
} families[] = {{"switch", SIM_TOPO_SWITCH},
                {"fat trees (fattree, xgft, slurm)", SIM_TOPO_XGFT},
                {"dragonfly", SIM_TOPO_DRAGONFLY}};

const sim_routing_def *sim_routing_lookup(sim_topo_kind kind, const char *name) {
  for (size_t i = 0; i < NREG; i++)
    if ((registry[i]->kinds & SIM_KIND(kind)) &&
        (!name || !*name || !strcmp(name, registry[i]->name)))
      return registry[i];
  return NULL;
}

const char *sim_routing_names(sim_topo_kind kind) {
  static char names[SIM_TOPO_TREE + 1][256];
  if ((unsigned)kind > SIM_TOPO_TREE)
    return "";
  char *b = names[kind];
  if (!b[0])
    for (size_t i = 0, o = 0; i < NREG; i++)
      if (registry[i]->kinds & SIM_KIND(kind))
        o += (size_t)snprintf(b + o, sizeof names[0] - o, "%s%s", o ? "," : "", registry[i]->name);
  return b;
}

void sim_routing_help(contend_strbuf *out) {
  for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
    contend_sb_printf(out, "  %s (default %s):\n", families[f].what,
                      sim_routing_lookup(families[f].kind, NULL)->name);
    for (size_t i = 0; i < NREG; i++)
      if (registry[i]->kinds & SIM_KIND(families[f].kind))
        contend_sb_printf(out, "    %-15s %s\n", registry[i]->name, registry[i]->help);
  }
}
