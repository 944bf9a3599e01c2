"""`contend study` on the emulated cluster, end to end.

One cluster of 8 nodes on 2 leaves (100 Mbit/s node links, 2:1 taper) runs
examples/study/cluster-leaf-bully.toml (a control and two bully conditions,
R = 2, tree placements resolved against the cluster's topology.conf), each
run one `contend jobs` under `contend cluster run`.  The study is killed
(SIGKILL) after 3 runs and run again: it must end with exactly R runs per
condition, the 3 finished ones kept.  Asserted from the kept contend-jobs
files: every job on the leaves its placement asks for, both in the leaves
the results record and in the host names the ranks ran on (the cluster's
description says which leaf each host is on); the report renders.

Needs root, `ip netns`, Open MPI and the built `contend`; skipped otherwise.
About 25 s on 2 cores; the cluster (only the one made here) is always removed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from clusterkit import CONTEND, REPO, cli, cluster_env, namespaces, skip_reason
from conftest import run_bounded

STUDY = REPO / "examples" / "study" / "cluster-leaf-bully.toml"
R = 2
CONDITIONS = ["control", "adjacent leaf bully", "incast bully"]
KILL_AFTER = 3
STUDY_TIMEOUT = 150  # s per `contend study` (measured: 6 runs in 12-15 s)

_REASON = skip_reason()
if _REASON:
    print(f"test_study_cluster: skipped: {_REASON}")
pytestmark = pytest.mark.skipif(bool(_REASON), reason=_REASON or "ok")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(environment, description) of an 8-node, 2-leaf, 2:1 cluster; always removed."""
    prefix = f"sc{os.getpid() % 100000:05d}"
    env = cluster_env(tmp_path_factory.mktemp("study-cluster-state"))
    env.update(CONTEND_CLUSTER_PREFIX=prefix, CONTEND_BIN=str(CONTEND))
    env.pop("CONTEND_STUDY_KILL_AFTER", None)
    try:
        up = ["--nodes", 8, "--leaves", 2, "--node-rate", "100mbit", "--taper", "2:1"]
        cli(env, "up", "--prefix", prefix, *up, check=0)
        desc = json.loads(cli(env, "show", "--prefix", prefix, "--json", check=0).stdout)
        yield env, desc
    finally:
        cli(env, "down", "--prefix", prefix, timeout=120)
        assert not namespaces(prefix), f"namespaces of {prefix} left behind"


@pytest.fixture(scope="module")
def done(cluster, tmp_path_factory):
    """The study, killed after KILL_AFTER runs and resumed."""
    env, desc = cluster
    tmp = tmp_path_factory.mktemp("study-cluster")
    d, out = tmp / "run", tmp / "study.json"
    cmd = [CONTEND, "study", STUDY, "--dir", d, "-o", out]
    first = run_bounded(
        cmd, STUDY_TIMEOUT, env={**env, "CONTEND_STUDY_KILL_AFTER": str(KILL_AFTER)}
    )
    assert first.returncode == -9, first.stderr  # killed by itself after 3 runs
    kept = sorted(p.name for p in (d / "runs").glob("*.json"))
    second = run_bounded(cmd, STUDY_TIMEOUT, env=env)
    assert second.returncode == 0, second.stderr
    return {"env": env, "desc": desc, "dir": d, "out": out, "kept": kept, "proc": second}


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def test_exactly_r_runs_per_condition_after_resume(done):
    doc = load(done["out"])
    assert doc["study"]["engine"] == "cluster"
    assert Counter(r["condition"] for r in doc["runs"]) == {c: R for c in CONDITIONS}
    assert sorted((r["condition"], r["repetition"]) for r in doc["runs"]) == sorted(
        (c, r) for c in CONDITIONS for r in range(1, R + 1)
    )
    assert len(done["kept"]) == KILL_AFTER
    reused = sorted(Path(r["results_file"]).name for r in doc["runs"] if r["reused"])
    assert reused == done["kept"]  # the finished runs were kept, not redone
    assert f"{KILL_AFTER} of {len(CONDITIONS) * R} run(s) already finished" in done["proc"].stderr
    for r in doc["runs"]:
        assert r["runtime_s"]["umt"] > 0
        jobs = load(done["dir"] / r["results_file"])
        assert jobs["engine"] == "mpi" and jobs["seed"] == r["seed"]


def _hosts_by_job(done, run: dict) -> dict:
    """{job: (leaves recorded, leaves of the hosts its nodes ran on, pods)}."""
    jobs = load(done["dir"] / run["results_file"])
    names = jobs["environment"]["node_names"]
    leaf_of_host = {n["hostname"]: n["leaf"] for n in done["desc"]["nodes"]}
    out = {}
    for j in jobs["jobs"]:
        hosts = [names[i] for i in j["nodes"]]
        out[j["name"]] = (j["leaves"], [leaf_of_host[h] for h in hosts], j["pods"])
    return out


def test_placements_on_the_intended_leaves(done):
    doc = load(done["out"])
    for run in doc["runs"]:
        jobs = _hosts_by_job(done, run)
        for name, (leaves, host_leaves, pods) in jobs.items():
            assert leaves == host_leaves, (run["condition"], name)  # tree = where it ran
            assert set(pods) == {0}  # one spine: one pod
        umt = jobs["umt"][0]
        if run["condition"] == "control":
            assert len(set(umt)) == 1 and len(umt) == 4  # compact: one leaf
            assert set(jobs) == {"umt"}
            continue
        assert sorted(Counter(umt).values()) == [2, 2]  # per_leaf=2 on both leaves
        if run["condition"] == "adjacent leaf bully":
            bully = jobs["bully"][0]
            pairs = [bully[i : i + 2] for i in range(0, len(bully), 2)]
            assert len(pairs) == 2 and all(a != b for a, b in pairs)  # partners across leaves
        else:
            incast = jobs["incast"][0]
            receivers, senders = incast[:2], incast[2:]
            assert len(set(receivers)) == 1 and len(set(senders)) == 1
            assert receivers[0] != senders[0]  # senders on the other leaf
        every = [n for j in load(done["dir"] / run["results_file"])["jobs"] for n in j["nodes"]]
        assert sorted(every) == list(range(8))  # the whole cluster, each node once


def test_bully_bandwidth_and_report(done):
    doc = load(done["out"])
    for run in doc["runs"]:
        for bw in run["bully_bandwidth"].values():
            # a rank of either bully gets at most its 100 Mbit/s node link
            assert 0 < bw["min_rank_gbps"] <= bw["mean_rank_gbps"] <= 0.1
    r = subprocess.run(
        [CONTEND, "report", done["out"]],
        capture_output=True,
        text=True,
        env=done["env"],
        timeout=120,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert "Mean performance difference vs. control" in r.stdout
    for cond in CONDITIONS[1:]:
        assert cond in r.stdout
    assert "on cluster" in done["proc"].stdout  # the study printed its report too


def test_job_files_say_how_to_run_by_hand(done):
    text = (done["dir"] / "jobs" / "control-r1.job").read_text()
    conf = Path(done["env"]["CONTEND_CLUSTER_DIR"]) / done["desc"]["prefix"] / "topology.conf"
    assert f"contend cluster run -- contend jobs THIS_FILE --topology-conf {conf}" in text
