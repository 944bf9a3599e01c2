"""The checked-in example trace (examples/traces/lammps-melt.trace, LAMMPS
on 8 ranks) and its job file (examples/jobs/lammps_trace.job) keep
working: the dry run reads every rank, the simulator replays it beside
GPCNeT's congestors moving the dry run's bytes per node pair, with a
Congestion Impact; the archive stays small."""

import json
import shutil

import pytest
from conftest import ROOT, otf2_built, run_bounded

TRACE = ROOT / "examples" / "traces" / "lammps-melt.trace"
JOB = ROOT / "examples" / "jobs" / "lammps_trace.job"


@pytest.fixture(autouse=True)
def needs_otf2():
    if not otf2_built():
        pytest.skip("built without OTF2")


def lammps(contend_bin, tmp_path, name, *args) -> dict:
    """`contend jobs JOB ARGS` run from the repository's top (the job's
    trace path is relative to it): the LAMMPS job of its results."""
    out = tmp_path / name
    r = run_bounded([contend_bin, "jobs", JOB, *args, "-o", out], timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    jobs = json.loads(out.read_text())["jobs"]
    assert jobs[0]["name"] == "lammps" and len(jobs) == 5
    return jobs[0]


def rank_pairs(job: dict) -> dict:
    """Bytes and messages per (source rank, destination rank) of the job
    (its traffic is per node pair; one rank per node)."""
    rank = {node: r for r, node in enumerate(job["nodes"])}
    return {(rank[s], rank[d]): (b, m) for s, d, b, m in job["traffic"]["pairs"]}


def test_the_archive_is_small_and_readable():
    files = [p for p in TRACE.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) < 512 * 1024
    assert len([p for p in files if p.suffix == ".evt"]) == 8
    tool = shutil.which("otf2-print")
    if tool:
        r = run_bounded([tool, TRACE / "traces.otf2"], timeout=60)
        assert r.returncode == 0 and r.stderr.strip() == "", r.stderr[-2000:]


def test_replay_beside_congestors_on_the_simulator(contend_bin, tmp_path):
    sim_args = ["--engine", "sim", "--topology", "dragonfly:a=4,p=4,h=2", "--seed", "1"]
    dry = lammps(contend_bin, tmp_path, "dry.json", "--dry-run", "--nodes", "24")
    pairs = rank_pairs(dry)
    # LAMMPS's 3-D decomposition of 8 ranks: every rank sends to others
    assert len({s for s, _ in pairs}) == 8 and dry["traffic"]["compute_s"] > 0
    sim = lammps(contend_bin, tmp_path, "sim.json", *sim_args, "--mode", "both")
    assert rank_pairs(sim) == pairs
    assert sim["ci"]["mean"] >= 0.999  # congestion never speeds the replay up
    # communication only: the congestors slow the ghost exchanges down
    comm = lammps(contend_bin, tmp_path, "comm.json", *sim_args, "--mode", "both", "-D", "SCALE=0")
    assert rank_pairs(comm) == pairs and comm["traffic"]["compute_s"] == 0
    assert comm["ci"]["mean"] > 1.01


def test_sensitivity_train_on_the_replay(contend_bin, tmp_path):
    """c_a of a recorded application: sensitivity-train runs a job whose
    motif is the replay (communication only, so congestion shows on this
    small fabric), and contend model sensitivity fits it."""
    topo = ["--topology", "dragonfly:a=4,p=2,h=2"]
    job = tmp_path / "app.job"
    job.write_text(
        f"[JOB_NAME] lammps\n[PLACEMENT] random nodes=8\n"
        f"[MOTIF] replay trace={TRACE} compute_scale=0\n"
    )

    def contend(*args):
        r = run_bounded([contend_bin, *args, "-q"], timeout=600, cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]

    contend("pingpong-train", *topo, "--runs", "6", "--exchanges", "500", "-o", "train.json")
    contend("model", "fit-latency", "train.json", "-o", "latency.json")
    contend("sensitivity-train", job, "--job", "lammps", *topo, "--runs", "4", "-o", "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    quiet = [x["runtime_s"] for x in doc["runs"] if not x["congestors"]]
    loud = [x for x in doc["runs"] if x["congestors"]]
    assert len(quiet) == len(loud) == 2 and all(x["congestors_outlasted_job"] for x in loud)
    assert min(x["runtime_s"] for x in loud) > max(quiet)
    runs = [f"s.run{i}.json" for i in range(4)]
    contend(
        "model",
        "sensitivity",
        *runs,
        "--job",
        "lammps",
        "--latency",
        "latency.json",
        "-o",
        "sens.json",
    )
    fit = json.loads((tmp_path / "sens.json").read_text())["applications"]["lammps"]
    assert fit["runs"] == 4 and fit["c_a_s_per_us"] > 0
