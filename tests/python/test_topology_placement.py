"""The tree view of a machine (`contend topology show`) and the tree placements of
job files (compact, spread, every_leaf, pairs, incast) through the command line:
a Quartz-like topology.conf (tests/fixtures/topology/), the simulator's specs,
the emulated cluster's topology.conf, dry runs, --engine sim and real MPI."""

import collections
import json
import socket
import subprocess
import sys

import jsonschema
import pytest
from conftest import ROOT, SCHEMAS, run_bounded

FIXTURES = ROOT / "tests" / "fixtures" / "topology"
QUARTZ = FIXTURES / "quartz.conf"
FATTREE = "fattree:pods=4,leaves=8,nodes=32,uplinks=16,pod_uplinks=8"

POSTER = """\
[VAR] SEED=1
[JOB_NAME] control
[PLACEMENT] compact nodes=224 per_leaf=28
[MOTIF] barrier iters=1
[JOB_NAME] amg
[PLACEMENT] spread nodes=224 pods=2 per_leaf=14 seed={SEED}
[MOTIF] barrier iters=1
[JOB_NAME] bully
[PLACEMENT] pairs pairs=17 across=leaf pods=2 seed={SEED}
[MOTIF] pingpong iters=1
[JOB_NAME] bisection
[PLACEMENT] pairs pairs=8 across=pod pod=4 pods=2
[MOTIF] pingpong iters=1
[JOB_NAME] incast
[PLACEMENT] incast per_leaf=3 senders=7 receivers=1 pod=6
[MOTIF] incast iters=1
[JOB_NAME] spare
[PLACEMENT] every_leaf per_leaf=2 pods=1 pod=7
[MOTIF] barrier iters=1
"""


def show(contend_bin, *args):
    r = run_bounded([contend_bin, "topology", "show", *args], timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def dry(contend_bin, tmp_path, text, *args, nodes=2688, status=0):
    job = tmp_path / "t.job"
    job.write_text(text)
    out = tmp_path / "out.json"
    r = run_bounded(
        [contend_bin, "jobs", job, "--dry-run", "--nodes", nodes, "-o", out, *args], timeout=60
    )
    assert r.returncode == status, r.stdout + r.stderr
    return (json.loads(out.read_text()) if status == 0 else None), r


def jobs_of(doc):
    return {j["name"]: j for j in doc["jobs"]}


def per_leaf(job):
    return collections.Counter(job["leaves"])


# ------------------------------------------------------------- topology show


def test_fixture_is_what_its_script_writes():
    out = subprocess.run(
        [sys.executable, FIXTURES / "make_quartz_conf.py"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0 and out.stdout == QUARTZ.read_text()


def test_show_quartz(contend_bin):
    doc = json.loads(show(contend_bin, QUARTZ, "--json"))
    assert doc["schema"] == "contend-topology" and doc["kind"] == "slurm"
    assert (doc["nodes"], doc["leaves"], doc["pods"], doc["switch_levels"]) == (2688, 84, 11, 3)
    assert [lv["switches"] for lv in doc["levels"]] == [84, 11, 1]
    assert doc["nodes_per_leaf"] == {"min": 32, "max": 32}
    assert doc["leaves_per_pod"] == {"min": 4, "max": 8}  # 10 pods of 8 leaves, one of 4
    assert not doc["links_known"] and all(lv["taper"] is None for lv in doc["levels"])
    assert [lf["pod"] for lf in doc["leaf_list"]] == [i // 8 for i in range(84)]
    assert doc["leaf_list"][83] == {"name": "leaf84", "pod": 10, "nodes": 32, "first_node": 2656}
    text = show(contend_bin, QUARTZ)
    assert "2688 nodes, 84 leaf switches, 11 pods, 3 switch levels" in text
    assert "nodes per leaf: 32; leaves per pod: 4-8 (min-max)" in text
    assert "taper unknown" in text


@pytest.mark.parametrize("suffix, groups, links, spare", [
    ("g=9", 9, 1, 0), ("g=5", 5, 2, 0), ("g=5,links=1", 5, 1, 4), ("g=4", 4, 2, 2)])  # fmt: skip
def test_show_counts_a_dragonflys_wired_global_ports(contend_bin, suffix, groups, links, spare):
    """a=4, h=2: 8 global ports per group.  9 groups (a*h+1) wire them all
    once; fewer groups wire `links` parallel links per pair (the most the
    8 ports allow unless links= says fewer), the rest unconnected."""
    spec = f"dragonfly:a=4,p=2,h=2,{suffix}"
    doc = json.loads(show(contend_bin, spec, "--json"))
    wired = 8 * groups - spare * groups
    assert (doc["global_ports"], doc["global_ports_wired"]) == (8 * groups, wired)
    assert doc["global_links_per_group_pair"] == links
    assert wired == links * groups * (groups - 1)
    text = show(contend_bin, spec)
    plural = "link" if links == 1 else "links"
    if spare:
        assert f"global ports: {wired} of {8 * groups} wired: {links} {plural} per pair" in text
        assert f"{spare} of each group's 8 unconnected" in text
    else:
        want = f"global ports: {wired}, all wired ({links} {plural} per pair of the {groups}"
        assert want in text
    fat = json.loads(show(contend_bin, "fattree:leaves=4,nodes=4,uplinks=2", "--json"))
    assert fat["global_ports"] is None and fat["global_ports_wired"] is None
    assert fat["global_links_per_group_pair"] is None


def test_show_spec_taper(contend_bin):
    doc = json.loads(show(contend_bin, FATTREE, "--json"))
    assert (doc["nodes"], doc["leaves"], doc["pods"]) == (1024, 32, 4)
    lv = doc["levels"]
    assert (lv[0]["links_down"], lv[0]["links_up"], lv[0]["taper"]) == (1024, 512, 2.0)
    assert lv[1]["taper"] == 1.0 and lv[2]["taper"] is None
    assert "2:1" in show(contend_bin, FATTREE)


@pytest.mark.parametrize(
    "text,line",
    [
        ("SwitchName=a Nodes=n[1-4]\nSwitchName=b Nodes=n[3-5]\n", 2),
        ("SwitchName=a Nodes=n[1-4]\n# c\nSwitchName=b Nodez=n5\n", 3),
        ("SwitchName=a Nodes=n[1-4]\nSwitchName=a Nodes=n9\n", 2),
        ("SwitchName=a Nodes=n[1-4\n", 1),
    ],
)
def test_malformed_conf_names_the_line(contend_bin, tmp_path, text, line):
    conf = tmp_path / "bad.conf"
    conf.write_text(text)
    r = run_bounded([contend_bin, "topology", "show", conf], timeout=30)
    assert r.returncode == 2 and f"line {line}:" in r.stderr and not r.stdout
    job = tmp_path / "t.job"
    job.write_text("[JOB_NAME] a\n[PLACEMENT] linear nodes=2\n[MOTIF] barrier\n")
    r = run_bounded(
        [contend_bin, "jobs", job, "--dry-run", "--nodes", 4, "--topology-conf", conf], timeout=30
    )
    assert r.returncode == 2 and f"line {line}:" in r.stderr
    assert r.stderr.count("error") == 1


def test_show_missing_file(contend_bin, tmp_path):
    r = run_bounded([contend_bin, "topology", "show", tmp_path / "none.conf"], timeout=30)
    assert r.returncode == 2 and "cannot read" in r.stderr


def test_emulated_cluster_topology_conf(contend_bin, tmp_path):
    """The emulated cluster's state directory holds a topology.conf: one pod of leaves."""
    sys.path.insert(0, str(ROOT / "python"))
    from contend.cluster.topology import describe, make_spec, topology_conf

    desc = describe(make_spec(nodes=12, leaves=3))
    conf = tmp_path / "topology.conf"
    conf.write_text(topology_conf(desc))
    doc = json.loads(show(contend_bin, conf, "--json"))
    assert (doc["nodes"], doc["leaves"], doc["pods"], doc["switch_levels"]) == (12, 3, 1, 2)
    assert [lf["name"] for lf in doc["leaf_list"]] == ["leaf0", "leaf1", "leaf2"]


# ---------------------------------------------------------------- placements


def test_poster_layouts_on_quartz(contend_bin, tmp_path):
    doc, r = dry(contend_bin, tmp_path, POSTER, "--topology-conf", QUARTZ)
    jsonschema.validate(doc, json.loads((SCHEMAS / "contend-jobs.schema.json").read_text()))
    j = jobs_of(doc)
    # control: one pod, 8 leaves x 28
    assert set(j["control"]["pods"]) == {0}
    assert sorted(per_leaf(j["control"]).values()) == [28] * 8
    # amg: two pods, 16 leaves x 14 (pod 0 has 4 free per leaf left: not enough)
    assert len(set(j["amg"]["pods"])) == 2 and 0 not in j["amg"]["pods"]
    assert sorted(per_leaf(j["amg"]).values()) == [14] * 16
    # bully pairs: partners on two different leaves of the same pod
    b = j["bully"]
    assert len(b["nodes"]) == 34
    for i in range(17):
        assert b["leaves"][2 * i] != b["leaves"][2 * i + 1]
        assert b["pods"][2 * i] == b["pods"][2 * i + 1]
    # bisection: the partner in the other pod (pods 4 and 5)
    s = j["bisection"]
    for i in range(8):
        assert (s["pods"][2 * i], s["pods"][2 * i + 1]) == (4, 5)
    # incast: the receiver (rank 0) on the 8th leaf of pod 6, 3 senders on each other leaf
    inc = j["incast"]
    assert inc["leaves"][0] == 6 * 8 + 7 and set(inc["pods"]) == {6}
    assert per_leaf(inc) == {6 * 8 + k: 3 for k in range(7)} | {6 * 8 + 7: 1}
    assert inc["placement"]["receivers"] == 1 and inc["placement"]["sender_leaves"] == 7
    assert sorted(per_leaf(j["spare"]).values()) == [2] * 8 and set(j["spare"]["pods"]) == {7}
    # disjoint
    every = [n for job in doc["jobs"] for n in job["nodes"]]
    assert len(every) == len(set(every))
    assert "(224 ranks; compact on 8 leaves in 1 pod)" in r.stdout


def test_seeded_placements_repeat(contend_bin, tmp_path):
    a, _ = dry(contend_bin, tmp_path, POSTER, "--topology-conf", QUARTZ)
    b, _ = dry(contend_bin, tmp_path, POSTER, "--topology-conf", QUARTZ, "--seed", "5")
    c, _ = dry(contend_bin, tmp_path, POSTER, "--topology-conf", QUARTZ, "-D", "SEED=2")
    for name in ("amg", "bully"):
        assert jobs_of(a)[name]["nodes"] == jobs_of(b)[name]["nodes"]
        assert jobs_of(a)[name]["nodes"] != jobs_of(c)[name]["nodes"]
        assert jobs_of(c)[name]["placement"]["seed"] == 2
    assert sorted(per_leaf(jobs_of(c)["amg"]).values()) == [14] * 16


@pytest.mark.parametrize(
    "placement,why",
    [
        ("compact nodes=257", "no pod has 257 free nodes"),
        ("spread nodes=2400 pods=10 per_leaf=32", "only 9 of the 10 pods"),
        ("pairs pairs=2000 across=pod", "of the 2000 pairs fit"),
        ("incast per_leaf=3 senders=8", "8 leaves with 3 free nodes"),
        ("every_leaf per_leaf=32", "leaf01 (pod 0) has 31 free nodes"),
    ],
)
def test_refused_when_it_cannot_fit(contend_bin, tmp_path, placement, why):
    text = f"[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier\n[JOB_NAME] big\n[PLACEMENT] {placement}\n[MOTIF] barrier\n"
    _, r = dry(contend_bin, tmp_path, text, "--topology-conf", QUARTZ, status=2)
    assert "t.job:5: job 'big'" in r.stderr and why in r.stderr, r.stderr
    assert not (tmp_path / "out.json").exists()


def test_needs_the_tree(contend_bin, tmp_path):
    _, r = dry(contend_bin, tmp_path, POSTER, status=2)
    assert "t.job:3: this placement needs the machine's tree" in r.stderr
    _, r = dry(contend_bin, tmp_path, POSTER, "--topology-conf", QUARTZ, nodes=3000, status=2)
    assert "3000 nodes but the topology" in r.stderr


def test_old_placements_unchanged_and_tree_recorded(contend_bin, tmp_path):
    text = (
        "[JOB_NAME] a\n[PLACEMENT] linear nodes=40\n[MOTIF] barrier\n"
        "[JOB_NAME] b\n[PLACEMENT] random nodes=5 seed=3\n[MOTIF] barrier\n"
    )
    plain, _ = dry(contend_bin, tmp_path, text, nodes=64)
    tree, _ = dry(contend_bin, tmp_path, text, "--topology-conf", QUARTZ, nodes=64)
    for p, t in zip(plain["jobs"], tree["jobs"], strict=True):
        assert p["nodes"] == t["nodes"] and "leaves" not in p
        assert t["leaves"] == [n // 32 for n in t["nodes"]] and set(t["pods"]) == {0}


def test_engine_sim_uses_its_topology(contend_bin, tmp_path):
    job = tmp_path / "t.job"
    job.write_text(
        "[JOB_NAME] app\n[PLACEMENT] spread nodes=8 pods=2 per_leaf=2\n[MOTIF] barrier iters=2\n"
        "[JOB_NAME] bully\n[PLACEMENT] pairs pairs=2 across=pod\n[MOTIF] pingpong iters=2\n"
    )
    out = tmp_path / "sim.json"
    spec = "fattree:pods=2,leaves=4,nodes=4,uplinks=2,pod_uplinks=2"
    r = run_bounded(
        [contend_bin, "jobs", job, "--engine", "sim", "--topology", spec, "-q", "-o", out],
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    j = jobs_of(json.loads(out.read_text()))
    assert sorted(collections.Counter(j["app"]["pods"]).values()) == [4, 4]
    assert sorted(per_leaf(j["app"]).values()) == [2] * 4
    assert j["bully"]["pods"] == [0, 1, 0, 1]
    r = run_bounded(
        [
            contend_bin,
            "jobs",
            job,
            "--engine",
            "sim",
            "--topology",
            spec,
            "--topology-conf",
            QUARTZ,
        ],
        timeout=60,
    )
    assert r.returncode == 2 and "--topology slurm:FILE" in r.stderr


def test_mpi_hosts_matched_by_name(mpirun, tmp_path):
    host = socket.gethostname()
    conf = tmp_path / "topology.conf"
    conf.write_text(
        f"SwitchName=s0 Nodes=other1,{host}\nSwitchName=s1 Nodes=other2\n"
        "SwitchName=top Switches=s[0-1]\n"
    )
    job = tmp_path / "t.job"
    job.write_text("[JOB_NAME] a\n[PLACEMENT] compact nodes=1\n[MOTIF] barrier iters=1\n")
    out = tmp_path / "run.json"
    r = mpirun(2, "jobs", job, "--topology-conf", conf, "-q", "-o", out, timeout=120, cwd=tmp_path)
    if r.returncode == 2 and "not among its nodes" in r.stderr:
        pytest.skip(f"MPI names this host differently from {host!r}: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    a = jobs_of(json.loads(out.read_text()))["a"]
    assert (a["leaves"], a["pods"]) == ([0], [0])
    # hosts not in the file: refused before anything runs
    r = mpirun(2, "jobs", job, "--topology-conf", QUARTZ, "-q", timeout=120, cwd=tmp_path)
    assert r.returncode == 2 and "not among its nodes" in r.stderr, r.stderr
    # --virtual-nodes: node i is the file's i-th node
    r = mpirun(
        2,
        "jobs",
        job,
        "--topology-conf",
        QUARTZ,
        "--virtual-nodes",
        "1",
        "-q",
        "-o",
        out,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert jobs_of(json.loads(out.read_text()))["a"]["leaves"] == [0]
