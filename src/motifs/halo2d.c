/* halo2d: 5-point halo exchange over a 2-D process grid (TeaLeaf-like):
 * the nx x ny domain is split into px x py blocks (chosen to minimise the
 * halo when 0); every rank exchanges one face with each of its (up to) 4
 * neighbours: ly x depth x fields x elem_bytes bytes in x, lx x ... in y. */
#include "halo.h"

static const contend_param_def params[] = {WL_ITERS(1),
                                           WL_DOMAIN("nx", "4000", "global domain, x"),
                                           WL_DOMAIN("ny", "4000", "global domain, y"),
                                           WL_PGRID_XY,
                                           HALO_FACE_PARAMS,
                                           CONTEND_PARAM_END};

static int validate(const contend_params *p, int nranks, char *err, size_t errlen) {
  return wl_domain_validate(p, nranks, 2, err, errlen);
}

static int setup(contend_ctx *c) { return halo_setup(c, 2); }

const contend_motif contend_motif_halo2d = {
    .name = "halo2d",
    .label = "Halo 2-D (5-point)",
    .help = "5-point halo exchange over a px x py grid; face sizes from the nx x ny domain",
    .params = params,
    .setup = setup,
    .validate = validate,
    HALO_MOTIF_HOOKS,
};
