"""The PMPI throttle on the emulated cluster: netscope shields a canary from an all-to-all.

Issue 13, acceptance point 2 (the test half; ``bench/throttle_cluster`` is the
static-rate half). One 12-node emulated cluster (3 leaves of 4 nodes,
100 Mbit/s node links, 8:1 taper: 50 Mbit/s leaf uplinks, 512 KiB drop-tail
queues, as ``test_cluster_congestion.py``) runs two separate MPI jobs at once,
one rank per node:

- the congestor: ``contend load --congestor-only --congestors pairwise_a2a``
  (64 KiB to each peer) on 10 nodes, with c_a 0;
- the canary: ``contend network --canaries rr_lat`` (8-byte random-ring
  latency) on n004 (leaf1) and n008 (leaf2), so its messages cross the
  uplinks the all-to-all fills, with c_a 6.67 (MILC-small, the paper's
  Table 3).

Each job runs under ``contend throttle`` with the ``cluster`` counter source
(the node's egress qdisc backlog, 20 polls per window), 50 ms windows and the
100 Mbit/s line rate; mode ``off`` or ``netscope``, alternating, TRIALS runs
each. Asserted:

- the source sees the load: in every netscope trial the congestor's throttle
  log has windows with a backlog and its rate was cut below the line rate,
  while the canary's rate stays near the line rate;
- the canary's p99 8-byte latency (its results JSON) is lower with netscope
  than with off, Welch t-test p < 0.05 over the trials.

Needs root, ``ip netns``, Open MPI and the built ``contend``; skipped otherwise.
About 2 minutes on 2 cores; every run is bounded, only the processes started
here are killed (by process group), the cluster is always removed.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clusterkit import (
    BUILD,
    CONTEND,
    cli_argv,
    cluster_env,
    kill_group,
    skip_reason,
    tapered_cluster,
)

LIB = BUILD / "lib" / "libcontend-throttle.so"

CANARY_NODES = (4, 8)  # leaf1 and leaf2
LINE_GBPS = 0.1  # the node links' rate
CA_CANARY, CA_CONGESTOR = 6.67, 0.0
# The controller's numbers for a 100 Mbit/s link: 50 ms windows (20 polls of
# the qdisc, one every 2.5 ms), alpha following the signal quickly (g 0.5),
# and an additive increase of 0.5 Mbit/s per quiet window (10 Mbit/s per s;
# the default 1 Gbit/s would restore the line rate after any quiet window).
THROTTLE_ARGS = [
    "--throttle-source",
    "cluster",
    "--throttle-line-gbps",
    LINE_GBPS,
    "--throttle-window-us",
    50000,
    "--throttle-gain",
    0.5,
    "--throttle-increase-gbps",
    0.0005,
]
CONGESTOR_ARGS = [
    "--congestor-only",
    "--congestors",
    "pairwise_a2a",
    "--pairwise_a2a.msg_bytes",
    65536,
    "--pairwise_a2a.iters",
    1,
    "--timeout",
    9,
    "--seed",
    1,
    "-q",
]
CANARY_ARGS = [
    "--canaries",
    "rr_lat",
    "--rr_lat.rings",
    4,
    "--rr_lat.iters",
    100,
    "--rr_lat.warmup",
    20,
    "--timeout",
    3,
    "--seed",
    1,
    "-q",
]
LEAD_S = 2.5  # the congestor starts (and its controller settles) before the canary
TRIALS = 5  # per mode, alternating off, netscope, off, ...
RUN_TIMEOUT = 90  # s, per job
ALPHA = 0.05


_REASON = skip_reason(LIB)
if _REASON:
    print(f"test_throttle_cluster: skipped: {_REASON}", file=sys.stderr)
pytestmark = pytest.mark.skipif(bool(_REASON), reason=_REASON or "ok")


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """The CLI's environment with a private state directory."""
    return cluster_env(
        tmp_path_factory.mktemp("throttle-cluster-state"), drop_prefixes=("CONTEND_THROTTLE",)
    )


@pytest.fixture(scope="module")
def cluster(env):
    """The 12-node tapered cluster; always removed (and checked gone) afterwards."""
    with tapered_cluster(env, f"tt{os.getpid() % 100000:05d}") as c:
        yield c


def _throttle(mode: str, ca: float, log: Path) -> list:
    if mode == "off":
        return [CONTEND, "throttle", "--throttle", "off", "--"]
    return [CONTEND, "throttle", "--throttle", mode, "--throttle-ca", ca, *THROTTLE_ARGS,
            "--throttle-log", log, "--"]  # fmt: skip


def _job(env, prefix, hosts, argv, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(
            cli_argv("run", "--prefix", prefix, "--np", len(hosts), "--host", ",".join(hosts),
                     "--", *argv),
            env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip


def _wait(proc: subprocess.Popen, what: str, log: Path) -> None:
    try:
        rc = proc.wait(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        pytest.fail(f"{what} did not finish in {RUN_TIMEOUT} s:\n{log.read_text()[-3000:]}")
    assert rc == 0, f"{what} failed ({rc}):\n{log.read_text()[-3000:]}"


def _log_rows(path: Path) -> list:
    with open(path, newline="") as fh:
        return list(csv.DictReader(line for line in fh if not line.startswith("#")))


def trial(env, prefix, desc, mode: str, k: int, work: Path) -> dict:
    """One run of the two jobs at once; the canary's p99 (us) and the throttle logs."""
    hosts = [n["hostname"] for n in desc["nodes"]]
    canary_hosts = [hosts[i] for i in CANARY_NODES]
    congestor_hosts = [h for i, h in enumerate(hosts) if i not in CANARY_NODES]
    tag = f"{mode}{k}"
    cong_log, can_log = work / f"{tag}-congestor.out", work / f"{tag}-canary.out"
    cong_csv, can_csv = work / f"{tag}-congestor.csv", work / f"{tag}-canary.csv"
    congestor = _job(
        env, prefix, congestor_hosts,
        _throttle(mode, CA_CONGESTOR, cong_csv)
        + [CONTEND, "load", *CONGESTOR_ARGS, "-o", work / f"{tag}-congestor.json"],
        cong_log,
    )  # fmt: skip
    canary = None
    try:
        time.sleep(LEAD_S)
        assert congestor.poll() is None, f"congestor ended early:\n{cong_log.read_text()}"
        canary = _job(
            env, prefix, canary_hosts,
            _throttle(mode, CA_CANARY, can_csv)
            + [CONTEND, "network", *CANARY_ARGS, "-o", work / f"{tag}-canary.json"],
            can_log,
        )  # fmt: skip
        _wait(canary, f"canary ({mode})", can_log)
        # the canary must have measured under load: the congestor is still running
        still_loaded = congestor.poll() is None
        t_canary = time.monotonic()
        _wait(congestor, f"congestor ({mode})", cong_log)
        tail_s = time.monotonic() - t_canary
    finally:
        for proc in (canary, congestor):
            if proc is not None:
                kill_group(proc)
    result = json.loads((work / f"{tag}-canary.json").read_text())
    (lat,) = [t["lat_us"] for t in result["tests"] if t["name"] == "rr_lat"]
    out = {"mode": mode, "p99_us": lat["p99"], "p50_us": lat["p50"], "loaded": still_loaded}
    out["tail_s"] = tail_s  # how long the congestor ran on after the canary
    if mode != "off":
        out["congestor_log"] = _log_rows(cong_csv)
        out["canary_log"] = _log_rows(can_csv)
    return out


def _log_summary(rows: list) -> dict:
    signals = [float(r["signal"]) for r in rows if r["signal"] != ""]
    rates = [float(r["rate_gbps"]) for r in rows]
    return {
        "windows": len(signals),
        "busy_share": sum(s > 0 for s in signals) / max(1, len(signals)),
        "mean_signal": sum(signals) / max(1, len(signals)),
        "mean_rate_gbps": sum(rates) / max(1, len(rates)),
        "min_rate_gbps": min(rates, default=LINE_GBPS),
        "delay_us": sum(float(r["injected_delay_us"]) for r in rows),
    }


def test_netscope_lowers_the_canary_tail_under_an_all_to_all(env, cluster, tmp_path):
    from scipy import stats

    prefix, desc = cluster
    leaves = {desc["nodes"][i]["leaf"] for i in CANARY_NODES}
    assert len(leaves) == 2, "the canary's two nodes must be on different leaves"
    trials = []
    for k in range(TRIALS):
        for mode in ("off", "netscope"):
            t = trial(env, prefix, desc, mode, k, tmp_path)
            trials.append(t)
            line = (
                f"trial {k} {mode:8s}: canary p99 {t['p99_us']:8.0f} us, p50 {t['p50_us']:6.0f} "
                f"us, congestor ran on {t['tail_s']:.1f} s"
            )
            if mode != "off":
                cong, can = _log_summary(t["congestor_log"]), _log_summary(t["canary_log"])
                t["congestor"], t["canary"] = cong, can
                line += (
                    f"; congestor: backlog in {cong['busy_share']:.0%} of windows, mean rate "
                    f"{1000 * cong['mean_rate_gbps']:.1f} Mbit/s; canary mean rate "
                    f"{1000 * can['mean_rate_gbps']:.1f} Mbit/s"
                )
            print(line, flush=True)

    off = [t["p99_us"] for t in trials if t["mode"] == "off"]
    ns = [t["p99_us"] for t in trials if t["mode"] == "netscope"]
    welch = stats.ttest_ind(ns, off, equal_var=False)
    summary = (
        f"canary p99 (us) off {[round(x) for x in off]} (mean {sum(off) / len(off):.0f}), "
        f"netscope {[round(x) for x in ns]} (mean {sum(ns) / len(ns):.0f}); "
        f"Welch t {welch.statistic:.2f}, p {welch.pvalue:.2g}"
    )
    print(summary)

    # the cluster source saw the congestor's egress queue and the controller acted on it
    for t in trials:
        if t["mode"] == "off":
            continue
        cong, can = t["congestor"], t["canary"]
        assert cong["windows"] > 0 and cong["busy_share"] > 0.05, (cong, summary)
        assert cong["min_rate_gbps"] < 0.5 * LINE_GBPS and cong["delay_us"] > 0, (cong, summary)
        assert can["mean_rate_gbps"] > 0.9 * LINE_GBPS, (can, summary)
    assert sum(t["loaded"] for t in trials) >= len(trials) - 1, (
        "the congestor ended before the canary in more than one trial: " + summary
    )
    assert sum(ns) / len(ns) < sum(off) / len(off), summary
    assert welch.pvalue < ALPHA, summary
