/* The trace engine: runs motifs without MPI in one process, rank by rank,
 * and records who sends how many bytes to whom (dry runs).  Point-to-point
 * and one-sided steps are exact; collectives are expanded with a textbook
 * algorithm (recursive doubling, dissemination, pairwise alltoall) and
 * flagged as estimated, since MPI libraries choose their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../suite/suite.h"
#include "contend/json.h"
#include "contend/traffic.h"
#include "trace.h"

typedef struct flow {
  int src, dst;
  double bytes, msgs;
} flow;

typedef struct trace_sink {
  flow *f;
  size_t n, cap;
  int estimated;
  int recording;
} trace_sink;

/* Either sink (network/load dry runs: one iteration per test) or traffic
 * (jobs dry runs: what `count` attached) receives the steps. */
typedef struct trace_impl {
  trace_sink *sink;
  contend_traffic *traffic;
  int nfiles;
  void **mem;
  int nmem, capmem;
} trace_impl;

static void record(contend_ctx *c, int from, int to, size_t bytes) {
  trace_impl *t = c->impl;
  trace_sink *s = t->sink;
  if (!s) {
    if (t->traffic)
      contend_flow_add(&t->traffic->flows, c->node_of[from], c->node_of[to], (double)bytes, 1);
    return;
  }
  if (!s->recording)
    return;
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1024;
    s->f = realloc(s->f, sizeof(flow) * s->cap);
    if (!s->f)
      abort();
  }
  s->f[s->n++] = (flow){c->node_of[from], c->node_of[to], (double)bytes, 1};
}

static void *t_alloc(contend_ctx *c, size_t bytes) {
  trace_impl *t = c->impl;
  void *p = calloc(1, bytes ? bytes : 1);
  if (!p)
    abort();
  if (t->nmem == t->capmem) {
    t->capmem = t->capmem ? 2 * t->capmem : 8;
    t->mem = realloc(t->mem, sizeof(void *) * (size_t)t->capmem);
    if (!t->mem)
      abort();
  }
  t->mem[t->nmem++] = p;
  return p;
}

static void t_isend(contend_ctx *c, const void *b, size_t n, int peer, int tag) {
  (void)b;
  (void)tag;
  record(c, c->rank, peer, n);
}
static void t_exchange(contend_ctx *c, const contend_xfer *x, int n) {
  for (int i = 0; i < n; i++)
    if (x[i].send)
      record(c, c->rank, x[i].peer, x[i].bytes);
}
static void t_repeat(contend_ctx *c, const contend_xfer *x, const int *len, int nsteps,
                     long times) {
  int n = 0;
  for (int k = 0; k < nsteps; k++)
    n += len[k];
  for (long t = 0; t < times; t++) /* message by message, as exchange records them */
    t_exchange(c, x, n);
}
static void t_irecv(contend_ctx *c, void *b, size_t n, int peer, int tag) {
  (void)c, (void)b, (void)n, (void)peer, (void)tag; /* the sender records the flow */
}
static void t_nop(contend_ctx *c) { (void)c; }
static void t_put(contend_ctx *c, const void *b, size_t n, int peer, size_t off) {
  (void)b, (void)off;
  record(c, c->rank, peer, n);
}
static void t_get(contend_ctx *c, void *b, size_t n, int peer, size_t off) {
  (void)b, (void)off;
  record(c, peer, c->rank, n); /* data flows from the target */
}
/* A step of a collective's textbook expansion: into the sink (as before)
 * or into the estimated pairs of the attached traffic. */
static void record_coll(contend_ctx *c, int from, int to, size_t bytes) {
  trace_impl *t = c->impl;
  if (t->sink)
    record(c, from, to, bytes);
  else if (t->traffic)
    contend_flow_add(&t->traffic->estimated, c->node_of[from], c->node_of[to], (double)bytes, 1);
}

static void coll_count(contend_ctx *c, contend_coll_kind k, double bytes) {
  trace_impl *t = c->impl;
  if (t->sink)
    t->sink->estimated |= t->sink->recording;
  if (t->traffic) {
    t->traffic->coll_calls[k] += 1;
    t->traffic->coll_bytes[k] += bytes;
  }
}

static void t_barrier(contend_ctx *c) { /* dissemination */
  coll_count(c, CONTEND_COLL_BARRIER, 0);
  for (int k = 1; k < c->size; k *= 2)
    record_coll(c, c->rank, (c->rank + k) % c->size, 0);
}
static void t_allreduce(contend_ctx *c, const void *s, void *r, int count, contend_dtype dt,
                        contend_op op) {
  (void)op;
  size_t el = dt == CONTEND_DT_BYTE ? 1 : 8;
  if (s != r)
    memcpy(r, s, el * (size_t)count); /* keeps verification-free motifs sane */
  coll_count(c, CONTEND_COLL_ALLREDUCE, (double)(el * (size_t)count));
  for (int mask = 1; mask < c->size; mask <<= 1) { /* recursive doubling */
    int partner = c->rank ^ mask;
    if (partner < c->size)
      record_coll(c, c->rank, partner, el * (size_t)count);
  }
}
static void t_alltoall(contend_ctx *c, const void *s, void *r, size_t per) {
  (void)s, (void)r;
  trace_impl *t = c->impl;
  if (t->traffic) {
    t->traffic->coll_calls[CONTEND_COLL_ALLTOALL] += 1;
    t->traffic->coll_bytes[CONTEND_COLL_ALLTOALL] += (double)per * (c->size - 1);
  }
  for (int k = 1; k < c->size; k++)
    record_coll(c, c->rank, (c->rank + k) % c->size, per);
}
static void t_compute(contend_ctx *c, double sec) {
  trace_impl *t = c->impl;
  if (t->traffic)
    t->traffic->compute_s += sec;
}

/* File I/O: volume only; nothing touches a disk (read buffers keep what
 * they held). */
static int t_file_open(contend_ctx *c, const contend_io_spec *s) {
  trace_impl *t = c->impl;
  (void)s;
  return t->nfiles++;
}
static void t_file_write_at(contend_ctx *c, int fh, const void *b, size_t n,
                            unsigned long long off) {
  trace_impl *t = c->impl;
  (void)fh, (void)b, (void)off;
  if (t->traffic) {
    t->traffic->io_write_bytes += (double)n;
    t->traffic->io_write_ops += 1;
  }
}
static void t_file_read_at(contend_ctx *c, int fh, void *b, size_t n, unsigned long long off) {
  trace_impl *t = c->impl;
  (void)fh, (void)b, (void)off;
  if (t->traffic) {
    t->traffic->io_read_bytes += (double)n;
    t->traffic->io_read_ops += 1;
  }
}
static void t_file_fh(contend_ctx *c, int fh) { (void)c, (void)fh; }
static void t_file_remove(contend_ctx *c, const contend_io_spec *s) { (void)c, (void)s; }
static void t_count(contend_ctx *c, contend_traffic *tr) { ((trace_impl *)c->impl)->traffic = tr; }

static const contend_engine_ops trace_ops = {
    .name = "trace",
    .alloc = t_alloc,
    .win_alloc = t_alloc,
    .isend = t_isend,
    .irecv = t_irecv,
    .exchange = t_exchange,
    .repeat = t_repeat,
    .waitall = t_nop,
    .put = t_put,
    .get = t_get,
    .flush_all = t_nop,
    .barrier = t_barrier,
    .allreduce = t_allreduce,
    .alltoall = t_alltoall,
    .compute = t_compute,
    .file_open = t_file_open,
    .file_write_at = t_file_write_at,
    .file_read_at = t_file_read_at,
    .file_sync = t_file_fh,
    .file_close = t_file_fh,
    .file_remove = t_file_remove,
    .count = t_count,
};

int contend_trace_ctx_open(contend_ctx *c, const contend_motif *m, const contend_params *p,
                           int rank, int size, const int *node_of, uint64_t seed,
                           const contend_ctx *job) {
  memset(c, 0, sizeof *c);
  if (job) {
    c->job_name = job->job_name;
    c->job_index = job->job_index;
    c->run_id = job->run_id;
    c->stream = job->stream;
    c->job_phase = CONTEND_JOB_DECOMPOSE;
  }
  trace_impl *t = calloc(1, sizeof *t);
  c->state = calloc(1, m->state_size ? m->state_size : 1);
  if (!t || !c->state)
    abort();
  c->rank = rank;
  c->size = size;
  c->node_of = node_of;
  c->params = p;
  c->ops = &trace_ops;
  c->impl = t;
  c->seed = seed;
  return m->setup ? m->setup(c) : 0;
}

void contend_trace_ctx_close(contend_ctx *c) {
  trace_impl *t = c->impl;
  if (!t)
    return;
  for (int k = 0; k < t->nmem; k++)
    free(t->mem[k]);
  free(t->mem);
  free(t);
  free(c->state);
  c->impl = NULL;
  c->state = NULL;
}

static int cmp_flow(const void *a, const void *b) {
  const flow *x = a, *y = b;
  if (x->src != y->src)
    return x->src - y->src;
  return x->dst - y->dst;
}

static int cmp_bytes_desc(const void *a, const void *b) {
  const flow *x = a, *y = b;
  if (x->bytes != y->bytes)
    return x->bytes < y->bytes ? 1 : -1;
  return cmp_flow(a, b);
}

static void merge(trace_sink *s) {
  if (!s->n)
    return;
  qsort(s->f, s->n, sizeof(flow), cmp_flow);
  size_t w = 0;
  for (size_t i = 1; i < s->n; i++) {
    if (s->f[i].src == s->f[w].src && s->f[i].dst == s->f[w].dst) {
      s->f[w].bytes += s->f[i].bytes;
      s->f[w].msgs += s->f[i].msgs;
    } else {
      s->f[++w] = s->f[i];
    }
  }
  s->n = w + 1;
}

/* One iteration of motif mi on every rank of every sub-communicator of the
 * nodes in group g (local ranks 0..ppn-1), round 0 of measurement 0. */
static void trace_test(const contend_config *cfg, const contend_plan *plan, int g, int mi, int ppn,
                       uint64_t seed, trace_sink *sink, size_t *msg_bytes) {
  const contend_motif *m = contend_motifs[mi];
  int n = 0;
  int *nodes = malloc(sizeof(int) * (size_t)plan->nnodes);
  if (!nodes)
    abort();
  for (int i = 0; i < plan->nnodes; i++)
    if (plan->group_of_node[i] == g)
      nodes[n++] = i;
  for (int l = 0; l < ppn; l++)
    for (int r = 0; r < n; r++) {
      trace_impl impl = {.sink = sink};
      contend_ctx c;
      memset(&c, 0, sizeof c);
      c.rank = r;
      c.size = n;
      c.node_of = nodes;
      c.params = &cfg->tests[mi];
      c.ops = &trace_ops;
      c.impl = &impl;
      c.seed = seed;
      c.state = calloc(1, m->state_size ? m->state_size : 1);
      if (!c.state)
        abort();
      sink->recording = 0;
      if (m->setup)
        m->setup(&c);
      *msg_bytes = c.msg_bytes;
      if (m->round) {
        contend_rng rng;
        contend_rng_init(&rng, seed, 2, (uint64_t)mi, 0, 0); /* as the MPI runner */
        m->round(&c, &rng);
      }
      sink->recording = 1;
      m->iterate(&c);
      sink->recording = 0;
      for (int k = 0; k < impl.nmem; k++)
        free(impl.mem[k]);
      free(impl.mem);
      free(c.state);
    }
  free(nodes);
  merge(sink);
}

int contend_dry_run(const contend_config *cfg, contend_strbuf *o, char *err, size_t errlen) {
  const int nn = (int)contend_param_int(&cfg->common, "nodes");
  const int ppn = (int)contend_param_int(&cfg->common, "ranks_per_node");
  const contend_param_value *sv = &cfg->common.v[contend_params_find(&cfg->common, "seed")];
  const uint64_t seed = sv->is_time ? 0 : (uint64_t)sv->i;
  const int load = cfg->cmd == CONTEND_CMD_LOAD;
  const int cong_only = load && contend_param_bool(&cfg->load, "congestor_only");
  contend_plan plan;
  if (contend_plan_make(cfg, nn, seed, &plan, err, errlen))
    return 2;
  const char *output = contend_param_str(&cfg->common, "output");
  if (*output && contend_check_writable(output, err, errlen)) {
    contend_plan_free(&plan);
    return 2;
  }
  contend_strbuf js = {0};
  contend_json j;
  contend_json_init(&j, &js);
  contend_json_obj_begin(&j, NULL);
  contend_json_str(&j, "schema", "contend-plan");
  contend_json_str(&j, "schema_version", CONTEND_SCHEMA_VERSION);
  contend_json_str(&j, "command", load ? "load" : "network");
  contend_json_uint(&j, "seed", seed);
  contend_json_int(&j, "nodes", nn);
  contend_json_int(&j, "ranks_per_node", ppn);
  contend_json_arr_begin(&j, "node_order");
  for (int i = 0; i < nn; i++)
    contend_json_int(&j, NULL, plan.order[i]);
  contend_json_arr_end(&j);

  contend_sb_printf(o, "contend %s --dry-run: plan for %d nodes x %d ranks per node, seed %llu%s\n",
                    load ? "load" : "network", nn, ppn, (unsigned long long)seed,
                    sv->is_time ? " (no --seed given: a real run draws one from the clock)" : "");
  contend_sb_printf(o, "  node groups:");
  const int ngroups = load ? 1 + cfg->ncong : 1;
  contend_json_arr_begin(&j, "groups");
  for (int g = 0; g < ngroups; g++) {
    const char *gname = g == 0 ? "canaries" : contend_motifs[cfg->cong[g - 1]]->name;
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", gname);
    contend_json_arr_begin(&j, "nodes");
    contend_sb_printf(o, "%s %s [", g ? ";" : "", gname);
    int first = 1;
    for (int i = 0; i < nn; i++)
      if (plan.group_of_node[i] == g) {
        contend_json_int(&j, NULL, i);
        contend_sb_printf(o, "%s%d", first ? "" : ",", i);
        first = 0;
      }
    contend_sb_printf(o, "]");
    contend_json_arr_end(&j);
    contend_json_obj_end(&j);
  }
  contend_json_arr_end(&j);
  contend_sb_printf(o,
                    "\n  traffic of one timed iteration (round 0 of measurement 0), per test:\n");

  contend_json_arr_begin(&j, "tests");
  const int ntests = (cong_only ? 0 : cfg->ncanary) + (load ? cfg->ncong : 0);
  for (int t = 0; t < ntests; t++) {
    const int is_canary = !cong_only && t < cfg->ncanary;
    const int mi = is_canary ? cfg->canary[t] : cfg->cong[t - (cong_only ? 0 : cfg->ncanary)];
    const int g = is_canary ? 0 : 1 + (t - (cong_only ? 0 : cfg->ncanary));
    trace_sink sink = {0};
    size_t mb = 0;
    trace_test(cfg, &plan, g, mi, ppn, seed, &sink, &mb);
    double bytes = 0, msgs = 0, max_in = 0;
    double *in = calloc((size_t)nn, sizeof(double));
    if (!in)
      abort();
    for (size_t i = 0; i < sink.n; i++) {
      bytes += sink.f[i].bytes;
      msgs += sink.f[i].msgs;
      if (sink.f[i].src != sink.f[i].dst)
        in[sink.f[i].dst] += sink.f[i].bytes;
    }
    int max_node = 0;
    for (int i = 0; i < nn; i++)
      if (in[i] > max_in)
        max_in = in[i], max_node = i;
    free(in);
    const contend_motif *m = contend_motifs[mi];
    contend_sb_printf(o, "\n  %s %s (%s, %zu B): %d nodes x %d ranks\n",
                      is_canary ? "canary" : "congestor", m->name, m->label, mb,
                      plan.group_nodes[g], ppn);
    contend_sb_printf(o,
                      "    %.0f messages, %.0f B per iteration; %zu node pairs; most into one "
                      "node: %.0f B (node %d)%s\n",
                      msgs, bytes, sink.n, max_in, max_node,
                      sink.estimated ? "; collectives estimated" : "");
    contend_json_obj_begin(&j, NULL);
    contend_json_str(&j, "name", m->name);
    contend_json_str(&j, "role", is_canary ? "canary" : "congestor");
    contend_json_int(&j, "message_bytes", (int64_t)mb);
    contend_json_double(&j, "messages_per_iteration", msgs);
    contend_json_double(&j, "bytes_per_iteration", bytes);
    contend_json_bool(&j, "collectives_estimated", sink.estimated);
    contend_json_arr_begin(&j, "pairs");
    for (size_t i = 0; i < sink.n; i++) {
      contend_json_arr_begin(&j, NULL);
      contend_json_int(&j, NULL, sink.f[i].src);
      contend_json_int(&j, NULL, sink.f[i].dst);
      contend_json_double(&j, NULL, sink.f[i].bytes);
      contend_json_double(&j, NULL, sink.f[i].msgs);
      contend_json_arr_end(&j);
    }
    contend_json_arr_end(&j);
    contend_json_obj_end(&j);
    qsort(sink.f, sink.n, sizeof(flow), cmp_bytes_desc);
    const size_t show = sink.n < 12 ? sink.n : 12;
    contend_sb_printf(o, "    %8s -> %-8s %14s %10s\n", "src node", "dst node", "B/iteration",
                      "msgs");
    for (size_t i = 0; i < show; i++)
      contend_sb_printf(o, "    %8d -> %-8d %14.0f %10.0f\n", sink.f[i].src, sink.f[i].dst,
                        sink.f[i].bytes, sink.f[i].msgs);
    if (sink.n > show)
      contend_sb_printf(o, "    ... %zu more pairs (-o FILE writes them all)\n", sink.n - show);
    free(sink.f);
  }
  contend_json_arr_end(&j);
  contend_json_obj_end(&j);
  int rc = 0;
  if (*output) {
    if (contend_write_file_atomic(output, js.s, js.len, err, errlen))
      rc = 3;
    else
      contend_sb_printf(o, "\n  plan written to %s\n", output);
  }
  contend_sb_free(&js);
  contend_plan_free(&plan);
  return rc;
}
