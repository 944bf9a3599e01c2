/* lammps_like: the communication skeleton of a LAMMPS molecular-dynamics
 * time step (Lennard-Jones liquid, spatial decomposition), medium delay
 * sensitivity.  Every rank owns `atoms` atoms in a cubic subdomain of side
 * L = cbrt(atoms / density) (weak scaling) on a periodic px x py x pz
 * process grid.  One step:
 *   forward communication: ghost-atom positions to the 6 neighbours in
 *     three stages, x then y then z, each waited for before the next (as
 *     LAMMPS's swaps: the y faces carry the x ghosts, the z faces both), so
 *     a face holds round(density x cutoff x A) atoms of atom_bytes, with
 *     A = L^2 (x), L (L + 2 cutoff) (y), (L + 2 cutoff)^2 (z);
 *   force computation: atom_time per owned atom;
 *   reverse communication (newton=1): ghost forces back, z then y then x,
 *     the same sizes;
 *   thermo output every thermo_every steps (step numbers counted from 1
 *     within an invocation): an allreduce of thermo_count doubles.
 * Faces of tens of KiB and a compute-heavy step: bandwidth matters more
 * than latency, and compute dilutes both. */
#include <math.h>
#include <stdio.h>

#include "allreduce_kernel.h"
#include "halo.h"

typedef struct {
  halo_state fwd, rev;
  int newton;
  long thermo_every;
  contend_allreduce_kernel thermo;
  double compute_s;
} state;

static const contend_param_def params[] = {
    WL_ITERS(4),
    {"atoms", CONTEND_P_INT, "32000", "count", "atoms owned by each rank", 1, 1e9},
    {"density", CONTEND_P_DOUBLE, "0.8442", "atoms/sigma^3",
     "number density (0.8442: LAMMPS's LJ melt benchmark)", 1e-6, 1e6},
    {"cutoff", CONTEND_P_DOUBLE, "2.8", "sigma",
     "ghost cutoff: force cutoff + neighbour skin (2.5 + 0.3)", 1e-6, 1e6},
    {"atom_bytes", CONTEND_P_INT, "24", "B",
     "bytes per ghost atom and message (24: 3 doubles, position or force)", 1, 1 << 20},
    {"newton", CONTEND_P_BOOL, "1", "",
     "reverse communication of ghost forces after the force step", 1, 0},
    HALO_PROXY_PGRID,
    {"atom_time", CONTEND_P_DOUBLE, "200e-9", "s",
     "force compute per owned atom and step (200 ns x 32000 atoms = 6.4 ms per step)", 0, 1},
    {"thermo_every", CONTEND_P_INT, "2", "steps",
     "thermo output (an allreduce) every this many steps (0: never)", 0, 1e9},
    {"thermo_count", CONTEND_P_INT, "4", "count", "doubles in the thermo allreduce", 1, 1 << 20},
    CONTEND_PARAM_END};

static double side(const contend_params *p) {
  return cbrt((double)contend_param_int(p, "atoms") / contend_param_double(p, "density"));
}

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  const double l = side(p), rc = contend_param_double(p, "cutoff");
  if (rc > l) {
    snprintf(err, errlen,
             "cutoff=%g sigma exceeds the subdomain side %.3g sigma (atoms=%lld at density=%g): "
             "ghosts would come from beyond the next rank; give more atoms per rank",
             rc, l, (long long)contend_param_int(p, "atoms"), contend_param_double(p, "density"));
    return -1;
  }
  return halo_grid_validate(p, nranks, 3, err, errlen);
}

static int setup(contend_ctx *c) {
  state *s = c->state;
  const contend_params *p = c->params;
  int dims[3];
  if (halo_grid_of(p, c->size, 3, dims, c->error, sizeof c->error))
    return -1;
  const double l = side(p), rc = contend_param_double(p, "cutoff"),
               rho = contend_param_double(p, "density");
  const double area[3] = {l * l, l * (l + 2 * rc), (l + 2 * rc) * (l + 2 * rc)};
  size_t bytes[6];
  for (int dir = 0; dir < 6; dir++)
    bytes[dir] =
        (size_t)floor(rho * rc * area[dir / 2] + 0.5) * (size_t)contend_param_int(p, "atom_bytes");
  halo_place(&s->fwd, 3, dims, c->rank);
  halo_connect(c, &s->fwd, 1, 1, bytes, 0);
  s->newton = contend_param_bool(p, "newton");
  if (s->newton) {
    halo_place(&s->rev, 3, dims, c->rank);
    halo_connect(c, &s->rev, 1, 1, bytes, 6);
  }
  s->thermo_every = (long)contend_param_int(p, "thermo_every");
  contend_allreduce_kernel_setup(c, &s->thermo, (int)contend_param_int(p, "thermo_count"),
                                 CONTEND_OP_SUM);
  s->compute_s = contend_param_double(p, "atom_time") * (double)contend_param_int(p, "atoms");
  c->msg_bytes = halo_biggest(&s->fwd);
  c->metric_scale = 1.0;
  return 0;
}

/* Thermo output after this step? */
static int thermo_step(const contend_ctx *c, const state *s) {
  return s->thermo_every > 0 && (c->iter + 1) % s->thermo_every == 0;
}

static void prepare(contend_ctx *c) {
  state *s = c->state;
  halo_fill(c, &s->fwd);
  if (s->newton)
    halo_fill(c, &s->rev);
  contend_allreduce_kernel_prepare(c, &s->thermo);
}

static void iterate(contend_ctx *c) {
  state *s = c->state;
  for (int axis = 0; axis < 3; axis++) /* ghost positions */
    halo_axis(c, &s->fwd, axis);
  if (s->compute_s > 0) /* pair forces */
    contend_compute(c, s->compute_s);
  if (s->newton) /* ghost forces back to their owners */
    for (int axis = 2; axis >= 0; axis--)
      halo_axis(c, &s->rev, axis);
  if (thermo_step(c, s))
    contend_allreduce_kernel_iterate(c, &s->thermo);
}

static void check(contend_ctx *c) {
  state *s = c->state;
  halo_verify(c, &s->fwd);
  if (s->newton)
    halo_verify(c, &s->rev);
  if (c->ops->colls_compute && thermo_step(c, s))
    contend_allreduce_kernel_check(c, &s->thermo);
}

const contend_motif contend_motif_lammps_like = {
    .name = "lammps_like",
    .label = "LAMMPS-like MD step",
    .help = "LAMMPS-like MD: staged 3-D ghost exchange of tens of KiB, force compute, reverse "
            "exchange, thermo allreduce every N steps",
    .role = CONTEND_ROLE_WORKLOAD,
    .metric = CONTEND_METRIC_LAT_US,
    .params = params,
    .state_size = sizeof(state),
    .setup = setup,
    .prepare = prepare,
    .iterate = iterate,
    .check = check,
    .validate = validate,
};
