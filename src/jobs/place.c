/* Placement of jobs on nodes (the plain kinds here, the tree kinds in
 * place_tree.c), validation against job sizes, the motif list.  Pure (no
 * MPI): every rank computes the same answer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fabric/tree.h"
#include "contend/rng.h"
#include "jobs.h"
#include "place_tree.h"

enum { STREAM_PLACEMENT = 0x706c6163 };

const char *contend_nodes_kind_name(contend_nodes_kind k) {
  static const char *const names[] = {"list",   "linear",     "interleaved", "random", "compact",
                                      "spread", "every_leaf", "pairs",       "incast"};
  return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

int contend_jobfile_tree_line(const contend_jobfile *jf) {
  for (int k = 0; k < jf->njobs; k++)
    if (jf->jobs[k].kind >= CONTEND_NODES_COMPACT)
      return jf->jobs[k].nodes_line;
  return 0;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

/* Free nodes in ascending order. */
static int free_nodes(const int *owner, int nnodes, int *out) {
  int n = 0;
  for (int i = 0; i < nnodes; i++)
    if (owner[i] < 0)
      out[n++] = i;
  return n;
}

static int too_many(const contend_jobfile *jf, const contend_job *j, int want, int nfree,
                    int nnodes, char *err, size_t errlen) {
  snprintf(err, errlen,
           "%s:%d: job '%s' needs %d node%s but only %d of the run's %d node%s %s free (jobs "
           "run on disjoint nodes)",
           jf->path, j->nodes_line, j->name, want, want == 1 ? "" : "s", nfree, nnodes,
           nnodes == 1 ? "" : "s", nfree == 1 ? "is" : "are");
  return -1;
}

int contend_jobs_place(contend_jobfile *jf, int nnodes, uint64_t run_seed, char *err,
                       size_t errlen) {
  return contend_jobs_place_tree(jf, nnodes, NULL, NULL, run_seed, err, errlen);
}

int contend_jobs_place_tree(contend_jobfile *jf, int nnodes, const contend_tree *tree,
                            const int *tree_node, uint64_t run_seed, char *err, size_t errlen) {
  if (tree && !tree_node && nnodes > tree->nnodes) {
    snprintf(err, errlen, "%s: the run has %d nodes but the topology %s has %d", jf->path, nnodes,
             tree->source, tree->nnodes);
    return -1;
  }
  place_tree_view tv;
  if (tree)
    place_tree_view_init(&tv, tree, tree_node, nnodes);
  int *owner = malloc(sizeof(int) * (size_t)(nnodes ? nnodes : 1));
  int *fr = malloc(sizeof(int) * (size_t)(nnodes ? nnodes : 1));
  if (!owner || !fr)
    abort();
  for (int i = 0; i < nnodes; i++)
    owner[i] = -1;
  int rc = 0;
  for (int k = 0; k < jf->njobs; k++) {
    contend_job *j = &jf->jobs[k];
    free(j->nodes);
    free(j->node_leaf);
    free(j->node_pod);
    j->nodes = j->node_leaf = j->node_pod = NULL;
    j->nnodes = 0;
  }
  /* explicit lists first (overlaps between them were rejected by the parser) */
  for (int k = 0; k < jf->njobs && !rc; k++) {
    contend_job *j = &jf->jobs[k];
    if (j->kind != CONTEND_NODES_LIST)
      continue;
    for (int i = 0; i < j->nlist && !rc; i++)
      if (j->list[i] >= nnodes) {
        snprintf(err, errlen, "%s:%d: job '%s' lists node %d, but the run has %d node%s (0-%d)%s",
                 jf->path, j->nodes_line, j->name, j->list[i], nnodes, nnodes == 1 ? "" : "s",
                 nnodes - 1, " (nodes come from MPI; --virtual-nodes K groups K ranks as one)");
        rc = -1;
      }
    if (rc)
      break;
    j->nodes = malloc(sizeof(int) * (size_t)j->nlist);
    if (!j->nodes)
      abort();
    memcpy(j->nodes, j->list, sizeof(int) * (size_t)j->nlist);
    j->nnodes = j->nlist;
    for (int i = 0; i < j->nlist; i++)
      owner[j->list[i]] = k;
  }
  /* then placements, in file order; interleaved jobs share their nodes */
  int interleaved_done = 0;
  for (int k = 0; k < jf->njobs && !rc; k++) {
    contend_job *j = &jf->jobs[k];
    if (j->kind == CONTEND_NODES_LIST)
      continue;
    int nfree = free_nodes(owner, nnodes, fr);
    if (j->kind >= CONTEND_NODES_COMPACT) {
      if (!tree) {
        snprintf(err, errlen,
                 "%s:%d: job '%s': placement '%s' needs the machine's tree: give "
                 "--topology-conf FILE (a Slurm topology.conf), or run with --engine sim (its "
                 "--topology)",
                 jf->path, j->nodes_line, j->name, contend_nodes_kind_name(j->kind));
        rc = -1;
        break;
      }
      if (place_tree_job(&tv, jf, k, owner, err, errlen)) {
        rc = -1;
        break;
      }
    } else if (j->kind == CONTEND_NODES_LINEAR) {
      if (j->want > nfree) {
        rc = too_many(jf, j, j->want, nfree, nnodes, err, errlen);
        break;
      }
      j->nodes = malloc(sizeof(int) * (size_t)j->want);
      if (!j->nodes)
        abort();
      memcpy(j->nodes, fr, sizeof(int) * (size_t)j->want);
      j->nnodes = j->want;
    } else if (j->kind == CONTEND_NODES_RANDOM) {
      if (j->want > nfree) {
        rc = too_many(jf, j, j->want, nfree, nnodes, err, errlen);
        break;
      }
      contend_rng r;
      j->placement_seed = j->seed_set ? j->seed : run_seed;
      contend_rng_init(&r, j->placement_seed, STREAM_PLACEMENT, (uint64_t)k, 0, 0);
      contend_rng_shuffle(&r, fr, nfree);
      j->nodes = malloc(sizeof(int) * (size_t)j->want);
      if (!j->nodes)
        abort();
      memcpy(j->nodes, fr, sizeof(int) * (size_t)j->want);
      qsort(j->nodes, (size_t)j->want, sizeof(int), cmp_int);
      j->nnodes = j->want;
    } else if (!interleaved_done) {
      interleaved_done = 1;
      int total = 0;
      for (int q = k; q < jf->njobs; q++)
        if (jf->jobs[q].kind == CONTEND_NODES_INTERLEAVED) {
          total += jf->jobs[q].want;
          jf->jobs[q].nodes = malloc(sizeof(int) * (size_t)jf->jobs[q].want);
          if (!jf->jobs[q].nodes)
            abort();
        }
      if (total > nfree) {
        snprintf(err, errlen,
                 "%s:%d: the interleaved jobs need %d nodes together but only %d of the run's %d "
                 "are free (first interleaved job: '%s')",
                 jf->path, j->nodes_line, total, nfree, nnodes, j->name);
        rc = -1;
        break;
      }
      /* deal the free nodes round-robin over the interleaved jobs that still need some */
      int f = 0;
      while (f < total) {
        for (int q = k; q < jf->njobs && f < total; q++) {
          contend_job *o = &jf->jobs[q];
          if (o->kind == CONTEND_NODES_INTERLEAVED && o->nnodes < o->want) {
            o->nodes[o->nnodes++] = fr[f];
            owner[fr[f]] = q;
            f++;
          }
        }
      }
      continue;
    } else {
      continue; /* placed with the first interleaved job */
    }
    for (int i = 0; i < j->nnodes; i++)
      owner[j->nodes[i]] = k;
  }
  for (int k = 0; k < jf->njobs && !rc && tree; k++) { /* leaf and pod of every job's nodes */
    contend_job *j = &jf->jobs[k];
    free(j->node_leaf);
    free(j->node_pod);
    j->node_leaf = malloc(sizeof(int) * (size_t)(j->nnodes ? j->nnodes : 1));
    j->node_pod = malloc(sizeof(int) * (size_t)(j->nnodes ? j->nnodes : 1));
    if (!j->node_leaf || !j->node_pod)
      abort();
    for (int i = 0; i < j->nnodes; i++) {
      j->node_leaf[i] = tv.leaf_of[j->nodes[i]];
      j->node_pod[i] = tree->leaf_pod[tv.leaf_of[j->nodes[i]]];
    }
  }
  if (tree)
    place_tree_view_free(&tv);
  free(owner);
  free(fr);
  return rc;
}

int contend_jobs_validate(const contend_jobfile *jf, const int *ranks, char *err, size_t errlen) {
  char why[1024];
  for (int k = 0; k < jf->njobs; k++) {
    const contend_job *j = &jf->jobs[k];
    for (int m = 0; m < j->nmotifs; m++) {
      const contend_job_motif *jm = &j->motifs[m];
      if (jm->motif->role != CONTEND_ROLE_WORKLOAD && ranks[k] < 2) {
        snprintf(err, errlen,
                 "%s:%d: motif '%s' of job '%s' (1 rank): the GPCNeT canaries and congestors "
                 "need a job of at least 2 ranks",
                 jf->path, jm->line, jm->motif->name, j->name);
        return -1;
      }
      if (jm->motif->validate && jm->motif->validate(&jm->params, ranks[k], why, sizeof why)) {
        snprintf(err, errlen, "%s:%d: motif '%s' of job '%s' (%d rank%s): %s", jf->path, jm->line,
                 jm->motif->name, j->name, ranks[k], ranks[k] == 1 ? "" : "s", why);
        return -1;
      }
    }
  }
  return 0;
}

static void list_one(const contend_motif *m, contend_strbuf *out) {
  contend_params p;
  char err[256];
  if (contend_params_init(&p, m->params, m->name, err, sizeof err))
    return;
  const char *kind = m->role == CONTEND_ROLE_CANARY      ? "canary"
                     : m->role == CONTEND_ROLE_CONGESTOR ? "congestor"
                                                         : "workload";
  contend_sb_printf(out, "\n%-9s %-19s %s\n", kind, m->name, m->help);
  for (size_t i = 0; i < p.n; i++) {
    const contend_param_def *d = &p.defs[i];
    if (m->role != CONTEND_ROLE_WORKLOAD && !strcmp(d->key, "measurements"))
      continue; /* not used in job files */
    char val[128];
    contend_params_format(&p, (int)i, val, sizeof val);
    contend_sb_printf(out, "    %-16s %s [%s%sdefault %s]\n", d->key, d->help, d->unit,
                      *d->unit ? ", " : "", *val ? val : "\"\"");
  }
  contend_params_free(&p);
}

void contend_jobs_list(contend_strbuf *out) {
  const char *why = "";
  const int h5 = contend_io_hdf5_available(&why);
  contend_sb_printf(out,
                    "Motifs for job files: [MOTIF] NAME key=value ...  (defaults in brackets).\n"
                    "Sizes in B accept KiB/MiB/GiB (and k/m/g), times in s accept ns/us/ms.\n"
                    "I/O back ends: posix, mpiio%s\n",
                    h5 ? ", hdf5" : "");
  if (!h5)
    contend_sb_printf(out, "  (api=hdf5 is not available: %s)\n", why);
  for (int i = 0; contend_workload_motifs[i]; i++)
    list_one(contend_workload_motifs[i], out);
  contend_sb_printf(out, "\nGPCNeT canaries and congestors (one invocation = rings x (warmup + "
                         "iters) iterations):\n");
  for (int i = 0; contend_motifs[i]; i++)
    list_one(contend_motifs[i], out);
}
