"""`contend locate`: slow links inferred from `contend pairs` results and the
routing's paths, checked against the simulator's ground truth (--degrade):
the degraded link ranks first on a 128-node 2:1 fat tree and on a 72-node
dragonfly (global link) at every seed tried; a bully's hotspot shows in the
links that stalled most; links crossed by the same pairs
are reported as inseparable; the fit recovers known slowdowns; bad input
exits 2 with one line and writes nothing."""

import json

import jsonschema
import numpy as np
import pytest
from conftest import BUILD, SCHEMAS, run_bounded
from contend.locate.infer import fit, nnls
from contend.locate.stalls import top_stalled
from scipy import sparse
from scipy.optimize import lsq_linear

BIN = BUILD / "bin" / "contend"
LOCATE = BUILD / "bin" / "contend-locate"
PAIRS = ["--bytes", "32768", "--iters", "4", "--lat-iters", "2", "-q"]


def pairs(tmp_path, topo, *args, name="pairs.json"):
    out = tmp_path / name
    r = run_bounded(
        [BIN, "pairs", "--engine", "sim", "--topology", topo, *PAIRS, "-o", out, *args],
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    return out


def locate(*args, status=0):
    r = run_bounded([LOCATE, *map(str, args)], timeout=600)
    assert r.returncode == status, r.stderr + r.stdout
    return r


SCHEMA = json.loads((SCHEMAS / "contend-locate.schema.json").read_text())


def located(tmp_path, results, *args):
    out = tmp_path / "located.json"
    locate(results, "-o", out, *args)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, SCHEMA)
    return doc


def cable(d):
    return {f"{d['component']}:{d['port']}", f"{d['peer_component']}:{d['peer_port']}"}


@pytest.mark.parametrize(
    "topo,cls,rounds",
    [
        ("fattree:leaves=32,nodes=4,uplinks=2", "", "32"),  # 128 nodes, 2:1
        ("dragonfly:a=4,p=2,h=2", ",global", "24"),  # 72 nodes, 9 groups
    ],
)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_degraded_link_ranks_first(tmp_path, topo, cls, rounds, seed):
    res = pairs(
        tmp_path, topo, "--degrade-random", f"1,0.25,{seed}{cls}", "--seed", seed,
        "--rounds", rounds,
    )  # fmt: skip
    truth = json.loads(res.read_text())["environment"]["simulation"]["degraded"]
    doc = located(tmp_path, res, "--top", "3", "--bootstrap", "10")
    first = doc["links"][0]
    assert {first["link"], first["peer"]} == cable(truth[0])
    assert first["p_first"] >= 0.8
    assert doc["degraded"] == truth


def test_a_bully_hotspot_is_among_the_links_that_stalled_most(tmp_path):
    """128-node 2:1 tree, an incast bully on 16 nodes drawn with the seed, the
    pairs among the other 112, no degraded link: locate's first link is one
    of the 5 switch ports that stalled most (the counters CSV), and its top 5
    share at least 2 of them at every seed and 3 at two of three (by chance,
    5 of 351 links would share fewer than 1)."""
    shared = []
    for seed in (1, 2, 3):
        ctr = tmp_path / f"c{seed}.csv"
        res = pairs(
            tmp_path, "fattree:leaves=32,nodes=4,uplinks=2", "--rounds", "32", "--seed", seed,
            "--bully", "bully_incast:receivers=1,msg_bytes=65536,window=4,iters=1",
            "--bully-nodes", "16", "--bully-place", "random", "--counters", ctr,
            name=f"p{seed}.json",
        )  # fmt: skip
        run = json.loads(res.read_text())
        bully_nodes = set(run["bully"]["nodes"])
        doc = located(tmp_path, res, "--top", "5", "--bootstrap", "0")
        links = [r["link"] for r in doc["links"]]
        stalled = top_stalled(ctr, 5)
        assert len(links) == len(stalled) == 5
        assert links[0] in stalled, (links, stalled)
        # one name, one direction: the counters' tier of a port is locate's class of that link
        tiers = {
            f"{p['component']}:{p['port']}": p["tier"]
            for p in run["environment"]["simulation"]["counters"]["top_stalled"]
        }
        both = [r for r in doc["links"] if r["link"] in tiers]
        assert both and all(tiers[r["link"]] == r["class"] for r in both)
        # the truth names only the fabric's ports; the bully's NICs stall too
        assert not any(p.startswith("nic") for p in stalled)
        assert any(f"nic{n}:0" in top_stalled(ctr, 5, switches_only=False) for n in bully_nodes)
        shared.append(len(set(links) & set(stalled)))
    assert min(shared) >= 2 and sorted(shared)[1] >= 3, shared


def test_top_stalled_ranks_ports_by_their_last_cumulative_stall(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text(
        "time_s,component,port,vc,counter,value\n"
        "0.1,leaf0,4,,xmit_wait_ns,50\n"
        "0.1,leaf1,4,,xmit_wait_ns,10\n"
        "0.1,nic3,0,,xmit_wait_ns,900\n"
        "0.1,spine0,2,,busy_ns,5000\n"
        "0.2,leaf1,4,,xmit_wait_ns,80\n"  # cumulative: its last value counts
        "0.2,leaf1,4,0,xmit_wait_ns,700\n"  # one VC's row: not the port's
        "0.2,spine0,1,,xmit_wait_ns,50\n"
        "0.2,spine0,3,,xmit_wait_ns,0\n"  # never stalled
    )
    assert top_stalled(csv, 5) == ["leaf1:4", "leaf0:4", "spine0:1"]
    assert top_stalled(csv, 2, switches_only=False) == ["nic3:0", "leaf1:4"]


def test_links_crossed_by_the_same_pairs_are_inseparable(tmp_path):
    """One node per leaf and one uplink: every pair from node 0 crosses its
    NIC link and leaf0's uplink, and no other pair crosses either."""
    res = pairs(tmp_path, "fattree:leaves=4,nodes=1,uplinks=1", "--degrade", "leaf0:1=0.25")
    doc = located(tmp_path, res, "--bootstrap", "0")
    first = doc["links"][0]
    names = {first["link"], first["peer"], *first["inseparable_from"]}
    assert {"leaf0:1", "spine0:0"} <= names
    assert names & {"nic0:0", "leaf0:0"}
    assert doc["inseparable_groups"] >= 1


def test_the_fit_recovers_known_slowdowns():
    rng = np.random.default_rng(4)
    m, n = 400, 30
    w = sparse.random(m, n, density=0.15, random_state=5, format="csr")
    w.data[:] = 1.0
    truth = np.zeros(n)
    truth[[3, 17]] = [3.0, 1.0]
    excess = w @ truth + rng.normal(0, 0.01, m)
    f = fit(w, excess, np.arange(n), top=2, bootstrap=10, seed=1)
    assert np.argmax(f.slowdown) == 3
    assert f.slowdown[3] == pytest.approx(3.0, abs=0.05)
    assert f.slowdown[17] == pytest.approx(1.0, abs=0.05)
    assert np.all(np.delete(f.slowdown, [3, 17]) < 0.05)
    assert f.p_first[3] == 1.0 and f.p_top[17] == 1.0


def test_nnls_reaches_scipys_minimum():
    rng = np.random.default_rng(2)
    a = sparse.random(3000, 200, density=0.03, random_state=3, format="csr")
    b = np.abs(rng.normal(0, 1, 3000))
    w = rng.integers(0, 3, 3000).astype(float)
    ours = nnls(a, b, w)
    ref = lsq_linear(sparse.diags(np.sqrt(w)) @ a, np.sqrt(w) * b, bounds=(0, np.inf), tol=1e-12)
    assert np.all(ours >= 0)
    cost = np.sum(w * (a @ ours - b) ** 2)
    assert cost <= np.sum(w * (a @ ref.x - b) ** 2) * (1 + 1e-6)
    assert np.abs(ours - ref.x).max() < 1e-3


TREE = "fattree:leaves=4,nodes=4,uplinks=2"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("small")
    res = pairs(tmp, TREE, "--seed", "3")
    mpi = json.loads(res.read_text())
    del mpi["environment"]["simulation"]  # as an MPI run's results
    (tmp / "mpi.json").write_text(json.dumps(mpi))
    return tmp, res, tmp / "mpi.json"


def test_results_of_a_real_machine_take_a_topology_or_paths(small):
    tmp, _, mpi = small
    out = tmp / "mpi-located.json"
    locate(mpi, "--topology", TREE, "-o", out, "--bootstrap", "0")
    by_topology = json.loads(out.read_text())
    assert by_topology["topology"] == TREE
    paths = tmp / "all.json"
    r = run_bounded([BIN, "topology", "paths", "--topology", TREE, "-q", "-o", paths])
    assert r.returncode == 0, r.stderr
    locate(mpi, "--paths", paths, "-o", out, "--bootstrap", "0")
    assert json.loads(out.read_text())["links"] == by_topology["links"]


@pytest.mark.parametrize(
    "case,words",
    [
        ("no_topology", "--topology SPEC"),
        ("small_topology", "the topology fattree:leaves=2,nodes=4,uplinks=2 has 8 nodes"),
        ("other_topology", "ran on topology"),
        ("results_not_pairs", "neither pairs nor recorded rings"),
        ("not_json", "JSON"),
        ("output_is_input", "never replaces an input"),
        ("bad_top", "--top"),
        ("paths_without_the_pairs", "no path for the measured pair"),
        ("missing_conf", "cannot read"),
    ],
)
def test_bad_input_exits_2_with_one_line(small, case, words):
    tmp, res, mpi = small
    other = tmp / "other.json"
    args = {
        "no_topology": [mpi],
        "small_topology": [mpi, "--topology", "fattree:leaves=2,nodes=4,uplinks=2"],
        "other_topology": [res, "--topology", "fattree:leaves=4,nodes=4,uplinks=4"],
        "results_not_pairs": [other],
        "not_json": [other],
        "output_is_input": [res, "-o", res],
        "bad_top": [res, "--top", "0"],
        "paths_without_the_pairs": [mpi, "--paths", tmp / "few.json"],
        "missing_conf": [mpi, "--topology-conf", tmp / "missing.conf"],
    }[case]
    if case == "paths_without_the_pairs":
        r = run_bounded(
            [BIN, "topology", "paths", "--topology", TREE, "--pairs", "0:1", "-q", "-o",
             tmp / "few.json"]
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
    if case == "results_not_pairs":
        other.write_text(json.dumps({"schema": "contend-results", "schema_version": "1.1"}))
    if case == "not_json":
        other.write_text("{not json")
    out = tmp / "never.json"
    r = run_bounded([LOCATE, *map(str, args), *([] if "-o" in args else ["-o", out])])
    assert r.returncode == 2, r.stderr + r.stdout
    assert words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout
    assert not out.exists()
