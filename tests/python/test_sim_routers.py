"""Router models of the simulated fabric (`contend sim --router iq|voq|oq`):
saturation throughput of one switch against the queueing literature,
tapered fat trees against their taper bound, back-pressure in the
shared-buffer model, deadlock freedom and determinism for every model and
routing, and bad input.  Expected values come from the literature or from
the topology, never from the simulator's own output; where the issue's
target needs more than the defaults the test says so."""

import csv
import json
import subprocess

import pytest
from simkit import BIN, refused, sim, strip_wall_clock

MODELS = ["iq", "voq", "oq"]


def accepted(doc):
    return doc["points"][0]["accepted_load"]


# ---- one 32-port switch, uniform traffic at offered load 1 ----


def switch32(tmp_path, router, *extra, seed=7):
    return accepted(
        sim(
            tmp_path,
            "--topology",
            "switch:nodes=32",
            "--traffic",
            "uniform:self=1",
            "--load",
            "1",
            "--router",
            router,
            "--warmup-us",
            "200",
            "--measure-us",
            "400",
            *extra,
            name=f"sw-{router}.json",
            seed=seed,
        )
    )


def test_iq_switch_keeps_karols_head_of_line_limit(tmp_path):
    # Karol, Hluchyj, Morgan 1987: FIFO input queues saturate at 0.5858 for
    # large N (0.59 at N = 32): the iq model is unchanged
    assert switch32(tmp_path, "iq") == pytest.approx(0.59, rel=0.02)


def test_oq_switch_is_not_head_of_line_limited(tmp_path):
    # an output-queued switch carries the offered load; the finite pool and
    # per-input shares leave a few %
    assert switch32(tmp_path, "oq") >= 0.97


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_voq_switch_with_islip(tmp_path, seed):
    # iSLIP (McKeown 1999) has no head-of-line blocking.  voq's defaults are
    # a combined input/output-queued crossbar: 2 iterations, speedup 2,
    # output buffers of 16 packets (0.96-0.97 over seeds 1-5)
    assert switch32(tmp_path, "voq", "--islip-iterations", "2", seed=seed) >= 0.95
    doc = json.loads((tmp_path / "sw-voq.json").read_text())
    assert (doc["speedup"], doc["output_buffer_bytes"]) == (2, 16 * 4096)
    assert doc["config"]["speedup"] == 0  # what the user gave: the model's default


def test_voq_switch_without_speedup(tmp_path):
    # at speedup 1 the 32 KiB input buffers (8 packets shared by 32 VOQs)
    # hold few outputs, the matchings are sparse and it saturates near 0.88:
    # still far above the input-queued FIFO's head-of-line limit
    iq = switch32(tmp_path, "iq")
    plain = switch32(tmp_path, "voq", "--speedup", "1")
    assert 0.85 <= plain < 0.95
    assert plain >= iq + 0.25
    # more input buffer fills more VOQs: 32 packets reach 0.95 without speedup
    assert switch32(tmp_path, "voq", "--speedup", "1", "--buffer-bytes", "131072") >= 0.95


# ---- tapered fat trees, uniform traffic: the taper bound ----


def taper_bound(nodes_total, nodes_below, uplinks_above):
    """Load per node at which the tapered level saturates under uniform
    traffic: the nodes_below nodes under one subtree send the fraction
    (N - n) / (N - 1) of their load out of it (destinations uniform over
    the other N - 1 nodes), over uplinks_above links of node bandwidth:
    L = uplinks_above (N - 1) / (n (N - n)), capped at 1."""
    n, total = nodes_below, nodes_total
    return min(1.0, uplinks_above * (total - 1) / (n * (total - n)))


TREES = [
    # leaves of 8 nodes, 4 uplinks each: the leaf is the tapered subtree
    ("fattree:leaves=16,nodes=8,uplinks=4", taper_bound(128, 8, 4)),
    # pods of 4 leaves x 8 nodes (leaves 1:1), 8 pod spines x 2 uplinks:
    # the pod (32 nodes, 16 links up) is the tapered subtree
    ("fattree:pods=4,leaves=4,nodes=8,uplinks=8,pod_uplinks=2", taper_bound(128, 32, 16)),
]


def tree(tmp_path, topo, router, *extra, warmup_us=200):
    return accepted(
        sim(
            tmp_path,
            "--topology",
            topo,
            "--traffic",
            "uniform",
            "--load",
            "1",
            "--router",
            router,
            "--warmup-us",
            warmup_us,
            "--measure-us",
            "300",
            *extra,
            name=f"tree-{router}.json",
        )
    )


def test_taper_bounds_are_the_topologys():
    assert TREES[0][1] == pytest.approx(4 * 127 / (8 * 120))  # 0.529
    assert TREES[1][1] == pytest.approx(16 * 127 / (32 * 96))  # 0.661


@pytest.mark.parametrize("topo,bound", TREES)
def test_oq_reaches_the_taper_bound(tmp_path, topo, bound):
    # the pools (4 MiB per switch) take about a millisecond to fill: until
    # then the in-subtree traffic flows past the queued up-bound packets and
    # the accepted load exceeds the steady state's bound
    acc = tree(tmp_path, topo, "oq", warmup_us=1500)
    assert 0.92 * bound <= acc <= 1.02 * bound


@pytest.mark.parametrize("topo,bound", TREES)
def test_voq_reaches_the_taper_bound(tmp_path, topo, bound):
    # every link of the tapered level and the spines' down links run at the
    # bound, so a switch there is loaded like the single switch above: with
    # the defaults (speedup 2, output buffers of 16 packets) voq reaches
    # 94-95 % of the bound; without speedup 84-87 %
    acc = tree(tmp_path, topo, "voq")
    assert 0.92 * bound <= acc <= 1.02 * bound
    assert 0.8 * bound <= tree(tmp_path, topo, "voq", "--speedup", "1") < 0.92 * bound


# ---- dragonfly a=4, p=2, h=2, uniform, minimal ----


def test_oq_dragonfly_passes_the_input_queued_saturation(tmp_path):
    # each group's 8 nodes send 64/71 of their load over its 8 global links:
    # the topology carries the full injection; input-queued routers stop near
    # 0.61 (caminos-lib's output-buffered router near 0.78, issue 29)
    def df(router):
        return accepted(
            sim(
                tmp_path,
                "--topology",
                "dragonfly:a=4,p=2,h=2",
                "--traffic",
                "uniform",
                "--routing",
                "minimal",
                "--router",
                router,
                "--load",
                "1",
                "--warmup-us",
                "100",
                "--measure-us",
                "200",
                name=f"dfu-{router}.json",
            )
        )

    assert df("oq") >= 0.75
    assert df("voq") > df("iq")


# ---- adaptive routing reads every model's occupancy ----


@pytest.mark.parametrize("router", MODELS)
def test_ugal_sees_the_queues_of_every_model(tmp_path, router):
    # group_shift on a dragonfly: minimal routes a group's traffic over one
    # global link (1 / (a p) = 1/8 of the injection); UGAL only beats that if
    # the occupancy it reads grows with the minimal path's queues
    def df(routing):
        return accepted(
            sim(
                tmp_path,
                "--topology",
                "dragonfly:a=4,p=2,h=2",
                "--traffic",
                "group_shift",
                "--routing",
                routing,
                "--router",
                router,
                "--load",
                "1",
                "--warmup-us",
                "50",
                "--measure-us",
                "200",
                name=f"df-{routing}.json",
            )
        )

    minimal = df("minimal")
    assert minimal <= 1.1 / 8
    assert df("ugal") >= 2 * minimal


# ---- back-pressure: congestion trees still form ----


@pytest.mark.parametrize("router", MODELS)
def test_incast_backpressure_reaches_the_senders(tmp_path, router):
    # 8 senders at full load into one node: 1/8 of the link each; the rest
    # must be held back at the senders' NICs (injection stall), which only
    # happens if a full switch stops its upstream ports' credits
    ctr = tmp_path / f"ctr-{router}.csv"
    doc = sim(
        tmp_path,
        "--topology",
        "switch:nodes=16",
        "--traffic",
        "incast:senders=1-8,dst=0",
        "--load",
        "1",
        "--router",
        router,
        "--warmup-us",
        "100",
        "--measure-us",
        "200",
        "--counters",
        ctr,
        name=f"incast-{router}.json",
    )
    assert accepted(doc) == pytest.approx(1 / 8, rel=0.05)
    with ctr.open() as f:
        rows = list(csv.DictReader(f))
    sim_s = max(float(r["time_s"]) for r in rows)
    for node in range(1, 9):
        wait = [
            float(r["value"])
            for r in rows
            if r["component"] == f"nic{node}" and r["counter"] == "xmit_wait_ns" and not r["vc"]
        ]
        assert wait and wait[0] * 1e-9 >= 0.5 * sim_s, node


# The congestion tree of test_sim_fabric.py: 14 senders on leaves 1 and 2
# to node 0, all through spine 0 (D-mod-k); victim "near" (node 15 to 4)
# shares leaf1->spine0 and spine0->leaf0 with it, "far" (26 to 5) nothing.
VICTIMS = "near=flow:src=15,dst=4,load=0.01;far=flow:src=26,dst=5,load=0.01"
INCAST = "incast:senders=8-14+16-22,dst=0,load=1"


@pytest.mark.parametrize("router", ["voq", "oq"])
def test_congestion_tree_has_victims(tmp_path, router):
    def victims(traffic):
        doc = sim(
            tmp_path,
            "--topology",
            "fattree:leaves=4,nodes=8,uplinks=4",
            "--routing",
            "dmodk",
            "--router",
            router,
            "--traffic",
            traffic,
            "--warmup-us",
            "50",
            "--measure-us",
            "1000",
            name="victims.json",
        )
        comps = {c["name"]: c for c in doc["points"][0]["components"]}
        return comps["near"]["latency_ns"]["mean"], comps["far"]["latency_ns"]["mean"]

    near0, far0 = victims(VICTIMS)
    near, far = victims(INCAST + ";" + VICTIMS)
    assert near >= 10 * near0, (near, near0)
    assert far == pytest.approx(far0, rel=0.05)


# ---- deadlock freedom and determinism: every model x routing ----

# (topology, routing, simulated us for at least 10^5 packets of 256 B)
COMBOS = [
    ("switch:nodes=8", "minimal", 1000),
    ("fattree:leaves=4,nodes=4,uplinks=2", "dmodk", 600),
    ("fattree:leaves=4,nodes=4,uplinks=2", "random", 600),
    ("fattree:leaves=4,nodes=4,uplinks=2", "adaptive", 600),
    ("fattree:pods=2,leaves=2,nodes=4,uplinks=2,pod_uplinks=2", "adaptive", 600),
    ("dragonfly:a=4,p=2,h=2", "minimal", 300),
    ("dragonfly:a=4,p=2,h=2", "valiant", 300),
    ("dragonfly:a=4,p=2,h=2", "ugal", 300),
]
# small packets and the smallest buffers each model accepts, so that every
# buffer fills: one-packet output buffers (voq), a pool of 8 KiB per switch
# (oq: at most 7 ports x 3 VCs reserve 5.5 KiB of it)
TIGHT = {
    "iq": [],
    "voq": ["--output-buffer-bytes", "256"],
    "oq": ["--shared-buffer-bytes", "8192"],
}


@pytest.mark.parametrize("router", MODELS)
@pytest.mark.parametrize("topo,routing,us", COMBOS)
def test_drains_and_repeats(tmp_path, router, topo, routing, us):
    args = [
        "--topology",
        topo,
        "--routing",
        routing,
        "--router",
        router,
        "--traffic",
        "uniform",
        "--load",
        "1",
        "--mtu",
        "256",
        "--buffer-bytes",
        "1024",
        *TIGHT[router],
        "--warmup-us",
        "0",
        "--measure-us",
        us,
        "--drain",
    ]
    a = sim(tmp_path, *args, name="a.json")
    p = a["points"][0]
    assert a["router"] == router and a["config"]["router"] == router
    assert p["drained"] is True
    assert p["undelivered_packets"] == 0
    assert p["generated_packets"] == p["delivered_packets"] >= 10**5
    b = sim(tmp_path, *args, name="b.json")
    assert strip_wall_clock(a) == strip_wall_clock(b)


@pytest.mark.parametrize("router", ["voq", "oq"])
def test_another_seed_another_run(tmp_path, router):
    args = ["--topology", "dragonfly:a=4,p=2,h=2", "--routing", "ugal", "--router", router]
    a = sim(tmp_path, *args, "--load", "0.9", name="a.json")
    c = sim(tmp_path, *args, "--load", "0.9", "--seed", "8", name="c.json")
    assert a["points"][0]["delivered_packets"] != c["points"][0]["delivered_packets"]


# ---- --engine sim runs every model ----


@pytest.mark.parametrize("router", MODELS)
def test_engine_sim_runs_every_model(tmp_path, router):
    out = tmp_path / "net.json"
    r = subprocess.run(
        [
            str(BIN),
            "network",
            "--engine",
            "sim",
            "--topology",
            "fattree:leaves=4,nodes=4,uplinks=2",
            "--router",
            router,
            "--timeout",
            "0.0002",
            "--seed",
            "3",
            "-q",
            "-o",
            str(out),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["environment"]["simulation"]["router"] == router
    assert doc["environment"]["simulation"]["packets"] > 0


# ---- bad input: exit 2, one line, nothing written ----


@pytest.mark.parametrize(
    "args,words",
    [
        (["--router", "cioq"], "iq, voq, oq"),
        (["--islip-iterations", "0"], "--islip-iterations"),
        (["--islip-iterations", "9"], "[1, 8]"),
        (["--router", "voq", "--output-buffer-bytes", "4000"], "less than one packet"),
        (["--output-buffer-bytes", "2000000000"], "--output-buffer-bytes"),
        (
            ["--router", "voq", "--mtu", "1", "--output-buffer-bytes", "100000"],
            "more than the limit of 65536",
        ),
        (["--router", "oq", "--shared-buffer-bytes", "40000"], "at least 61440 B"),
        (["--shared-buffer-bytes", "2147483648"], "--shared-buffer-bytes"),
        (["--dt-alpha", "0"], "--dt-alpha"),
        (["--dt-alpha", "100"], "--dt-alpha"),
    ],
)
def test_bad_input(tmp_path, args, words):
    err = refused(tmp_path, args)
    assert words in err
    assert len(err.strip().splitlines()) == 1
