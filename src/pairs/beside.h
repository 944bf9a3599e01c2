/* `contend pairs --bully`: a job-file motif run on some nodes of the run
 * while the pairs are measured among the others, or on every node with
 * --bully-share (beside.c). */
#ifndef CONTEND_PAIRS_BESIDE_H
#define CONTEND_PAIRS_BESIDE_H

#include <stdint.h>

#include "contend/json.h"
#include "contend/world.h"

typedef struct pairs_bully {
  const contend_motif *m; /* NULL: no bully */
  contend_params params;  /* the motif's, from the spec (valid when m) */
  long nodes;             /* --bully-nodes */
  int random;             /* --bully-place random (else last) */
  int share;              /* --bully-share: the pairs on every node, the bully beside */
} pairs_bully;

/* What a rank does in a run with a bully. */
enum { PAIRS_ROLE_PAIRS = 0, PAIRS_ROLE_BULLY = 1, PAIRS_ROLE_IDLE = 2 };

/* From the run options, before the launch: the motif and its parameters
 * of --bully NAME[:key=value,...], --bully-nodes, --bully-place.  Returns
 * 0 (b->m NULL without --bully), or -1 with one line in err.  The caller
 * frees b with pairs_bully_free, also after a failure. */
int pairs_bully_parse(pairs_bully *b, const contend_params *opts, char *err, size_t errlen);
void pairs_bully_free(pairs_bully *b);

/* Local (every rank computes the same): marks in is_bully (nnodes entries,
 * caller's) the nodes the bully runs on, drawn with seed for random, and
 * gives every rank its role (nranks entries, caller's; node_of_rank has
 * nranks entries): without --bully-share the ranks of the bully's nodes
 * run the bully and the others measure the pairs; with it the first rank
 * of every node measures the pairs, the other ranks of the bully's nodes
 * run the bully and the rest wait.  Without a bully every rank measures.
 * Checks the counts against the run: nodes left for the pairs, a rank
 * beside the pairs' on every bully node with --bully-share, the motif's
 * own check for the bully's ranks.  Returns 0, or -1 with one line in
 * err. */
int pairs_bully_place(const pairs_bully *b, const contend_nodes *nodes, int nranks, uint64_t seed,
                      char *is_bully, char *role, char *err, size_t errlen);

/* What the bully did (pairs_bully_run on bully ranks, zero elsewhere),
 * summed over the world by pairs_bully_stats_sum. */
typedef struct pairs_bully_stats {
  double invocations; /* max over the bully's ranks */
  double mib_s_sum;   /* MiB/s of the ranks that take samples */
  double sampling_ranks;
} pairs_bully_stats;

/* On every bully rank (own: the bully's group): opens the motif, runs one
 * invocation (warm), posts `ready` then `stop` on world, and invokes the
 * motif until every rank of world has posted `stop` (the pairs are done):
 * every rank of own stops after the same invocation.  The pairs ranks post
 * `ready`, wait for it before their first round and post `stop` after
 * their last.  Leaves the context open in *c (close it with ctx_close,
 * collective over own). */
pairs_bully_stats pairs_bully_run(const pairs_bully *b, contend_ctx *c, contend_group *world,
                                  contend_group *own, int my_node, uint64_t seed);

/* Collective over world: the sums of every rank's stats (zero on pairs
 * ranks). */
pairs_bully_stats pairs_bully_stats_sum(contend_group *world, pairs_bully_stats mine);

/* The bully's MiB/s per rank that takes samples (0: none did). */
double pairs_bully_mib_s(const pairs_bully_stats *st);

/* The results' "bully" object (rank 0). */
void pairs_bully_json(contend_json *j, const pairs_bully *b, const char *is_bully, int nnodes,
                      long ranks, const pairs_bully_stats *st, uint64_t seed);

#endif
