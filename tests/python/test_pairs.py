"""`contend pairs` (mpiGraph's shifts) on MPI and on the simulator: every
ordered pair measured exactly once per round set and never a rank with
itself; sampled rounds drawn from the seed; a degraded link shows as the
pairs that cross it being slow; bad input exits 2 before measuring."""

import json
import math

import jsonschema
import pytest
from conftest import BUILD, SCHEMAS, run_bounded

BIN = BUILD / "bin" / "contend"
TREE = "fattree:leaves=4,nodes=4,uplinks=2"


@pytest.fixture(scope="module")
def schema():
    return json.loads((SCHEMAS / "contend-pairs.schema.json").read_text())


def pairs_of(doc):
    """{(src, dst): (bw, lat)} of a results file, checking each pair once."""
    p, got = doc["ranks"], {}
    assert len(doc["bw_mib_s"]) == len(doc["lat_us"]) == len(doc["shifts"])
    for i, k in enumerate(doc["shifts"]):
        assert len(doc["bw_mib_s"][i]) == len(doc["lat_us"][i]) == p
        for s in range(p):
            key = (s, (s + k) % p)
            assert key not in got, f"pair {key} measured twice"
            got[key] = (doc["bw_mib_s"][i][s], doc["lat_us"][i][s])
    return got


def sim_pairs(tmp_path, *args, name="p.json"):
    out = tmp_path / name
    r = run_bounded(
        [BIN, "pairs", "--engine", "sim", "--topology", TREE, "-q", "-o", out, *args], timeout=300
    )
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def test_mpi_16_ranks_every_ordered_pair_once(mpirun, tmp_path, schema):
    out = tmp_path / "mpi.json"
    r = mpirun(
        16, "pairs", "--virtual-nodes", "1", "--bytes", "4096", "--iters", "2",
        "--lat-iters", "2", "--seed", "5", "-q", "-o", out, timeout=240,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    got = pairs_of(doc)
    assert set(got) == {(s, d) for s in range(16) for d in range(16) if s != d}
    assert all(math.isfinite(b) and b > 0 and lat > 0 for b, lat in got.values())
    assert doc["rank_node"] == list(range(16))
    assert sorted(doc["shifts"]) == list(range(1, 16)) and doc["rounds_total"] == 15


def test_mpi_bad_rounds_exit_2_before_measuring(mpirun, tmp_path):
    out = tmp_path / "never.json"
    r = mpirun(4, "pairs", "--virtual-nodes", "1", "--rounds", "9", "-o", out, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "--rounds 9: 4 ranks have 3 shifts" in r.stderr
    assert not out.exists()


def test_sampled_rounds_follow_the_seed(tmp_path, schema):
    a = sim_pairs(tmp_path, "--rounds", "4", "--seed", "9", name="a.json")
    b = sim_pairs(tmp_path, "--rounds", "4", "--seed", "9", name="b.json")
    jsonschema.validate(a, schema)
    assert a["shifts"] == b["shifts"] and len(set(a["shifts"])) == 4
    assert all(1 <= k <= 15 for k in a["shifts"])
    assert a["bw_mib_s"] == b["bw_mib_s"] and a["lat_us"] == b["lat_us"]
    got = pairs_of(a)
    assert len(got) == 4 * 16 and all(s != d for s, d in got)
    others = {tuple(sim_pairs(tmp_path, "--rounds", "4", "--seed", s)["shifts"]) for s in "123"}
    assert len(others | {tuple(a["shifts"])}) > 1


def test_a_degraded_link_shows_as_slow_pairs(tmp_path):
    """leaf0's up port 5 goes to spine1: under dmodk the pairs whose path
    crosses that cable (either direction) lose about three quarters of
    their bandwidth; the others keep it."""
    paths_out = tmp_path / "paths.json"
    r = run_bounded(
        [BIN, "topology", "paths", "--topology", TREE, "--all-pairs", "-q", "-o", paths_out]
    )
    assert r.returncode == 0, r.stderr
    paths = json.loads(paths_out.read_text())
    names = [(lk["component"], lk["port"]) for lk in paths["links"]]
    crossing = {
        (p["src"], p["dst"])
        for p in paths["pairs"]
        if {("leaf0", "5"), ("spine1", "0")} & {names[i] for i in p["paths"][0]}
    }
    assert crossing
    base = pairs_of(sim_pairs(tmp_path, "--seed", "3", name="base.json"))
    slow_doc = sim_pairs(tmp_path, "--seed", "3", "--degrade", "leaf0:5=0.25", name="slow.json")
    slow = pairs_of(slow_doc)
    assert slow_doc["environment"]["simulation"]["degraded"][0]["component"] == "leaf0"
    ratio = {k: slow[k][0] / base[k][0] for k in base}
    assert all(ratio[k] < 0.35 for k in crossing), sorted(ratio[k] for k in crossing)[-3:]
    untouched = [ratio[k] for k in ratio if k not in crossing]
    # most pairs off the slow link keep their bandwidth (a few share a
    # phase with a slowed flow's congestion tree)
    assert sum(x > 0.95 for x in untouched) > 0.9 * len(untouched)


@pytest.mark.parametrize(
    "args,words",
    [
        (["--rounds", "16"], "15 shifts"),
        (["--nodes", "1"], "at least 2 ranks"),
        (["--bytes", "0"], "--bytes"),
        (["--degrade", "leaf7:0=0.5"], "leaf7"),
    ],
)
def test_bad_input_exits_2_before_measuring(tmp_path, args, words):
    out = tmp_path / "never.json"
    r = run_bounded(
        [BIN, "pairs", "--engine", "sim", "--topology", TREE, "-q", "-o", out, *args], timeout=60
    )
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and r.stderr.count("error:") == 1
    assert not out.exists()


def test_a_dry_run_is_a_plan_with_every_pair(tmp_path, schema):
    out = tmp_path / "plan.json"
    r = run_bounded([BIN, "pairs", "--dry-run", "--nodes", "6", "-o", out], timeout=60)
    assert r.returncode == 0, r.stderr
    assert "a plan (--dry-run)" in r.stdout and "MiB/s" not in r.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["engine"] == "trace" and doc["wall_s"] is None
    assert set(pairs_of(doc)) == {(s, d) for s in range(6) for d in range(6) if s != d}
