"""`contend study --slurm` with tree placements: the batch script for the
Quartz-like topology.conf (tests/fixtures/topology/quartz.conf, 2,688
nodes) passes `bash -n`, and every run's `srun --nodelist` names nodes of
the file, laid out as the study asks (checked against the file's own
layout: quartzI is on leaf (I-1)//32, pod leaf//8): the application compact
on one leaf, then spread over two pods at 14 per leaf beside a bisection
bully whose pairs straddle the two pods, or beside an incast bully (3 nodes
on each of 7 leaves sending to 3 of an eighth, one pod).

Then, when Slurm can run here (slurmkit.LocalSlurm: slurmctld and two
slurmd "nodes" on this host), a tiny study's script against a 2-node
topology.conf naming those nodes is submitted with sbatch: its runs and its
--collect step must finish with R runs per condition, each job on the node
its placement resolved to.  What one host cannot show: both Slurm nodes are
this host, so the node lists and the block distribution are exercised, not
a network (docs/study.md)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import slurmkit
from conftest import ROOT, run_bounded

QUARTZ = ROOT / "tests" / "fixtures" / "topology" / "quartz.conf"
PPN = 2
STUDY = """\
name = "quartz-slurm"
seed = 5
repetitions = 2

[slurm]
ntasks_per_node = 2
srun = ["--mpi=pmix"]
sbatch = ["--time=00:30:00"]

[[app]]
name = "amg"
job = '''
[MOTIF] amg_like n=8 iters=2
'''

[control]
placement = { amg = "compact nodes=28" }

[[condition]]
name = "bisection bully"
placement = { amg = "spread nodes=28 pods=2 per_leaf=14 pod=0" }
[[condition.bully]]
name = "bully"
placement = "pairs pairs=4 across=pod pods=2 pod=0"
job = '''
[MOTIF] bully_pairs msg_bytes=1MiB window=8 iters=4
'''

[[condition]]
name = "incast"
[[condition.bully]]
name = "incast"
placement = "incast per_leaf=3 senders=7 pod=2"
job = '''
[MOTIF] bully_incast receivers=3
'''
"""


def quartz_hosts() -> set:
    names = set()
    for line in QUARTZ.read_text().splitlines():
        m = re.match(r"SwitchName=\S+ Nodes=quartz\[(\d+)-(\d+)\]", line)
        if m:
            names.update(f"quartz{i}" for i in range(int(m.group(1)), int(m.group(2)) + 1))
    return names


def leaf(host: str) -> int:
    return (int(host.removeprefix("quartz")) - 1) // 32


def pod(host: str) -> int:
    return leaf(host) // 8


def sruns(script: Path) -> list:
    """argv of every run's srun (the part after `[ -s OUT ] ||`)."""
    return [
        shlex.split(line.split("|| ", 1)[1])
        for line in script.read_text().splitlines()
        if " srun " in line and not line.startswith("#")
    ]


def placed(run_dir: Path, argv: list) -> tuple:
    """(hosts of the srun, {job: its hosts in rank order}) of one run."""
    hosts = next(a for a in argv if a.startswith("--nodelist=")).split("=", 1)[1].split(",")
    text = (run_dir / argv[argv.index("jobs") + 1]).read_text()
    nids = dict(re.findall(r"\[JOB_NAME\] (\S+)\n\[NID_LIST\] (\S+)", text))
    return hosts, {job: [hosts[int(i)] for i in nid.split(",")] for job, nid in nids.items()}


def test_quartz_script_node_lists(contend_bin, tmp_path):
    assert len(quartz_hosts()) == 2688
    sf = tmp_path / "quartz.toml"
    sf.write_text(STUDY)
    d = tmp_path / "d"
    r = run_bounded(
        [contend_bin, "study", sf, "--dir", d, "--slurm", "--topology-conf", QUARTZ], timeout=120
    )
    assert r.returncode == 0, r.stderr
    script = d / "slurm" / "study.sbatch"
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    order = json.loads((d / "state.json").read_text())["order"]
    argvs = sruns(script)
    assert len(argvs) == len(order) == 6
    union, known = set(), quartz_hosts()
    for argv, entry in zip(argvs, order):
        hosts, on = placed(d, argv)
        assert set(hosts) <= known and len(set(hosts)) == len(hosts)
        assert f"--nodes={len(hosts)}" in argv and f"--ntasks={len(hosts) * PPN}" in argv
        assert f"--ntasks-per-node={PPN}" in argv and "--distribution=block" in argv
        assert argv[argv.index("-o") + 1] == entry["results_file"]
        assert sorted(h for job in on.values() for h in job) == sorted(hosts)  # disjoint, all
        union.update(hosts)
        amg = on["amg"]
        assert len(amg) == 28
        if entry["condition"] == "control":
            assert len({leaf(h) for h in amg}) == 1  # compact: one leaf
        elif entry["condition"] == "bisection bully":
            assert Counter(pod(h) for h in amg) == {0: 14, 1: 14}
            assert sorted(Counter(leaf(h) for h in amg).values()) == [14, 14]
            bully = on["bully"]
            pairs = [bully[i : i + 2] for i in range(0, len(bully), 2)]
            assert len(pairs) == 4
            assert all({pod(a), pod(b)} == {0, 1} for a, b in pairs)  # through the top
            assert all(leaf(a) % 8 == leaf(b) % 8 for a, b in pairs)  # leaf k with leaf k
        else:
            incast = on["incast"]
            assert len(incast) == 24 and {pod(h) for h in incast} == {2}
            receivers, senders = incast[:3], incast[3:]
            assert len({leaf(h) for h in receivers}) == 1
            per_leaf = Counter(leaf(h) for h in senders)
            assert len(per_leaf) == 7 and set(per_leaf.values()) == {3}
            assert leaf(receivers[0]) not in per_leaf
    body = script.read_text()
    allocated = re.search(r"#SBATCH --nodelist=(\S+)", body).group(1).split(",")
    assert set(allocated) == union
    assert re.search(r"#SBATCH --nodes=(\d+)", body).group(1) == str(len(union))
    assert "#SBATCH --time=00:30:00" in body
    assert "--collect" in body.splitlines()[-1]


# ------------------------------------------------------------------ a real Slurm

LOCAL_STUDY = """\
name = "local-slurm"
seed = 2
repetitions = 2

[[app]]
name = "app"
job = '''
[MOTIF] compute mean=2ms
[MOTIF] wl_allreduce count=64
'''

[control]
placement = { app = "compact nodes=1" }

[[condition]]
name = "neighbour"
[[condition.bully]]
name = "bully"
placement = "compact nodes=1"
job = '''
[MOTIF] compute mean=5ms
'''
"""
JOB_TIMEOUT = 120  # s


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    reason = slurmkit.ensure_installed()
    if reason:
        pytest.skip(f"no local Slurm: {reason}")
    cluster = slurmkit.LocalSlurm(tmp_path_factory.mktemp("slurm"), nodes=2)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
    assert cluster.procs == {}


def test_study_script_under_local_slurm(slurm, contend_bin, tmp_path):
    n1, n2 = slurm.nodes
    conf = tmp_path / "topology.conf"
    conf.write_text(
        f"SwitchName=s1 Nodes={n1}\nSwitchName=s2 Nodes={n2}\nSwitchName=top Switches=s[1-2]\n"
    )
    sf = tmp_path / "local.toml"
    sf.write_text(LOCAL_STUDY)
    d = tmp_path / "d"
    r = run_bounded(
        [contend_bin, "study", sf, "--dir", d, "--slurm", "--topology-conf", conf], timeout=120
    )
    assert r.returncode == 0, r.stderr
    script = d / "slurm" / "study.sbatch"
    env = {
        "CONTEND": contend_bin,
        "OMPI_ALLOW_RUN_AS_ROOT": 1,
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": 1,
        # two Slurm nodes on one host: TCP over loopback (test_slurm_local.py)
        "OMPI_MCA_btl": "self,tcp",
        "OMPI_MCA_btl_tcp_if_include": "lo",
    }
    job = slurm.sbatch([script], cwd=tmp_path, env=env)
    states = slurm.wait_job(job, JOB_TIMEOUT)
    log = "\n".join(p.read_text(errors="replace") for p in tmp_path.glob("*.out"))
    assert all(s["JobState"] == "COMPLETED" for s in states), log[-4000:]
    doc = json.loads((d / "study.json").read_text())  # written by the script's --collect
    assert Counter(run["condition"] for run in doc["runs"]) == {"control": 2, "neighbour": 2}
    argvs = {a[a.index("-o") + 1]: a for a in sruns(script)}
    for run in doc["runs"]:
        jobs = json.loads((d / run["results_file"]).read_text())
        hosts, on = placed(d, argvs[run["results_file"]])
        assert jobs["seed"] == run["seed"]
        assert jobs["environment"]["nodes"] == len(hosts)  # srun gave the nodes asked for
        by_job = {j["name"]: j["nodes"] for j in jobs["jobs"]}
        if run["condition"] == "control":
            assert on == {"app": [n1]} and by_job == {"app": [0]}
        else:
            assert on == {"app": [n1], "bully": [n2]} and by_job == {"app": [0], "bully": [1]}
