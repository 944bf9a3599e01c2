"""`contend locate --cluster`: slow links of the emulated cluster that is up.

Everywhere: the paths built from a cluster's description (one path per pair,
links named as `contend cluster stats` names them), nodes matched by host
name (a run on a fat tree of the cluster's shape, renamed as the cluster's
nodes, locates its degraded uplink under the cluster's name, and under the
other leaf's when the names are permuted), bad input (exit 2, one line).

As root with `ip netns` and Open MPI: a cluster of 8 nodes on 4 leaves whose
leaf1 uplink is shaped to a quarter of the others (`shape --degrade`), all
pairs measured with `contend cluster run -- contend pairs`: locate ranks that
uplink first. Located means: the first ranked unit is the cable leaf1-uplink,
led by either direction (`leaf1-uplink-up` or `leaf1-uplink-down`), since the
cable is what locate ranks and both directions are degraded. The cluster is
always removed (and checked gone) by the fixture's finalizer.
"""

from __future__ import annotations

import json
import os
import re
import subprocess

import jsonschema
import pytest
from clusterkit import cli, cli_argv, cluster_env, namespaces, skip_reason
from conftest import BUILD, SCHEMAS, mpi_env, run_bounded
from contend.cluster import topology
from contend.locate.cluster import paths_document

BIN = BUILD / "bin" / "contend"
LOCATE = BUILD / "bin" / "contend-locate"
SCHEMA = json.loads((SCHEMAS / "contend-locate.schema.json").read_text())
PREFIX = "lc"
# the cluster's shape as a simulated fat tree: node i on leaf i // 2, one spine
TREE = "fattree:leaves=4,nodes=2,uplinks=1"
PAIRS = ["--bytes", "32768", "--iters", "4", "--lat-iters", "2", "-q"]


def _write_state(state_dir, prefix=PREFIX):
    """A cluster.json as `contend cluster up --nodes 8 --leaves 4` writes it (no namespaces)."""
    desc = topology.describe(topology.make_spec(nodes=8, leaves=4, prefix=prefix))
    desc["status"] = "up"
    (state_dir / prefix).mkdir(parents=True)
    (state_dir / prefix / "cluster.json").write_text(json.dumps(desc))
    return desc


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    """(tmp dir, environment with its state dir, description, pairs results of the
    tree with leaf1's uplink at 25 %, as if measured on the cluster's nodes)."""
    tmp = tmp_path_factory.mktemp("locate-cluster")
    desc = _write_state(tmp / "state")
    sim = tmp / "sim.json"
    r = run_bounded(
        [BIN, "pairs", "--engine", "sim", "--topology", TREE, "--degrade", "leaf1:2=0.25",
         *PAIRS, "--seed", "1", "-o", sim],
        timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(sim.read_text())
    del doc["environment"]["simulation"]  # as an MPI run's results
    doc["environment"]["node_names"] = [n["hostname"] for n in desc["nodes"]]
    res = tmp / "cluster-pairs.json"
    res.write_text(json.dumps(doc))
    env = dict(mpi_env(), CONTEND_CLUSTER_DIR=str(tmp / "state"))
    env.pop("CONTEND_CLUSTER_PREFIX", None)
    return tmp, env, desc, res


def _locate(env, *args, status=0):
    r = run_bounded([LOCATE, *map(str, args)], env=env, timeout=300)
    assert r.returncode == status, r.stderr + r.stdout
    return r


def test_paths_follow_the_tree_and_name_links_as_stats():
    desc = topology.describe(topology.make_spec(nodes=8, leaves=4, prefix=PREFIX))
    doc = paths_document(desc, list(range(8)), [(0, 1), (0, 3), (7, 2)])
    names = [link["component"] for link in doc["links"]]
    assert names == [link["component"] for link in desc["links"]]  # the stats rows
    path = {(p["src"], p["dst"]): [names[i] for i in p["paths"][0]] for p in doc["pairs"]}
    assert path[(0, 1)] == ["n000-egress", "n001-ingress"]  # within leaf0
    assert path[(0, 3)] == ["n000-egress", "leaf0-uplink-up", "leaf1-uplink-down", "n003-ingress"]
    assert path[(7, 2)] == ["n007-egress", "leaf3-uplink-up", "leaf1-uplink-down", "n002-ingress"]
    peer = {link["component"]: link["peer"] for link in doc["links"]}
    assert peer["leaf1-uplink-up"] == "leaf1-uplink-down" and peer["n003-ingress"] == "n003-egress"


def test_the_degraded_uplink_is_named_as_the_cluster_names_it(fake):
    tmp, env, _desc, res = fake
    out = tmp / "located.json"
    _locate(env, res, "--cluster", PREFIX, "-o", out)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    first = doc["links"][0]
    assert {first["link"], first["peer"]} == {"leaf1-uplink-up", "leaf1-uplink-down"}, first
    assert first["p_first"] >= 0.8
    assert doc["topology"] == "emulated cluster 'lc' (8 nodes, 4 leaves)"
    assert doc["links_total"] == 24  # 8 nodes x 2 + 4 uplinks x 2


def test_nodes_are_matched_by_host_name(fake):
    """Results whose node i ran on the cluster's node 7 - i: the tree's leaf1 (nodes
    2, 3) is then the cluster's leaf2 (nodes 5, 4)."""
    tmp, env, desc, res = fake
    doc = json.loads(res.read_text())
    doc["environment"]["node_names"] = [n["hostname"] for n in reversed(desc["nodes"])]
    moved = tmp / "reversed.json"
    moved.write_text(json.dumps(doc))
    out = tmp / "located-reversed.json"
    _locate(env, moved, "--cluster", PREFIX, "-o", out, "--bootstrap", "0")
    first = json.loads(out.read_text())["links"][0]
    assert {first["link"], first["peer"]} == {"leaf2-uplink-up", "leaf2-uplink-down"}, first


def test_cluster_without_prefix_before_results(fake):
    """A bare --cluster takes $CONTEND_CLUSTER_PREFIX; RESULTS after it stays RESULTS."""
    _tmp, env, _desc, res = fake
    r = _locate(dict(env, CONTEND_CLUSTER_PREFIX=PREFIX), "--cluster", res, "--bootstrap", "0")
    assert "pairs on emulated cluster 'lc' (8 nodes, 4 leaves)" in r.stdout, r.stdout


@pytest.mark.parametrize(
    "case,words",
    [
        ("no_cluster", "no emulated cluster 'none' is up"),
        ("bad_prefix", "invalid prefix"),
        ("simulated", "results of a simulated run on fattree"),
        ("other_hosts", "node 0 ('elsewhere') is not a node of the emulated cluster 'lc'"),
        ("virtual_nodes", "are both on lcn000 (--virtual-nodes?)"),
        ("no_names", "cannot match them"),
        ("routing", "--routing does not apply to --cluster"),
        ("with_topology", "not allowed with argument"),
    ],
)
def test_bad_input_exits_2_with_one_line(fake, case, words):
    tmp, env, _desc, res = fake
    doc = json.loads(res.read_text())
    changed = tmp / f"{case}.json"
    args = [changed, "--cluster", PREFIX]
    if case == "no_cluster":
        args = [res, "--cluster", "none"]
    elif case == "bad_prefix":
        args = [res, "--cluster=Bad.Prefix"]
    elif case == "simulated":
        doc["environment"]["simulation"] = {"topology": TREE, "routing": "dmodk"}
    elif case == "other_hosts":
        doc["environment"]["node_names"][0] = "elsewhere"
    elif case == "virtual_nodes":
        doc["environment"]["node_names"][1] = "lcn000"
    elif case == "no_names":
        doc["environment"]["node_names"] = []
    elif case == "routing":
        args = [res, "--cluster", PREFIX, "--routing", "dmodk"]
    elif case == "with_topology":
        args = [res, "--cluster", PREFIX, "--topology", TREE]
    changed.write_text(json.dumps(doc))
    out = tmp / "never.json"
    r = _locate(env, *args, "-o", out, status=2)
    assert words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout
    assert not out.exists()


# --- on a real emulated cluster (root) ---------------------------------------

_REASON = skip_reason()
RUN_TIMEOUT = 180  # s, contend pairs on the cluster (measured: ~6 s)


def _htb_rate(namespace: str, dev: str) -> str:
    out = subprocess.run(
        ["tc", "-n", namespace, "class", "show", "dev", dev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return re.search(r"\brate (\S+)", out).group(1)


@pytest.fixture
def cluster8(tmp_path):
    """8 nodes on 4 leaves, 100 Mbit/s node links, 200 Mbit/s uplinks (1:1); always
    removed (and checked gone) afterwards."""
    env = cluster_env(tmp_path / "state")
    prefix = f"lc{os.getpid() % 100000:05d}"
    try:
        cli(env, "up", "--prefix", prefix, "--nodes", 8, "--leaves", 4, "--node-rate", "100mbit",
            check=0)  # fmt: skip
        yield env, prefix
    finally:
        cli(env, "down", "--prefix", prefix, timeout=120)
        assert not namespaces(prefix), f"namespaces of {prefix} left behind"


@pytest.mark.skipif(bool(_REASON), reason=_REASON or "ok")
def test_an_uplink_at_a_quarter_is_located_first(cluster8, tmp_path):
    env, prefix = cluster8
    sw = f"{prefix}-sw"
    # an unknown link: one line naming the valid ones, nothing changed
    bad = cli(env, "shape", "--prefix", prefix, "--degrade", "leaf4-uplink=0.25")
    assert bad.returncode == 2 and "leaf0-uplink..leaf3-uplink" in bad.stderr, bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert _htb_rate(sw, "leaf1-up") == "200Mbit"

    cli(env, "shape", "--prefix", prefix, "--degrade", "leaf1-uplink=0.25", check=0)
    assert [_htb_rate(sw, d) for d in ("leaf1-up", "leaf1-dn", "leaf0-up")] == [
        "50Mbit", "50Mbit", "200Mbit"
    ]  # fmt: skip
    shown = json.loads(cli(env, "show", "--prefix", prefix, "--json", check=0).stdout)
    assert shown["degraded"] == {"leaf1-uplink-up": 0.25, "leaf1-uplink-down": 0.25}
    assert (
        "degraded: leaf1-uplink-up at 0.25 (50mbit)"
        in cli(env, "stats", "--prefix", prefix, check=0).stdout
    )

    res = tmp_path / "pairs.json"
    r = run_bounded(
        cli_argv("run", "--prefix", prefix, "--", BIN, "pairs", "--seed", "1", "-q", "-o", res),
        env=env,
        timeout=RUN_TIMEOUT,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    measured = json.loads(res.read_text())
    # `cluster run` places rank i on node i: the results' node i is the cluster's node i
    assert measured["rank_node"] == list(range(8))
    assert measured["environment"]["node_names"] == [n["hostname"] for n in shown["nodes"]]

    out = tmp_path / "located.json"
    _locate(env, res, "--cluster", prefix, "-o", out)
    links = json.loads(out.read_text())["links"]
    first = links[0]
    assert {first["link"], first["peer"]} == {"leaf1-uplink-up", "leaf1-uplink-down"}, links[:3]
    # measured over 5 runs: slowdown 1.86-2.22, next unit 0.10-0.24, p_first 1.00
    assert first["p_first"] >= 0.8
    assert first["slowdown"] > 3 * links[1]["slowdown"], links[:3]

    cli(env, "shape", "--prefix", prefix, "--on", check=0)  # undoes the degradation
    assert _htb_rate(sw, "leaf1-up") == "200Mbit"
    shown = json.loads(cli(env, "show", "--prefix", prefix, "--json", check=0).stdout)
    assert shown["degraded"] == {}
