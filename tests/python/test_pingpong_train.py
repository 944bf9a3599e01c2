"""`contend pingpong-train` on the simulated fabric: samples whose windows sit on
the counter CSV's clock, RTTs that congestion raises, reproducible runs, and
bad input refused before any run."""

import csv
import json

import jsonschema
import pytest
from conftest import SCHEMAS, run_bounded

TOPO = "dragonfly:a=4,p=2,h=2"


@pytest.fixture(scope="module")
def trained(contend_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("train")
    out = d / "t.json"
    args = [
        contend_bin,
        "pingpong-train",
        "--topology",
        TOPO,
        "--runs",
        "4",
        "--pairs",
        "6",
        "--exchanges",
        "500",
        "--congestion",
        "none,gpcnet",
        "--seed",
        "3",
        "-q",
        "-o",
        out,
        "--",
        "--global-gbps",
        "25",
    ]
    r = run_bounded(args, timeout=300)
    assert r.returncode == 0, r.stderr
    return d, json.loads(out.read_text()), args


def test_file_names_its_inputs(trained):
    d, doc, _ = trained
    jsonschema.validate(
        doc, json.loads((SCHEMAS / "contend-pingpong-train.schema.json").read_text())
    )
    jsonschema.validate(
        json.loads((d / doc["paths"]).read_text()),
        json.loads((SCHEMAS / "contend-paths.schema.json").read_text()),
    )
    assert doc["schema"] == "contend-pingpong-train" and doc["engine"] == "sim"
    assert doc["topology"].startswith(TOPO) and doc["routing"] == "minimal"
    paths = json.loads((d / doc["paths"]).read_text())
    have = {(p["src"], p["dst"]) for p in paths["pairs"]}
    for run in doc["runs"]:
        assert (d / run["counters"]).exists() and (d / run["results"]).exists()
        assert len(run["samples"]) == 6
        nodes = [n for s in run["samples"] for n in (s["src"], s["dst"])]
        assert len(set(nodes)) == len(nodes)  # disjoint pairs
        for s in run["samples"]:
            assert (s["src"], s["dst"]) in have and (s["dst"], s["src"]) in have
    assert [r["congestion"] for r in doc["runs"]] == ["none", "gpcnet:1", "none", "gpcnet:1"]


def test_windows_are_on_the_counter_clock(trained):
    """A pair's source NIC sends only inside its sample's window (no other
    traffic in an uncongested run), and the mean RTT fills the window."""
    d, doc, _ = trained
    run = doc["runs"][0]
    interval = 500 * 2e-6 / 10  # pingpong-train's default: a tenth of the expected window
    last, first = {}, {}
    with open(d / run["counters"]) as fh:
        for row in csv.DictReader(fh):
            if row["counter"] == "xmit_data_bytes" and row["vc"] == "" and int(row["value"]) > 0:
                t = float(row["time_s"])
                first.setdefault(row["component"], t)
                last[row["component"]] = t
    for s in run["samples"]:
        nic = f"nic{s['src']}"
        assert s["t_start_s"] - interval < first[nic] <= s["t_end_s"] + interval
        assert s["t_start_s"] < last[nic] <= s["t_end_s"] + 1.01 * interval
        span_us = (s["t_end_s"] - s["t_start_s"]) * 1e6
        assert s["rtt_us"] * 500 <= span_us <= s["rtt_us"] * 520  # + 10 warm-up round trips


def test_congestion_raises_rtt(trained):
    _, doc, _ = trained

    def mean(kind):
        v = [s["rtt_us"] for r in doc["runs"] if r["congestion"] == kind for s in r["samples"]]
        return sum(v) / len(v)

    assert mean("gpcnet:1") > 1.2 * mean("none")


def test_same_seed_same_samples(trained, tmp_path):
    _, doc, args = trained
    out = tmp_path / "again.json"
    args = [*args]
    args[args.index("-o") + 1] = out
    r = run_bounded(args, timeout=300)
    assert r.returncode == 0, r.stderr
    again = json.loads(out.read_text())
    assert [r["samples"] for r in again["runs"]] == [r["samples"] for r in doc["runs"]]


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--congestion", "gpcnet:2"], "(0, 1]"),
        (["--congestion", "heavy"], "unknown item"),
        (["--pairs", "40"], "at most 36 pairs"),
        (["--pairs", "33"], "fewer than the 8"),
        (["--pair-list", "1:2,2:3"], "two pairs"),
        (["--pair-list", "1:1"], "two different nodes"),
        (["--runs", "0"], "--runs: expected an integer from 1 to"),
        (["--topology", "torus:4"], "unknown topology kind"),
        (["--engine", "mpi"], "--launcher"),
        (["--bogus"], "unrecognized arguments"),
    ],
)
def test_bad_input_exits_2_before_running(contend_bin, tmp_path, extra, needle):
    out = tmp_path / "t.json"
    base = ["--topology", TOPO] if "--topology" not in extra else []
    r = run_bounded([contend_bin, "pingpong-train", *base, "-o", out, *extra], timeout=60)
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_output_directory_refused(contend_bin, tmp_path):
    r = run_bounded([contend_bin, "pingpong-train", "-o", tmp_path], timeout=60)
    assert r.returncode == 2 and "is a directory" in r.stderr


def test_cluster_paths_follow_the_tree():
    """The emulated cluster's paths: egress, the two uplinks between leaves, ingress."""
    from contend.cluster.paths import paths_doc
    from contend.cluster.topology import describe, make_spec

    desc = describe(make_spec(nodes=6, leaves=3, node_rate="100mbit"))
    doc = paths_doc(desc, [(0, 1), (0, 5)])
    jsonschema.validate(doc, json.loads((SCHEMAS / "contend-paths.schema.json").read_text()))
    names = [[doc["links"][i]["component"] for i in p["paths"][0]] for p in doc["pairs"]]
    assert names == [
        ["n000-egress", "n001-ingress"],
        ["n000-egress", "leaf0-uplink-up", "leaf2-uplink-down", "n005-ingress"],
    ]
    with pytest.raises(ValueError):
        paths_doc(desc, [(2, 2)])
