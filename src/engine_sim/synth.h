/* Synthetic traffic for `contend sim` (synth.c): parse a --traffic spec
 * once, run it at a load on a freshly built fabric, write one JSON point. */
#ifndef CONTEND_SIM_SYNTH_H
#define CONTEND_SIM_SYNTH_H

#include "contend/json.h"
#include "netparams.h"

typedef struct synth_spec {
  void *c; /* components (synth.c's) */
  int n;
} synth_spec;

typedef struct synth_run_opts {
  sim_time warmup, measure; /* simulated: generation runs warmup + measure */
  int drain;                /* then run until every packet has arrived */
  uint32_t source_queue;    /* packets a source may hold before refusing */
  struct sim_par *par;      /* NULL: the whole fabric here; else this process's part
                             * (collective over par->world: every figure is the
                             * whole fabric's, on every process) */
} synth_run_opts;

/* Why a point's latencies are null: no packet generated in the measured
 * window was delivered (the JSON's latency_ns.null_reason). */
#define SYNTH_NO_LATENCY "no packet generated in the measured window was delivered"

typedef struct synth_point {
  double offered, accepted, lat_mean_ns, lat_p99_ns, wall_s; /* latencies NaN: lat_count 0 */
  uint64_t lat_count;                                        /* measured packets delivered */
  uint64_t hops, events, generated, undelivered;
  uint64_t events_here; /* over processes: this process's events (events: every part's) */
  int drained;          /* -1: not asked */
} synth_point;

/* Returns 0, or -1 with err (exit status 2).  seed draws permutations. */
int synth_parse(const char *spec, const sim_topo *t, double load, uint64_t seed, synth_spec *out,
                char *err, size_t errlen);
void synth_free(synth_spec *s);
/* One point: load overrides the components' default load when load_given
 * (a component's own load= wins).  Appends an object to the open JSON
 * array and fills *pt.  Returns 0, or -1 with err. */
int synth_run(const sim_setup *su, const synth_spec *spec, double load, int load_given,
              const synth_run_opts *o, contend_json *j, synth_point *pt, char *err, size_t errlen);

#endif
