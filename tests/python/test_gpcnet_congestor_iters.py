"""GPCNeT's code runs fewer iterations per congestor measurement in large
groups: the all-to-all and both incasts take 512 x 32 / N iterations in a
congestor group of N > 32 ranks (network_load_test.c, A2A_BASE_NODES and
INCAST_BASE_NODES), its get broadcast keeps 512.  `contend load` does the
same when a congestor's iters is left at its default, keeps what a user
gives (--TEST.iters, --iters), and says in the results what ran."""

import json

import pytest
from refusal import run

SMALL = ["--p2p_incast.msg_bytes", "8", "--rma_put_incast.msg_bytes", "8",
         "--rma_get_bcast.msg_bytes", "8"]  # fmt: skip


def iters_run(tmp_path, nodes, congestors, extra=()):
    out = tmp_path / "it.json"
    args = ["load", "--engine", "sim", "--topology", "dragonfly:a=8,p=4,h=4", "--nodes",
            str(nodes), "--congestor-only", "--congestors", congestors, *SMALL,
            "--measurements", "1", "--timeout", "0.0002", "--seed", "1", "-q", "-o", out,
            *extra]  # fmt: skip
    r = run(args, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    return {t["name"]: t["iters_per_measurement"] for t in doc["tests"]}, doc


def test_large_groups_run_gpcnets_scaled_count(tmp_path):
    # 150 nodes over 3 congestors: groups of 50
    got, doc = iters_run(tmp_path, 150, "p2p_incast,rma_put_incast,rma_get_bcast")
    scaled = int(512 * 32 / 50)
    assert got == {"p2p_incast": scaled, "rma_put_incast": scaled, "rma_get_bcast": 512}
    # the recorded option is still the default the user saw in --help
    assert doc["config"]["tests"]["p2p_incast"]["iters"] == 512


def test_the_group_is_a_node_slice(tmp_path):
    # 2 ranks per node: each congestor runs on 2 sub-communicators of 50 ranks
    # (one per local rank, as GPCNeT's congestor_comm), so N is 50, not 100
    got, _ = iters_run(tmp_path, 50, "p2p_incast", ["--ranks-per-node", "2"])
    assert got == {"p2p_incast": int(512 * 32 / 50)}


def test_small_groups_keep_the_default(tmp_path):
    got, _ = iters_run(tmp_path, 30, "p2p_incast")
    assert got == {"p2p_incast": 512}


@pytest.mark.parametrize("extra, want", [(["--p2p_incast.iters", "7"], 7), (["--iters", "5"], 5)])
def test_a_given_count_is_kept(tmp_path, extra, want):
    got, _ = iters_run(tmp_path, 50, "p2p_incast", extra)
    assert got == {"p2p_incast": want}


def test_help_says_so():
    r = run(["load", "--help"], timeout=30)
    assert r.returncode == 0
    assert r.stdout.count("iters x 32 / N") == 3  # pairwise_a2a and the two incasts
