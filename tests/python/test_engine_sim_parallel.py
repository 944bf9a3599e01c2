"""`network|load|jobs --engine sim` over processes (mpirun -n P): one
simulation spread over the P processes (src/engine_sim/engine_par.c), each
running the ranks of its part's nodes, gives the results of one process,
byte for byte apart from the wall-clock and process fields, at P = 1, 2, 3:
GPCNeT's load test on 72 dragonfly nodes (the golden command: congestors,
canaries, RMA, the port counters' summary), the network test on the
ib-like tree (a graph partition, local links cut) and a jobs run of the
fat-tree poster's incast bully beside an application (two jobs, both
modes).  What cannot cross processes yet (--verify, --throttle,
--counters) and partitions that cannot be (more processes than routers, a
cut link without latency) are refused with exit status 2 and one message,
before any file is written."""

import json

import pytest
from conftest import BUILD, ROOT, run_bounded
from simkit import WALL_CLOCK, without

BIN = BUILD / "bin" / "contend"
SHORT = [a for m in ("pairwise_a2a", "p2p_incast", "rma_put_incast", "rma_get_bcast")
         for a in (f"--{m}.iters", "16")]  # fmt: skip
CASES = {
    "load_72": ["load", "--engine", "sim", "--topology", "dragonfly:a=4,p=2,h=2", "--timeout",
                "0.0005", *SHORT],
    "network_ib_like": ["network", "--engine", "sim", "--network", "ib-like", "--nodes", "16",
                        "--measurements", "1", "--iters", "1", "--warmup", "0"],
    "jobs_bully_incast": ["jobs", str(ROOT / "examples" / "jobs" / "bully_incast.job"),
                          "--engine", "sim", "--topology", "fattree:leaves=4,nodes=4,uplinks=2",
                          "--mode", "both"],
}  # fmt: skip
# what differs between two runs of one seed, or with the process count
VARIES = WALL_CLOCK | {"events", "processes"}


def strip(x):
    return without(x, VARIES)


def run(mpirun, where, p, argv):
    """Runs argv at P processes in its own directory (the same relative
    output path, so the recorded argv match); the results and stderr."""
    where.mkdir()
    args = [*argv, "--seed", "3", "-q", "-o", "out.json"]
    r = run_bounded([BIN, *args], timeout=300, cwd=where) if p == 1 else mpirun(
        p, *args, timeout=600, cwd=where)  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    assert sorted(x.name for x in where.iterdir()) == ["out.json"]
    return json.loads((where / "out.json").read_text()), r


@pytest.mark.parametrize("case", sorted(CASES))
def test_any_process_count_gives_the_results_of_one(mpirun, tmp_path, case):
    base, one = run(mpirun, tmp_path / "p1", 1, CASES[case])
    sim = base["environment"]["simulation"]
    assert sim["processes"] == {"count": 1} and sim["packet_hops"] > 10_000
    for p in (2, 3):
        doc, r = run(mpirun, tmp_path / f"p{p}", p, CASES[case])
        assert strip(doc) == strip(base), f"{case}: P={p} differs from one process"
        procs = doc["environment"]["simulation"]["processes"]
        assert procs["count"] == p and procs["lookahead_ns"] > 0 and procs["windows"] > 100
        assert procs["partition"] in ("groups", "graph") and procs["cut_links"] > 0
        # one table, from rank 0, as in one process (the wall time line aside)
        table = [x for x in r.stdout.splitlines() if "Wall time" not in x]
        assert table == [x for x in one.stdout.splitlines() if "Wall time" not in x]


@pytest.mark.parametrize(
    "args,words",
    [
        (["--verify"], "--verify (payloads do not cross processes yet): not with a simulation"),
        (["--throttle", "static:50%"], "--throttle (its controllers are per process)"),
        (["--counters", "c.csv"], "--counters: not with a simulation over processes"),
        (["--topology", "switch:nodes=8"], "has 1 router, and a part needs one"),
        (["--global-latency-ns", "0"], "no lookahead"),
    ],
)
def test_refusals_over_processes_exit_2(mpirun, tmp_path, args, words):
    r = mpirun(2, "load", "--engine", "sim", "--seed", "1", "-q", "-o", "out.json", *args,
               timeout=120, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr
    assert r.stderr.count("contend: error:") == 1  # one line, from process 0
    assert list(tmp_path.iterdir()) == []  # no output, no temporary
