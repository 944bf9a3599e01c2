"""ReFrame checks for contend: `contend network` and `contend load` as
regression tests whose performance variables are read from the JSON results
file each run writes (-o), not from the printed tables.

  reframe -C examples/reframe/config.py -c examples/reframe/contend_checks.py -r

Performance variables (the names ReFrame reports):
  ContendNetworkCheck  <canary>_mean, <canary>_p99       (usec or MiB/s/rank)
  ContendLoadCheck     ci_<canary>_mean, ci_<canary>_p99 (x, the Congestion Impact:
                       latency congested/isolated, bandwidth isolated/congested)
                       <canary>_iso_mean                 (the canary alone)
Which canaries run is decided by the `canaries` variable; the variables are
created from the results file, so every canary that ran is reported.  Every
value is reported as a float (a whole number in the file, such as an impact
of exactly 1, included); a null or non-finite value fails the check, naming
the field.

Reference ranges are per system:partition.  The generic entry ('*') and the
local system ('local', examples/reframe/config.py) have loose ranges: they
catch a broken run (a zero or absurd value), not a slow network.  Put ranges
measured on your cluster in the commented entries.

Variables to set with -S (e.g. -S ContendLoadCheck.num_tasks=512):
  contend          the contend binary (default: $CONTEND, else contend on PATH)
  canaries         --canaries LIST (default: the tool's default set)
  congestors       --congestors LIST (load only)
  canary_fraction  --canary-fraction (load only; 0: the tool's default 0.2)
  measurements     --measurements N (0: each test's default)
  timeout_s        --timeout (s): a test stops taking new measurements
  impact_limit     load only: when > 0, every Congestion Impact must be at most
                   this (a gate: -S ContendLoadCheck.impact_limit=3)
The partition's extras may set contend_virtual_nodes: K consecutive ranks form
one node (--virtual-nodes K), for systems that are one host."""

# ruff: noqa: RUF012  (class attributes of a check are ReFrame variables, copied per test)

import json
import math
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import run_before, sanity_function, variable

RESULTS = "contend.json"
_LOOSE_IMPACT = (1.0, -0.99, 49.0, "x")  # 0.01x .. 50x: only a broken run fails


class _ContendBase(rfm.RunOnlyRegressionTest):
    valid_systems = ["*"]
    valid_prog_environs = ["*"]
    maintainers = ["contend"]
    tags = {"contend", "network"}
    keep_files = [RESULTS]  # the results file goes to the output directory

    contend = variable(str, value=os.environ.get("CONTEND", "contend"))
    canaries = variable(str, value="")
    measurements = variable(int, value=0)
    timeout_s = variable(float, value=10.0)

    #: the command's own options, after the ones the variables give
    contend_command = "network"

    def _common_opts(self):
        opts = []
        vnodes = self.current_partition.extras.get("contend_virtual_nodes", 0)
        if vnodes:
            opts += ["--virtual-nodes", str(vnodes)]
        if self.canaries:
            opts += ["--canaries", self.canaries]
        if self.measurements:
            opts += ["--measurements", str(self.measurements)]
        return opts + ["--timeout", str(self.timeout_s), "--seed", "1", "-o", RESULTS]

    @run_before("run")
    def set_executable(self):
        self.executable = self.contend
        self.executable_opts = [self.contend_command] + self._common_opts() + self.command_opts()

    def command_opts(self):
        return []

    def results(self):
        with open(os.path.join(self.stagedir, RESULTS)) as f:
            return json.load(f)

    @sanity_function
    def validate(self):
        # the run ended normally and wrote its results file (written under a
        # temporary name and renamed: it exists only when complete)
        return sn.all(
            [
                sn.assert_eq(self.job.exitcode, 0),
                sn.assert_true(os.path.exists(os.path.join(self.stagedir, RESULTS))),
                sn.assert_found(r"Wall time", self.stdout),
            ]
        )


def _stat(doc, name, phase):
    """The canary `name`'s record in `phase` (isolated or congested)."""
    for t in doc["tests"]:
        if t["name"] == name and t["role"] == "canary" and t["phase"] == phase:
            return t
    raise ValueError(f"{RESULTS}: no {phase} record of canary {name}")


def _number(value, what):
    """A performance value as a float.  JSON has one number type: a value
    written without a fraction (a Congestion Impact of exactly 1, written
    `1`) reads as an int, and ReFrame reports whatever type it is given.
    null (no samples) and non-finite values are refused, naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{RESULTS}: {what} is {json.dumps(value)}, not a finite number")
    return float(value)


def network_values(doc):
    """{variable: (float value, unit)} of a `contend network` results document."""
    out = {}
    for t in doc["tests"]:
        if t["role"] != "canary":
            continue
        stats = t[t["metric"]]
        for stat, key in (("mean", "mean"), ("p99", "tail_99")):
            what = f"{t['name']} {t['metric']}.{key}"
            out[f"{t['name']}_{stat}"] = (_number(stats[key], what), t["units"])
    return out


def load_values(doc):
    """{variable: (float value, unit)} of a `contend load` results document:
    the Congestion Impact per canary and the canary alone."""
    out = {}
    for ci in doc["impact"]:
        for stat, key in (("mean", "ci_mean"), ("p99", "ci_tail_99")):
            out[f"ci_{ci['name']}_{stat}"] = (_number(ci[key], f"impact {ci['name']}.{key}"), "x")
        iso = _stat(doc, ci["name"], "isolated")
        what = f"isolated {ci['name']} {iso['metric']}.mean"
        out[f"{ci['name']}_iso_mean"] = (_number(iso[iso["metric"]]["mean"], what), iso["units"])
    return out


def _perf_variables(values):
    """ReFrame performance functions of {variable: (value, unit)}."""
    return {
        name: sn.make_performance_function(sn.defer(value), unit)
        for name, (value, unit) in values.items()
    }


@rfm.simple_test
class ContendNetworkCheck(_ContendBase):
    """`contend network`: the canaries alone, the network's baseline."""

    descr = "contend network: canary latency and bandwidth, no congestion"
    contend_command = "network"
    num_tasks = 2
    reference = {
        # generic: positive and below absurd; only a broken run fails
        "*": {
            "rr_lat_mean": (1000.0, -1.0, 99.0, "usec"),  # 0 .. 100 ms
            "rr_bw_mean": (1000.0, -1.0, None, "MiB/s/rank"),  # > 0
        },
        # one host (config.py): shared memory, oversubscribed cores
        "local": {
            "rr_lat_mean": (100.0, -1.0, 9.0, "usec"),  # 0 .. 1 ms
            "rr_lat_p99": (1000.0, -1.0, 9.0, "usec"),  # 0 .. 10 ms
            "rr_bw_mean": (1000.0, -0.99, None, "MiB/s/rank"),  # at least 10
        },
        # a real cluster, measured there (uncomment and fill in):
        # "mycluster:compute": {
        #     "rr_lat_mean": (2.1, -0.5, 0.3, "usec"),  # 1.05 .. 2.73 us
        #     "rr_lat_p99": (4.0, None, 0.5, "usec"),  # at most 6 us
        #     "rr_bw_mean": (5800.0, -0.2, None, "MiB/s/rank"),  # at least 4640
        # },
    }

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = _perf_variables(network_values(self.results()))


@rfm.simple_test
class ContendLoadCheck(_ContendBase):
    """`contend load`: the Congestion Impact of the congestors on the canaries."""

    descr = "contend load: Congestion Impact (canaries alone vs. with congestors)"
    contend_command = "load"
    num_tasks = 4
    congestors = variable(str, value="")
    canary_fraction = variable(float, value=0.0)
    impact_limit = variable(float, value=0.0)
    reference = {
        "*": {f"ci_{c}_{s}": _LOOSE_IMPACT for c in ("rr_lat", "rr_bw") for s in ("mean", "p99")},
        # one host: the "congestion" is CPU and memory contention
        "local": {
            **{f"ci_{c}_{s}": _LOOSE_IMPACT for c in ("rr_lat", "rr_bw") for s in ("mean", "p99")},
            "rr_lat_iso_mean": (100.0, -1.0, 9.0, "usec"),  # 0 .. 1 ms
        },
        # a real cluster: GPCNeT's "good" networks stay within 2-3x at the mean
        # "mycluster:compute": {
        #     "ci_rr_lat_mean": (1.0, None, 2.0, "x"),   # at most 3x
        #     "ci_rr_lat_p99": (1.0, None, 9.0, "x"),    # at most 10x
        #     "ci_rr_bw_mean": (1.0, None, 1.0, "x"),    # at most 2x
        #     "rr_lat_iso_mean": (2.1, None, 0.3, "usec"),
        # },
    }

    def command_opts(self):
        opts = []
        if self.congestors:
            opts += ["--congestors", self.congestors]
        if self.canary_fraction:
            opts += ["--canary-fraction", str(self.canary_fraction)]
        return opts

    @run_before("performance")
    def set_perf_variables(self):
        self.perf_variables = _perf_variables(load_values(self.results()))
        if self.impact_limit > 0:
            # -S impact_limit=L: every Congestion Impact at most L, on any system
            gate = (self.impact_limit, None, 0.0, "x")
            self.reference = {"*": {n: gate for n in self.perf_variables if n.startswith("ci_")}}
