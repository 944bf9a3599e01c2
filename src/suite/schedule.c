/* The schedule of `network` and `load` (GPCNeT semantics), engine-neutral:
 * node split, sub-groups, the phases (canaries alone, congestors alone,
 * canaries under load), then the reduction and the output.  Every engine
 * runs this one code path: MPI for measurements, the trace engine for
 * dry runs (the plan is the traffic of the first timed iteration). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../run/envelope.h"
#include "../run/ring_log.h"
#include "measure.h"
#include "suite.h"

typedef struct phase_ctx {
  const contend_config *cfg;
  contend_run *run;
  contend_envelope *env;
  contend_group *world, *group, *sub;
  contend_group *cong_all; /* every congestor rank (serial window creation) */
  int group_id, my_node, local_rank, ppn_max;
  int nphases, phase_no;
  double watchdog_s;
} phase_ctx;

static void phase_begin(phase_ctx *p, const char *what, const contend_motif *m) {
  p->phase_no++;
  contend_progress(p->env, p->world, "%d/%d %s%s%s", p->phase_no, p->nphases, what, m ? " " : "",
                   m ? m->name : "");
  p->world->ops->watchdog(p->world, p->watchdog_s,
                          "contend: watchdog: a phase ran past --watchdog (the MPI library or the "
                          "network stopped making progress); aborting\n");
}

static contend_measure_opts measure_opts(const phase_ctx *p, int test_id, const char *phase,
                                         int result) {
  contend_measure_opts o = {
      .timeout_s = contend_param_double(&p->cfg->common, "timeout"),
      .verify = contend_param_bool(&p->cfg->common, "verify"),
      .verify_inject = (long)contend_param_int(&p->cfg->common, "verify_inject"),
      .test_id = test_id,
      .progress = p->env->progress,
      .phase = phase,
      .plan_only = p->env->dry_run,
      .first = p->run->traffic ? &p->run->traffic[result] : NULL,
      .iters_auto = !contend_param_is_set(&p->cfg->tests[test_id], "iters") &&
                    contend_param_int(&p->cfg->common, "iters") < 0,
  };
  /* the ring records: kept by rank 0 of the sub-group of every node's
   * first rank (all canary nodes; the other sub-groups draw the same
   * rings over their own ranks); a plan shows canaries from their
   * isolated phase only, and records every round of the plan or as many
   * as it prints */
  if (p->run->want_rings && p->sub && p->local_rank == 0 && p->sub->rank == 0 &&
      !(p->env->dry_run && p->run->results[result].phase == CONTEND_PHASE_CONGESTED))
    o.rings = &contend_run_rings(p->run)[result];
  /* --record-rings in a measuring run: the values of the same sub-group */
  if (p->run->want_rings && p->sub && p->local_rank == 0 && !p->env->dry_run &&
      contend_param_bool(&p->cfg->common, "record_rings"))
    o.values_group = p->sub;
  if (p->env->dry_run) {
    const contend_params *opts = &p->cfg->common;
    const long max = (long)contend_param_int(opts, "show_rings_max");
    o.plan_rings = contend_param_bool(opts, "record_rings") || max == 0 ? -1 : max;
  }
  return o;
}

/* Opens the context of motif mi on this rank's sub-group, one sub-group
 * at a time: the sub-communicators of one split share a context id, and
 * Open MPI 4.1's osc/rdma names the shared-memory file of a window after
 * it, so windows created at the same moment on one host collide.
 * Canaries take turns over the canary group, congestors over all
 * congestor groups (collective over that group). */
static void open_ctx(phase_ctx *p, contend_ctx *c, int mi) {
  const int canary = p->group_id == 0;
  contend_group *over = canary ? p->group : p->cong_all;
  const int slot = (canary ? 0 : p->group_id - 1) * p->ppn_max + p->local_rank;
  const int nslots = (canary ? 1 : p->cfg->ncong) * p->ppn_max;
  int rc = 0;
  for (int s = 0; s < nslots; s++) {
    if (s == slot)
      rc = p->world->ops->ctx_open(c, contend_motifs[mi], &p->cfg->tests[mi], p->sub, p->my_node,
                                   p->env->seed, NULL);
    contend_gbarrier(over);
  }
  if (rc)
    contend_fail("setup of test '%s' failed%s%s", contend_motifs[mi]->name, *c->error ? ": " : "",
                 c->error);
}

static contend_result *result_of(phase_ctx *p, int mi, contend_phase ph, int during, int *index) {
  *index = contend_result_index(p->run, mi, ph, during);
  return &p->run->results[*index];
}

static void run_canary_phase(phase_ctx *p, int t, contend_phase ph) {
  const int mi = p->cfg->canary[t];
  const int congested = ph == CONTEND_PHASE_CONGESTED;
  int ri;
  contend_result *r = result_of(p, mi, ph, -1, &ri);
  contend_measure_opts o = measure_opts(p, mi, congested ? "congested" : "isolated ", ri);
  contend_ctx c;
  open_ctx(p, &c, mi);
  if (congested) { /* released once the congestors are warm */
    contend_signal *rel = contend_signal_post(p->world);
    contend_signal_wait(p->world, rel, 0);
    contend_signal_free(p->world, rel);
  }
  contend_measure_canary(&c, contend_motifs[mi], p->group, &o, r);
  p->world->ops->ctx_close(&c);
  if (congested) { /* tell the congestors we are done */
    contend_signal *done = contend_signal_post(p->world);
    contend_signal_wait(p->world, done, 0);
    contend_signal_free(p->world, done);
  }
}

/* Congestor ranks during canary t's congested phase: warm up, then load
 * the network until the canaries say they are done. */
static void run_loading(phase_ctx *p, contend_ctx *cc, int my_cong, int t) {
  const contend_motif *m = contend_motifs[my_cong];
  int ri;
  contend_result *r = result_of(p, my_cong, CONTEND_PHASE_CONGESTOR_LOADING, t, &ri);
  contend_measure_opts o = measure_opts(p, my_cong, "congestor", ri);
  contend_measure_opts warm = o;
  warm.first = NULL;
  contend_measure_congestor(cc, m, p->sub,
                            (long)contend_param_int(&p->cfg->load, "congestor_warmup"), NULL, NULL,
                            NULL, &warm, NULL);
  contend_signal *rel = contend_signal_post(p->world);
  contend_signal *done = contend_signal_post(p->world);
  contend_measure_congestor(cc, m, p->sub, 0, p->world, done, rel, &o, r);
  contend_signal_wait(p->world, rel, 0);
  contend_signal_wait(p->world, done, 0);
  contend_signal_free(p->world, rel);
  contend_signal_free(p->world, done);
}

/* Records, at rank 0, the size and the number of distinct nodes of every
 * sub-group: the check that all measured traffic leaves the node. */
static void survey_subgroups(phase_ctx *p) {
  contend_run *run = p->run;
  int row[5] = {0, p->group_id, p->local_rank, 0, 0}; /* is_root, group, local rank, ranks, nodes */
  if (p->sub) {
    const int n = p->sub->size, root = p->sub->rank == 0;
    int *nodes = root ? malloc(sizeof(int) * (size_t)n) : NULL;
    char *seen = root ? calloc((size_t)p->env->nodes.nnodes, 1) : NULL;
    if (root && (!nodes || !seen))
      contend_fail("out of memory");
    contend_ggather(p->sub, &p->my_node, sizeof(int), nodes);
    int distinct = 0;
    for (int i = 0; root && i < n; i++) {
      distinct += !seen[nodes[i]];
      seen[nodes[i]] = 1;
    }
    free(nodes);
    free(seen);
    row[0] = root;
    row[3] = n;
    row[4] = distinct;
  }
  const int size = p->world->size;
  int *all = p->world->rank == 0 ? malloc(sizeof(int) * 5 * (size_t)size) : NULL;
  contend_ggather(p->world, row, sizeof row, all);
  if (p->world->rank != 0)
    return;
  run->subcomms = malloc(sizeof *run->subcomms * (size_t)size);
  if (!all || !run->subcomms)
    contend_fail("out of memory");
  for (int r = 0; r < size; r++)
    if (all[5 * r]) {
      for (int k = 0; k < 4; k++)
        run->subcomms[run->nsubcomms][k] = all[5 * r + 1 + k];
      run->nsubcomms++;
    }
  free(all);
}

/* The phases: canaries alone, congestors alone, canaries under load. */
static void run_phases(phase_ctx *p) {
  const contend_config *cfg = p->cfg;
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const int cong_base = load && !cong_only && contend_param_bool(&cfg->load, "congestor_baseline");
  /* congestor k of this rank (its group is 1 + k) */
  const int my_cong = p->group_id >= 1 ? cfg->cong[p->group_id - 1] : -1;
  if (!cong_only) /* 1. canaries alone */
    for (int t = 0; t < cfg->ncanary; t++) {
      phase_begin(p, "isolated", contend_motifs[cfg->canary[t]]);
      contend_gbarrier(p->world);
      if (p->group_id == 0)
        run_canary_phase(p, t, CONTEND_PHASE_ISOLATED);
      contend_gbarrier(p->world);
    }
  if (!load)
    return;
  contend_ctx cc;
  int cc_open = 0;
  if (cong_only || cong_base) { /* 2. congestors alone */
    phase_begin(p, "congestors alone", NULL);
    if (my_cong >= 0) {
      open_ctx(p, &cc, my_cong);
      cc_open = 1;
      int ri;
      contend_result *r = result_of(p, my_cong, CONTEND_PHASE_CONGESTOR_ALONE, -1, &ri);
      contend_measure_opts o = measure_opts(p, my_cong, "congestor", ri);
      long nm = (long)contend_param_int(&cfg->tests[my_cong], "measurements");
      contend_measure_congestor(&cc, contend_motifs[my_cong], p->sub, o.plan_only ? 1 : nm, NULL,
                                NULL, NULL, &o, r);
    }
    contend_gbarrier(p->world);
  }
  if (!cong_only && !cc_open && my_cong >= 0) { /* before any canary window exists */
    open_ctx(p, &cc, my_cong);
    cc_open = 1;
  }
  if (!cong_only) /* 3. canaries while the congestors load the network */
    for (int t = 0; t < cfg->ncanary; t++) {
      phase_begin(p, "congested", contend_motifs[cfg->canary[t]]);
      contend_gbarrier(p->world);
      if (p->group_id == 0) {
        run_canary_phase(p, t, CONTEND_PHASE_CONGESTED);
      } else if (my_cong >= 0) {
        run_loading(p, &cc, my_cong, t);
      } else { /* idle node: still takes part in the handshake */
        contend_signal *rq[2] = {contend_signal_post(p->world), contend_signal_post(p->world)};
        for (int k = 0; k < 2; k++) {
          contend_signal_wait(p->world, rq[k], 0);
          contend_signal_free(p->world, rq[k]);
        }
      }
      contend_gbarrier(p->world);
    }
  if (cc_open)
    p->world->ops->ctx_close(&cc);
}

/* The run's plan into run->plan, or -1 when it cannot be made (the
 * message given through the envelope).  Out of line, so that its message
 * buffer is not on the stack while the phases run. */
static __attribute__((noinline)) int plan_or_refuse(const contend_config *cfg,
                                                    contend_envelope *env, contend_group *world,
                                                    contend_run *run) {
  char err[1024];
  if (!contend_plan_make(cfg, env->nodes.nnodes, env->seed, &run->plan, err, sizeof err))
    return 0;
  /* how to get more nodes depends on the engine */
  const size_t len = strlen(err);
  if (env->engine->more_nodes)
    snprintf(err + len, sizeof err - len, " (%s)", env->engine->more_nodes);
  contend_envelope_error(env, world, err);
  return -1;
}

/* --record-rings keeps, per ring test and canary phase, measurements x
 * rings x canary nodes ranks in ring order (and as many values in
 * measuring runs): bounded in total, refused before any phase (-1, the
 * message given through the envelope).  Out of line, as plan_or_refuse. */
static __attribute__((noinline)) int rings_or_refuse(const contend_config *cfg,
                                                     contend_envelope *env, contend_group *world,
                                                     const contend_run *run) {
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  if (!contend_param_bool(&cfg->common, "record_rings") ||
      (load && contend_param_bool(&cfg->load, "congestor_only"))) /* no canary runs */
    return 0;
  const int phases = env->dry_run || !load ? 1 : 2;
  double total = 0;
  for (int t = 0; t < cfg->ncanary; t++) {
    const int mi = cfg->canary[t];
    if (contend_motifs[mi]->ring_of)
      total += (double)contend_param_int(&cfg->tests[mi], "measurements") *
               (double)contend_param_int(&cfg->tests[mi], "rings") *
               (double)run->plan.group_nodes[0] * phases;
  }
  if (total <= CONTEND_RING_RECORD_MAX)
    return 0;
  char err[512];
  snprintf(err, sizeof err,
           "--record-rings would record %.0f ring positions (measurements x rings x %d canary "
           "nodes, per ring test and canary phase), more than the limit %d: lower --measurements "
           "or --rings",
           total, run->plan.group_nodes[0], CONTEND_RING_RECORD_MAX);
  contend_envelope_error(env, world, err);
  return -1;
}

int contend_suite_body(contend_group *world, void *arg) {
  const contend_config *cfg = arg;
  const char *cmdname = cfg->cmd == CONTEND_CMD_LOAD ? "load" : "network";
  /* on the heap, as the plan's message buffer is out of line: every
   * in-process rank's stack costs the pages its deepest moment touched,
   * one 4 KiB page when the frames below stay small */
  contend_envelope *env = calloc(1, sizeof *env);
  if (!env)
    contend_fail("out of memory");
  int status = contend_envelope_begin(env, world, &cfg->common, cmdname, cfg->argc, cfg->argv);
  if (status) {
    contend_envelope_free(env);
    free(env);
    return status;
  }
  contend_run run;
  memset(&run, 0, sizeof run);
  run.cfg = cfg;
  run.env = env;
  if (plan_or_refuse(cfg, env, world, &run) || rings_or_refuse(cfg, env, world, &run)) {
    contend_plan_free(&run.plan);
    contend_envelope_free(env);
    free(env);
    return CONTEND_EXIT_USAGE;
  }
  contend_run_layout(&run);
  if (env->dry_run) {
    run.traffic = calloc((size_t)run.nresults + 1, sizeof *run.traffic);
    if (!run.traffic)
      contend_fail("out of memory");
    for (int i = 0; i < run.nresults; i++)
      contend_traffic_init(&run.traffic[i]);
  }
  /* ring records: always in measuring runs (a digest per measurement),
   * in dry runs when asked to show or record them */
  const int record_rings = contend_param_bool(&cfg->common, "record_rings");
  const int show_rings = env->dry_run && contend_param_bool(&cfg->common, "show_rings");
  run.want_rings = !env->dry_run || record_rings || show_rings;
  run.rings_whole = record_rings || show_rings;
  if (run.want_rings && world->rank == 0) /* the gather's destination */
    contend_run_rings(&run);

  phase_ctx p = {.cfg = cfg, .run = &run, .env = env, .world = world};
  p.my_node = env->nodes.my_node;
  p.local_rank = env->nodes.local_rank;
  p.ppn_max = env->nodes.ppn_max;
  p.group_id = run.plan.group_of_node[env->nodes.my_node];
  p.group = contend_split(world, p.group_id < 0 ? -1 : p.group_id, world->rank);
  p.sub = p.group ? contend_split(p.group, env->nodes.local_rank, env->nodes.my_node) : NULL;
  p.cong_all = contend_split(world, p.group_id >= 1 ? 1 : -1, world->rank);
  survey_subgroups(&p);

  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  const int cong_base = load && !cong_only && contend_param_bool(&cfg->load, "congestor_baseline");
  p.nphases = cong_only ? 1 : cfg->ncanary * (load ? 2 : 1) + cong_base;
  /* a phase measures for at most the timeout, then ends the round under
   * way; the congestors' warm-up and every context's setup (splits, RMA
   * windows) are inside it too: the timeout again for those, and a minute */
  p.watchdog_s = contend_envelope_watchdog(&cfg->common,
                                           2 * contend_param_double(&cfg->common, "timeout") + 60);
  contend_progress(env, world, "%s%s: %d ranks, %d nodes, seed %llu", cmdname,
                   env->dry_run ? " (dry run, trace engine)" : "", world->size, env->nodes.nnodes,
                   (unsigned long long)env->seed);

  if (env->engine->simulated_time && !contend_param_is_set(&cfg->common, "timeout"))
    contend_progress(env, world,
                     "the timeout is %g s of simulated time per test (GPCNeT's): a long "
                     "simulation; --timeout 0.001 gives a first look in seconds",
                     contend_param_double(&cfg->common, "timeout"));
  run_phases(&p);
  world->ops->watchdog(world, 0, NULL);

  contend_run_reduce(&run, world);
  contend_envelope_finish(env, world);
  contend_strbuf table = {0}, json = {0};
  double verr = 0;
  if (world->rank == 0) {
    if (env->dry_run) {
      contend_report_plan(&run, &table, &json);
    } else {
      contend_report_table(&run, &table);
      contend_report_json(&run, &json);
      for (int i = 0; i < run.nresults; i++)
        verr += run.results[i].verify_errors;
    }
  }
  status = contend_envelope_output(env, world, &cfg->common, &table, &json, verr, "message(s)");
  contend_sb_free(&table);
  contend_sb_free(&json);
  contend_group_free(p.sub);
  contend_group_free(p.group);
  contend_group_free(p.cong_all);
  if (run.traffic)
    for (int i = 0; i < run.nresults; i++)
      contend_traffic_free(&run.traffic[i]);
  free(run.traffic);
  for (int i = 0; run.rings && i < run.nresults; i++)
    contend_ring_log_free(&run.rings[i]);
  free(run.rings);
  free(run.subcomms);
  for (int i = 0; i < run.nresults; i++) {
    contend_hist_free(&run.results[i].fine);
    contend_hist_free(&run.results[i].bulk);
  }
  free(run.results);
  contend_plan_free(&run.plan);
  contend_envelope_free(env);
  free(env);
  return status;
}

int contend_suite_main(const contend_config *cfg, int *argc, char ***argv) {
  contend_launch l = {
      .argc = argc,
      .argv = argv,
      .nodes = (int)contend_param_int(&cfg->common, "nodes"),
      .ranks_per_node = (int)contend_param_int(&cfg->common, "ranks_per_node"),
      .opts = (contend_params *)&cfg->common,
  };
  return cfg->engine->launch(&l, contend_suite_body, (void *)cfg);
}
