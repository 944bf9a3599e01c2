"""The trace engine: `--dry-run` plans a run in one process without MPI and
reports who talks to whom; its split equals the real run's for the same
seed, and its traffic follows from the test definitions."""

import json
from collections import defaultdict

import jsonschema
import pytest
from conftest import BUILD, ROOT, run_bounded


def plan(tmp_path, *args, name="plan.json"):
    out = tmp_path / name
    r = run_bounded(
        [BUILD / "bin" / "contend", *args, "--dry-run", "-o", out],
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )  # no MPI launcher environment at all
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


@pytest.fixture
def load_plan(tmp_path, plan_schema):
    doc, text = plan(tmp_path, "load", "--nodes", "20", "--ranks-per-node", "4", "--seed", "5")
    jsonschema.validate(doc, plan_schema)
    return doc, text


def by_name(doc):
    return {t["name"]: t for t in doc["tests"]}


def test_ring_traffic_leaves_the_node(load_plan):
    doc, _ = load_plan
    ppn = doc["ranks_per_node"]
    canaries = doc["groups"][0]["nodes"]
    rr = by_name(doc)["rr_lat"]
    ranks = len(canaries) * ppn
    assert rr["messages_per_iteration"] == 2 * ranks  # one 8 B message to each neighbour
    assert rr["bytes_per_iteration"] == 16 * ranks
    peers = defaultdict(set)
    for src, dst, nbytes, msgs in rr["pairs"]:
        assert src != dst  # PPort sub-communicators: one rank per node
        assert src in canaries and dst in canaries
        peers[src].add(dst)
    assert all(len(p) <= 2 * ppn for p in peers.values())


def test_congestor_traffic(load_plan):
    doc, _ = load_plan
    ppn = doc["ranks_per_node"]
    groups = {g["name"]: g["nodes"] for g in doc["groups"]}
    t = by_name(doc)
    n = len(groups["pairwise_a2a"])
    assert t["pairwise_a2a"]["bytes_per_iteration"] == ppn * n * (n - 1) * 4096
    n = len(groups["p2p_incast"])
    incast_dst = {dst for _, dst, _, _ in t["p2p_incast"]["pairs"]}
    assert len(incast_dst) == 1  # every sub-communicator's root is on the group's first node
    assert t["p2p_incast"]["bytes_per_iteration"] == ppn * (n - 1) * 4096
    get_src = {src for src, _, _, _ in t["rma_get_bcast"]["pairs"]}
    assert get_src == {min(groups["rma_get_bcast"])}  # data flows out of the root


def test_same_seed_same_plan_other_seed_other_rings(tmp_path):
    a, _ = plan(tmp_path, "network", "--nodes", "12", "--seed", "9", name="a.json")
    b, _ = plan(tmp_path, "network", "--nodes", "12", "--seed", "9", name="b.json")
    c, _ = plan(tmp_path, "network", "--nodes", "12", "--seed", "10", name="c.json")
    assert a == b
    ring = lambda d: sorted(map(tuple, by_name(d)["rr_lat"]["pairs"]))
    assert ring(a) != ring(c)
    nat = lambda d: by_name(d)["nat_bw"]["pairs"]
    assert nat(a) == nat(c)  # the natural ring does not depend on the seed


def test_plan_split_equals_real_run(tmp_path, mpirun, load_plan):
    doc, _ = plan(tmp_path, "load", "--nodes", "10", "--seed", "77", name="p10.json")
    out = tmp_path / "real.json"
    r = mpirun(
        10,
        "load",
        "--virtual-nodes",
        "1",
        "--seed",
        "77",
        "--canaries",
        "rr_lat",
        "--congestor-baseline=false",
        "--timeout",
        "0.2",
        "--measurements",
        "1",
        "-q",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    real = json.loads(out.read_text())
    assert real["placement"]["node_order"] == doc["node_order"]
    assert [g["nodes"] for g in real["placement"]["groups"]] == [g["nodes"] for g in doc["groups"]]


def test_dry_run_text_names_every_test(load_plan):
    doc, text = load_plan
    for t in doc["tests"]:
        assert t["name"] in text
    assert "src node" in text and "B/iteration" in text


def test_engine_trace_is_the_dry_run(tmp_path):
    """--dry-run selects the trace engine: the same plan, byte for byte."""
    a, _ = plan(tmp_path, "load", "--nodes", "12", "--ranks-per-node", "2", "--seed", "4")
    out = tmp_path / "engine.json"
    r = run_bounded(
        [BUILD / "bin" / "contend", "load", "--engine", "trace", "--nodes", "12"]
        + ["--ranks-per-node", "2", "--seed", "4", "-o", out],
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text()) == a
    assert a["engine"] == "trace"


@pytest.mark.parametrize(
    "args, message",
    [
        (["network", "--engine", "nosuch"], "unknown engine 'nosuch'; valid: mpi, trace"),
        (["load", "--engine", "trace"], "--dry-run needs --nodes N"),
        (["network", "--dry-run", "--engine", "mpi", "--nodes", "4"], "drop --engine mpi"),
        (["network", "--nodes", "4"], "--nodes only applies with --dry-run"),
        (["jobs", "examples/jobs/tealeaf_cg.job", "--engine", "nosuch"], "unknown engine"),
        (["jobs", "examples/jobs/tealeaf_cg.job", "--engine", "trace"], "needs --nodes N"),
    ],
)
def test_engine_option_errors(args, message):
    r = run_bounded([BUILD / "bin" / "contend", *args], timeout=30, cwd=ROOT)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in r.stderr
    assert r.stderr.count("error:") == 1


def test_dry_run_of_every_round_count_stays_one_iteration(tmp_path):
    """The schedule runs on the trace engine with one iteration per test,
    whatever the loop counts: counts that a real run could not finish in a
    day still plan in seconds (plan() bounds it at 60 s), to the same plan."""
    a, _ = plan(tmp_path, "network", "--nodes", "6", "--seed", "2", name="a.json")
    huge = ["--measurements", "1000000000", "--rings", "1000", "--iters", "1000000"]
    b, _ = plan(tmp_path, "network", "--nodes", "6", "--seed", "2", *huge, name="b.json")
    assert by_name(a)["rr_lat"]["messages_per_iteration"] == 2 * 6
    assert a["tests"] == b["tests"]
