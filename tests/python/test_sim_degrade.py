"""Degraded links in the simulator (--degrade, --degrade-random): the
ground truth of localisation.  A link degraded to a fraction carries at
most that fraction of its bandwidth, in both directions; the stall
counters show the back-pressure; the draw of --degrade-random follows its
seed; bad names and fractions are refused before any simulation."""

import csv
import json
import subprocess

import pytest
from conftest import BUILD

BIN = BUILD / "bin" / "contend"
TREE = "fattree:leaves=4,nodes=4,uplinks=2"


def run(*args, timeout=120):
    return subprocess.run(
        [str(BIN), *map(str, args)], check=False, capture_output=True, text=True, timeout=timeout
    )


def sim(tmp_path, *args, name="sim.json"):
    out = tmp_path / name
    r = run("sim", "--seed", "7", "-q", "-o", out, "--topology", TREE, *args)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(out.read_text())


def flow_path(tmp_path, src, dst):
    """The links (component, port) of the dmodk path src -> dst."""
    out = tmp_path / "paths.json"
    r = run("topology", "paths", "--topology", TREE, "--pairs", f"{src}:{dst}", "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    pair = next(p for p in doc["pairs"] if p["src"] == src and p["dst"] == dst)
    links = doc["links"]
    return [(links[i]["component"], int(links[i]["port"])) for i in pair["paths"][0]]


def counters(path):
    rows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if not row["vc"]:
                rows[(row["component"], int(row["port"]), row["counter"])] = float(row["value"])
    return rows


FLOW = ["--traffic", "flow:src=0,dst=15", "--load", "1", "--measure-us", "100"]


def test_a_flow_over_a_degraded_link_gets_its_fraction(tmp_path):
    path = flow_path(tmp_path, 0, 15)
    # nic0, leaf0 up, spine down, leaf3 to nic15: the up link is the 2nd hop
    up = path[1]
    assert up[0].startswith("leaf")
    full = sim(tmp_path, *FLOW, name="full.json")["points"][0]["accepted_load"]
    assert full == pytest.approx(1.0, rel=0.01)
    for f in (0.25, 0.5):
        doc = sim(tmp_path, *FLOW, "--degrade", f"{up[0]}:{up[1]}={f}", name=f"d{f}.json")
        acc = doc["points"][0]["accepted_load"]
        assert acc <= f * 1.02 and acc >= f * 0.9, (f, acc)
        [d] = doc["degraded"]
        assert (d["component"], d["port"], d["fraction"]) == (up[0], up[1], f)


def test_both_directions_are_degraded(tmp_path):
    """Naming the link from its other end (the spine's port down to the
    leaf) slows the flow going up it too."""
    up = flow_path(tmp_path, 0, 15)[1]
    doc = sim(tmp_path, *FLOW, "--degrade", f"{up[0]}:{up[1]}=0.5", name="a.json")
    [d] = doc["degraded"]
    peer = f"{d['peer_component']}:{d['peer_port']}"
    other = sim(tmp_path, *FLOW, "--degrade", f"{peer}=0.5", name="b.json")
    assert other["points"][0]["accepted_load"] == pytest.approx(
        doc["points"][0]["accepted_load"], rel=0.01
    )
    assert other["degraded"][0]["peer_component"] == up[0]


def test_the_stall_counters_show_the_degraded_link(tmp_path):
    up = flow_path(tmp_path, 0, 15)[1]
    c0, c1 = tmp_path / "full.csv", tmp_path / "slow.csv"
    sim(tmp_path, *FLOW, "--counters", c0, name="full.json")
    sim(tmp_path, *FLOW, "--counters", c1, "--degrade", f"{up[0]}:{up[1]}=0.25", name="s.json")
    full, slow = counters(c0), counters(c1)
    # the NIC feeding the slow link waits for credits; unloaded, it never does
    assert full.get(("nic0", 0, "xmit_wait_ns"), 0) == 0
    assert slow[("nic0", 0, "xmit_wait_ns")] > 0.3 * slow[("nic0", 0, "busy_ns")]
    # the slow link is busy all the time and sends a quarter of the bytes
    sent_full = full[(up[0], up[1], "xmit_data_bytes")]
    sent_slow = slow[(up[0], up[1], "xmit_data_bytes")]
    assert sent_slow == pytest.approx(0.25 * sent_full, rel=0.1)


def test_repeated_degrade_options_add_up(tmp_path):
    doc = sim(
        tmp_path, *FLOW, "--degrade", "leaf0:4=0.5", "--degrade", "leaf1:5=0.25,spine0:3=0.75"
    )
    got = {(d["component"], d["port"]): d["fraction"] for d in doc["degraded"]}
    assert got == {("leaf0", 4): 0.5, ("leaf1", 5): 0.25, ("spine0", 3): 0.75}
    assert doc["config"]["degrade"] == "leaf0:4=0.5,leaf1:5=0.25,spine0:3=0.75"


def test_degrade_random_follows_its_seed(tmp_path):
    def drawn(seed, name):
        doc = sim(tmp_path, *FLOW, "--degrade-random", f"3,0.5,{seed}", name=name)
        return doc, [(d["component"], d["port"]) for d in doc["degraded"]]

    a, la = drawn(11, "a.json")
    b, lb = drawn(11, "b.json")
    assert la == lb and len(set(la)) == 3
    # router-to-router links only, each named from one end
    assert all(not c.startswith("nic") for c, _ in la)
    assert all(not d["peer_component"].startswith("nic") for d in a["degraded"])
    for d in (a, b):
        for p in d["points"]:
            p.pop("wall_s")
    assert a["points"] == b["points"]
    others = {tuple(drawn(s, f"s{s}.json")[1]) for s in (1, 2, 3)}
    assert len(others | {tuple(la)}) > 1


def test_degrade_random_draws_from_a_link_class(tmp_path):
    """global: a dragonfly's links between groups (g<G>.r<R> names the group)."""
    out = tmp_path / "df.json"
    r = run(
        "sim", "--topology", "dragonfly:a=4,p=2,h=2", "--traffic", "uniform", "--measure-us",
        "1", "--degrade-random", "5,0.5,3,global", "-q", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    links = json.loads(out.read_text())["degraded"]
    assert len(links) == 5
    for d in links:
        assert d["component"].split(".")[0] != d["peer_component"].split(".")[0]


def test_long_switch_names_of_a_topology_conf_are_found(tmp_path):
    """slurm switch names reach 255 characters; the counter CSV's name is the
    whole name."""
    long = "leaf" + "x" * 200
    conf = tmp_path / "topology.conf"
    conf.write_text(
        f"SwitchName={long} Nodes=n[0-1]\nSwitchName=leafb Nodes=n[2-3]\n"
        f"SwitchName=top Switches={long},leafb\n"
    )
    out = tmp_path / "s.json"
    r = run(
        "sim", "--topology", f"slurm:{conf}", "--traffic", "uniform", "--measure-us", "1",
        "--degrade", f"{long}:0=0.5", "-q", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    [d] = json.loads(out.read_text())["degraded"]
    assert d["component"] == long and d["port"] == 0 and d["peer_component"].startswith("nic")


@pytest.mark.parametrize(
    "args,words",
    [
        (["--degrade", "leaf9:1=0.5"], "leaf0 .. spine1"),
        (["--degrade", "leaf0:6=0.5"], "ports 0 .. 5"),
        (["--degrade", "leaf0:5=0"], "routing dmodk"),
        (["--degrade", "leaf0:5=1.5"], "(0, 1]"),
        (["--degrade", "leaf0:5"], "COMPONENT:PORT=FRACTION"),
        (["--degrade", "nic16:0=0.5"], "nic0 .. nic15"),
        (["--degrade", "nic1:1=0.5"], "port 0 only"),
        (["--degrade", "leaf0:5=0.5", "--degrade", "spine1:0=0.5"], "already degraded"),
        (["--degrade-random", "9,0.5,1"], "1 .. 8"),
        (["--degrade-random", "2,0.5"], "N,FRACTION,SEED"),
        (["--degrade-random", "1,0.5,1,upper"], "'upper' is not local or global"),
    ],
)
def test_bad_degrade_is_refused_before_the_run(tmp_path, args, words):
    out = tmp_path / "never.json"
    r = run("sim", "--topology", TREE, "--traffic", "uniform", "-o", out, *args, timeout=60)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr
    assert r.stderr.count("error:") == 1 and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists()
