/* bench/memory_latency: what a dependent random read costs on this machine
 * today, within working sets of a few sizes: the figure that sets the
 * simulator's rate on a large fabric (its per-hop state is read in no
 * useful order).  bench/sim_scale prints it beside its own figures, so
 * that runs on different days or machines can be told apart from a change
 * of the code.
 *
 * Method: one 64 B line per element, linked into a single random cycle
 * (Sattolo's shuffle, fixed seed), walked once to warm it, then walked for
 * READS reads each of which depends on the one before; the time is the
 * median of 3 walks divided by READS.
 *
 * usage: memory_latency [MIB ...]   sizes in MiB, 1 to 1024 (default 1 4 16 64)
 * prints one line per size: "<MiB> MiB <ns> ns"; exit status 2 on bad input. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/core/proc.h"
#include "contend/rng.h"

enum { LINE = 64, READS = 2000000, WALKS = 3, MAX_MIB = 1024, MAX_SIZES = 16 };

static volatile size_t g_sink;

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Nanoseconds per dependent read within mib MiB, or a negative value when
 * the memory cannot be had. */
static double probe(long mib) {
  const size_t n = (size_t)mib * 1024 * 1024 / LINE;
  size_t *next = aligned_alloc(LINE, n * LINE); /* next[i * 8]: the line after line i */
  size_t *order = malloc(n * sizeof *order);
  if (!next || !order) {
    free(next);
    free(order);
    return -1;
  }
  for (size_t i = 0; i < n; i++)
    order[i] = i;
  contend_rng rng;
  contend_rng_init(&rng, 1, (uint64_t)mib, 0, 0, 0);
  for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle through every line */
    const size_t j = (size_t)contend_rng_below(&rng, i);
    const size_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < n; i++)
    next[order[i] * (LINE / sizeof *next)] = order[(i + 1) % n] * (LINE / sizeof *next);
  free(order);
  size_t p = 0;
  for (size_t i = 0; i < n; i++) /* warm: every line once */
    p = next[p];
  double t[WALKS];
  for (int w = 0; w < WALKS; w++) {
    const double t0 = contend_monotonic_s();
    for (long r = 0; r < READS; r++)
      p = next[p];
    t[w] = (contend_monotonic_s() - t0) / READS * 1e9;
  }
  free(next);
  qsort(t, WALKS, sizeof *t, cmp_double);
  g_sink = p; /* the walks' result is used: they cannot be left out */
  return t[WALKS / 2];
}

int main(int argc, char **argv) {
  long sizes[MAX_SIZES] = {1, 4, 16, 64};
  int count = 4;
  if (argc > 1) {
    if (argc - 1 > MAX_SIZES) {
      fprintf(stderr, "memory_latency: at most %d sizes\n", MAX_SIZES);
      return 2;
    }
    count = 0;
    for (int i = 1; i < argc; i++) {
      char *end;
      errno = 0;
      const long v = strtol(argv[i], &end, 10);
      if (errno || end == argv[i] || *end || v < 1 || v > MAX_MIB) {
        fprintf(stderr,
                "memory_latency: size '%s': a whole number of MiB, 1 to %d\n"
                "usage: memory_latency [MIB ...]\n",
                argv[i], MAX_MIB);
        return 2;
      }
      sizes[count++] = v;
    }
  }
  for (int i = 0; i < count; i++) {
    const double ns = probe(sizes[i]);
    if (ns < 0) {
      fprintf(stderr, "memory_latency: cannot allocate %ld MiB\n", sizes[i]);
      return 1;
    }
    printf("%ld MiB %.1f ns\n", sizes[i], ns);
    fflush(stdout);
  }
  return 0;
}
