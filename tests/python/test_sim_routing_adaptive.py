"""Routings registered by name, and adaptive routings that adapt
(`contend sim`, fixed seeds, small sizes): fat-tree `adaptive` against
D-mod-k, dragonfly UGAL variants against minimal routing under the
adversarial group_shift; every routing drains and is deterministic; an
unknown routing is one line naming the valid ones.

The trees: the k=8 three-level fat tree (Al-Fares et al.: 8 pods of 4 edge
and 4 aggregation switches, 16 cores, 4 nodes per edge switch: 128 nodes)
is `fattree:pods=8,leaves=4,nodes=4,uplinks=4,pod_uplinks=4`."""

import json
import subprocess

import pytest
from simkit import BIN, sim, strip_wall_clock

K8 = "fattree:pods=8,leaves=4,nodes=4,uplinks=4,pod_uplinks=4"


def run(tmp_path, topo, routing, traffic, *extra, seed=7):
    return sim(
        tmp_path,
        "--topology",
        topo,
        "--routing",
        routing,
        "--traffic",
        traffic,
        "--load",
        "1",
        "--warmup-us",
        "20",
        "--measure-us",
        "100",
        *extra,
        name=f"{routing}-{seed}.json",
        seed=seed,
    )["points"][0]


def accepted(tmp_path, topo, routing, traffic, *extra, seed=7):
    return run(tmp_path, topo, routing, traffic, *extra, seed=seed)["accepted_load"]


def flows(p):
    return [c["accepted_load"] for c in p["components"]]


# ---- fat tree: adaptive against D-mod-k ----


# Routers with 8 VCs (as lanes: VC = source mod 8) and an internal speedup
# of 2.  A plain input-queued router (1 VC) is held near its head-of-line
# limit (0.59 on one switch) under any routing, which hides what the
# routing does; with these, D-mod-k's collisions on a permutation show.
ROOMY = ["--vcs", "8", "--speedup", "2"]


@pytest.mark.parametrize("routing", ["adaptive", "dmodk-adaptive"])
def test_k8_tree_adaptive_at_least_dmodk_under_uniform(tmp_path, routing):
    dmodk = accepted(tmp_path, K8, "dmodk", "uniform", *ROOMY)
    assert accepted(tmp_path, K8, routing, "uniform", *ROOMY) >= dmodk


def test_k8_tree_dmodk_adaptive_at_least_dmodk_under_uniform_with_1_vc(tmp_path):
    dmodk = accepted(tmp_path, K8, "dmodk", "uniform")
    assert accepted(tmp_path, K8, "dmodk-adaptive", "uniform") >= dmodk


@pytest.mark.xfail(
    strict=True,
    reason="with 1 VC and no speedup the least occupied port accepts 0.95-0.96x D-mod-k under "
    "uniform traffic (its down paths collide; head-of-line blocking spreads it): "
    "dmodk-adaptive is the routing for such routers",
)
def test_k8_tree_adaptive_at_least_dmodk_under_uniform_with_1_vc(tmp_path):
    dmodk = accepted(tmp_path, K8, "dmodk", "uniform")
    assert accepted(tmp_path, K8, "adaptive", "uniform") >= dmodk


def test_k8_tree_adaptive_1_3x_dmodk_under_a_permutation(tmp_path):
    # seed 7's permutation (the file's seed; seeds 1, 3, 7, 11 give 1.43-1.55)
    dmodk = accepted(tmp_path, K8, "dmodk", "permutation", *ROOMY)
    adaptive = accepted(tmp_path, K8, "adaptive", "permutation", *ROOMY)
    assert adaptive >= 1.3 * dmodk
    # not only spreading: random up ports accept less
    assert adaptive > accepted(tmp_path, K8, "random", "permutation", *ROOMY)
    # keeping D-mod-k's port while it is not busier gains less (1.27-1.34x)
    assert accepted(tmp_path, K8, "dmodk-adaptive", "permutation", *ROOMY) >= 1.2 * dmodk


@pytest.mark.xfail(
    strict=True,
    reason="with 1 VC and no speedup neither adaptive routing reaches 1.3x D-mod-k on a "
    "random permutation of the k=8 tree (0.89-1.08x): head-of-line blocking, not the "
    "routing, sets the limit",
)
@pytest.mark.parametrize("routing", ["adaptive", "dmodk-adaptive"])
def test_k8_tree_adaptive_1_3x_dmodk_under_a_permutation_with_1_vc(tmp_path, routing):
    dmodk = accepted(tmp_path, K8, "dmodk", "permutation")
    assert accepted(tmp_path, K8, routing, "permutation") >= 1.3 * dmodk


# The fat-tree presets' router (ib-like: oq, a shared-buffer output-queued
# switch) has no head-of-line blocking: D-mod-k then gives each down link of
# the k=8 tree exactly one destination, which no adaptive choice betters
# under uniform traffic.


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_k8_tree_on_output_queued_switches(tmp_path, seed):
    def acc(routing, traffic):
        return accepted(tmp_path, K8, routing, traffic, "--router", "oq", seed=seed)

    dmodk_u, dmodk_p = acc("dmodk", "uniform"), acc("dmodk", "permutation")
    # seeds 1-7: adaptive 1.42-1.75x D-mod-k on a permutation
    assert acc("adaptive", "permutation") >= 1.3 * dmodk_p
    # keeping D-mod-k's port while it is within a packet of the least
    # occupied: at least D-mod-k under uniform, 1.36-1.60x on a permutation
    assert acc("dmodk-adaptive", "uniform") >= dmodk_u
    assert acc("dmodk-adaptive", "permutation") >= 1.3 * dmodk_p
    # the least occupied port mixes destinations on the down links: 0.997x
    # D-mod-k under uniform (0.996-1.000x, seeds 1-7), a tie within 0.5 %
    assert acc("adaptive", "uniform") >= 0.99 * dmodk_u


@pytest.mark.xfail(
    strict=True,
    reason="on oq switches the least occupied up port accepts 0.4 % less than D-mod-k under "
    "uniform traffic (0.996-1.000x, below it at every seed 1-7: D-mod-k gives each down "
    "link one destination, adaptive mixes them): dmodk-adaptive meets it",
)
def test_k8_tree_adaptive_at_least_dmodk_under_uniform_on_oq(tmp_path):
    dmodk = accepted(tmp_path, K8, "dmodk", "uniform", "--router", "oq")
    assert accepted(tmp_path, K8, "adaptive", "uniform", "--router", "oq") >= dmodk


@pytest.mark.parametrize("routing", ["adaptive", "dmodk-adaptive"])
def test_adaptive_moves_off_a_hot_up_port(tmp_path, routing):
    # two flows from one leaf whose D-mod-k up ports coincide: 0 -> 4 and
    # 1 -> 8 both take up port 0 (dst mod 2 = 0) of leaf 0 on a 2-level
    # tree with 2 uplinks, and share its link; adaptive spreads them
    topo = "fattree:leaves=4,nodes=4,uplinks=2"
    traffic = "a=flow:src=0,dst=4;b=flow:src=1,dst=8"
    assert flows(run(tmp_path, topo, "dmodk", traffic)) == pytest.approx([0.5, 0.5], rel=0.03)
    assert sum(flows(run(tmp_path, topo, routing, traffic))) >= 1.5


# ---- dragonfly: UGAL variants against minimal routing ----

DF = "dragonfly:a=6,p=3,h=3"  # 19 groups of 6 routers, 342 nodes


def test_ugal_more_candidates_find_more_of_the_spare_global_links(tmp_path):
    # group_shift: every group's traffic to the next crosses one global
    # link under minimal routing (1/18 of the node rate); UGAL-L comparing
    # several intermediates diverts more of it than with one
    one = accepted(tmp_path, DF, "ugal", "group_shift", "--ugal-candidates", "1")
    four = accepted(tmp_path, DF, "ugal", "group_shift", "--ugal-candidates", "4")
    assert accepted(tmp_path, DF, "minimal", "group_shift") <= 1.1 / 18
    assert four >= 1.05 * one


@pytest.mark.parametrize("router", ["iq", "voq", "oq"])
@pytest.mark.parametrize("routing", ["ugal-g", "par"])
def test_adaptive_dragonfly_routing_takes_the_spare_global_links(tmp_path, routing, router):
    # group_shift's bound under minimal routing is 1/18 (one global link per
    # pair of groups, 18 nodes a group); the target for an adaptive
    # routing is 0.40 (seeds 1-5: iq 0.43-0.46, voq 0.50-0.53, oq 0.48-0.51)
    for seed in (1, 2):
        acc = accepted(tmp_path, DF, routing, "group_shift", "--router", router, seed=seed)
        assert acc >= 0.40


@pytest.mark.parametrize("router", ["iq", "voq", "oq"])
@pytest.mark.parametrize("routing", ["ugal-g", "par"])
def test_adaptive_dragonfly_routing_keeps_uniform_traffic_minimal(tmp_path, routing, router):
    for seed in (1, 2):
        minimal = accepted(tmp_path, DF, "minimal", "uniform", "--router", router, seed=seed)
        acc = accepted(tmp_path, DF, routing, "uniform", "--router", router, seed=seed)
        assert acc >= 0.95 * minimal


@pytest.mark.parametrize("router", ["voq", "oq"])
def test_ugal_bias_of_deep_queued_routers(tmp_path, router):
    # voq's and oq's queues hold many packets per output: UGAL without a bias
    # reads their noise under uniform load as congestion and loses 12-20 %
    # of minimal's throughput; their default bias is 4 input buffers of a VC
    doc = run(tmp_path, DF, "ugal-g", "uniform", "--router", router)
    assert doc["accepted_load"] >= 0.95 * accepted(
        tmp_path, DF, "minimal", "uniform", "--router", router
    )
    out = sim(tmp_path, "--topology", DF, "--routing", "ugal-g", "--router", router, "--load", "0.1",
              "--warmup-us", "1", "--measure-us", "2", name="rec.json")  # fmt: skip
    assert out["ugal_threshold_bytes"] == 4 * 32768
    assert out["config"]["ugal_threshold_bytes"] == -1
    minimal = accepted(tmp_path, DF, "minimal", "uniform", "--router", router)
    unbiased = accepted(
        tmp_path, DF, "par", "uniform", "--router", router, "--ugal-threshold-bytes", "0"
    )
    assert unbiased < 0.92 * minimal


def test_ugal_bias_of_input_queued_routers_is_none(tmp_path):
    out = sim(tmp_path, "--topology", DF, "--routing", "ugal", "--load", "0.1",
              "--warmup-us", "1", "--measure-us", "2")  # fmt: skip
    assert out["ugal_threshold_bytes"] == 0
    out = sim(tmp_path, "--topology", DF, "--routing", "ugal", "--load", "0.1",
              "--warmup-us", "1", "--measure-us", "2", "--ugal-threshold-bytes", "777")  # fmt: skip
    assert out["ugal_threshold_bytes"] == 777


def test_par_paths_include_the_turns_at_the_second_router(tmp_path):
    # node 0 (g0.r0) to node 40 (g5.r0) on dragonfly:a=4,p=2,h=2 (9
    # groups): ugal's paths are the minimal one and one per intermediate
    # group (7); par adds a turn to each of the 7 at g0.r1, the gateway of
    # the minimal path (a local hop more: NIC + 6 router hops + ejection)
    n = {}
    for routing in ("ugal", "par"):
        out = tmp_path / f"{routing}.json"
        cmd = [str(BIN), "topology", "paths", "--topology", "dragonfly:a=4,p=2,h=2"]
        cmd += ["--routing", routing, "--pairs", "0:40", "-q", "-o", str(out)]
        subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=60)
        pair = json.loads(out.read_text())["pairs"][0]
        n[routing] = (len(pair["paths"]), max(len(p) for p in pair["paths"]))
        for vcs in pair["vcs"]:
            assert vcs == sorted(vcs)  # VC classes never decrease along a path
    assert n["ugal"] == (1 + 7, 7)
    assert n["par"] == (1 + 7 + 7, 8)


def test_paths_with_more_than_256_choices_at_a_hop(tmp_path):
    # dragonfly:a=1,p=1,h=300 has 301 groups: valiant offers 299
    # intermediate groups at the source router (all but the two end ones),
    # more than the 256 choices a hop once had room for (exit status 3)
    out = tmp_path / "paths.json"
    cmd = [str(BIN), "topology", "paths", "--topology", "dragonfly:a=1,p=1,h=300"]
    cmd += ["--routing", "valiant", "--pairs", "0:5", "--max-paths", "1000", "-q", "-o", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=120)
    pair = json.loads(out.read_text())["pairs"][0]
    assert pair["paths_total"] == 299
    assert len({tuple(p) for p in pair["paths"]}) == 299


# ---- every routing: drains, deterministic; unknown names ----

ROUTINGS = [
    ("switch:nodes=8", "minimal"),
    ("fattree:pods=2,leaves=2,nodes=4,uplinks=2,pod_uplinks=2", "dmodk"),
    ("fattree:pods=2,leaves=2,nodes=4,uplinks=2,pod_uplinks=2", "random"),
    ("fattree:pods=2,leaves=2,nodes=4,uplinks=2,pod_uplinks=2", "adaptive"),
    ("fattree:pods=2,leaves=2,nodes=4,uplinks=2,pod_uplinks=2", "dmodk-adaptive"),
    ("dragonfly:a=4,p=2,h=2", "minimal"),
    ("dragonfly:a=4,p=2,h=2", "valiant"),
    ("dragonfly:a=4,p=2,h=2", "ugal"),
    ("dragonfly:a=4,p=2,h=2", "ugal-g"),
    ("dragonfly:a=4,p=2,h=2", "par"),
]


@pytest.mark.parametrize("topo,routing", ROUTINGS)
def test_every_routing_drains_and_repeats(tmp_path, topo, routing):
    # saturating uniform traffic and the adversarial pattern of the
    # topology, small buffers (4 packets a VC), then every packet delivered;
    # the same seed twice gives the same results
    traffic = "a=uniform:load=0.6;b=group_shift:load=0.6" if "dragonfly" in topo else "uniform"
    args = [
        "--topology",
        topo,
        "--routing",
        routing,
        "--traffic",
        traffic,
        "--load",
        "1",
        "--mtu",
        "256",
        "--buffer-bytes",
        "1024",
        "--warmup-us",
        "0",
        "--measure-us",
        "300",
        "--drain",
    ]
    a = sim(tmp_path, *args, name="a.json")
    b = sim(tmp_path, *args, name="b.json")
    p = a["points"][0]
    assert p["drained"] is True
    assert p["undelivered_packets"] == 0
    assert p["generated_packets"] == p["delivered_packets"] >= 3 * 10**4
    assert a["routing"] == routing
    assert strip_wall_clock(a) == strip_wall_clock(b)


@pytest.mark.parametrize(
    "topo,routing,valid",
    [
        ("dragonfly:a=4,p=2,h=2", "adaptive", "minimal,valiant,ugal,ugal-g,par"),
        ("fattree:leaves=4,nodes=4,uplinks=2", "par", "dmodk,random,adaptive,dmodk-adaptive"),
        ("switch:nodes=4", "ugal-g", "minimal"),
    ],
)
def test_unknown_routing_is_one_line_naming_the_valid_ones(tmp_path, topo, routing, valid):
    out = tmp_path / "never.json"
    cmd = [str(BIN), "sim", "--topology", topo, "--routing", routing, "-o", str(out)]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"unknown routing '{routing}'" in lines[0] and f"(known: {valid})" in lines[0]
    assert not out.exists()


def test_help_lists_every_routing_from_the_registry():
    r = subprocess.run([str(BIN), "sim", "--help"], check=True, capture_output=True, text=True)
    tail = r.stdout.split("Routings (--routing)")[1]
    names = ["dmodk", "random", "adaptive", "dmodk-adaptive"]
    for name in names + ["minimal", "valiant", "ugal", "ugal-g", "par"]:
        assert f"\n    {name} " in tail
