/* The trace engine: the in-process control plane (contend/inproc.h) with
 * contexts that record traffic (trace_ops.c) and no time at all. */
#include <stdio.h>

#include "../coop/sched.h"
#include "../core/error.h"
#include "contend/inproc.h"
#include "trace.h"

extern const contend_engine contend_engine_trace;

static double no_time(void) { return 0.0; }

static int open_ctx(contend_ctx *c, const contend_motif *m, const contend_params *p, int rank,
                    contend_inproc_comm *comm, uint64_t seed, const contend_ctx *job) {
  const int rc = contend_trace_ctx_open(c, m, p, rank, comm->size, comm->node, seed, job);
  contend_trace_ctx_on_close(c, contend_inproc_comm_release, comm);
  return rc;
}

static const contend_inproc_backend trace_backend = {
    .engine = &contend_engine_trace,
    .library = "contend trace engine",
    .now = no_time,
    .ctx_open = open_ctx,
    .ctx_close = contend_trace_ctx_close,
    .watchdog = NULL,
    .poll = coop_yield,
    .idle = NULL,
};

static int trace_check(contend_params *opts, char *err, size_t errlen) {
  if (contend_param_int(opts, "nodes") < 1) {
    snprintf(err, errlen, "--dry-run needs --nodes N (and optionally --ranks-per-node P)");
    return -1;
  }
  return 0;
}

static int trace_launch(const contend_launch *l, contend_body body, void *arg) {
  return contend_inproc_launch(&trace_backend, l->nodes, l->ranks_per_node, body, arg);
}

const contend_engine contend_engine_trace = {
    .name = "trace",
    .help = "every rank a user-level context in this process, recording who sends what to "
            "whom (dry runs; needs --nodes)",
    .in_process = 1,
    .dry_run = 1,
    .node_discovery = "dry_run",
    .more_nodes = "--nodes N plays more nodes",
    .check = trace_check,
    .launch = trace_launch,
};
