/* `contend sim`: synthetic traffic on the simulated fabric, without MPI
 * semantics (validation, studies): options, help, a load or a sweep, the
 * table on stdout and the JSON results (contend-sim/1). */
#include "sim_cmd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/error.h"
#include "../core/proc.h"
#include "../fabric/partition.h"
#include "contend/files.h"
#include "contend/json.h"
#include "contend/strbuf.h"
#include "contend/version.h"
#include "router.h"
#include "sim_par.h"
#include "synth.h"

static const contend_param_def synth_defs[] = {
    {"traffic", CONTEND_P_STRING, "uniform", "",
     "traffic components joined by ';': [NAME=]PATTERN[:k=v,..] with patterns uniform, shift:K, "
     "group_shift, permutation, incast:senders=LIST,dst=N, hotspot:dst=N,frac=F, "
     "flow:src=S,dst=D; every pattern takes load=F and nodes=LIST (LIST: 0-7+12)",
     1, 0},
    {"load", CONTEND_P_DOUBLE, "0.5", "fraction",
     "offered load per source, as a fraction of the node link bandwidth", 0, 1},
    {"sweep", CONTEND_P_STRING, "", "fractions",
     "comma-separated loads, one point each (instead of --load)", 1, 0},
    {"warmup_us", CONTEND_P_DOUBLE, "10", "us", "simulated time before measuring", 0, 1e9},
    {"measure_us", CONTEND_P_DOUBLE, "50", "us", "simulated time measured", 1e-3, 1e9},
    {"drain", CONTEND_P_BOOL, "0", "",
     "after generation stops, run until every packet has arrived (deadlock check)", 1, 0},
    {"source_queue", CONTEND_P_INT, "256", "packets",
     "packets a source may queue before it refuses new ones (queued packets are memory)", 1, 65536},
    {"seed", CONTEND_P_SEED, "1", "", "seed of every random choice (sim runs are deterministic)", 1,
     0},
    {"output", CONTEND_P_FILE_OUT, "", "path", "write the JSON results here (-o)", 1, 0},
    {"quiet", CONTEND_P_BOOL, "0", "", "no progress lines on stderr (-q)", 1, 0},
    CONTEND_PARAM_END};

static void help(const contend_params *p) {
  contend_strbuf o = {0};
  contend_sb_printf(
      &o, "usage: contend sim [--topology SPEC] [--traffic SPEC] [--load F | --sweep F1,F2,..]\n"
          "                   [--router iq|voq|oq] [--routing R] [--vcs N] [--cc MODE]\n"
          "                   [--network PRESET] [-o FILE]\n\n"
          "Packet-level simulation of a lossless, credit-based fabric (virtual cut-through,\n"
          "per-VC credits; routers input-queued, with virtual output queues or shared-buffer\n"
          "output-queued: --router) under synthetic traffic.  Prints offered and accepted\n"
          "load (fractions of the node link bandwidth) and packet latency (ns) per traffic\n"
          "component; runs are deterministic for a seed.\n\n"
          "Examples:\n"
          "  contend sim --topology switch:nodes=8 --traffic uniform --load 1\n"
          "  contend sim --topology xgft:h=2,down=8,8,up=4,8 --sweep 0.2,0.4,0.6,0.8,1\n"
          "  contend sim --topology dragonfly:a=4,p=2,h=2 --traffic group_shift --routing ugal\n"
          "  contend sim --topology switch:nodes=32 --router oq --load 1\n"
          "  contend sim --topology fattree:leaves=8,nodes=8,uplinks=4 \\\n"
          "      --traffic 'incast:senders=8-31,dst=0,load=0.5;victim=flow:src=40,dst=9,load=0.2'"
          "\n\nOptions:\n");
  contend_params_help(p, "", &o);
  contend_sb_printf(&o, "\nRoutings (--routing), per topology:\n");
  sim_routing_help(&o);
  fputs(o.s ? o.s : "", stdout);
  contend_sb_free(&o);
}

static int parse_sweep(const char *s, double **out, int *n, char *err, size_t errlen) {
  int cap = 8, k = 0;
  double *v = malloc(sizeof *v * (size_t)cap);
  if (!v)
    contend_fail("out of memory");
  const char *p = s;
  while (*p) {
    char *end;
    const double d = strtod(p, &end);
    if (end == p || !(d >= 0 && d <= 1) || (*end && *end != ',')) {
      snprintf(err, errlen, "--sweep %s: expected loads in [0, 1] separated by commas", s);
      free(v);
      return -1;
    }
    if (k == cap)
      v = realloc(v, sizeof *v * (size_t)(cap *= 2));
    if (!v)
      contend_fail("out of memory");
    v[k++] = d;
    p = *end ? end + 1 : end;
  }
  if (!k) {
    snprintf(err, errlen, "--sweep: no loads given");
    free(v);
    return -1;
  }
  *out = v;
  *n = k;
  return 0;
}

static int usage_error(const char *msg) {
  fprintf(stderr, "contend sim: error: %s (see contend sim --help)\n", msg);
  return CONTEND_EXIT_USAGE;
}

int sim_cmd_parse(sim_cmd_args *a, int argc, char **argv, char *err, size_t errlen) {
  memset(a, 0, sizeof *a);
  a->defs = contend_param_defs_join(synth_defs, sim_param_defs);
  if (contend_params_init(&a->p, a->defs, "", err, errlen)) {
    free(a->defs);
    a->defs = NULL;
    return -2;
  }
  a->have_params = 1;
  contend_params *p = &a->p;
  const int parsed = contend_params_parse_argv(p, argc, argv, 1, err, errlen);
  if (parsed)
    return parsed == 1 ? 1 : -1;
  const uint64_t seed = (uint64_t)contend_param_int(p, "seed");
  const char *sweep = contend_param_str(p, "sweep");
  if (sweep && sweep[0]) {
    if (contend_param_is_set(p, "load")) {
      snprintf(err, errlen, "give --load or --sweep, not both");
      return -1;
    }
    if (parse_sweep(sweep, &a->loads, &a->nloads, err, errlen))
      return -1;
  } else {
    a->loads = malloc(sizeof *a->loads);
    if (!a->loads)
      contend_fail("out of memory");
    a->loads[0] = contend_param_double(p, "load");
    a->nloads = 1;
  }
  if (a->nloads > 1 && contend_param_str(p, "counters")[0]) {
    snprintf(err, errlen, "--counters records one run: give --load, not --sweep");
    return -1;
  }
  contend_files files; /* no output the same file as the topology.conf or another output */
  contend_files_init(&files);
  sim_params_files(p, &files);
  if (contend_files_check_params(p, &files, 0, err, errlen))
    return -1;
  if (sim_setup_from_params(p, seed, &a->su, err, errlen))
    return -1;
  a->have_setup = 1;
  if (synth_parse(contend_param_str(p, "traffic"), &a->su.topo, a->loads[0], seed, &a->spec, err,
                  errlen))
    return -1;
  return 0;
}

void sim_cmd_args_free(sim_cmd_args *a) {
  if (a->spec.c)
    synth_free(&a->spec);
  if (a->have_setup)
    sim_setup_free(&a->su);
  free(a->loads);
  if (a->have_params)
    contend_params_free(&a->p);
  free(a->defs);
  memset(a, 0, sizeof *a);
}

/* One process of `contend sim` (world NULL: not under MPI; else one of
 * world->size processes, each simulating a part of the fabric).  Only
 * rank 0 prints and writes; every rank returns the same status. */
static int sim_run(int argc, char **argv, contend_group *world) {
  const int P = world ? world->size : 1, lead = !world || world->rank == 0;
  char err[1024];
  sim_cmd_args a;
  int rc = CONTEND_EXIT_USAGE;
  const int parsed = sim_cmd_parse(&a, argc, argv, err, sizeof err);
  if (parsed == -2) {
    fprintf(stderr, "contend sim: internal error: %s\n", err);
    sim_cmd_args_free(&a);
    return CONTEND_EXIT_FAIL;
  }
  if (parsed == 1) {
    if (lead)
      help(&a.p);
    rc = 0;
    goto out;
  }
  if (parsed < 0) {
    rc = lead ? usage_error(err) : CONTEND_EXIT_USAGE;
    goto out;
  }
  contend_params *p = &a.p;
  sim_setup *su = &a.su;
  const double *loads = a.loads;
  const int nloads = a.nloads;
  const uint64_t seed = (uint64_t)contend_param_int(p, "seed");
  const char *output = contend_param_str(p, "output");
  contend_files files; /* every output created once, before the simulation (rank 0) */
  contend_files_init(&files);
  sim_params_files(p, &files);
  *err = 0;
  sim_partition pt = {0};
  sim_par par = {0};
  if (!*err && P > 1 &&
      sim_partition_make(&su->topo, P, contend_param_str(p, "partition"), seed, &pt, err,
                         sizeof err) == 0) {
    int cls;
    const sim_time look = sim_partition_lookahead(&pt, su->net.latency, &cls);
    if (look == 0)
      snprintf(err, sizeof err,
               "the partition over %d processes cuts links of latency 0 ns: no lookahead (give "
               "the links a latency, or fewer processes)",
               P);
    /* --cc's notes cross in the swaps: their delay (every link class's
     * latency and more) is never below the lookahead (one class's) */
    if (su->net.cc != SIM_CC_NONE && sim_cc_delay(&su->net) < look)
      contend_fail("internal error: --cc's notification delay %.1f ns is below the lookahead %.1f "
                   "ns",
                   (double)sim_cc_delay(&su->net) / 1000.0, (double)look / 1000.0);
    par = (sim_par){.world = world,
                    .part_of_router = pt.part_of_router,
                    .parts = P,
                    .me = world->rank,
                    .lookahead = look};
  }
  if (!*err && lead &&
      contend_files_check_params(p, &files, CONTEND_FILES_CREATE, err, sizeof err) == 0)
    *err = 0;
  if (world) { /* the same verdict on every rank */
    int64_t bad = *err != 0;
    contend_gallreduce(world, &bad, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
    if (bad && !*err)
      snprintf(err, sizeof err, "(refused on rank 0)");
  }
  if (*err) {
    rc = lead ? usage_error(err) : CONTEND_EXIT_USAGE;
    sim_partition_free(&pt);
    goto out;
  }
  const int quiet = contend_param_bool(p, "quiet");
  synth_run_opts o = {
      .warmup = (sim_time)(contend_param_double(p, "warmup_us") * 1e6 + 0.5),
      .measure = (sim_time)(contend_param_double(p, "measure_us") * 1e6 + 0.5),
      .drain = contend_param_bool(p, "drain"),
      .source_queue = (uint32_t)contend_param_int(p, "source_queue"),
      .par = P > 1 ? &par : NULL,
  };
  FILE *tty = lead ? stdout : fopen("/dev/null", "w");
  if (!tty)
    contend_fail("cannot open /dev/null");
  contend_strbuf js = {0};
  contend_json j;
  contend_json_init(&j, &js);
  contend_json_obj_begin(&j, NULL);
  contend_json_str(&j, "schema", "contend-sim/1");
  contend_json_tool(&j);
  contend_json_str(&j, "topology", su->topo.spec);
  contend_json_int(&j, "nodes", su->topo.nnodes);
  contend_json_int(&j, "routers", su->topo.nrouters);
  sim_router_json(&j, &su->net);
  contend_json_str(&j, "routing", sim_routing_name(su->routing));
  contend_json_int(&j, "vcs", sim_routing_vcs(su->routing));
  contend_json_int(&j, "ugal_threshold_bytes", sim_routing_ugal_threshold(su->routing));
  sim_degrade_json(&j, &su->topo, &su->degrade);
  contend_json_str(&j, "traffic", contend_param_str(p, "traffic"));
  contend_json_uint(&j, "seed", seed);
  contend_params_json(&j, "config", p, seed);
  fprintf(tty,
          "contend sim: %s (%d nodes, %d routers), router %s, routing %s, %d VC%s, cc %s, seed "
          "%llu\n",
          su->topo.spec, su->topo.nnodes, su->topo.nrouters, su->net.router->name,
          sim_routing_name(su->routing), sim_routing_vcs(su->routing),
          sim_routing_vcs(su->routing) == 1 ? "" : "s", contend_param_str(p, "cc"),
          (unsigned long long)seed);
  fprintf(tty, "%8s %10s %10s %12s %12s %12s %14s %9s\n", "load", "offered", "accepted",
          "lat mean ns", "lat p99 ns", "packet hops", "hops/s (wall)", "wall s");
  contend_json_arr_begin(&j, "points");
  double wall = 0;
  uint64_t hops = 0, events = 0, events_here = 0;
  int no_latency = 0;
  for (int i = 0; i < nloads; i++) {
    if (!quiet && nloads > 1)
      fprintf(stderr, "contend sim: point %d of %d, load %.3g\n", i + 1, nloads, loads[i]);
    synth_point pt;
    if (synth_run(su, &a.spec, loads[i], 1, &o, &j, &pt, err, sizeof err)) {
      contend_sb_free(&js);
      if (tty != stdout)
        fclose(tty);
      rc = lead ? usage_error(err) : CONTEND_EXIT_USAGE;
      goto out;
    }
    char mean[32] = "-", p99[32] = "-"; /* "-": no measured packet arrived (note below) */
    if (pt.lat_count) {
      snprintf(mean, sizeof mean, "%.1f", pt.lat_mean_ns);
      snprintf(p99, sizeof p99, "%.1f", pt.lat_p99_ns);
    }
    no_latency += !pt.lat_count;
    fprintf(tty, "%8.3f %10.4f %10.4f %12s %12s %12llu %14.3g %9.2f%s\n", loads[i], pt.offered,
            pt.accepted, mean, p99, (unsigned long long)pt.hops,
            pt.wall_s > 0 ? (double)pt.hops / pt.wall_s : 0.0, pt.wall_s,
            pt.drained == 0 ? "  NOT DRAINED" : "");
    fflush(tty);
    wall += pt.wall_s;
    hops += pt.hops;
    events += pt.events;
    events_here += pt.events_here;
  }
  contend_json_arr_end(&j);
  if (no_latency)
    fprintf(tty,
            "  -: %s (saturated, or the\n"
            "     window is shorter than a packet's trip): a longer --measure-us or --drain gives\n"
            "     latencies; the JSON has null latencies and a null_reason\n",
            SYNTH_NO_LATENCY);
  contend_json_uint(&j, "packet_hops", hops);
  contend_json_uint(&j, "events", events);
  contend_json_double(&j, "wall_s", wall);
  contend_json_double(&j, "setup_wall_s", su->setup_s);
  contend_json_double(&j, "deadlock_check_wall_s", su->deadlock_check_s);
  /* how the run was spread (these and the wall-clock figures are what
   * differs with the number of processes) */
  contend_json_obj_begin(&j, "processes");
  contend_json_int(&j, "count", P);
  if (P > 1) {
    contend_json_str(&j, "partition", pt.method);
    contend_json_int(&j, "cut_links", pt.cut_links);
    contend_json_double(&j, "lookahead_ns", (double)par.lookahead / 1e3);
    contend_json_uint(&j, "windows", par.windows);
    double w[2] = {par.wait_s, par.wait_s};
    contend_gallreduce(world, &w[0], 1, CONTEND_DT_DOUBLE, CONTEND_OP_MAX);
    contend_gallreduce(world, &w[1], 1, CONTEND_DT_DOUBLE, CONTEND_OP_MIN);
    contend_json_double(&j, "sync_wait_s_max", w[0]);
    contend_json_double(&j, "sync_wait_s_min", w[1]);
    /* each process's share of the work (its part's events, every point) */
    int64_t *per = calloc((size_t)P, sizeof *per);
    if (!per)
      contend_fail("out of memory");
    const int64_t mine = (int64_t)events_here;
    world->ops->allgather(world, &mine, sizeof mine, per);
    contend_json_arr_begin(&j, "events_per_process");
    for (int q = 0; q < P; q++)
      contend_json_uint(&j, NULL, (uint64_t)per[q]);
    contend_json_arr_end(&j);
    free(per);
  }
  contend_json_obj_end(&j);
  /* memory at machine scale: the whole process over the fabric's size */
  const double rss = contend_peak_rss_mib();
  const int nports = su->topo.nports ? su->topo.nports : 1;
  contend_json_double(&j, "peak_rss_mib", rss);
  contend_json_double(&j, "peak_rss_kib_per_node", rss * 1024.0 / su->topo.nnodes);
  contend_json_double(&j, "peak_rss_bytes_per_router_port", rss * 1048576.0 / nports);
  contend_json_obj_end(&j);
  fprintf(
      tty,
      "  peak memory %.1f MiB: %.1f KiB per node, %.0f B per router port (%d ports); wall %.2f s, "
      "%.3g packet hops/s\n"
      "  set-up %.2f s before the first point (topology, routing, deadlock check %.2f s)\n",
      rss, rss * 1024.0 / su->topo.nnodes, rss * 1048576.0 / nports, su->topo.nports, wall,
      wall > 0 ? (double)hops / wall : 0.0, su->setup_s, su->deadlock_check_s);
  contend_sb_printf(&js, "\n");
  rc = 0;
  if (lead && output && output[0]) { /* rank 0's JSON is the whole one (the counters summary) */
    if (contend_write_file_atomic(output, js.s, js.len, err, sizeof err)) {
      fprintf(stderr, "contend sim: %s\n", err);
      rc = CONTEND_EXIT_FAIL;
    } else if (!quiet) {
      fprintf(stderr, "contend sim: results in %s\n", output);
    }
  }
  if (world) { /* the same status on every rank */
    int64_t failed = rc != 0;
    contend_gallreduce(world, &failed, 1, CONTEND_DT_INT64, CONTEND_OP_MAX);
    rc = failed ? CONTEND_EXIT_FAIL : 0;
  }
  if (tty != stdout)
    fclose(tty);
  contend_sb_free(&js);
out:
  sim_cmd_args_free(&a);
  return rc;
}

typedef struct sim_launch {
  int argc;
  char **argv;
} sim_launch;

static int sim_body(contend_group *world, void *arg) {
  sim_launch *l = arg;
  return sim_run(l->argc, l->argv, world);
}

int contend_sim_main(int argc, char **argv) {
  if (contend_launcher_size() == 1) /* not under mpirun/srun with P > 1 */
    return sim_run(argc, argv, NULL);
  const contend_engine *mpi = contend_engine_find("mpi");
  sim_launch sl = {argc, argv};
  contend_launch l = {.argc = &sl.argc, .argv = &sl.argv};
  return mpi->launch(&l, sim_body, &sl);
}
