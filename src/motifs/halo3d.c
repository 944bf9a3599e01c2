/* halo3d: 7-point halo exchange over a 3-D process grid: one face with each
 * of the (up to) 6 neighbours, sizes from the local block of the
 * nx x ny x nz domain. */
#include "halo.h"

static const contend_param_def params[] = {WL_ITERS(1),
                                           WL_DOMAIN("nx", "256", "global domain, x"),
                                           WL_DOMAIN("ny", "256", "global domain, y"),
                                           WL_DOMAIN("nz", "256", "global domain, z"),
                                           WL_PGRID("px", "x", ""),
                                           WL_PGRID("py", "y", ""),
                                           WL_PGRID("pz", "z", ""),
                                           HALO_FACE_PARAMS,
                                           CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return wl_domain_validate(p, nranks, 3, err, errlen);
}

static int setup(contend_ctx *c) { return halo_setup(c, 3); }

const contend_motif contend_motif_halo3d = {
    .name = "halo3d",
    .label = "Halo 3-D (7-point)",
    .help = "7-point halo exchange over a px x py x pz grid; face sizes from the domain",
    .params = params,
    .setup = setup,
    .validate = validate,
    HALO_MOTIF_HOOKS,
};
