"""Bad input: one clear message, exit status 2, no results file left behind
(under mpirun, as users run it, and without it)."""

import pytest
from conftest import BUILD, run_bounded

CASES = {
    "unknown_option": (["load", "--virtual-nodes", "1", "--bogus"], "unknown option '--bogus'"),
    "non_numeric": (["load", "--virtual-nodes", "1", "--timeout", "soon"], "--timeout: 'soon'"),
    "out_of_range": (
        ["load", "--virtual-nodes", "1", "--canary-fraction", "1.5"],
        "--canary-fraction: '1.5'",
    ),
    "bad_test_param": (
        ["network", "--virtual-nodes", "1", "--rr_lat.iters", "-3"],
        "--rr_lat.iters",
    ),
    "unknown_canary": (
        ["load", "--virtual-nodes", "1", "--canaries", "rr_lat,nope"],
        "unknown canary 'nope'",
    ),
    "too_few_nodes": (["load", "--virtual-nodes", "1"], "too few nodes for the split"),
    "uneven_virtual_nodes": (["network", "--virtual-nodes", "3"], "do not divide"),
    "one_node": (["network"], "too few nodes"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_under_mpirun(mpirun, tmp_path, case):
    args, expected = CASES[case]
    out = tmp_path / "r.json"
    r = mpirun(4, *args, "-o", out, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert expected in r.stderr
    assert r.stderr.count("error:") == 1  # printed once, not once per rank
    assert "Traceback" not in r.stderr and "Segmentation" not in r.stderr
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no temporary file either


def test_unwritable_output_path(mpirun, tmp_path):
    target = tmp_path / "missing-dir" / "r.json"
    r = mpirun(4, "network", "--virtual-nodes", "1", "-o", target, timeout=60)
    assert r.returncode == 2
    assert "cannot write" in r.stderr and str(target) in r.stderr
    assert r.stderr.count("error:") == 1
    assert not target.parent.exists()


@pytest.mark.parametrize(
    "args",
    [["load", "--timeout"], ["frobnicate"], ["network", "stray"], ["load", "--dry-run"]],
)
def test_bad_input_without_mpirun(tmp_path, args):
    r = run_bounded([BUILD / "bin" / "contend", *args], timeout=30, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "see contend" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_help_documents_every_option_with_unit_and_default(contend_bin):
    r = run_bounded([contend_bin, "load", "--help"], timeout=30)
    assert r.returncode == 0
    for opt in (
        "--virtual-nodes",
        "--seed",
        "--timeout",
        "--output",
        "--verify",
        "--dry-run",
        "--canaries",
        "--congestors",
        "--canary-fraction",
        "--congestor-only",
        "--rr_lat.measurements",
        "--rr_lat.rings",
        "--rr_lat.iters",
        "--rr_lat.warmup",
        "--rr_bw_sync.msg_bytes",
        "--pairwise_a2a.iters",
    ):
        line = next((ln for ln in r.stdout.splitlines() if ln.strip().startswith(opt)), None)
        assert line is not None, opt
        assert "default" in line, line
    assert "[unit s, default 10]" in r.stdout  # the timeout
    assert "[unit count, default 10000]" in r.stdout  # nM of the latency test
