/* The jobs orchestrator, engine-neutral: placement, one group per job,
 * then the StressBench phases separated by global barriers:
 *   decompose  every motif's setup (jobs one after another: RMA windows
 *              created at the same moment on sub-communicators of one
 *              split collide in Open MPI 4.1)
 *   perform    isolated pass (each job alone, in turn) and/or concurrent
 *              pass (all jobs at once); each job runs its motif chain
 *              [REPEAT] times; every invocation and iteration is timed
 *   cleanup    every motif's cleanup (files removed), contexts closed
 * then rank 0 gathers the results and reports.  On the trace engine (dry
 * run) the same code runs one untimed concurrent pass and reports the
 * traffic it recorded. */
#include <time.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/error.h"
#include "../fabric/tree.h"
#include "orch.h"

static void on_sample(void *arg, int series, double s, long count) {
  contend_jobs_sink *k = arg;
  for (long q = 0; q < count; q++) { /* a block: its mean, count times */
    contend_hist_add(&k->m->iter_us, s * 1e6);
    if (k->m->series && series < k->nseries)
      contend_jstat_add(&k->m->series[series], s);
    if (k->n < k->cap)
      k->samples[k->n++] = s;
  }
}

/* The chain of my job, [REPEAT] times, in pass p (p < 0: a dry run, no
 * statistics). */
static void run_chain(contend_jobs_rank *x, int p, double t_ref) {
  contend_jobs_run *r = x->r;
  const contend_job *job = &x->jf->jobs[x->my_job];
  const int g0 = r->first[x->my_job];
  const contend_group *clock = p >= 0 ? x->world : NULL;
  contend_jres *jr = p >= 0 ? &r->j[p][x->my_job] : NULL;
  const double start = contend_now(x->world);
  for (long rep = 0; rep < job->repeat; rep++) {
    const double tj0 = contend_now(x->world);
    for (int k = 0; k < job->nmotifs; k++) {
      const int g = g0 + k;
      contend_mres *m = p >= 0 ? &r->m[p][g] : NULL;
      x->sinks[g].m = m;
      contend_job_exec ex = {
          .clock = clock,
          .verify = x->verify,
          .verify_inject = x->verify_inject,
          .traffic = &x->tr[g],
          .sample = on_sample,
          .arg = &x->sinks[g],
      };
      double t = contend_job_invoke(&x->ctx[k], job->motifs[k].motif, rep, &ex);
      if (m && x->ctx[k].metric_scale > 0) {
        contend_jstat_add(&m->time, t);
        if (t > m->rep_max[rep])
          m->rep_max[rep] = t;
        if (job->motifs[k].motif->metric == CONTEND_METRIC_BW_MIB_S && t > 0) {
          long rings, warmup, iters; /* MiB per timed iteration -> Gb/s */
          contend_job_loop(&x->ctx[k], &rings, &warmup, &iters);
          contend_jstat_add(&m->net_gbps, x->ctx[k].metric_scale * 1048576.0 * 8.0 *
                                              (double)(rings * iters) / t / 1e9);
        }
      }
    }
    if (jr) {
      const double tj = contend_now(x->world) - tj0;
      contend_jstat_add(&jr->time, tj);
      if (tj > jr->rep_max[rep])
        jr->rep_max[rep] = tj;
    }
  }
  if (!jr)
    return;
  jr->start_s = start - t_ref;
  jr->end_s = contend_now(x->world) - t_ref;
  for (int k = 0; k < job->nmotifs; k++) {
    const int g = g0 + k;
    r->m[p][g].io_bytes = x->tr[g].io_write_bytes + x->tr[g].io_read_bytes;
    r->m[p][g].verify_errors = (double)x->ctx[k].verify_errors;
    r->m[p][g].verify_checked = (double)x->ctx[k].verify_checked;
    x->ctx[k].verify_errors = x->ctx[k].verify_checked = 0;
  }
}

/* A global barrier for ranks that may wait long (a job waiting for the
 * others in a pass): they give the CPU away instead of polling, so on a
 * shared host (virtual nodes) an idle job does not take the CPU of a
 * running one.  A plain barrier after it aligns the next start. */
static void idle_barrier(contend_group *world) {
  contend_signal *s = contend_signal_post(world);
  contend_signal_wait(world, s, 1);
  contend_signal_free(world, s);
  contend_gbarrier(world);
}

/* Decompose: every motif's setup, one job at a time.  Returns the exit
 * status (2 after a setup failure, reported at rank 0). */
static int decompose(contend_jobs_rank *x) {
  const contend_jobfile *jf = x->jf;
  const int my_n = x->my_job >= 0 ? jf->jobs[x->my_job].nmotifs : 0;
  int maxm = 0;
  for (int j = 0; j < jf->njobs; j++)
    maxm = jf->jobs[j].nmotifs > maxm ? jf->jobs[j].nmotifs : maxm;
  int fail_job = -1, fail_pos = -1;
  const char *fail_msg = NULL;
  contend_gbarrier(x->world);
  for (int k = 0; k < maxm; k++)
    for (int j = 0; j < jf->njobs; j++) {
      if (x->my_job == j && k < my_n) {
        const contend_job *job = &jf->jobs[j];
        contend_ctx tmpl = {.job_name = job->name,
                            .job_index = j,
                            .run_id = x->r->run_id,
                            .stream = contend_jobs_stream(j, k),
                            .job_phase = CONTEND_JOB_DECOMPOSE};
        int rc = x->world->ops->ctx_open(&x->ctx[k], job->motifs[k].motif, &job->motifs[k].params,
                                         x->job, x->env->nodes.my_node, x->env->seed, &tmpl);
        x->opened[k] = 1;
        if (rc && fail_job < 0) {
          fail_job = j;
          fail_pos = k;
          fail_msg = x->ctx[k].error;
        }
      }
      contend_gbarrier(x->world); /* one job at a time (windows) */
    }
  char ferr[2048] = "";
  if (contend_jobs_setup_failure(x, fail_job, fail_pos, fail_msg, ferr, sizeof ferr)) {
    contend_envelope_error(x->env, x->world, ferr);
    return CONTEND_EXIT_USAGE;
  }
  return CONTEND_EXIT_OK;
}

/* Perform: the passes (a dry run: one untimed concurrent pass). */
static void perform(contend_jobs_rank *x) {
  contend_jobs_run *r = x->r;
  const contend_jobfile *jf = x->jf;
  const int npasses = x->env->dry_run ? 1 : r->npasses;
  for (int p = 0; p < npasses; p++) {
    const int pi = x->env->dry_run ? -1 : p;
    for (int g = 0; g < r->nm; g++)
      contend_traffic_reset(&x->tr[g]);
    contend_gbarrier(x->world);
    const double t_ref = contend_now(x->world);
    if (pi >= 0) {
      struct timespec ts;
      clock_gettime(CLOCK_REALTIME, &ts); /* metadata for aligning counters, not a measurement */
      r->pass_t0_clock_s[pi] = t_ref;
      r->pass_t0_unix_s[pi] = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    if (pi >= 0 && r->pass[p] == CONTEND_PASS_ISOLATED) {
      for (int j = 0; j < jf->njobs; j++) {
        contend_progress(x->env, x->world, "perform, isolated: job %d/%d %s", j + 1, jf->njobs,
                         jf->jobs[j].name);
        contend_gbarrier(x->world);
        if (x->my_job == j)
          run_chain(x, pi, t_ref);
        idle_barrier(x->world);
      }
    } else {
      contend_progress(x->env, x->world, "perform, concurrent: %d job%s", jf->njobs,
                       jf->njobs == 1 ? "" : "s");
      if (x->my_job >= 0)
        run_chain(x, pi, t_ref);
      idle_barrier(x->world);
    }
    if (pi >= 0)
      contend_jobs_reduce_pass(x, pi);
  }
}

/* Cleanup: every motif's cleanup, contexts closed (also after a failed
 * decompose). */
static void cleanup(contend_jobs_rank *x) {
  const int my_n = x->my_job >= 0 ? x->jf->jobs[x->my_job].nmotifs : 0;
  contend_progress(x->env, x->world, "cleanup");
  contend_gbarrier(x->world);
  for (int k = 0; k < my_n; k++)
    if (x->opened[k]) {
      const contend_motif *m = x->jf->jobs[x->my_job].motifs[k].motif;
      x->ctx[k].job_phase = CONTEND_JOB_CLEANUP;
      x->ctx[k].ops->count(&x->ctx[k], NULL);
      if (m->cleanup)
        m->cleanup(&x->ctx[k]);
      x->world->ops->ctx_close(&x->ctx[k]);
    }
  contend_gbarrier(x->world);
}

/* Real MPI on real nodes: run node i is the tree's node of the same host
 * name (rank 0 matches the names it gathered; every rank gets the map in
 * *tnode).  Other runs (in-process engines, --virtual-nodes) use node i of
 * the tree: *tnode stays NULL.  Collective.  Returns 0, or -1 with err on
 * every rank (a host not in the topology). */
static int tree_by_host_name(contend_jobs_rank *x, const contend_tree *tree, int **tnode, char *err,
                             size_t errlen) {
  const contend_envelope *env = x->env;
  if (env->engine->in_process || env->virtual_nodes)
    return 0;
  const int nn = env->nodes.nnodes;
  int *map = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
  if (!map)
    contend_fail("out of memory");
  int bad = 0;
  if (x->world->rank == 0) {
    char *used = calloc((size_t)tree->nnodes + 1, 1);
    if (!used)
      contend_fail("out of memory");
    int missing = 0;
    char names[512] = "";
    for (int i = 0; i < nn; i++) {
      const char *h = env->node_names && env->node_names[i] ? env->node_names[i] : "?";
      map[i] = contend_tree_find_node(tree, h);
      if (map[i] < 0 || used[map[i]]) {
        char one[96];
        snprintf(one, sizeof one, "%s%.64s%s", missing ? ", " : "", h,
                 map[i] >= 0 ? " (twice)" : "");
        if (missing++ < 4 && strlen(names) + strlen(one) < sizeof names)
          strcat(names, one);
      } else {
        used[map[i]] = 1;
      }
    }
    free(used);
    if (missing) {
      bad = 1;
      snprintf(err, errlen,
               "--topology-conf %s: %d of the run's %d host%s %s not among its nodes (%s%s); "
               "host names are matched with the file's node names (or --virtual-nodes K "
               "numbers the nodes as the file lists them)",
               tree->source, missing, nn, nn == 1 ? "" : "s", missing == 1 ? "is" : "are", names,
               missing > 4 ? ", ..." : "");
    }
  }
  contend_gbcast(x->world, &bad, sizeof bad);
  if (bad) {
    free(map);
    return -1;
  }
  contend_gbcast(x->world, map, sizeof(int) * (size_t)nn);
  *tnode = map;
  return 0;
}

/* Placement, validation and the run's result arrays.  Returns 0 or exit
 * status 2 (reported at rank 0). */
static int prepare(contend_jobs_rank *x, contend_jobfile *jf, const contend_params *opts,
                   const contend_tree *tree, int **job_of_node, int **pos_of_node) {
  contend_envelope *env = x->env;
  char err[2048] = "";
  int *tnode = NULL;
  if (tree && tree_by_host_name(x, tree, &tnode, err, sizeof err)) {
    contend_envelope_error(env, x->world, err);
    return CONTEND_EXIT_USAGE;
  }
  const int placed =
      contend_jobs_place_tree(jf, env->nodes.nnodes, tree, tnode, env->seed, err, sizeof err);
  free(tnode);
  if (placed) {
    contend_envelope_error(env, x->world, err);
    return CONTEND_EXIT_USAGE;
  }
  const int nn = env->nodes.nnodes;
  *job_of_node = malloc(sizeof(int) * (size_t)nn);
  *pos_of_node = malloc(sizeof(int) * (size_t)nn);
  if (!*job_of_node || !*pos_of_node)
    contend_fail("out of memory");
  for (int i = 0; i < nn; i++)
    (*job_of_node)[i] = (*pos_of_node)[i] = -1;
  for (int j = 0; j < jf->njobs; j++)
    for (int i = 0; i < jf->jobs[j].nnodes; i++) {
      (*job_of_node)[jf->jobs[j].nodes[i]] = j;
      (*pos_of_node)[jf->jobs[j].nodes[i]] = i;
    }
  contend_jobs_run *run = x->r;
  const char *mode = contend_param_str(opts, "mode");
  contend_jobs_run_init(run, jf, env->dry_run ? 0 : !strcmp(mode, "both") ? 2 : 1);
  run->pass[0] = !strcmp(mode, "concurrent") ? CONTEND_PASS_CONCURRENT : CONTEND_PASS_ISOLATED;
  run->pass[1] = CONTEND_PASS_CONCURRENT;
  run->opts = opts;
  run->env = env;
  run->dry_run = env->dry_run;
  run->seed = env->seed;
  run->seed_from_time = env->seed_from_time;
  run->nnodes = nn;
  run->nranks = x->world->size;
  run->ppn_min = env->nodes.ppn_min;
  run->ppn_max = env->nodes.ppn_max;
  run->virtual_nodes = env->dry_run ? 0 : env->virtual_nodes;
  run->argc = env->argc;
  run->argv = env->argv;
  for (int q = 0; q < x->world->size; q++)
    if ((*job_of_node)[env->nodes.node_of_rank[q]] >= 0)
      run->job_ranks[(*job_of_node)[env->nodes.node_of_rank[q]]]++;
  if (contend_jobs_validate(jf, run->job_ranks, err, sizeof err)) {
    contend_envelope_error(env, x->world, err);
    return CONTEND_EXIT_USAGE;
  }
  if (env->dry_run) {
    snprintf(run->run_id, sizeof run->run_id, "dry");
  } else {
    int pid = (int)getpid();
    contend_gbcast(x->world, &pid, sizeof pid);
    snprintf(run->run_id, sizeof run->run_id, "%d-%llu", pid,
             (unsigned long long)(env->seed % 1000000ULL));
  }
  return CONTEND_EXIT_OK;
}

/* This rank's buffers: contexts of my job, traffic and samples per motif
 * instance. */
static void alloc_rank(contend_jobs_rank *x) {
  const contend_jobs_run *run = x->r;
  const int my_n = x->my_job >= 0 ? x->jf->jobs[x->my_job].nmotifs : 0;
  x->tr = calloc((size_t)run->nm + 1, sizeof(contend_traffic));
  x->sinks = calloc((size_t)run->nm + 1, sizeof(contend_jobs_sink));
  x->ctx = calloc((size_t)my_n + 1, sizeof(contend_ctx));
  x->opened = calloc((size_t)my_n + 1, sizeof(int));
  if (!x->tr || !x->sinks || !x->ctx || !x->opened)
    contend_fail("out of memory");
  for (int g = 0; g < run->nm; g++) {
    contend_traffic_init(&x->tr[g]);
    x->sinks[g].cap = 0;
    if (x->max_samples > 0 && run->mi[g].job == x->my_job) {
      x->sinks[g].cap = x->max_samples;
      x->sinks[g].samples = malloc(sizeof(double) * (size_t)x->max_samples);
      if (!x->sinks[g].samples)
        contend_fail("out of memory");
    }
  }
}

static void free_rank(contend_jobs_rank *x) {
  for (int g = 0; x->tr && g < x->r->nm; g++) {
    contend_traffic_free(&x->tr[g]);
    free(x->sinks[g].samples);
  }
  free(x->tr);
  free(x->sinks);
  free(x->ctx);
  free(x->opened);
}

int contend_jobs_body(contend_group *world, void *arg) {
  contend_jobs_args *a = arg;
  const contend_params *opts = a->opts;
  contend_envelope env;
  int status = contend_envelope_begin(&env, world, opts, "jobs", a->argc, a->argv);
  if (status) {
    contend_envelope_free(&env);
    return status;
  }
  contend_jobs_run run;
  memset(&run, 0, sizeof run);
  contend_jobs_rank x = {.r = &run, .jf = a->jf, .env = &env, .world = world, .my_job = -1};
  x.verify = contend_param_bool(opts, "verify");
  x.verify_inject = (long)contend_param_int(opts, "verify_inject");
  x.max_samples = env.dry_run ? 0 : (long)contend_param_int(opts, "samples");
  if ((double)x.max_samples * world->size > CONTEND_JOBS_SAMPLES_MAX) { /* same on every rank */
    char msg[256];
    snprintf(msg, sizeof msg,
             "--samples %ld x %d ranks = %.0f iteration times per motif at rank 0, more than the "
             "limit of %d",
             x.max_samples, world->size, (double)x.max_samples * world->size,
             CONTEND_JOBS_SAMPLES_MAX);
    contend_envelope_error(&env, world, msg);
    contend_envelope_free(&env);
    return CONTEND_EXIT_USAGE;
  }
  int *job_of_node = NULL, *pos_of_node = NULL;
  status = prepare(&x, a->jf, opts, a->tree, &job_of_node, &pos_of_node);
  if (status) {
    free(job_of_node);
    free(pos_of_node);
    if (run.jf)
      contend_jobs_run_free(&run);
    contend_envelope_free(&env);
    return status;
  }
  const contend_nodes *nodes = &env.nodes;
  x.my_job = job_of_node[nodes->my_node];
  /* job ranks: node by node in the job's list order, a node's ranks consecutive */
  const int key =
      (x.my_job >= 0 ? pos_of_node[nodes->my_node] : 0) * nodes->ppn_max + nodes->local_rank;
  x.job = contend_split(world, x.my_job, key);
  free(job_of_node);
  free(pos_of_node);
  alloc_rank(&x);

  world->ops->watchdog(world, contend_envelope_watchdog(opts, 3600),
                       "contend jobs: watchdog: the run took longer than --watchdog; removing its "
                       "files and aborting\n");
  int used = 0;
  for (int j = 0; j < a->jf->njobs; j++)
    used += a->jf->jobs[j].nnodes;
  contend_progress(&env, world, "jobs: %d job%s on %d of %d nodes (%d ranks), mode %s, seed %llu",
                   a->jf->njobs, a->jf->njobs == 1 ? "" : "s", used, nodes->nnodes, world->size,
                   contend_param_str(opts, "mode"), (unsigned long long)env.seed);
  contend_progress(&env, world, "decompose");
  status = decompose(&x);
  if (status == CONTEND_EXIT_OK) {
    contend_jobs_share_minfo(&x);
    perform(&x);
  }
  cleanup(&x);
  world->ops->watchdog(world, 0, NULL);

  if (status == CONTEND_EXIT_OK) {
    contend_jobs_gather_traffic(&x);
    contend_envelope_finish(&env, world);
    run.wall_s = env.wall_s;
    contend_strbuf table = {0}, json = {0};
    double verr = 0;
    if (world->rank == 0) {
      snprintf(run.started_utc, sizeof run.started_utc, "%s", env.started_utc);
      snprintf(run.finished_utc, sizeof run.finished_utc, "%s", env.finished_utc);
      contend_jobs_report_table(&run, &table);
      contend_jobs_report_json(&run, &json);
      for (int p = 0; p < run.npasses; p++)
        for (int g = 0; g < run.nm; g++)
          verr += run.m[p][g].verify_errors;
    }
    status = contend_envelope_output(&env, world, opts, &table, &json, verr, "block(s)");
    contend_sb_free(&table);
    contend_sb_free(&json);
  }
  contend_group_free(x.job);
  free_rank(&x);
  if (a->keep && world->rank == 0) { /* the caller takes rank 0's results (tests) */
    run.env = NULL;
    *a->keep = run;
  } else {
    contend_jobs_run_free(&run);
  }
  contend_envelope_free(&env);
  return status;
}

int contend_jobs_launch(contend_jobs_args *a, int *argc, char ***argv) {
  char err[1024];
  const contend_engine *e = contend_run_engine(a->opts, NULL, err, sizeof err);
  if (!e) {
    fprintf(stderr, "contend jobs: error: %s\n", err);
    return CONTEND_EXIT_USAGE;
  }
  contend_launch l = {
      .argc = argc,
      .argv = argv,
      .nodes = (int)contend_param_int(a->opts, "nodes"),
      .ranks_per_node = (int)contend_param_int(a->opts, "ranks_per_node"),
      .opts = (contend_params *)a->opts,
  };
  return e->launch(&l, contend_jobs_body, a);
}
