"""bench/sensitivity_seeds (issue 31, acceptance 2): its verdict is the paper's
ordering of the dimensionless delay sensitivity, c_a's order reported beside
it; bad options are refused in one line before any run; one seed on a small
fabric writes a JSON document consistent with what it prints and its exit
status.  The 5-seed figures on the README's fabric are the bench's own run
(docs/netscope.md), too long for a test."""

import importlib.machinery
import importlib.util
import json
import sys

import pytest
from conftest import ROOT, run_bounded

BENCH = ROOT / "bench" / "sensitivity_seeds"


def load_bench():
    loader = importlib.machinery.SourceFileLoader("sensitivity_seeds", str(BENCH))
    spec = importlib.util.spec_from_loader("sensitivity_seeds", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def row(seed, c_a, ds):
    """A seed's row as the bench builds it, from per-proxy (c_a, delay sensitivity)."""
    keys = ("c_a_s_per_us", "c_a_stderr_s_per_us", "r", "delay_sensitivity", "t_ref_s")
    proxies = {
        p: dict(zip(keys, (c, 0.01, 0.9, d, 0.01)))
        for p, c, d in zip(("milc", "lammps", "amg"), c_a, ds)
    }
    return {"seed": seed, "proxies": proxies}


def test_verdict_is_the_dimensionless_order_with_c_a_beside_it():
    b = load_bench()
    seed1 = row(1, (0.0692, 0.0300, 0.0014), (4.18, 0.512, 0.043))  # measured, seed 1
    seed2 = row(2, (0.0682, 0.0858, 0.0240), (4.11, 1.45, 0.711))  # measured, seed 2
    rows = [seed1, seed2]
    for x in rows:
        x["ordered_by_delay_sensitivity"] = b.ordered(x, "delay_sensitivity")
        x["ordered_by_c_a"] = b.ordered(x, "c_a_s_per_us")
    assert [x["ordered_by_c_a"] for x in rows] == [True, False]
    s = b.summary(rows)
    assert s["seeds_ordered_by_delay_sensitivity"] == 2 and s["seeds_ordered_by_c_a"] == 1
    assert s["holds"]
    lammps = s["proxies"]["lammps"]["c_a_s_per_us"]
    assert lammps == {"median": pytest.approx(0.0579), "min": 0.03, "max": 0.0858}
    swapped = row(3, (0.07, 0.03, 0.001), (0.4, 0.5, 0.04))  # LAMMPS above MILC: fails
    swapped["ordered_by_delay_sensitivity"] = b.ordered(swapped, "delay_sensitivity")
    swapped["ordered_by_c_a"] = b.ordered(swapped, "c_a_s_per_us")
    assert not b.summary([*rows, swapped])["holds"]
    tie = row(4, (0.07, 0.03, 0.001), (4.0, 0.5, 0.5))  # strictly ordered, ties fail
    assert not b.ordered(tie, "delay_sensitivity")


@pytest.mark.parametrize(
    "args, message",
    [
        (["--seeds", "0"], "--seeds: expected 1 to 1000, not 0"),
        (["--runs", "1"], "--runs: expected 2 to 10000"),
        (["--first", "-3"], "--first: the seeds must lie in 0 to 1000000"),
        (["--json", "/nonexistent-dir/x.json"], "--json /nonexistent-dir/x.json: directory"),
        (["--json", ROOT / "examples/netscope/amg.job"], "is a job file the bench reads"),
        (["--contend", "/nonexistent-dir/contend"], "not an executable file"),
    ],
)
def test_bad_options_are_one_line_and_status_2(args, message, tmp_path):
    r = run_bounded([sys.executable, BENCH, *args, "--keep", tmp_path / "k"], timeout=60)
    assert r.returncode == 2
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("sensitivity_seeds: ") and message in line
    assert not (tmp_path / "k").exists()  # refused before any run


def test_keep_must_be_new_or_empty_and_hold_no_json(tmp_path):
    (tmp_path / "k").mkdir()
    r = run_bounded(
        [sys.executable, BENCH, "--keep", tmp_path / "k", "--json", tmp_path / "k" / "x.json"],
        timeout=60,
    )
    assert r.returncode == 2 and "among the files kept" in r.stderr
    (tmp_path / "k" / "x").write_text("x")
    r = run_bounded([sys.executable, BENCH, "--keep", tmp_path / "k"], timeout=60)
    assert r.returncode == 2 and "exists and is not an empty directory" in r.stderr
    assert (tmp_path / "k" / "x").read_text() == "x"


def test_one_seed_on_a_small_fabric_writes_consistent_json(contend_bin, tmp_path):
    """80 nodes (dragonfly a=4,p=4,h=1), 2 runs per proxy: about 30 s."""
    out = tmp_path / "seeds.json"
    r = run_bounded(
        [sys.executable, BENCH, "--seeds", "1", "--first", "1", "--runs", "2",
         "--contend", contend_bin, "--json", out, "--keep", tmp_path / "files",
         "--", "--topology", "dragonfly:a=4,p=4,h=1"],
        timeout=600,
    )  # fmt: skip
    assert r.returncode in (0, 1), r.stderr
    doc = json.loads(out.read_text())
    (seed,) = doc["seeds"]
    assert seed["seed"] == 1 and doc["settings"]["sensitivity_train_runs"] == 2
    ds = [seed["proxies"][p]["delay_sensitivity"] for p in ("milc", "lammps", "amg")]
    assert seed["ordered_by_delay_sensitivity"] == (ds[0] > ds[1] > ds[2])
    assert doc["summary"]["holds"] == seed["ordered_by_delay_sensitivity"]
    assert r.returncode == (0 if doc["summary"]["holds"] else 1)
    milc = seed["proxies"]["milc"]
    assert milc["t_ref_s"] > 0 and milc["m_a_spread_us"] > 0
    assert milc["delay_sensitivity"] == pytest.approx(
        milc["c_a_s_per_us"] * milc["d_ref_us"] / milc["t_ref_s"]
    )
    assert f"{milc['delay_sensitivity']:8.3f}" in r.stdout  # printed as written
    assert (tmp_path / "files" / "milc1.sens.json").exists()  # --keep keeps them
