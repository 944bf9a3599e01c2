/* Structured halo exchange shared by halo2d (5-point, TeaLeaf-like) and
 * halo3d (7-point): a Cartesian process grid over a global domain, one
 * face message per existing neighbour and direction, sizes from the local
 * block (face cells x depth x fields x elem_bytes). */
#ifndef CONTEND_MOTIFS_HALO_H
#define CONTEND_MOTIFS_HALO_H

#include "workload.h"

typedef struct halo_state {
  int ndims;
  int dims[3], coord[3];
  long ext[3], loc[3];
  /* direction d: axis d / 2, towards +1 (d even) or -1 (d odd); tag d */
  int send_peer[6], recv_peer[6]; /* -1: none */
  size_t bytes[6];
  unsigned char *sbuf[6], *rbuf[6];
} halo_state;

int halo_validate(const contend_params *p, int nranks, int ndims, char *err, size_t errlen);
int halo_setup(contend_ctx *c, int ndims);
void halo_prepare(contend_ctx *c);
void halo_iterate(contend_ctx *c);
void halo_check(contend_ctx *c);

#endif
