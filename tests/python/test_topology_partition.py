"""`contend topology partition`: the fabric's routers split over processes by
groups (whole dragonfly groups, whole tree pods) or by a graph partition
(METIS); the links cut and the lookahead they give checked against the
partition itself; the same seed gives the same partition; every refusal
(a part without a router, more parts than routers, a cut link without
latency) exits 2 before writing anything."""

import json

import jsonschema
import pytest
from conftest import BUILD, SCHEMAS, run_bounded

BIN = BUILD / "bin" / "contend"
DRAGONFLY = "dragonfly:a=4,p=4,h=2"  # 9 groups of 4 routers, 144 nodes
TREE = "fattree:leaves=8,nodes=4,uplinks=4"  # leaves 0-7, spines 8-11, one link each pair


@pytest.fixture(scope="module")
def schema():
    return json.loads((SCHEMAS / "contend-partition.schema.json").read_text())


def partition(tmp_path, *args, name="part.json"):
    out = tmp_path / name
    r = run_bounded([BIN, "topology", "partition", *args, "-o", out], timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


def test_groups_keep_every_dragonfly_group_whole(tmp_path, schema):
    doc, table = partition(tmp_path, "--topology", DRAGONFLY, "--parts", "4")
    jsonschema.validate(doc, schema)
    assert doc["method"] == "groups" and doc["parts"] == 4
    part = doc["part_of_router"]
    assert len(part) == 36 and set(part) == {0, 1, 2, 3}
    # routers g*4 .. g*4+3 form group g: each group lies in one part
    assert all(len({part[4 * g + i] for i in range(4)}) == 1 for g in range(9))
    # only global links join groups; every router's part is counted once
    assert doc["cut_links_by_class"]["local"] == 0 and doc["cut_links"] > 0
    assert sum(p["routers"] for p in doc["per_part"]) == 36
    assert sum(p["nodes"] for p in doc["per_part"]) == 144
    assert sum(p["cut_ports"] for p in doc["per_part"]) == 2 * doc["cut_links"]
    assert doc["lookahead_ns"] == 100.0 and doc["lookahead_class"] == "global"
    assert "lookahead: 100.000 ns" in table


def test_the_lookahead_is_the_smallest_latency_of_a_cut_link(tmp_path):
    doc, _ = partition(tmp_path, "--topology", DRAGONFLY, "--parts", "3",
                       "--global-latency-ns", "250", "--local-latency-ns", "7")  # fmt: skip
    assert doc["lookahead_ns"] == 250.0  # groups: no local link is cut
    doc, _ = partition(tmp_path, "--topology", DRAGONFLY, "--parts", "36", "--partition", "graph",
                       "--global-latency-ns", "250", "--local-latency-ns", "7")  # fmt: skip
    assert doc["cut_links"] == doc["links"] == 90 and doc["lookahead_ns"] == 7.0


def test_a_graph_partition_cuts_what_it_says_and_follows_the_seed(tmp_path, schema):
    doc, _ = partition(tmp_path, "--topology", TREE, "--parts", "3", "--seed", "5")
    jsonschema.validate(doc, schema)
    assert doc["method"] == "graph"  # a 2-level tree has no pods
    part = doc["part_of_router"]
    cut = sum(part[leaf] != part[8 + s] for leaf in range(8) for s in range(4))
    assert doc["cut_links"] == cut and doc["links"] == 32
    assert all(p["routers"] >= 1 for p in doc["per_part"])
    again, _ = partition(tmp_path, "--topology", TREE, "--parts", "3", "--seed", "5", name="b.json")
    assert again == doc


def test_pods_of_a_three_level_tree_stay_whole(tmp_path):
    spec = "fattree:pods=4,leaves=4,nodes=2,uplinks=2,pod_uplinks=2"
    doc, _ = partition(tmp_path, "--topology", spec, "--parts", "2")
    assert doc["method"] == "groups" and doc["cut_links_by_class"]["local"] == 0
    assert sum(p["nodes"] for p in doc["per_part"]) == 32


def test_one_part_needs_no_lookahead(tmp_path, schema):
    doc, table = partition(tmp_path, "--topology", TREE, "--parts", "1")
    jsonschema.validate(doc, schema)
    assert doc["cut_links"] == 0 and doc["lookahead_ns"] is None
    assert "none needed" in table


@pytest.mark.parametrize(
    "args,words",
    [
        (
            ["--topology", DRAGONFLY, "--parts", "37"],
            "has 36 routers, and a part needs one: at most 36",
        ),
        (["--topology", DRAGONFLY, "--parts", "10", "--partition", "groups"], "has 9 groups"),
        (["--topology", TREE, "--parts", "2", "--partition", "groups"], "no groups or pods"),
        (
            ["--topology", "fattree:leaves=2,nodes=2,uplinks=1", "--parts", "2"],
            "leaves part 1 without a router: give fewer parts",
        ),
        (["--topology", DRAGONFLY, "--partition", "metis"], "expected one of auto, groups, graph"),
        (["--topology", DRAGONFLY, "--parts", "0"], "--parts"),
        (["--topology", DRAGONFLY, "--global-latency-ns", "0"], "no lookahead"),
    ],
)
def test_bad_partitions_exit_2_with_one_line(tmp_path, args, words):
    out = tmp_path / "never.json"
    r = run_bounded([BIN, "topology", "partition", *args, "-o", out], timeout=60)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
