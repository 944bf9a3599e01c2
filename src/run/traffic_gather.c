/* Gathering traffic accumulators to rank 0 (see traffic_gather.h). */
#include "traffic_gather.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

enum { ROW = 6 }; /* accumulator, map (0 exact, 1 estimated), src, dst, bytes, msgs */

void contend_traffic_gather(contend_group *world, contend_traffic *mine, contend_traffic *into,
                            int n) {
  size_t rows = 0;
  for (int i = 0; i < n; i++)
    rows += mine[i].flows.n + mine[i].estimated.n;
  double *buf = malloc(sizeof(double) * ROW * (rows ? rows : 1));
  if (!buf)
    contend_fail("out of memory");
  size_t o = 0;
  for (int i = 0; i < n; i++) {
    const contend_flowmap *maps[2] = {&mine[i].flows, &mine[i].estimated};
    for (int k = 0; k < 2; k++) {
      size_t nf;
      contend_flow *f = contend_flows_sorted(maps[k], &nf);
      for (size_t q = 0; q < nf; q++) {
        const double row[ROW] = {i, k, f[q].src, f[q].dst, f[q].bytes, f[q].msgs};
        memcpy(buf + o, row, sizeof row);
        o += ROW;
      }
      free(f);
    }
  }
  const int K = CONTEND_TRAFFIC_NSCALARS;
  double *sc = calloc((size_t)n * K + 1, sizeof(double));
  size_t *counts = world->rank == 0 ? malloc(sizeof(size_t) * (size_t)world->size) : NULL;
  if (!sc || (world->rank == 0 && !counts))
    contend_fail("out of memory");
  for (int i = 0; i < n; i++)
    contend_traffic_scalars(&mine[i], sc + (size_t)i * K);
  double *all = contend_ggatherv(world, buf, sizeof(double) * o, counts);
  contend_greduce(world, sc, n * K, CONTEND_DT_DOUBLE, CONTEND_OP_SUM);
  free(buf);
  if (world->rank == 0) {
    size_t total = 0;
    for (int q = 0; q < world->size; q++)
      total += counts[q] / sizeof(double);
    if (into == mine)
      for (int i = 0; i < n; i++)
        contend_traffic_reset(&into[i]);
    for (size_t q = 0; q + ROW <= total; q += ROW) {
      const double *row = all + q;
      contend_traffic *t = &into[(int)row[0]];
      contend_flow_add(row[1] == 0 ? &t->flows : &t->estimated, (int)row[2], (int)row[3], row[4],
                       row[5]);
    }
    for (int i = 0; i < n; i++)
      contend_traffic_add_scalars(&into[i], sc + (size_t)i * K);
  }
  free(all);
  free(counts);
  free(sc);
}
