/* The simulated fabric's parameter table and presets (see netparams.h).
 *
 * Preset sources (public figures; the values are rounded, not vendor
 * specifications; docs/simulator.md, Presets, has the same table):
 * - aries-like: Alverson, Froese, Kaplan, Roweth, "Cray XC Series
 *   Network", Cray white paper WP-Aries01-1112 (2012): dragonfly of
 *   4 x 48-port Aries routers per blade group, electrical links 14 Gbit/s
 *   x 3 lanes (5.25 GB/s = 42 Gbit/s), optical global links 4.7 GB/s
 *   (37.6 Gbit/s), NIC injection about 10 GB/s (we use 42 Gbit/s per
 *   node link on the fabric side), 64-byte payload packets, adaptive
 *   (UGAL-style) routing, per-hop router latency about 100 ns; no
 *   end-to-end congestion control.
 *   Router: the same paper describes the Aries router as 48 tiles in a
 *   6 x 8 array, each with an input buffer, a row bus to the tiles of its
 *   row, an 8 x 6 subswitch and column buffers; an output port collects
 *   from the column buffers of the 6 rows (the hierarchical crossbar of
 *   Cray's YARC, Scott, Abts, Kim, Dally, "The BlackWidow High-Radix Clos
 *   Network", ISCA 2006, there 8 x 8 tiles).  So packets wait per output
 *   inside the router and an output takes packets from several rows at
 *   once: `voq`.  Neither the internal speedup nor the column buffer
 *   sizes are published: speedup 2 (the least at which a combined
 *   input/output-queued crossbar can behave as an output-queued switch,
 *   Chuang, Goel, McKeown, Prabhakar, IEEE JSAC 1999) and an output
 *   buffer of 6 packets of 80 B, one per row of tiles feeding the output.
 * - ib-like: an EDR InfiniBand fat tree: 100 Gbit/s links and 90 ns
 *   port-to-port switch latency (Mellanox SB7800 / Switch-IB 2 product
 *   brief), 4096-byte MTU (IBTA spec. vol. 1), D-mod-k style static
 *   routing (OpenSM's ftree engine), congestion control off (the common
 *   deployment).
 *   Router: a shared-buffer output-queued switch, `oq`.  Switch-IB 2's
 *   buffer size is not published: we use the 16 MB fully shared buffer
 *   of Mellanox's Ethernet ASIC of the same generation and speed
 *   (Spectrum, 32 x 100 Gbit/s, 2015; Broadcom's Tomahawk also carries
 *   16 MB, in four pools of 4 MB), 16 MiB per switch, and dynamic
 *   threshold alpha 1 (SONiC's default for lossless queues).
 * - slingshot-like: De Sensi, Di Girolamo, McMahon, Roweth, Hoefler, "An
 *   In-Depth Analysis of the Slingshot Interconnect", SC20: Rosetta
 *   64-port switches at 200 Gbit/s, dragonfly, about 350 ns switch
 *   latency under load-free conditions (we use 300 ns), adaptive routing,
 *   per-flow congestion control that throttles only the sources of an
 *   endpoint congestion.
 *   Router: Rosetta is 32 tiles in 4 rows of 8, two ports per tile; each
 *   port has a row bus to the tiles of its row, each tile a 16-input
 *   8-output crossbar into column channels, and an output port collects
 *   from the 4 rows (Cray's Hot Interconnects 2019 Slingshot talk, as
 *   WikiChip's Rosetta page summarizes it; De Sensi et al. outline the
 *   same switch): `voq`.  Its speedup and buffer sizes are not
 *   published: speedup 2 as for aries-like, an output buffer of 4 packets
 *   of 4160 B (one per row), and the 64 KiB input buffer per VC the
 *   preset had.
 * UGAL bias: both dragonfly presets route without one
 * (ugal_threshold_bytes 0, not voq's default of 4 input buffers): Cray
 * MPICH on Aries defaults to MPICH_GNI_ROUTING_MODE=ADAPTIVE_0, adaptive
 * routing with no bias; Rosetta's is not published, and without a bias
 * slingshot-like's GPCNeT latency impact matches Malbec's (p99 1.0 against
 * 1.1; 8.5-9.2 with a bias of 64-256 KiB).
 * The host overhead per message (mpi_overhead_ns) of each preset is set so
 * that GPCNeT's isolated RR two-sided 8 B latency, 2 o on this model,
 * matches the systems of Chunduri et al., "GPCNeT", SC19, Table 2:
 * Crystal (Aries) 1.8 us, Osprey (EDR InfiniBand) 1.1 us, Malbec
 * (Slingshot) 1.8 us.
 * Plain runs without a preset keep the input-queued `iq` router: their
 * results stay those of earlier releases, and no one model fits the
 * presets' hardware (two families buffer at the outputs per input, one
 * in a shared pool). */
#include "netparams.h"

#include "../core/proc.h"
#include "router.h"

#include <stdio.h>
#include <string.h>

#define LAT_MAX 1e9

const contend_param_def sim_param_defs[] = {
    {"topology", CONTEND_P_STRING, "dragonfly:a=4,p=2,h=2", "",
     "fabric: switch:nodes=N | fattree:leaves=L,nodes=N,uplinks=U | "
     "fattree:pods=P,leaves=L,nodes=N,uplinks=U,pod_uplinks=Q | xgft:h=H,down=M1,..,up=W1,.. | "
     "dragonfly:a=A,p=P,h=H[,g=G][,links=L] | slurm:FILE (a topology.conf)",
     1, 0},
    {"network", CONTEND_P_STRING, "", "",
     "preset for every fabric parameter not given, the router model of its hardware included: "
     "aries-like (voq), ib-like (oq), slingshot-like (voq) (sources in docs/simulator.md)",
     1, 0},
    {"routing", CONTEND_P_STRING, "", "",
     "routing by name (default: the topology's first; `contend sim --help` lists them per "
     "topology)",
     1, 0},
    {"vcs", CONTEND_P_INT, "0", "count",
     "virtual channels per port (0: what the routing needs to be deadlock-free)", 0, 8},
    {"mtu", CONTEND_P_INT, "4096", "B", "payload bytes per packet", 1, 1048576},
    {"header_bytes", CONTEND_P_INT, "0", "B", "wire bytes added to every packet", 0, 4096},
    {"buffer_bytes", CONTEND_P_INT, "32768", "B",
     "input buffer per virtual channel per router port (credits)", 1, 1e9},
    {"speedup", CONTEND_P_INT, "0", "x",
     "router internal speedup: an input port feeds the crossbar this many times faster than "
     "its link (0: the router model's: 1 for iq, none, the head-of-line blocking of a plain "
     "input-queued switch; 2 for voq, a combined input/output-queued crossbar; oq's crossbar "
     "has no limit)",
     0, 8},
    {"router", CONTEND_P_STRING, "iq", "",
     "router model: iq (input FIFO per port and VC, head-of-line blocking, as today) | voq "
     "(virtual output queues per input VC, iSLIP allocator, --speedup, small output buffers) | "
     "oq (shared-buffer output-queued switch, dynamic-threshold admission, credits back when a "
     "packet leaves the switch)",
     1, 0},
    {"islip_iterations", CONTEND_P_INT, "2", "count",
     "voq: iterations of the iSLIP allocator (request, grant, accept) per allocation round", 1, 8},
    {"output_buffer_bytes", CONTEND_P_INT, "0", "B",
     "voq: buffer per router output port between crossbar and link (0: 16 packets of mtu + "
     "header)",
     0, 1e9},
    {"shared_buffer_bytes", CONTEND_P_INT, "4194304", "B",
     "oq: buffer pool per switch; each output queue is guaranteed one packet of it, the rest is "
     "shared under the dynamic threshold",
     1, 1073741824},
    {"dt_alpha", CONTEND_P_DOUBLE, "1", "x",
     "oq: dynamic threshold (Choudhury-Hahne): an output queue admits a packet while its length "
     "is below alpha x the free shared pool (2^-7 to 2^6, as switch ASICs offer)",
     0.0078125, 64},
    {"node_gbps", CONTEND_P_DOUBLE, "100", "Gbit/s", "NIC link bandwidth", 1e-3, 1e6},
    {"local_gbps", CONTEND_P_DOUBLE, "100", "Gbit/s",
     "router-router bandwidth (dragonfly group, lower tree levels)", 1e-3, 1e6},
    {"global_gbps", CONTEND_P_DOUBLE, "100", "Gbit/s",
     "dragonfly global links and links into a 3-level tree's top", 1e-3, 1e6},
    {"node_latency_ns", CONTEND_P_DOUBLE, "5", "ns", "NIC link latency", 0, LAT_MAX},
    {"local_latency_ns", CONTEND_P_DOUBLE, "10", "ns", "local link latency", 0, LAT_MAX},
    {"global_latency_ns", CONTEND_P_DOUBLE, "100", "ns", "global link latency", 0, LAT_MAX},
    {"router_latency_ns", CONTEND_P_DOUBLE, "100", "ns", "router pipeline latency per hop", 0,
     LAT_MAX},
    {"cc", CONTEND_P_STRING, "none", "",
     "congestion control: none | ecn (marking + DCQCN-like rates) | perflow (Slingshot-like: "
     "throttle the sources of an endpoint congestion only)",
     1, 0},
    {"ecn_threshold", CONTEND_P_DOUBLE, "0.5", "fraction",
     "mark packets leaving a VC buffer at least this full", 0, 1},
    {"cc_period_us", CONTEND_P_DOUBLE, "5", "us",
     "congestion control period: rate increase (ecn) / hold time (perflow)", 1e-3, 1e6},
    {"cc_gain", CONTEND_P_DOUBLE, "0.0625", "fraction", "DCQCN alpha gain g", 1e-6, 1},
    {"ugal_threshold_bytes", CONTEND_P_INT, "-1", "B",
     "ugal, ugal-g, par: the non-minimal path wins when q_min x H_min > q_val x H_val + this "
     "(-1: the router model's bias: 0 for iq; 4 x --buffer-bytes for voq and oq, whose deep "
     "queues UGAL would otherwise read as congestion under uniform load)",
     -1, 1e9},
    {"ugal_candidates", CONTEND_P_INT, SIM_STR(SIM_UGAL_DEFAULT_CANDIDATES), "count",
     "random intermediates UGAL compares with the minimal path at each decision", 1,
     SIM_UGAL_MAX_CANDIDATES},
    {"eager_bytes", CONTEND_P_INT, "8192", "B",
     "MPI semantics: messages from this size on use rendezvous (RTS/CTS)", 0, 1e12},
    {"rndv_window_bytes", CONTEND_P_INT, "0", "B",
     "MPI semantics: receiver-paced rendezvous: the receiver grants a message's data this many "
     "bytes at a time, one CTS per window once the previous window has landed (PSM2-like "
     "expected receives; 0: one CTS for the whole message)",
     0, 1e12},
    {"rndv_max_active", CONTEND_P_INT, "0", "count",
     "MPI semantics: rendezvous messages a rank receives at once; later ones wait for their CTS "
     "(receiver back-pressure on an incast; 0: no limit)",
     0, 1e9},
    {"mpi_overhead_ns", CONTEND_P_DOUBLE, "0", "ns",
     "MPI semantics: host time a rank spends on each message it sends and on each message "
     "whose data it receives (LogP's o; 0: the fabric alone)",
     0, LAT_MAX},
    {"degrade", CONTEND_P_LIST, "", "list",
     "ground truth for localisation: COMPONENT:PORT=FRACTION (repeatable) makes that link carry "
     "FRACTION (0 < F <= 1) of its bandwidth in both directions; names as in the counter CSV and "
     "`contend topology paths` (e.g. leaf3:9=0.25, g0.r1:5=0.5, nic7:0=0.5)",
     1, 0},
    {"degrade_random", CONTEND_P_STRING, "", "N,FRACTION,SEED[,CLASS]",
     "degrade N router-to-router links (of CLASS local or global if given: dragonfly groups' "
     "own or global links) drawn with SEED to FRACTION of their bandwidth (the results' "
     "degraded list names them)",
     1, 0},
    {"counters", CONTEND_P_FILE_OUT, "", "path",
     "write port counters as a time series CSV here (time_s,component,port,vc,counter,value)", 1,
     0},
    {"counter_interval_us", CONTEND_P_DOUBLE, "0", "us",
     "counter sampling interval (0: one sample at the end)", 0, 1e12},
    {"counters_max_mib", CONTEND_P_INT, "4096", "MiB",
     "largest --counters CSV: a sample that would take the file past it is not written, nor any "
     "after it (the results say when sampling stopped; on a 100,000-node fabric one sample of "
     "every "
     "port is about 200 MiB)",
     1, 1048576},
    {"partition", CONTEND_P_STRING, "auto", "",
     "under mpirun with P > 1 processes: how the fabric splits over them: auto, groups "
     "(dragonfly groups, tree pods) or graph (METIS); contend topology partition shows it",
     1, 0},
    CONTEND_PARAM_END};

void sim_params_files(const contend_params *p, contend_files *fs) {
  const char *topo = contend_param_str(p, "topology");
  if (!strncmp(topo, "slurm:", 6))
    contend_files_input(fs, "--topology slurm:FILE", topo + 6, 0);
}

typedef struct preset {
  const char *name;
  const char *kv[48]; /* key, value pairs, NULL-terminated */
} preset;

static const preset presets[] = {
    {"aries-like",
     {"topology",
      "dragonfly:a=16,p=4,h=6,g=17",
      "routing",
      "ugal",
      "mtu",
      "64",
      "header_bytes",
      "16",
      "buffer_bytes",
      "8192",
      "router",
      "voq",
      "speedup",
      "2",
      "output_buffer_bytes",
      "480",
      "ugal_threshold_bytes",
      "0",
      "node_gbps",
      "42",
      "local_gbps",
      "42",
      "global_gbps",
      "37.6",
      "node_latency_ns",
      "5",
      "local_latency_ns",
      "10",
      "global_latency_ns",
      "100",
      "router_latency_ns",
      "100",
      "cc",
      "none",
      "mpi_overhead_ns",
      "900",
      NULL}},
    {"ib-like",
     {"topology",
      "fattree:leaves=32,nodes=18,uplinks=18",
      "routing",
      "dmodk",
      "mtu",
      "4096",
      "header_bytes",
      "64",
      "buffer_bytes",
      "32768",
      "router",
      "oq",
      "shared_buffer_bytes",
      "16777216",
      "dt_alpha",
      "1",
      "node_gbps",
      "100",
      "local_gbps",
      "100",
      "global_gbps",
      "100",
      "node_latency_ns",
      "5",
      "local_latency_ns",
      "10",
      "global_latency_ns",
      "25",
      "router_latency_ns",
      "90",
      "cc",
      "none",
      "mpi_overhead_ns",
      "550",
      NULL}},
    {"slingshot-like",
     {"topology",
      "dragonfly:a=16,p=16,h=16,g=33",
      "routing",
      "ugal",
      "mtu",
      "4096",
      "header_bytes",
      "64",
      "buffer_bytes",
      "65536",
      "router",
      "voq",
      "speedup",
      "2",
      "output_buffer_bytes",
      "16640",
      "ugal_threshold_bytes",
      "0",
      "node_gbps",
      "200",
      "local_gbps",
      "200",
      "global_gbps",
      "200",
      "node_latency_ns",
      "5",
      "local_latency_ns",
      "10",
      "global_latency_ns",
      "100",
      "router_latency_ns",
      "300",
      "cc",
      "perflow",
      "mpi_overhead_ns",
      "900",
      NULL}},
};
#define NPRESETS (sizeof presets / sizeof presets[0])

const char *sim_preset_names(void) { return "aries-like, ib-like, slingshot-like"; }

static int apply_preset(contend_params *p, const char *name, char *err, size_t errlen) {
  for (size_t i = 0; i < NPRESETS; i++) {
    if (strcmp(presets[i].name, name))
      continue;
    for (int k = 0; presets[i].kv[k]; k += 2) {
      const int idx = contend_params_find(p, presets[i].kv[k]);
      if (idx < 0 || p->v[idx].set)
        continue;
      char e[256];
      if (contend_params_set(p, idx, presets[i].kv[k + 1], e, sizeof e)) {
        snprintf(err, errlen, "internal error: preset %s: %s", name, e);
        return -1;
      }
    }
    return 0;
  }
  snprintf(err, errlen, "--network: unknown preset '%s' (known: %s)", name, sim_preset_names());
  return -1;
}

/* --ugal-threshold-bytes -1: the router model's bias, at most 4 GiB - 1. */
static int64_t ugal_bias(const sim_router_model *rm, int64_t buffer_bytes) {
  const int64_t b = (int64_t)rm->ugal_bias_buffers * buffer_bytes;
  return b > UINT32_MAX ? UINT32_MAX : b;
}

static sim_time ns_to_ps(double ns) { return (sim_time)(ns * 1000.0 + 0.5); }

int sim_setup_from_params(contend_params *p, uint64_t seed, sim_setup *s, char *err,
                          size_t errlen) {
  const double t0 = contend_monotonic_s();
  memset(s, 0, sizeof *s);
  const char *preset = contend_param_str(p, "network");
  s->preset = preset ? preset : "";
  if (s->preset[0] && apply_preset(p, s->preset, err, errlen))
    return -1;
  const char *cc = contend_param_str(p, "cc");
  sim_cc_mode mode;
  if (!strcmp(cc, "none"))
    mode = SIM_CC_NONE;
  else if (!strcmp(cc, "ecn"))
    mode = SIM_CC_ECN;
  else if (!strcmp(cc, "perflow"))
    mode = SIM_CC_PERFLOW;
  else {
    snprintf(err, errlen, "--cc: unknown mode '%s' (known: none, ecn, perflow)", cc);
    return -1;
  }
  const char *router = contend_param_str(p, "router");
  const sim_router_model *rm = sim_router_find(router);
  if (!rm) {
    snprintf(err, errlen, "--router: unknown model '%s' (known: %s)", router, sim_router_names());
    return -1;
  }
  char e[512];
  if (sim_topo_parse(contend_param_str(p, "topology"), &s->topo, e, sizeof e)) {
    snprintf(err, errlen, "--topology: %s", e);
    return -1;
  }
  const char *routing = contend_param_str(p, "routing");
  const int64_t thr = contend_param_int(p, "ugal_threshold_bytes");
  const sim_routing_opts ro = {
      .vcs = (int)contend_param_int(p, "vcs"),
      .ugal_threshold =
          (uint32_t)(thr >= 0 ? thr : ugal_bias(rm, contend_param_int(p, "buffer_bytes"))),
      .ugal_candidates = (int)contend_param_int(p, "ugal_candidates"),
      .packet_bytes =
          (uint32_t)(contend_param_int(p, "mtu") + contend_param_int(p, "header_bytes"))};
  if (sim_routing_new(&s->topo, routing && routing[0] ? routing : NULL, &ro, &s->routing, e,
                      sizeof e)) {
    snprintf(err, errlen, "--routing: %s", e);
    sim_topo_free(&s->topo);
    return -1;
  }
  sim_net_config *c = &s->net;
  c->topo = &s->topo;
  c->routing = s->routing;
  c->mtu = (uint32_t)contend_param_int(p, "mtu");
  c->header = (uint32_t)contend_param_int(p, "header_bytes");
  c->buffer_bytes = (uint32_t)contend_param_int(p, "buffer_bytes");
  c->speedup = (uint32_t)contend_param_int(p, "speedup");
  c->router = rm;
  c->islip_iterations = (uint32_t)contend_param_int(p, "islip_iterations");
  c->output_buffer_bytes = (uint32_t)contend_param_int(p, "output_buffer_bytes");
  sim_router_resolve(c);
  c->shared_buffer_bytes = (uint64_t)contend_param_int(p, "shared_buffer_bytes");
  c->dt_alpha = contend_param_double(p, "dt_alpha");
  c->gbps[SIM_LINK_NODE] = contend_param_double(p, "node_gbps");
  c->gbps[SIM_LINK_LOCAL] = contend_param_double(p, "local_gbps");
  c->gbps[SIM_LINK_GLOBAL] = contend_param_double(p, "global_gbps");
  c->latency[SIM_LINK_NODE] = ns_to_ps(contend_param_double(p, "node_latency_ns"));
  c->latency[SIM_LINK_LOCAL] = ns_to_ps(contend_param_double(p, "local_latency_ns"));
  c->latency[SIM_LINK_GLOBAL] = ns_to_ps(contend_param_double(p, "global_latency_ns"));
  c->router_latency = ns_to_ps(contend_param_double(p, "router_latency_ns"));
  c->cc = mode;
  c->ecn_threshold = contend_param_double(p, "ecn_threshold");
  c->cc_period = ns_to_ps(contend_param_double(p, "cc_period_us") * 1000.0);
  c->cc_gain = contend_param_double(p, "cc_gain");
  c->seed = seed;
  if (sim_degrade_parse(&s->topo, contend_param_str(p, "degrade"),
                        contend_param_str(p, "degrade_random"), sim_routing_name(s->routing),
                        &s->degrade, err, errlen)) {
    sim_setup_free(s);
    return -1;
  }
  c->link_scale = s->degrade.scale;
  if (sim_net_config_check(c, err, errlen)) {
    sim_setup_free(s);
    return -1;
  }
  const double t_check = contend_monotonic_s();
  const int cycle = sim_routing_check_deadlock(s->routing, e, sizeof e);
  s->deadlock_check_s = contend_monotonic_s() - t_check;
  if (cycle) {
    snprintf(err, errlen, "routing %s on %s can deadlock: %s", sim_routing_name(s->routing),
             s->topo.spec, e);
    sim_setup_free(s);
    return -1;
  }
  s->eager_bytes = (uint64_t)contend_param_int(p, "eager_bytes");
  s->rndv_window = (uint64_t)contend_param_int(p, "rndv_window_bytes");
  s->rndv_max_active = (int)contend_param_int(p, "rndv_max_active");
  s->mpi_overhead = ns_to_ps(contend_param_double(p, "mpi_overhead_ns"));
  const char *counters = contend_param_str(p, "counters");
  s->counters = counters && counters[0] ? counters : NULL;
  s->counter_interval = ns_to_ps(contend_param_double(p, "counter_interval_us") * 1000.0);
  s->counters_max_bytes = (uint64_t)contend_param_int(p, "counters_max_mib") << 20;
  s->setup_s = contend_monotonic_s() - t0;
  return 0;
}

void sim_setup_free(sim_setup *s) {
  if (s->routing)
    sim_routing_free(s->routing);
  s->routing = NULL;
  sim_degrade_free(&s->degrade);
  sim_topo_free(&s->topo);
}
