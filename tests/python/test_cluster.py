"""Tests of the emulated cluster (``contend cluster``, package ``contend.cluster``).

The pure tests (units, topology, argument checks, tc parsing) run everywhere.
The system tests create network namespaces and need root and ``ip netns``;
they are skipped otherwise. Every system test uses its own prefix and its own
state directory and always runs ``down`` in teardown.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

from contend.cluster import launch, shaping, topology, units
from contend.cluster.errors import UsageError

PAYLOAD_EFFICIENCY = 1448 / 1514  # TCP payload per byte counted by HTB (MSS 1448, MTU 1500)


def _netns_usable() -> str:
    """Empty string if namespaces can be used here, else the reason they cannot."""
    if os.geteuid() != 0:
        return "needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) to create network namespaces"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"'{tool}' not found (Debian packages iproute2, util-linux)"
    proc = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return f"'ip netns' unavailable: {proc.stderr.strip()}"
    return ""


_REASON = _netns_usable()
needs_netns = pytest.mark.skipif(bool(_REASON), reason=_REASON or "ok")
_counter = itertools.count()


def uniq() -> str:
    """A cluster prefix unique to this test run (<= 10 characters)."""
    return f"t{os.getpid() % 100000:05d}x{next(_counter)}"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Environment for the CLI: package on PYTHONPATH, private state directory."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO / "python") + os.pathsep + e.get("PYTHONPATH", "")
    e["CONTEND_CLUSTER_DIR"] = str(tmp_path_factory.mktemp("cluster-state"))
    e.pop("CONTEND_CLUSTER_PREFIX", None)
    e.pop("CONTEND_CLUSTER_INJECT_FAULT", None)
    return e


def cli(env, *args, timeout=120, check=None):
    """Run ``contend cluster ARGS``; ``check`` is the expected exit status, if any."""
    proc = subprocess.run(
        [sys.executable, "-m", "contend.cluster.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check is not None:
        assert proc.returncode == check, f"{args}: rc {proc.returncode}\n{proc.stderr}"
    return proc


def namespaces(prefix: str = "") -> set:
    """Named network namespaces (only those of cluster ``prefix`` if given)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    names = {line.split()[0] for line in out.stdout.splitlines() if line.strip()}
    return {n for n in names if n.startswith(prefix + "-")} if prefix else names


def host_links() -> set:
    out = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True)
    return {line.split(":")[1].strip() for line in out.stdout.splitlines()}


@contextlib.contextmanager
def cluster(env, *up_args, prefix=None):
    """``up`` a cluster for the duration of the block, ``down`` it whatever happens."""
    prefix = prefix or uniq()
    try:
        cli(env, "up", "--prefix", prefix, *up_args, check=0)
        with open(Path(env["CONTEND_CLUSTER_DIR"]) / prefix / "cluster.json") as fh:
            yield json.load(fh)
    finally:
        cli(env, "down", "--prefix", prefix)


def ns_popen(env, prefix, node, *argv, **kw):
    return subprocess.Popen(
        [sys.executable, "-m", "contend.cluster.cli", "exec", "--prefix", prefix, node, "--"]
        + list(argv),
        env=env,
        text=True,
        **kw,
    )


# ---------------------------------------------------------------- pure tests


def test_parse_units():
    assert units.parse_rate("100mbit") == 100_000_000
    assert units.parse_rate("1gbit") == 10**9
    assert units.parse_rate("1.5Gbit") == 1_500_000_000
    assert units.parse_rate("10mbps") == 80_000_000
    assert units.parse_size("256kb") == 262144
    assert units.parse_size("1mb") == 2**20
    assert units.parse_size("4096") == 4096
    assert units.parse_taper("2:1") == 2.0
    for bad in ("1xbit", "", "mbit", "-5mbit", "10 m bit"):
        with pytest.raises(UsageError):
            units.parse_rate(bad)
    with pytest.raises(UsageError):
        units.parse_size("10q")
    with pytest.raises(UsageError):
        units.parse_taper("2-1")


def test_describe_tapered_tree():
    spec = topology.make_spec(nodes=8, leaves=2, node_rate="100mbit", taper="2:1", prefix="ct")
    assert spec.uplink_rate_bps == 200_000_000  # 4 nodes x 100 Mbit/s / 2
    desc = topology.describe(spec)
    assert [n["namespace"] for n in desc["nodes"]][:2] == ["ct-n000", "ct-n001"]
    assert desc["nodes"][5]["hostname"] == "ctn005"
    assert [n["leaf"] for n in desc["nodes"]] == [0, 0, 0, 0, 1, 1, 1, 1]
    import ipaddress

    net = ipaddress.ip_network("198.18.0.0/15")
    addrs = [n["address"] for n in desc["nodes"]]
    assert len(set(addrs)) == 8 and all(ipaddress.ip_address(a) in net for a in addrs)
    comps = {link["component"] for link in desc["links"]}
    assert {"n003-egress", "n003-ingress", "leaf1-uplink-up", "leaf1-uplink-down"} <= comps
    assert len(desc["links"]) == 2 * 8 + 2 * 2
    conf = topology.topology_conf(desc)
    assert "SwitchName=leaf0 Nodes=ctn[000-003]" in conf
    assert "SwitchName=leaf1 Nodes=ctn[004-007]" in conf
    assert "SwitchName=spine Switches=leaf0,leaf1" in conf
    assert topology.hostfile(desc, 2).splitlines()[0] == "ctn000 slots=2"


def test_make_spec_rejects_bad_input():
    bad = [
        {"nodes": 1, "leaves": 1},
        {"nodes": 8, "leaves": 3},
        {"nodes": 4, "leaves": 8},
        {"nodes": 8, "leaves": 2, "node_rate": "1xbit"},
        {"nodes": 8, "leaves": 2, "queue": "12"},
        {"nodes": 8, "leaves": 2, "taper": "2:1", "uplink_rate": "1gbit"},
        {"nodes": 8, "leaves": 2, "prefix": "Bad-Prefix"},
    ]
    for kw in bad:
        with pytest.raises(UsageError):
            topology.make_spec(**kw)


def test_degrade_shapes_a_cable_or_one_direction():
    spec = topology.make_spec(
        nodes=8, leaves=4, node_rate="100mbit", degrade=["leaf1-uplink=0.25", "n005-egress=0.5"]
    )
    desc = topology.describe(spec)
    rate = {link["component"]: link["rate_bps"] for link in desc["links"]}
    assert rate["leaf1-uplink-up"] == rate["leaf1-uplink-down"] == 50_000_000  # 200 x 0.25
    assert rate["n005-egress"] == 50_000_000 and rate["n005-ingress"] == 100_000_000
    assert rate["leaf0-uplink-up"] == 200_000_000 and rate["n000-egress"] == 100_000_000
    assert desc["degraded"] == {"leaf1-uplink-up": 0.25, "leaf1-uplink-down": 0.25,
                                "n005-egress": 0.5}  # fmt: skip
    assert "leaf1-uplink-up at 0.25 (50mbit)" in topology.degraded_note(desc)
    topology.set_rates(desc, {})  # what shape --on and --off do: configured rates again
    assert desc["degraded"] == {}
    assert {link["rate_bps"] for link in desc["links"] if link["kind"] == "uplink"} == {2 * 10**8}


@pytest.mark.parametrize(
    "item,words",
    [
        ("leaf4-uplink=0.5", "links are a cable n000..n007 or leaf0-uplink..leaf3-uplink"),
        ("leaf1=0.5", "no such link"),
        ("leaf1-uplink", "LINK=FRACTION"),
        ("leaf1-uplink=1.5", "0 < FRACTION <= 1"),
        ("leaf1-uplink=nan", "0 < FRACTION <= 1"),
        ("n001=1e-6", "below 1kbit"),
    ],
)
def test_degrade_rejects_bad_links_without_changing_anything(item, words):
    desc = topology.describe(topology.make_spec(nodes=8, leaves=4, node_rate="100mbit"))
    before = json.dumps(desc)
    with pytest.raises(UsageError, match=words):
        topology.set_rates(desc, topology.parse_degrade([item]))
    assert json.dumps(desc) == before


@pytest.mark.parametrize(
    "args",
    [
        ["up", "--nodes", "1", "--leaves", "1"],
        ["up", "--nodes", "8", "--leaves", "3"],
        ["up", "--nodes", "8", "--leaves", "2", "--node-rate", "1xbit"],
        ["up", "--nodes", "8", "--leaves", "2", "--queue", "lots"],
        ["up", "--nodes", "eight", "--leaves", "2"],
        ["up", "--nodes", "8", "--leaves", "2", "--prefix", "NO_GOOD"],
        ["up", "--nodes", "8", "--leaves", "2", "--taper", "2:1", "--uplink-rate", "1gbit"],
        ["up", "--nodes", "8", "--leaves", "2", "--degrade", "leaf2-uplink=0.5"],
        ["up", "--nodes", "8", "--leaves", "2", "--degrade", "n001=0"],
        ["up", "--nodes", "8", "--leaves", "2", "--degrade", "n001=0.5", "--degrade", "n001=0.2"],
        ["shape", "--on", "--degrade", "n001=0.5"],
        ["frobnicate"],
        ["run", "--prefix", "ct", "hostname"],
    ],
)
def test_cli_bad_input_exit_2(tmp_path, args):
    e = dict(os.environ, PYTHONPATH=str(REPO / "python"), CONTEND_CLUSTER_DIR=str(tmp_path))
    proc = cli(e, *args)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not list(tmp_path.glob("*/cluster.json"))


def test_parse_qdisc_text_and_json():
    text = (
        "qdisc htb 1: dev eth0 root refcnt 3 r2q 10 default 0x1 direct_packets_stat 0\n"
        " Sent 1645647102 bytes 1088715 pkt (dropped 27, overlimits 512543 requeues 0) \n"
        " backlog 12Kb 8p requeues 0\n"
        "qdisc bfifo 10: dev eth0 parent 1:1 limit 256Kb\n"
        " Sent 1645647102 bytes 1088715 pkt (dropped 27, overlimits 0 requeues 0) \n"
        " backlog 12Kb 8p requeues 0\n"
    )
    c = shaping.parse_qdisc_text(text)["eth0"]
    assert c == {
        "bytes": 1645647102,
        "packets": 1088715,
        "drops": 27,
        "overlimits": 512543,
        "backlog_bytes": 12 * 1024,
        "backlog_packets": 8,
    }
    js = json.dumps(
        [
            {
                "kind": "htb",
                "handle": "1:",
                "dev": "n001",
                "root": True,
                "bytes": 5,
                "packets": 1,
                "drops": 2,
                "overlimits": 3,
                "backlog": 1514,
                "qlen": 1,
            },
            {"kind": "bfifo", "handle": "10:", "dev": "n001", "parent": "1:1", "bytes": 5},
        ]
    )
    c = shaping.parse_qdisc_json(js)["n001"]
    assert (c["bytes"], c["drops"], c["backlog_bytes"], c["backlog_packets"]) == (5, 2, 1514, 1)


def test_mpirun_argv_defaults_and_overrides():
    desc = topology.describe(topology.make_spec(nodes=4, leaves=2, prefix="ct"))
    argv = launch.mpirun_argv(desc, "/tmp/hf", 4, [], ["./a.out", "x"])
    line = " ".join(argv)
    assert "--mca btl tcp,self" in line
    assert "--mca btl_tcp_if_include 198.18.0.0/15" in line
    assert "--mca oob_tcp_if_include 198.18.0.0/15" in line
    assert "--mca mpi_yield_when_idle 1" in line
    assert "--oversubscribe" in argv and argv[-2:] == ["./a.out", "x"]
    argv = launch.mpirun_argv(desc, "/tmp/hf", 4, ["--mca", "btl", "tcp,self,vader"], ["a"])
    assert argv.count("btl") == 1 and "tcp,self,vader" in argv
    assert launch.placement(desc, None, None) == (4, 1)
    assert launch.placement(desc, 8, None) == (8, 2)
    with pytest.raises(UsageError):
        launch.placement(desc, 9, 2)


# ---------------------------------------------------------------- system tests


@needs_netns
def test_up_down_leaves_nothing(env):
    before_links = host_links()
    prefix = uniq()
    sdir = Path(env["CONTEND_CLUSTER_DIR"]) / prefix
    with cluster(
        env,
        "--nodes",
        "8",
        "--leaves",
        "2",
        "--node-rate",
        "100mbit",
        "--taper",
        "2:1",
        prefix=prefix,
    ) as desc:
        ours = {f"{prefix}-sw"} | {f"{prefix}-n{i:03d}" for i in range(8)}
        assert namespaces(prefix) == ours
        assert host_links() == before_links, "nothing may be attached to the host namespace"
        assert desc["rates"]["uplink_bps"] == 200_000_000
        assert (sdir / "topology.conf").read_text().count("SwitchName=") == 3
        assert len((sdir / "hostfile").read_text().splitlines()) == 8
        sw = subprocess.run(
            ["ip", "-n", f"{prefix}-sw", "-o", "link", "show", "type", "bridge"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert {"spine:", "leaf0:", "leaf1:"} <= set(sw.split())
        # only the connected /15 route inside a node: no default route, nothing else
        routes = subprocess.run(
            ["ip", "-n", f"{prefix}-n003", "route", "show"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "default" not in routes and "198.18.0.0/15" in routes
        hn = cli(env, "exec", "--prefix", prefix, "n003", "--", "hostname", check=0)
        assert hn.stdout.strip() == f"{prefix}n003"
    assert namespaces(prefix) == set()
    assert host_links() == before_links
    assert not sdir.exists()
    again = cli(env, "down", "--prefix", prefix, check=0)  # idempotent
    assert "nothing to remove" in again.stdout


@needs_netns
def test_second_up_fails_and_keeps_first(env):
    prefix = uniq()
    with cluster(env, "--nodes", "4", "--leaves", "2", "--node-rate", "50mbit", prefix=prefix):
        state_file = Path(env["CONTEND_CLUSTER_DIR"]) / prefix / "cluster.json"
        before = state_file.read_text()
        ns_before = namespaces(prefix)
        second = cli(env, "up", "--prefix", prefix, "--nodes", "8", "--leaves", "2")
        assert second.returncode == 2
        assert "already exists" in second.stderr and "Traceback" not in second.stderr
        assert state_file.read_text() == before
        assert namespaces(prefix) == ns_before and len(ns_before) == 5
        hn = cli(env, "exec", "--prefix", prefix, "n001", "--", "hostname", check=0)
        assert hn.stdout.strip() == f"{prefix}n001"


@needs_netns
def test_failed_up_rolls_back(env):
    prefix = uniq()
    e = dict(env, CONTEND_CLUSTER_INJECT_FAULT="links")
    try:
        proc = cli(e, "up", "--prefix", prefix, "--nodes", "4", "--leaves", "2")
        assert proc.returncode == 1 and "injected fault" in proc.stderr
        assert namespaces(prefix) == set()
        assert not (Path(env["CONTEND_CLUSTER_DIR"]) / prefix).exists()
    finally:
        cli(env, "down", "--prefix", prefix)


def _pids_in(prefix, nodes):
    pids = set()
    for i in range(nodes):
        out = subprocess.run(
            ["ip", "netns", "pids", f"{prefix}-n{i:03d}"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        pids |= {int(p) for p in out.split()}
    return pids


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@needs_netns
def test_down_after_killed_run(env):
    if (shutil.which("mpirun.openmpi") or shutil.which("mpirun")) is None:
        pytest.skip("mpirun not found (Debian package openmpi-bin)")
    prefix = uniq()
    with cluster(env, "--nodes", "4", "--leaves", "2", "--node-rate", "50mbit", prefix=prefix):
        argv = [sys.executable, "-m", "contend.cluster.cli", "run", "--prefix", prefix]
        run = subprocess.Popen(
            [*argv, "--np", "4", "--", "sleep", "300"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        lone = ns_popen(env, prefix, "n002", "sleep", "300")
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                pids = _pids_in(prefix, 4)
                # mpirun + 3 orted + 4 sleep ranks + the lone sleep
                if len(pids) >= 9:
                    break
                time.sleep(0.2)
            assert len(pids) >= 9, f"processes did not start: {pids}"
        finally:
            run.send_signal(signal.SIGKILL)
            lone.send_signal(signal.SIGKILL)
            run.wait(10)
            lone.wait(10)
        assert any(_alive(p) for p in _pids_in(prefix, 4)), "orphans expected after kill -9"
        down = cli(env, "down", "--prefix", prefix, check=0)
        assert "stopped" in down.stdout
        assert not any(_alive(p) for p in pids)
        assert namespaces(prefix) == set()


def _bytes_at(samples, t):
    """Cumulative bytes received at time ``t`` (linear interpolation of samples)."""
    prev_t, prev_b = samples[0]
    if t <= prev_t:
        return prev_b
    for st, sb in samples[1:]:
        if st >= t:
            return prev_b + (sb - prev_b) * (t - prev_t) / (st - prev_t)
        prev_t, prev_b = st, sb
    return prev_b


def _transfer(env, prefix, pairs, seconds=3.0, port=7100, skip=0.5):
    """Send bulk TCP from each (src, dst) pair at once; return per-flow goodput in bit/s.

    Goodput is measured at the receivers over the window in which all flows were
    active, skipping the first ``skip`` s (slow start, convergence) and the last 0.2 s.
    """
    with open(Path(env["CONTEND_CLUSTER_DIR"]) / prefix / "cluster.json") as fh:
        desc = json.load(fh)
    addr = {n["name"]: n["address"] for n in desc["nodes"]}
    sinks, senders = [], []
    try:
        for k, (_src, dst) in enumerate(pairs):
            s = ns_popen(
                env,
                prefix,
                dst,
                sys.executable,
                "-m",
                "contend.cluster.probe",
                "sink",
                "--port",
                str(port + k),
                "--timeout",
                str(seconds + 30),
                stdout=subprocess.PIPE,
            )
            assert s.stdout.readline().strip() == "READY"
            sinks.append(s)
        for k, (src, dst) in enumerate(pairs):
            senders.append(
                ns_popen(
                    env,
                    prefix,
                    src,
                    sys.executable,
                    "-m",
                    "contend.cluster.probe",
                    "send",
                    "--connect",
                    f"{addr[dst]}:{port + k}",
                    "--seconds",
                    str(seconds),
                    "--bytes",
                    str(200 * 2**20),
                    stdout=subprocess.DEVNULL,
                )
            )
        for p in senders:
            assert p.wait(seconds + 30) == 0
        flows = []
        for s in sinks:
            out, _ = s.communicate(timeout=30)
            flows.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in sinks + senders:
            if p.poll() is None:
                p.kill()
                p.wait()
    t0 = max(f["t_first"] for f in flows) + skip
    t1 = min(f["t_last"] for f in flows) - 0.2
    assert t1 - t0 > 1.0, "flows did not overlap long enough"
    return [
        (_bytes_at(f["samples"], t1) - _bytes_at(f["samples"], t0)) * 8 / (t1 - t0) for f in flows
    ]


@pytest.fixture(scope="module")
def tapered(env):
    """4 nodes on 2 leaves, 40 Mbit/s node links, 2:1 taper: 40 Mbit/s uplinks."""
    if _REASON:
        pytest.skip(_REASON)
    prefix = uniq()
    with cluster(
        env,
        "--nodes",
        "4",
        "--leaves",
        "2",
        "--node-rate",
        "40mbit",
        "--taper",
        "2:1",
        "--queue",
        "128kb",
        prefix=prefix,
    ) as desc:
        yield prefix, desc


@needs_netns
def test_node_link_rate(env, tapered):
    prefix, _desc = tapered
    (rate,) = _transfer(env, prefix, [("n000", "n001")])
    expected = 40e6 * PAYLOAD_EFFICIENCY
    assert abs(rate / expected - 1) < 0.10, f"{rate / 1e6:.2f} Mbit/s vs {expected / 1e6:.2f}"


@needs_netns
def test_tapered_uplink_is_shared(env, tapered):
    """Two senders of leaf0 to two receivers of leaf1 fill the 40 Mbit/s uplink together.

    The uplink, not the node links, limits the sum; neither sender is
    starved.  TCP (reno) over a drop-tail queue shares unevenly over a few
    seconds (0.27/0.73 seen once, averaged over two 3-second transfers), so
    the bound is (0.2, 0.8), not half each.
    """
    prefix, _desc = tapered
    before = cli(env, "stats", "--prefix", prefix, check=0).stdout
    pairs = [("n000", "n002"), ("n001", "n003")]
    runs = [_transfer(env, prefix, pairs, port=7200 + 2 * k) for k in range(2)]
    uplink = 40e6 * PAYLOAD_EFFICIENCY
    for rates in runs:
        total = sum(rates)
        assert abs(total / uplink - 1) < 0.10, f"{total / 1e6:.2f} Mbit/s vs {uplink / 1e6:.2f}"
    shares = [sum(r[i] / sum(r) for r in runs) / len(runs) for i in range(2)]
    for share in shares:
        assert 0.2 < share < 0.8, f"unfair shares {shares} ({runs})"
    after = cli(env, "stats", "--prefix", prefix, check=0).stdout
    assert before != after and "leaf0-uplink-up" in after


@needs_netns
def test_stats_time_series(env, tapered, tmp_path):
    prefix, desc = tapered
    out = tmp_path / "links.csv"
    cli(
        env,
        "stats",
        "--prefix",
        prefix,
        "--sample-interval",
        "0.25",
        "--duration",
        "1",
        "--csv",
        str(out),
        check=0,
    )
    lines = out.read_text().splitlines()
    assert lines[0] == "time_s,component,counter,value"
    comps = {line.split(",")[1] for line in lines[1:]}
    assert comps == {link["component"] for link in desc["links"]}
    times = sorted({float(line.split(",")[0]) for line in lines[1:]})
    assert len(times) >= 4 and times[0] == 0.0 and abs(times[-1] - 1.0) < 0.2


HELLO_C = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int rank, size, lsize, len, sum = 0, one = 1;
    char name[MPI_MAX_PROCESSOR_NAME];
    MPI_Comm node;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &lsize);
    MPI_Get_processor_name(name, &len);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank=%d host=%s local_size=%d sum=%d\n", rank, name, lsize, sum);
    MPI_Comm_free(&node);
    MPI_Finalize();
    return argc > 1 ? atoi(argv[1]) : 0;
}
"""


@needs_netns
def test_mpi_hello_one_node_per_namespace(env, tmp_path):
    mpicc = shutil.which("mpicc.openmpi") or shutil.which("mpicc")
    if mpicc is None or (shutil.which("mpirun.openmpi") or shutil.which("mpirun")) is None:
        pytest.skip("mpicc/mpirun not found (Debian packages openmpi-bin, libopenmpi-dev)")
    src = tmp_path / "hello.c"
    src.write_text(HELLO_C)
    exe = tmp_path / "hello"
    subprocess.run([mpicc, "-o", str(exe), str(src)], check=True)
    prefix = uniq()
    with cluster(env, "--nodes", "4", "--leaves", "2", "--node-rate", "100mbit", prefix=prefix):
        proc = cli(env, "run", "--prefix", prefix, "--np", "4", "--", str(exe), check=0)
        ranks = [
            dict(kv.split("=") for kv in line.split())
            for line in proc.stdout.splitlines()
            if line.startswith("rank=")
        ]
        assert len(ranks) == 4
        assert {r["host"] for r in ranks} == {f"{prefix}n{i:03d}" for i in range(4)}
        assert all(r["local_size"] == "1" and r["sum"] == "4" for r in ranks)
        proc = cli(env, "run", "--prefix", prefix, "--ppn", "2", "--", str(exe), check=0)
        ranks = [line for line in proc.stdout.splitlines() if line.startswith("rank=")]
        assert len(ranks) == 8 and all("local_size=2" in r for r in ranks)
        # the program's exit status is propagated
        proc = cli(env, "run", "--prefix", prefix, "--np", "2", "--", str(exe), "3")
        assert proc.returncode == 3
