"""`contend pairs` (mpiGraph's shifts) on MPI and on the simulator: every
ordered pair measured exactly once per round set and never a rank with
itself; sampled rounds drawn from the seed; a degraded link shows as the
pairs that cross it being slow; a bully beside the pairs runs on nodes the
pairs leave out and slows them, or shares the pairs' nodes (--bully-share)
and slows the pairs out of its senders' nodes; bad input exits 2 before
measuring."""

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


INCAST = "bully_incast:receivers=1,msg_bytes=65536,window=4,iters=1"


@pytest.mark.parametrize("place", ["last", "random"])
def test_a_bully_beside_the_pairs_runs_on_nodes_the_pairs_leave_out(tmp_path, schema, place):
    """The last 5 nodes: the incast's receiver (node 11) shares leaf 2 with
    pairs' nodes 8-10, its senders fill leaf 3, so the pairs into leaf 2
    share the receiver's downlink with the incast."""
    base = sim_pairs(tmp_path, "--seed", "3", name="base.json")
    doc = sim_pairs(
        tmp_path, "--seed", "3", "--bully", INCAST, "--bully-nodes", "5", "--bully-place", place
    )
    jsonschema.validate(doc, schema)
    b = doc["bully"]
    assert b["motif"] == "bully_incast" and b["place"] == place and b["ranks"] == 5
    assert b["params"]["msg_bytes"] == 65536 and b["params"]["receivers"] == 1
    assert len(b["nodes"]) == 5 and set(b["nodes"]) <= set(range(16))
    if place == "last":
        assert b["nodes"] == [11, 12, 13, 14, 15]
    # the pairs: every ordered pair of the other 11 nodes, once; none with a bully node
    nodes = doc["rank_node"]
    assert doc["ranks"] == 11 and sorted(nodes) == sorted(set(range(16)) - set(b["nodes"]))
    measured = {(nodes[s], nodes[d]): v[0] for (s, d), v in pairs_of(doc).items()}
    assert set(measured) == {(s, d) for s in nodes for d in nodes if s != d}
    # it ran while they were measured (warm before the first round, more after) and slowed some
    assert b["invocations"] >= 2 and b["mib_s_per_rank"] > 0
    alone = {k: v[0] for k, v in pairs_of(base).items()}  # one rank per node: rank = node
    # about half (0.49-0.51): the pairs into leaf 2 share the incast's link
    assert min(measured[k] / alone[k] for k in measured) < 0.6


def test_mpi_pairs_beside_a_bully(mpirun, tmp_path, schema):
    out = tmp_path / "mpi-bully.json"
    r = mpirun(
        6, "pairs", "--virtual-nodes", "1", "--bytes", "4096", "--iters", "2", "--lat-iters", "2",
        "--bully", "bully_pairs:msg_bytes=65536,iters=1", "--bully-nodes", "2",
        "--bully-place", "random", "--seed", "2", "-q", "-o", out, timeout=240,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    bully = doc["bully"]["nodes"]
    assert len(bully) == 2 and doc["ranks"] == 4 and doc["bully"]["invocations"] >= 2
    assert doc["rank_node"] == [n for n in range(6) if n not in bully]
    assert set(pairs_of(doc)) == {(s, d) for s in range(4) for d in range(4) if s != d}


def test_a_shared_bully_runs_beside_the_pairs_on_its_nodes(tmp_path, schema):
    """--bully-share: one pairs rank on every node, the incast on the second
    rank of the last 5 (receiver node 11, senders 12-15): the pairs out of
    the senders' nodes queue behind the incast at their NIC, the pairs out
    of the leaves the incast does not touch (nodes 0-7) do not."""
    base = sim_pairs(tmp_path, "--seed", "3", name="base.json")
    doc = sim_pairs(
        tmp_path, "--seed", "3", "--ranks-per-node", "2", "--bully-share", "--bully", INCAST,
        "--bully-nodes", "5",
    )  # fmt: skip
    jsonschema.validate(doc, schema)
    b = doc["bully"]
    assert b["share"] is True and b["nodes"] == [11, 12, 13, 14, 15] and b["ranks"] == 5
    assert doc["ranks"] == 16 and doc["rank_node"] == list(range(16))
    got, alone = pairs_of(doc), pairs_of(base)
    assert set(got) == {(s, d) for s in range(16) for d in range(16) if s != d}
    ratio = {k: got[k][0] / alone[k][0] for k in got}

    def out_of(nodes):
        return sorted(ratio[k] for k in ratio if k[0] in nodes)

    senders, quiet = out_of(range(12, 16)), out_of(range(8))
    assert senders[len(senders) // 2] < 0.5, senders
    assert quiet[len(quiet) // 2] > 0.9, quiet


def test_mpi_pairs_sharing_nodes_with_a_bully(mpirun, tmp_path, schema):
    """2 ranks per virtual node: the first measures, the second runs the bully on
    its 2 nodes and waits on the other 2."""
    out = tmp_path / "mpi-share.json"
    r = mpirun(
        8, "pairs", "--virtual-nodes", "2", "--bytes", "4096", "--iters", "2",
        "--lat-iters", "2", "--bully", "bully_pairs:msg_bytes=65536,iters=1", "--bully-nodes",
        "2", "--bully-share", "--bully-place", "random", "--seed", "2", "-q", "-o", out,
        timeout=240,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["ranks"] == 4 and doc["rank_node"] == [0, 1, 2, 3]
    assert doc["bully"]["ranks"] == 2 and len(doc["bully"]["nodes"]) == 2
    assert doc["bully"]["share"] is True and doc["bully"]["invocations"] >= 2
    assert set(pairs_of(doc)) == {(s, d) for s in range(4) for d in range(4) if s != d}


def test_the_random_bully_placement_follows_the_seed(tmp_path):
    args = ["--bully", INCAST, "--bully-nodes", "5", "--bully-place", "random", "--rounds", "2"]
    one = sim_pairs(tmp_path, "--seed", "1", *args, name="a.json")["bully"]["nodes"]
    again = sim_pairs(tmp_path, "--seed", "1", *args, name="b.json")["bully"]["nodes"]
    other = sim_pairs(tmp_path, "--seed", "2", *args, name="c.json")["bully"]["nodes"]
    assert one == again and one != other


SHARE_17 = ["--bully", "bully_incast", "--bully-nodes", "17", "--bully-share"]


@pytest.mark.parametrize(
    "args,words",
    [
        (["--bully", "no_such", "--bully-nodes", "2"], "unknown motif 'no_such'"),
        (["--bully", "bully_incast", "--bully-nodes", "15"], "--bully-nodes 15: the run has 16"),
        (["--bully", "bully_incast", "--bully-nodes", "16"], "give at most 14"),
        (["--bully", "bully_incast"], "needs --bully-nodes"),
        (["--bully-nodes", "2"], "need --bully MOTIF"),
        (["--bully", "bully_pairs:size=1", "--bully-nodes", "2"], "no parameter 'size'"),
        (["--bully", "bully_pairs", "--bully-nodes", "3"], "even number of ranks"),
        (["--bully", "io_write", "--bully-nodes", "2"], "file I/O"),
        (["--bully", "bully_pairs", "--bully-nodes", "2", "--bully-place", "first"], "last or"),
        (["--bully-share"], "need --bully MOTIF"),
        (["--bully", "bully_incast", "--bully-nodes", "2", "--bully-share"], "node 14 has one"),
        ([*SHARE_17, "--ranks-per-node", "2"], "the run has 16 nodes (give at most 16)"),
    ],
)
def test_bad_bully_exits_2_before_measuring(tmp_path, args, words):
    assert_refused_before_measuring(tmp_path, args, words)


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
    assert_refused_before_measuring(tmp_path, args, words)


def assert_refused_before_measuring(tmp_path, args, words):
    """`contend pairs --engine sim ARGS`: exit 2, one error line naming words, no output."""
    out = tmp_path / "never.json"
    r = run_bounded(
        [BIN, "pairs", "--engine", "sim", "--topology", TREE, "-q", "-o", out, *args], timeout=60
    )
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and r.stderr.count("error:") == 1
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()


def test_a_dry_run_is_a_plan_with_every_pair(tmp_path, schema):
    out = tmp_path / "plan.json"
    r = run_bounded([BIN, "pairs", "--dry-run", "--nodes", "6", "-o", out], timeout=60)
    assert r.returncode == 0, r.stderr
    assert "a plan (--dry-run)" in r.stdout and "MiB/s" not in r.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["engine"] == "trace" and doc["wall_s"] is None
    assert set(pairs_of(doc)) == {(s, d) for s in range(6) for d in range(6) if s != d}


def test_a_dry_run_plans_the_pairs_beside_a_bully(tmp_path, schema):
    out = tmp_path / "plan.json"
    r = run_bounded(
        [BIN, "pairs", "--dry-run", "--nodes", "6", "--bully", "bully_pairs:iters=1",
         "--bully-nodes", "2", "-o", out],
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema)
    assert doc["ranks"] == 4 and doc["rank_node"] == [0, 1, 2, 3]
    assert doc["bully"]["nodes"] == [4, 5] and doc["bully"]["invocations"] >= 2
    assert set(pairs_of(doc)) == {(s, d) for s in range(4) for d in range(4) if s != d}
