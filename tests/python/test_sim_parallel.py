"""One `contend sim` over several processes (mpirun -n P): each process
simulates a part of the fabric, and the results are those of one process,
byte for byte apart from the wall-clock and process fields, at P = 1, 2, 3
(a dragonfly with adaptive routing and an incast, a 3-level fat tree with
adaptive routing and an incast, drained); the partition and its lookahead
are recorded; refusals (more processes than routers, a cut link without
latency, what is not built over processes yet) exit 2 on every rank."""

import json

import pytest
from conftest import BUILD, run_bounded

BIN = BUILD / "bin" / "contend"
PROCESS_FIELDS = {"wall_s", "processes", "events", "peak_rss_mib", "peak_rss_kib_per_node",
                  "peak_rss_bytes_per_router_port", "output"}  # fmt: skip

CASES = {
    "dragonfly_ugal_incast": [
        "--topology", "dragonfly:a=4,p=4,h=2", "--routing", "ugal",
        "--traffic", "incast:senders=0-39,dst=100,load=0.6;uniform:load=0.3",
        "--warmup-us", "5", "--measure-us", "30", "--drain",
    ],
    "tree3_adaptive_incast": [
        "--topology", "fattree:pods=4,leaves=4,nodes=4,uplinks=2,pod_uplinks=2",
        "--routing", "adaptive", "--traffic", "incast:senders=0-31,dst=40,load=0.5;uniform:load=0.4",
        "--warmup-us", "5", "--measure-us", "30", "--drain", "--partition", "graph",
    ],
}  # fmt: skip


def strip(doc):
    if isinstance(doc, dict):
        return {k: strip(v) for k, v in doc.items() if k not in PROCESS_FIELDS}
    if isinstance(doc, list):
        return [strip(v) for v in doc]
    return doc


@pytest.mark.parametrize("case", sorted(CASES))
def test_any_process_count_gives_the_same_results(mpirun, tmp_path, case):
    one = tmp_path / "p1.json"
    r = run_bounded([BIN, "sim", *CASES[case], "--seed", "4", "-q", "-o", one], timeout=300)
    assert r.returncode == 0, r.stderr
    base = json.loads(one.read_text())
    assert base["processes"] == {"count": 1}
    assert base["points"][0]["drained"] is True and base["points"][0]["packet_hops"] > 10000
    for p in (2, 3):
        out = tmp_path / f"p{p}.json"
        r = mpirun(p, "sim", *CASES[case], "--seed", "4", "-q", "-o", out, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads(out.read_text())
        assert strip(doc) == strip(base), f"{case}: P={p} differs from one process"
        procs = doc["processes"]
        assert procs["count"] == p and procs["cut_links"] > 0 and procs["windows"] > 10
        assert procs["lookahead_ns"] > 0 and procs["partition"] in ("groups", "graph")


@pytest.mark.parametrize(
    "args,words",
    [
        (["--topology", "switch:nodes=8"], "has 1 router, and a part needs one: at most 1"),
        (["--topology", "dragonfly:a=4,p=2,h=2", "--global-latency-ns", "0"], "no lookahead"),
        (["--topology", "dragonfly:a=4,p=2,h=2", "--cc", "ecn"], "not built yet"),
    ],
)
def test_refusals_over_processes_exit_2(mpirun, tmp_path, args, words):
    out = tmp_path / "never.json"
    r = mpirun(2, "sim", *args, "-q", "-o", out, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr and not out.exists()
