"""`contend locate` from the rings `contend network`/`load` record with
--record-rings: every rank's value of every round is recorded aligned with
the ring orders, a ring position becomes one measurement of the flows to and
from its two neighbours, a degraded link is found from load results on the
simulator, and files without pairs or recorded rings, or records beyond the
limit, are refused with one line and exit status 2."""

import json

import jsonschema
import numpy as np
import pytest
from conftest import BUILD, SCHEMAS, run_bounded
from contend.locate.rings import load_rings, ring_weights
from scipy import sparse

BIN = BUILD / "bin" / "contend"
LOCATE = BUILD / "bin" / "contend-locate"
TREE16 = "fattree:leaves=4,nodes=4,uplinks=2"
SMALL = ["--measurements", "2", "--rings", "3", "-q"]
RESULTS_SCHEMA = json.loads((SCHEMAS / "contend-results.schema.json").read_text())
LOCATE_SCHEMA = json.loads((SCHEMAS / "contend-locate.schema.json").read_text())


def contend(*args, status=0):
    r = run_bounded([BIN, *map(str, args)], timeout=600)
    assert r.returncode == status, r.stderr
    return r


def locate(*args, status=0):
    r = run_bounded([LOCATE, *map(str, args)], timeout=600)
    assert r.returncode == status, r.stderr + r.stdout
    return r


@pytest.fixture(scope="module")
def network(tmp_path_factory):
    """A 16-node simulated network test with rr_bw and rr_lat, rings recorded,
    and the same without --record-rings."""
    tmp = tmp_path_factory.mktemp("rings")
    common = ["network", "--engine", "sim", "--topology", TREE16, "--canaries", "rr_bw,rr_lat"]
    contend(*common, *SMALL, "--seed", "4", "--record-rings", "-o", tmp / "rec.json")
    contend(*common, *SMALL, "--seed", "4", "-o", tmp / "plain.json")
    return tmp, json.loads((tmp / "rec.json").read_text())


def test_every_rank_value_is_recorded_aligned_with_its_ring(network):
    _, doc = network
    jsonschema.validate(doc, RESULTS_SCHEMA)
    for t in doc["tests"]:
        rings, key = t["rings"], t["metric"]
        shape = [[len(r) for r in m] for m in rings["orders"]]
        assert shape == [[16] * 3] * 2, t["name"]
        assert [[len(r) for r in m] for m in rings[key]] == shape, t["name"]
        values = [v for m in rings[key] for r in m for v in r]
        assert all(v > 0 for v in values)
        # the per-round values are what the bulk statistics summarise
        assert np.mean(values) == pytest.approx(t[f"bulk_{key}"]["mean"], rel=1e-9)


def test_a_ring_position_waits_on_the_flows_to_and_from_its_neighbours(network):
    _, doc = network
    p = load_rings(doc, "rec.json", "bw", "isolated", None)
    t = next(t for t in doc["tests"] if t["name"] == "rr_bw")
    nodes = t["rings"]["nodes"]
    orders = [o for m in t["rings"]["orders"] for o in m]
    assert p.rows.shape[0] == sum(len(o) for o in orders)  # one measurement per ring position
    flows = list(zip(p.src.tolist(), p.dst.tolist()))
    m = 0
    for order in orders:
        n = len(order)
        for k in range(n):
            me, left, right = (nodes[order[i % n]] for i in (k, k - 1, k + 1))
            want = {(me, right), (right, me), (me, left), (left, me)}
            got = {flows[j] for j in p.rows[m].indices}
            assert got == want, (m, order)
            m += 1
    best = max(v for meas in t["rings"]["bw_mib_s"] for r in meas for v in r)
    assert p.bw_mib_s.max() == pytest.approx(1.0) and p.bw_mib_s.min() > 0
    assert p.bw_mib_s[0] == pytest.approx(t["rings"]["bw_mib_s"][0][0][0] / best)
    assert p.measured == "rings: rr_bw isolated"


def test_ring_weights_take_the_largest_weight_of_the_flows():
    flows = sparse.csr_matrix(np.array([[1.0, 0.5, 0, 0], [0, 0.5, 1, 0], [0, 0, 0, 0.25]]))
    rows = sparse.csr_matrix(np.array([[1, 1, 0], [0, 1, 1], [0, 0, 0]]))
    got = ring_weights(rows, flows).toarray()
    assert got.tolist() == [[1, 0.5, 1, 0], [0, 0.5, 1, 0.25], [0, 0, 0, 0]]  # not the sum


def cable(d):
    return {f"{d['component']}:{d['port']}", f"{d['peer_component']}:{d['peer_port']}"}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_degraded_link_is_found_from_load_results(tmp_path, seed):
    """A 64-node 2:1 tree, one link at 25 %, contend load with rr_bw rings
    recorded: the isolated canaries' rings put that link's unit first."""
    res, out = tmp_path / "load.json", tmp_path / "located.json"
    contend(
        "load", "--engine", "sim", "--topology", "fattree:leaves=16,nodes=4,uplinks=2",
        "--canaries", "rr_bw", "--congestors", "p2p_incast", "--canary-fraction", "0.5",
        "--congestor-baseline=0", "--measurements", "2", "--rings", "16",
        "--degrade-random", f"1,0.25,{seed}", "--seed", seed, "--record-rings", "-q", "-o", res,
    )  # fmt: skip
    truth = json.loads(res.read_text())["environment"]["simulation"]["degraded"]
    locate(res, "--top", "3", "--bootstrap", "10", "-o", out)
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, LOCATE_SCHEMA)
    first = doc["links"][0]
    assert cable(truth[0]) & {first["link"], first["peer"], *first["inseparable_from"]}
    assert first["p_first"] >= 0.8
    assert doc["measured"] == "rings: rr_bw isolated"


@pytest.mark.parametrize(
    "case,words",
    [
        ("not_recorded", "neither pairs nor recorded rings"),
        ("no_such_phase", "no recorded ring test matches --metric bw, --phase congested"),
        ("no_such_test", "recorded: rr_bw isolated (bw_mib_s), rr_lat isolated (lat_us)"),
    ],
)
def test_results_without_usable_rings_exit_2_with_one_line(network, case, words):
    tmp, _ = network
    args = {
        "not_recorded": [tmp / "plain.json"],
        "no_such_phase": [tmp / "rec.json", "--phase", "congested"],
        "no_such_test": [tmp / "rec.json", "--test", "rr_put_bw"],
    }[case]
    out = tmp / "never.json"
    r = locate(*args, "-o", out, status=2)
    assert words in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not r.stdout
    assert not out.exists()


def test_record_rings_beyond_the_limit_is_refused_before_measuring(tmp_path):
    out = tmp_path / "never.json"
    r = contend(
        "network", "--engine", "sim", "--topology", TREE16, "--canaries", "rr_bw",
        "--record-rings", "--measurements", "40000", "--rings", "30", "-o", out, status=2,
    )  # fmt: skip
    assert "--record-rings" in r.stderr and "16777216" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
