"""Motifs that share a kernel or parameter rows through a family header
(src/motifs: msgbuf.h, allreduce_kernel.h, workload.h, halo.h, bully.h):
the motifs that are one kernel under other parameters plan the same traffic
on the trace engine, a shared kernel still follows each motif's own
parameters (incast's root), and a refusal from a shared helper names the
motif's own parameter and words.  Dry runs only: no MPI, no fabric."""

import json

import pytest
from refusal import refused, run

NODES = ["--nodes", "6"]


def plan(tmp_path, *motifs, nodes=6, rpn=1):
    """The dry-run traffic of each motif line of one job on `nodes` nodes."""
    job = tmp_path / "f.job"
    job.write_text(
        f"[JOB_NAME] f\n[NID_LIST] 0-{nodes - 1}\n" + "".join(f"[MOTIF] {m}\n" for m in motifs)
    )
    out = tmp_path / "plan.json"
    args = ["jobs", job, "--dry-run", "--nodes", nodes, "--ranks-per-node", rpn]
    r = run([*args, "--seed", 1, "-q", "-o", out], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return [m["traffic"] for m in json.loads(out.read_text())["jobs"][0]["motifs"]]


def test_incast_kernel_is_one(tmp_path):
    """p2p_incast (the GPCNeT congestor: rings x (warmup + iters)) and incast
    with root 0 (iters) are one kernel: 4 iterations of 1000 B from every
    rank to rank 0; incast root=2 sends the same to rank 2 instead."""
    congestor, job0, job2 = plan(
        tmp_path,
        "p2p_incast rings=2 iters=1 warmup=1 msg_bytes=1000",
        "incast iters=4 msg_bytes=1000",
        "incast iters=4 msg_bytes=1000 root=2",
        nodes=5,
    )
    assert congestor["pairs"] == job0["pairs"]
    assert sorted(map(tuple, job0["pairs"])) == [(s, 0, 4000, 4) for s in (1, 2, 3, 4)]
    assert sorted(map(tuple, job2["pairs"])) == [(s, 2, 4000, 4) for s in (0, 1, 3, 4)]


def test_allreduce_kernel_is_one(tmp_path):
    """The canary allreduce, the congestor dl_allreduce (msg_bytes) and the
    job motif wl_allreduce (count doubles) reduce through one kernel: the
    same calls of the same size for the same iterations."""
    canary, congestor, job = plan(
        tmp_path,
        "allreduce rings=1 iters=2 warmup=1 msg_bytes=64",
        "dl_allreduce rings=1 iters=2 warmup=1 msg_bytes=64",
        "wl_allreduce iters=3 count=8",
    )
    ops = [t["collectives"]["allreduce"] for t in (canary, congestor, job)]
    assert ops[0] == ops[1] == ops[2]
    assert ops[0]["calls"] == 6 * 3  # 6 ranks, 3 calls each


def test_pingpong_sweep_of_one_size_is_pingpong(tmp_path):
    """A sweep over one message size is the ping-pong of that size: skip +
    reps round trips between every pair (pairs=all)."""
    single, sweep = plan(
        tmp_path,
        "pingpong msg_bytes=64 warmup=2 iters=5 pairs=all",
        "pingpong_sweep min_bytes=64 max_bytes=64 skip=2 reps=5 pairs=all",
    )
    assert single["pairs"] == sweep["pairs"]
    pairs = sorted(map(tuple, single["pairs"]))
    assert pairs == sorted(
        (a, b, 64 * 7, 7) for a, b in [(0, 3), (3, 0), (1, 4), (4, 1), (2, 5), (5, 2)]
    )


@pytest.mark.parametrize(
    ("motif", "words"),
    [
        # the domain split (wl_domain_grid) reads each motif's own axes
        ("halo2d nx=100 ny=60 px=4", ["'halo2d'", "px=4 py=0 given", "domain 100 x 60"]),
        ("halo3d pz=4", ["'halo3d'", "px=0 py=0 pz=4 given"]),
        ("sweep3d py=4", ["'sweep3d'", "px=0 py=4 given", "domain 100 x 100"]),
        ("halo3d_unstructured py=4", ["'halo3d_unstructured'", "px=0 py=4 pz=0 given"]),
        # the proxies' fixed-block grid (halo_grid_of): milc_like's 4th axis too
        ("milc_like pt=4", ["'milc_like'", "px=0 py=0 pz=0 pt=4 (0: chosen)"]),
        ("umt_like pz=4", ["'umt_like'", "px=0 py=0 pz=4 (0: chosen)"]),
        ("amg_like px=4", ["'amg_like'", "px=4 py=0 pz=0 (0: chosen)"]),
        ("lammps_like py=4", ["'lammps_like'", "px=0 py=4 pz=0 (0: chosen)"]),
        # the bullies' bound: what it is per
        ("bully_pairs msg_bytes=1073741824 window=5", ["'bully_pairs'", "4 GiB per direction"]),
        (
            "bully_incast msg_bytes=1073741824 window=5",
            ["'bully_incast'", "4 GiB per sender"],
        ),
        # the reductions over msg_bytes
        ("allreduce msg_bytes=12", ["'allreduce'", "msg_bytes=12 is not a multiple of 8"]),
        ("dl_allreduce msg_bytes=20", ["'dl_allreduce'", "msg_bytes=20", "use 16 or 24"]),
        # the incast kernel's root is incast's parameter
        ("incast root=6", ["'incast'", "root=6 but the job has 6 ranks"]),
    ],
)
def test_shared_helper_refusals_name_the_motif(tmp_path, motif, words):
    job = tmp_path / "f.job"
    job.write_text(f"[JOB_NAME] f\n[NID_LIST] 0-5\n[MOTIF] {motif}\n")
    line = refused(["jobs", job, "--dry-run", *NODES], tmp_path, "f.job:3:")
    for w in words:
        assert w in line, (w, line)
