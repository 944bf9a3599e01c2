/* The motif registry: adding a motif is one file, one line here and one
 * line in CMakeLists.txt. */
#include <ctype.h>
#include <string.h>

#include "contend/motif.h"

extern const contend_motif contend_motif_rr_lat, contend_motif_rr_get_lat, contend_motif_rr_bw,
    contend_motif_rr_put_bw, contend_motif_rr_bw_sync, contend_motif_nat_bw,
    contend_motif_allreduce, contend_motif_alltoall, contend_motif_pairwise_a2a,
    contend_motif_p2p_incast, contend_motif_rma_put_incast, contend_motif_rma_get_bcast,
    contend_motif_dl_allreduce, contend_motif_p2p_bcast;

/* Order = the order of tests in `contend network` and in tables. */
const contend_motif *const contend_motifs[] = {
    &contend_motif_rr_lat,       &contend_motif_rr_get_lat,     &contend_motif_rr_bw,
    &contend_motif_rr_put_bw,    &contend_motif_rr_bw_sync,     &contend_motif_nat_bw,
    &contend_motif_allreduce,    &contend_motif_alltoall,       &contend_motif_pairwise_a2a,
    &contend_motif_p2p_incast,   &contend_motif_rma_put_incast, &contend_motif_rma_get_bcast,
    &contend_motif_dl_allreduce, &contend_motif_p2p_bcast,      NULL,
};

const contend_motif *contend_motif_find(const char *name) {
  for (int i = 0; contend_motifs[i]; i++)
    if (!strcmp(contend_motifs[i]->name, name))
      return contend_motifs[i];
  return NULL;
}

extern const contend_motif contend_motif_wl_allreduce, contend_motif_compute, contend_motif_barrier,
    contend_motif_halo2d, contend_motif_halo3d, contend_motif_halo3d_unstructured,
    contend_motif_sweep3d, contend_motif_fft, contend_motif_incast, contend_motif_pingpong,
    contend_motif_pingpong_sweep, contend_motif_io_write, contend_motif_io_read,
    contend_motif_milc_like, contend_motif_lammps_like, contend_motif_amg_like,
    contend_motif_bully_pairs, contend_motif_bully_incast, contend_motif_umt_like,
    contend_motif_pf3d_like, contend_motif_replay;

/* Job-file motifs (`contend jobs`), in the order of `contend jobs --list`. */
const contend_motif *const contend_workload_motifs[] = {
    &contend_motif_wl_allreduce,   &contend_motif_compute,
    &contend_motif_barrier,        &contend_motif_halo2d,
    &contend_motif_halo3d,         &contend_motif_halo3d_unstructured,
    &contend_motif_sweep3d,        &contend_motif_fft,
    &contend_motif_incast,         &contend_motif_pingpong,
    &contend_motif_pingpong_sweep, &contend_motif_io_write,
    &contend_motif_io_read,        &contend_motif_milc_like,
    &contend_motif_lammps_like,    &contend_motif_amg_like,
    &contend_motif_bully_pairs,    &contend_motif_bully_incast,
    &contend_motif_umt_like,       &contend_motif_pf3d_like,
    &contend_motif_replay,         NULL,
};

/* name as a user spells it: any case, '-' for '_' */
static int spelled(const char *motif, const char *name) {
  for (; *motif && *name; motif++, name++)
    if (*motif != (*name == '-' ? '_' : tolower((unsigned char)*name)))
      return 0;
  return !*motif && !*name;
}

const contend_motif *contend_job_motif_find(const char *name) {
  for (int i = 0; contend_workload_motifs[i]; i++)
    if (spelled(contend_workload_motifs[i]->name, name))
      return contend_workload_motifs[i];
  for (int i = 0; contend_motifs[i]; i++)
    if (spelled(contend_motifs[i]->name, name))
      return contend_motifs[i];
  return NULL;
}
