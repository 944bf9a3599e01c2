"""The fat-tree poster's scale model (examples/study/quartz-sim*.toml,
docs/fattree-study.md): what could silently go wrong in its mechanics.

- the four study files are one study: they differ only in the lines marked
  VARIANT (routing, taper, rendezvous pacing, name), and their trees are
  Quartz-like (32 nodes per leaf, pods of 8 leaves, 2:1 or 4:1 at the leaves);
- every condition's layout at full scale (dry runs on the 1,536-node tree):
  28 application nodes per leaf in one pod (control, incast), 14 per leaf in
  two pods (bullies), 10 / 17 bully pairs per adjacent-leaf pair, bisection
  pairs in different pods, incast 3 x 7 senders to 3 receivers on the 8th leaf,
  and the slab-aligned condition: 16 per leaf, every pF3D slab group of 4
  consecutive nodes on one leaf (at 14 per leaf exactly one per leaf pair is
  split);
- on a reduced tree (2 pods of 4 leaves of 8 nodes): the bisection bully's
  bytes go up to the top level and the adjacent-leaf bully's do not (port
  counters by tier), and a reduced study's incast receivers stay below line
  rate while the runs record the bullies' leaves and pods."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, run_bounded
from contend.studies.studyfile import load_study

EXAMPLES = ROOT / "examples" / "study"
MAIN = EXAMPLES / "quartz-sim.toml"
VARIANTS = [
    EXAMPLES / "quartz-sim-adaptive.toml",
    EXAMPLES / "quartz-sim-taper4.toml",
    EXAMPLES / "quartz-sim-nopacing.toml",
]
RNDV = ["--rndv-window-bytes", "131072", "--rndv-max-active", "1"]
SMALL = "fattree:pods=2,leaves=4,nodes=8,uplinks=4,pod_uplinks=4"


def _without_variant_lines(path: Path) -> list:
    lines = path.read_text().splitlines()
    body = [ln for ln in lines if not ln.rstrip().endswith("# VARIANT")]
    return body[body.index("seed = 2018") :]  # the header comment is the main file's


def test_variants_differ_only_in_marked_lines():
    main = _without_variant_lines(MAIN)
    for v in VARIANTS:
        assert _without_variant_lines(v) == main, v.name
    a, t, p = (load_study(str(v)) for v in VARIANTS)
    m = load_study(str(MAIN))
    assert m.jobs_args[:2] == ["--routing", "dmodk"]
    assert a.jobs_args[:2] == ["--routing", "adaptive"]
    assert t.engine_options["topology"] != m.engine_options["topology"]
    # PSM2-like receiver pacing in the main study and the routing and taper
    # variants; the no-pacing variant is the main study without it, nothing else
    for s in (m, a, t):
        assert s.jobs_args[-len(RNDV) :] == RNDV
    assert p.jobs_args == m.jobs_args[: -len(RNDV)]
    assert p.engine_options == m.engine_options
    assert m.repetitions >= 5


@pytest.mark.parametrize(
    "path,taper", [(MAIN, 2), (VARIANTS[0], 2), (VARIANTS[1], 4), (VARIANTS[2], 2)]
)
def test_quartz_like_tree(contend_bin, path, taper):
    spec = load_study(str(path)).engine_options["topology"]
    r = run_bounded([contend_bin, "topology", "show", spec, "--json"], timeout=30)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["nodes_per_leaf"] == {"min": 32, "max": 32}
    assert doc["leaves_per_pod"] == {"min": 8, "max": 8}
    assert doc["pods"] >= 2 and doc["switch_levels"] == 3
    assert doc["levels"][0]["taper"] == taper
    assert doc["levels"][1]["taper"] == 1


def _plan(contend_bin, study, cond, tmp_path) -> dict:
    job = tmp_path / f"{cond.slug}.job"
    job.write_text(study.job_file(cond, 1, study.seed))
    out = tmp_path / f"{cond.slug}.json"
    spec = study.engine_options["topology"]
    r = run_bounded(
        [contend_bin, "jobs", job, "--dry-run", "--nodes", 1536, "--topology-conf", spec,
         "--seed", study.seed, "-q", "-o", out],
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return {j["name"]: j for j in json.loads(out.read_text())["jobs"]}


def _per_leaf(job) -> Counter:
    return Counter(job["leaves"])


def test_full_scale_layouts(contend_bin, tmp_path):
    study = load_study(str(MAIN))
    plans = {c.name: _plan(contend_bin, study, c, tmp_path) for c in study.all_conditions()}
    for cond in ("control", "incast bully"):
        for app in ("amg", "umt", "pf3d"):
            job = plans[cond][app]
            assert len(set(job["pods"])) == 1 and set(_per_leaf(job).values()) == {28}, app
    for cond in ("light bully", "adjacent leaf bully", "bisection bully"):
        for app in ("amg", "umt", "pf3d"):
            job = plans[cond][app]
            assert len(set(job["pods"])) == 2 and set(_per_leaf(job).values()) == {14}, app
    aligned = plans["light bully, slab-aligned"]
    for app in ("amg", "umt", "pf3d"):
        job = aligned[app]
        assert len(set(job["pods"])) == 2 and set(_per_leaf(job).values()) == {16}, app
    # pF3D's slab groups: 4 consecutive ranks (px=1 py=4, one rank per node)
    for cond, split in (("light bully, slab-aligned", 0), ("light bully", 8), ("control", 0)):
        leaves = plans[cond]["pf3d"]["leaves"]
        pods = plans[cond]["pf3d"]["pods"]
        groups = [set(zip(pods[i : i + 4], leaves[i : i + 4])) for i in range(0, 224, 4)]
        assert sum(len(g) > 1 for g in groups) == split, cond
        assert all(len(g) <= 2 for g in groups)
    for cond, per_pair in (
        ("light bully", 10),
        ("light bully, slab-aligned", 10),
        ("adjacent leaf bully", 17),
    ):
        for name, job in plans[cond].items():
            if name in ("amg", "umt", "pf3d"):
                continue
            pairs = Counter()
            for i in range(0, len(job["nodes"]), 2):
                (la, lb), (pa, pb) = job["leaves"][i : i + 2], job["pods"][i : i + 2]
                assert pa == pb and la != lb and min(la, lb) % 2 == 0 and abs(la - lb) == 1
                pairs[(la, lb)] += 1
            assert set(pairs.values()) == {per_pair} and len(pairs) == 8, (cond, name)
    for name, job in plans["bisection bully"].items():
        if name.startswith("bisect"):
            assert len(job["nodes"]) == 2 * 136
            for i in range(0, len(job["nodes"]), 2):
                (la, lb), (pa, pb) = job["leaves"][i : i + 2], job["pods"][i : i + 2]
                assert pa != pb and la % 8 == lb % 8  # leaf k of one pod with leaf k of the other
    for name, job in plans["incast bully"].items():
        if name.startswith("incast"):
            leaves = job["leaves"]
            assert len(leaves) == 24 and len(set(job["pods"])) == 1
            assert len(set(leaves[:3])) == 1 and leaves[0] not in leaves[3:]
            assert set(Counter(leaves[3:]).values()) == {3} and len(set(leaves[3:])) == 7
    # the app of pod pair (0, 1) is beside its own bully only
    assert set(plans["bisection bully"]["amg"]["pods"]) == set(
        plans["bisection bully"]["bisect0"]["pods"]
    )


def _tier_bytes(doc) -> dict:
    tiers = doc["environment"]["simulation"]["counters"]["by_tier"]
    return {t["tier"]: t["xmit_data_bytes"] for t in tiers}


@pytest.mark.parametrize("across", ["pod", "leaf"])
def test_bisection_bully_crosses_the_top(contend_bin, tmp_path, across):
    job = tmp_path / "b.job"
    job.write_text(
        "[JOB_NAME] bully\n"
        f"[PLACEMENT] pairs pairs=8 across={across} pods=2 pod=0\n"
        "[MOTIF] bully_pairs msg_bytes=64KiB window=2 iters=2\n"
    )
    out = tmp_path / "b.json"
    r = run_bounded(
        [contend_bin, "jobs", job, "--engine", "sim", "--topology", SMALL, "--routing", "dmodk",
         "--counters", tmp_path / "c.csv", "--seed", 1, "-q", "-o", out],
        timeout=60,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    sent = 16 * 2 * 2 * 64 * 1024  # 16 ranks, 2 iterations x 2 messages each way
    tiers = _tier_bytes(doc)
    up1 = sum(v for k, v in tiers.items() if k.startswith("level 1->2"))
    up2 = sum(v for k, v in tiers.items() if k.startswith("level 2->3"))
    assert up1 >= sent
    if across == "pod":
        assert up2 >= sent  # every byte through a top switch
    else:
        assert up2 == 0  # adjacent leaves: level 2 only
    job_rec = doc["jobs"][0]
    pods = job_rec["pods"]
    assert all((pods[i] != pods[i + 1]) == (across == "pod") for i in range(0, len(pods), 2))


REDUCED = f"""\
name = "quartz-reduced"
seed = 5
repetitions = 2
engine = "sim"
jobs_args = ["--routing", "dmodk", "--mpi-overhead-ns", "500"]

[sim]
topology = "{SMALL}"

[[app]]
name = "umt"
job = '''
[MOTIF] compute dist=gaussian mean=100us stddev=10us
[MOTIF] umt_like face_bytes=64000 compute_time=200us iters=2
'''

[control]
placement.umt = "compact nodes=24 per_leaf=6 pod=0"

[[condition]]
name = "bisection bully"
placement.umt = "spread nodes=24 pods=2 per_leaf=3 pod=0"
[[condition.bully]]
name = "bisect"
placement = "pairs pairs=16 across=pod pods=2 pod=0"
job = "[MOTIF] bully_pairs msg_bytes=256KiB window=2 iters=2"

[[condition]]
name = "incast bully"
[[condition.bully]]
name = "incast"
placement = "incast per_leaf=1 senders=3 pod=0"
job = "[MOTIF] bully_incast receivers=1 msg_bytes=256KiB window=2 iters=2"
"""


def test_reduced_study(contend_bin, tmp_path):
    sf = tmp_path / "reduced.toml"
    sf.write_text(REDUCED)
    out = tmp_path / "s.json"
    r = run_bounded(
        [contend_bin, "study", sf, "--dir", tmp_path / "d", "-o", out, "--parallel", 2, "-q"],
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert re.search(r"bisection bully\s+-?\d", r.stdout)  # Table I printed
    inc = next(x for x in doc["summary"]["bully_bandwidth"] if x["bully"] == "incast")
    assert inc["runs_with_bandwidth"] == 2
    # 3 senders into one 100 Gb/s receiver: below line rate, far above nothing
    assert 10 < inc["slowest_rank_gbps_min"] < 100
    for run in doc["runs"]:
        jobs = json.loads((tmp_path / "d" / run["results_file"]).read_text())["jobs"]
        rec = {j["name"]: j for j in jobs}
        if run["condition"] == "bisection bully":
            pods = rec["bisect"]["pods"]
            assert all(pods[i] != pods[i + 1] for i in range(0, len(pods), 2))
            assert sorted(set(rec["umt"]["pods"])) == [0, 1]
        if run["condition"] == "incast bully":
            assert set(rec["incast"]["pods"]) == {0} and len(set(rec["incast"]["leaves"])) == 4
