"""One `contend sim` over several processes (mpirun -n P): each process
simulates a part of the fabric, and the results are those of one process,
byte for byte apart from the wall-clock and process fields, at P = 1, 2, 3
(a dragonfly with adaptive routing and an incast, a 3-level fat tree with
adaptive routing and an incast, drained); the partition and its lookahead
are recorded; port counters (--counters) over processes give the CSV and
summary of one process, their size cap included; refusals (more processes
than routers, a partition that leaves a process without a router, a cut
link without latency) exit 2 on every rank and leave no file; congestion
control's notifications (ecn, perflow) cross parts too."""

import json

import pytest
from conftest import BUILD, run_bounded
from simkit import WALL_CLOCK, without

BIN = BUILD / "bin" / "contend"
PROCESS_FIELDS = WALL_CLOCK | {"processes", "events", "output"}

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
    # congestion control: notifications go back to the source's part
    "dragonfly_ecn_incast": [
        "--topology", "dragonfly:a=4,p=4,h=2", "--cc", "ecn",
        "--traffic", "incast:senders=0-39,dst=100,load=0.6;uniform:load=0.3",
        "--warmup-us", "5", "--measure-us", "30", "--drain",
    ],
    "tree3_perflow_incast": [
        "--topology", "fattree:pods=4,leaves=4,nodes=4,uplinks=2,pod_uplinks=2", "--cc", "perflow",
        "--traffic", "incast:senders=0-31,dst=40,load=0.5;uniform:load=0.4",
        "--warmup-us", "5", "--measure-us", "30", "--drain",
    ],
}  # fmt: skip


def strip(doc):
    return without(doc, PROCESS_FIELDS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_any_process_count_gives_the_same_results(mpirun, tmp_path, case):
    one = tmp_path / "p1.json"
    r = run_bounded([BIN, "sim", *CASES[case], "--seed", "4", "-q", "-o", one], timeout=300)
    assert r.returncode == 0, r.stderr
    base = json.loads(one.read_text())
    assert base["processes"] == {"count": 1}
    assert base["points"][0]["drained"] is True and base["points"][0]["packet_hops"] > 10000
    if "--cc" in CASES[case]:  # the notes are what this case is about
        assert base["points"][0]["cc_notifications"] > 100
    for p in (2, 3):
        out = tmp_path / f"p{p}.json"
        r = mpirun(p, "sim", *CASES[case], "--seed", "4", "-q", "-o", out, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
        doc = json.loads(out.read_text())
        assert strip(doc) == strip(base), f"{case}: P={p} differs from one process"
        procs = doc["processes"]
        assert procs["count"] == p and procs["cut_links"] > 0 and procs["windows"] > 10
        assert procs["lookahead_ns"] > 0 and procs["partition"] in ("groups", "graph")
        # each process's share of the work, adding up to the run's events
        assert len(procs["events_per_process"]) == p and min(procs["events_per_process"]) > 0
        assert sum(procs["events_per_process"]) == doc["events"]


def counters_run(mpirun, where, p, *extra):
    """`contend sim` of the dragonfly case with port counters every 2 us at
    P processes, in its own directory (the same relative paths, so the
    configs recorded match); returns the results, the CSV and stderr."""
    where.mkdir()
    args = ["sim", *CASES["dragonfly_ugal_incast"], "--seed", "4", "-o", "out.json",
            "--counters", "counters.csv", "--counter-interval-us", "2", *extra]  # fmt: skip
    if p == 1:
        r = run_bounded([BIN, *args], timeout=300, cwd=where)
    else:
        r = mpirun(p, *args, timeout=600, cwd=where)
    assert r.returncode == 0, r.stdout + r.stderr
    # rank 0 alone writes the results (the others' summaries are partial)
    assert r.stderr.count("contend sim: results in out.json") == 1, r.stderr
    return (
        json.loads((where / "out.json").read_text()),
        (where / "counters.csv").read_bytes(),
        r.stderr,
    )


def test_counters_over_processes_are_those_of_one_process(mpirun, tmp_path):
    base, csv, _ = counters_run(mpirun, tmp_path / "p1", 1)
    rows = csv.decode().splitlines()
    assert rows[0] == "time_s,component,port,vc,counter,value"
    assert len({row.split(",")[0] for row in rows[1:]}) > 20  # many samples
    assert len({row.split(",")[1] for row in rows[1:]}) > 30  # routers and NICs of many parts
    summary = base["points"][0]["counters"]
    assert summary["top_stalled"] and "csv_stopped_at_us" not in summary
    for p in (2, 3):
        doc, got, _ = counters_run(mpirun, tmp_path / f"p{p}", p)
        assert got == csv, f"P={p}: the counters CSV differs from one process's"
        assert strip(doc) == strip(base), f"P={p}: the results differ from one process's"
        assert doc["processes"]["count"] == p
        # the outputs alone: no temporary left beside them
        assert sorted(x.name for x in (tmp_path / f"p{p}").iterdir()) == [
            "counters.csv",
            "out.json",
        ]


def test_the_counters_cap_cuts_at_the_same_sample_over_processes(mpirun, tmp_path):
    base, csv, err = counters_run(mpirun, tmp_path / "p1", 1, "--counters-max-mib", "1")
    stopped = base["points"][0]["counters"]["csv_stopped_at_us"]
    assert 0 < stopped < base["points"][0]["sim_time_us"]
    assert 0 < len(csv) <= 1 << 20 and csv.endswith(b"\n")
    assert f"the sample at {stopped:.3f} us simulated would take the CSV past" in err
    doc, got, err2 = counters_run(mpirun, tmp_path / "p2", 2, "--counters-max-mib", "1")
    assert got == csv and strip(doc) == strip(base)
    assert doc["points"][0]["counters"]["csv_stopped_at_us"] == stopped
    assert err2.count("would take the CSV past") == 1  # said once, by rank 0


@pytest.mark.parametrize(
    "args,words",
    [
        (["--topology", "switch:nodes=8"], "has 1 router, and a part needs one: at most 1"),
        # 2 leaves and a spine: METIS puts all 3 routers in one part
        (["--topology", "fattree:leaves=2,nodes=2,uplinks=1"], "leaves part 1 without a router"),
        (["--topology", "dragonfly:a=4,p=2,h=2", "--global-latency-ns", "0"], "no lookahead"),
        (
            ["--topology", "dragonfly:a=4,p=2,h=2", "--counter-interval-us", "-1"],
            "--counter-interval",
        ),
    ],
)
def test_refusals_over_processes_exit_2(mpirun, tmp_path, args, words):
    out, csv = tmp_path / "never.json", tmp_path / "never.csv"
    r = mpirun(2, "sim", *args, "-q", "-o", out, "--counters", csv, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr
    assert r.stderr.count("contend sim: error:") == 1  # one line, from rank 0
    assert list(tmp_path.iterdir()) == []  # no output, no temporary


@pytest.mark.parametrize(
    "argv,words", [(["network", "--dry-run", "--nodes", "12"], "--dry-run plays every rank in one")]
)
def test_in_process_engines_refuse_a_launch_of_several_processes(mpirun, tmp_path, argv, words):
    """A dry run is one process playing every rank: under mpirun -n 2 each
    process would plan the whole run and both would write -o; it refuses
    before anything, with no file.  (--engine sim spreads one simulation
    over the processes: test_engine_sim_parallel.py.)"""
    out = tmp_path / "out.json"
    r = mpirun(2, *argv, "--timeout", "0.0001", "--seed", "1", "-o", out, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr and "launcher started 2" in r.stderr
    assert list(tmp_path.iterdir()) == []
