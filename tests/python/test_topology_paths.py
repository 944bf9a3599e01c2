"""`contend topology paths`: the routing's paths between node pairs, named as
the simulator's counter CSV names ports (the Netscope latency model sums
link stalls along them)."""

import csv
import json
import math

import pytest
from conftest import run_bounded


def paths(contend_bin, *args, timeout=60):
    r = run_bounded([contend_bin, "topology", "paths", "-q", *args], timeout=timeout)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def links_of(doc, pair_index=0, path_index=0):
    p = doc["pairs"][pair_index]["paths"][path_index]
    return [(doc["links"][i]["component"], doc["links"][i]["port"]) for i in p]


@pytest.mark.parametrize(
    "topology,routing,src,dst",
    [
        ("fattree:leaves=4,nodes=4,uplinks=2", "dmodk", 0, 15),
        ("fattree:pods=2,leaves=2,nodes=2,uplinks=2,pod_uplinks=2", "dmodk", 1, 6),
        ("dragonfly:a=4,p=2,h=2", "minimal", 0, 9),
        ("dragonfly:a=4,p=2,h=2", "minimal", 3, 70),
    ],
)
def test_single_path_is_what_the_simulated_packets_cross(
    contend_bin, tmp_path, topology, routing, src, dst
):
    """A deterministic routing has one path, and a flow's packets move bytes on
    exactly its ports in the counter CSV (names and numbering agree)."""
    doc = paths(
        contend_bin, "--topology", topology, "--routing", routing, "--pairs", f"{src}:{dst}"
    )
    assert doc["schema"] == "contend-paths"
    fwd = doc["pairs"][0]
    assert (fwd["src"], fwd["dst"]) == (src, dst)
    assert fwd["paths_total"] == 1 and len(fwd["paths"]) == 1
    counters = tmp_path / "c.csv"
    r = run_bounded(
        [
            contend_bin,
            "sim",
            "-q",
            "--topology",
            topology,
            "--routing",
            routing,
            "--traffic",
            f"flow:src={src},dst={dst},load=0.5",
            "--measure-us",
            "5",
            "--counters",
            counters,
        ],
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    with open(counters) as fh:
        rows = [
            row
            for row in csv.DictReader(fh)
            if row["counter"] == "xmit_data_bytes" and int(row["value"]) > 0
        ]
    moved = {(r["component"], r["port"]) for r in rows if r["vc"] == ""}
    assert moved == set(links_of(doc))
    per_vc = {(r["component"], r["port"], r["vc"]) for r in rows if r["vc"] != ""}
    if per_vc:  # more than one VC: the CSV has per-VC rows, the path its VCs
        want = {(c, p, str(v)) for (c, p), v in zip(links_of(doc), fwd["vcs"][0])}
        nic = (f"nic{src}", "0", "0")  # a NIC's channel has per-VC rows only on VC 0
        assert per_vc | {nic} == want | {nic}
        assert len(set(fwd["vcs"][0])) > 1 or "dragonfly" not in topology
    kinds = [doc["links"][i]["class"] for i in fwd["paths"][0]]
    assert kinds[0].startswith("injection") and kinds[-1].startswith("ejection")
    assert links_of(doc)[0] == (f"nic{src}", "0")


def test_path_counts_follow_the_routing(contend_bin):
    ft = "fattree:pods=2,leaves=2,nodes=2,uplinks=2,pod_uplinks=3"
    # across pods: 2 choices at the leaf, 3 at the pod level
    doc = paths(contend_bin, "--topology", ft, "--routing", "random", "--pairs", "0:7")
    assert [p["paths_total"] for p in doc["pairs"]] == [6, 6]
    assert all(len(set(map(tuple, p["paths"]))) == 6 for p in doc["pairs"])
    # same leaf: no choice
    doc = paths(contend_bin, "--topology", ft, "--routing", "random", "--pairs", "0:1")
    assert doc["pairs"][0]["paths_total"] == 1
    assert len(doc["pairs"][0]["paths"][0]) == 2  # injection, ejection
    # valiant on a 9-group dragonfly: one path per other intermediate group
    doc = paths(
        contend_bin, "--topology", "dragonfly:a=4,p=2,h=2", "--routing", "valiant", "--pairs", "0:9"
    )
    assert doc["pairs"][0]["paths_total"] == 7


def test_sampling_caps_paths_and_is_seeded(contend_bin):
    args = [
        "--topology",
        "dragonfly:a=4,p=2,h=2",
        "--routing",
        "ugal",
        "--pairs",
        "0:40",
        "--max-paths",
        "3",
    ]
    a = paths(contend_bin, *args, "--seed", "5")
    b = paths(contend_bin, *args, "--seed", "5")
    assert a == b
    p = a["pairs"][0]
    assert len(p["paths"]) == 3 and p["paths_total"] > 3


def test_default_is_all_ordered_pairs(contend_bin):
    doc = paths(contend_bin, "--topology", "switch:nodes=5")
    assert len(doc["pairs"]) == 5 * 4
    assert {(p["src"], p["dst"]) for p in doc["pairs"]} == {
        (a, b) for a in range(5) for b in range(5) if a != b
    }
    doc = paths(contend_bin, "--topology", "switch:nodes=8", "--nodes", "1-2,6")
    assert len(doc["pairs"]) == 6
    doc = paths(contend_bin, "--topology", "switch:nodes=8", "--random-pairs", "10")
    assert len({(p["src"], p["dst"]) for p in doc["pairs"]}) == 10
    assert math.isclose(
        len(doc["links"]), len({(lk["component"], lk["port"]) for lk in doc["links"]})
    )


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--pairs", "0:0"], "two different nodes"),
        (["--pairs", "0:99"], "two different nodes"),
        (["--pairs", "1-2"], "SRC:DST"),
        (["--nodes", "3"], "fewer than two"),
        (["--pairs", "0:1", "--nodes", "0-3"], "give one of"),
        (["--random-pairs", "1000"], "only 56 ordered pairs"),
        (["--routing", "ugal"], "routing"),
        (["--bogus"], "unknown option"),
        (["-o", "/nonexistent-dir/x.json"], "x.json"),
    ],
)
def test_bad_input_exits_2(contend_bin, args, needle):
    r = run_bounded(
        [contend_bin, "topology", "paths", "--topology", "switch:nodes=8", *args], timeout=30
    )
    assert r.returncode == 2
    assert needle in r.stderr and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1  # the message, with the --help hint


def test_large_topologies_need_a_selection(contend_bin):
    r = run_bounded(
        [contend_bin, "topology", "paths", "--topology", "dragonfly:a=8,p=4,h=4"], timeout=30
    )
    assert r.returncode == 2 and "--nodes" in r.stderr
