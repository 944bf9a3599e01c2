"""Limits on what a user controls (contend.limits): counts given as options
are bounded (the message and --help name the limit, and a count is refused
before any input is read); input files are read within a size limit (a
gzip bomb is stopped after the limit, never inflated whole) and a nesting
limit (JSON 1,000 deep, TOML 100,000 deep).  Each reproducer: exit 2, one
line, no traceback, inputs byte-identical, under 10 s and 1 GiB."""

from __future__ import annotations

import gzip
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import ROOT
from contend import infile, limits
from contend.analysis import bootstrap
from refusal import refused, run_limited

RESULTS = ROOT / "tests" / "fixtures" / "results"
LOAD = RESULTS / "load_vn1_n10.json.gz"
MIX = ROOT / "examples" / "mitigate" / "small.job"
DEEP_JSON = "[" * 1000 + "]" * 1000


@pytest.fixture
def work(tmp_path):
    (tmp_path / "in.json").write_bytes(gzip.decompress(LOAD.read_bytes()))
    shutil.copy(MIX, tmp_path / "mix.job")
    (tmp_path / "deep.json").write_text(DEEP_JSON)
    return tmp_path


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """About 1.5 MB of gzip holding 1.5 GB of JSON (one array of zeros)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.json.gz"
    with gzip.open(path, "wb", compresslevel=9) as fh:
        fh.write(b"[")
        block = b"0," * (1 << 20)
        for _ in range(750):
            fh.write(block)
        fh.write(b"0]")
    assert path.stat().st_size < 4 << 20
    return path


# ---- counts


COUNTS = {
    "mitigate-repeat": (["mitigate", "mix.job", "--repeat", "99999999999"], "--repeat", 10000),
    "significance-resamples": (
        ["significance", "a=in.json", "b=in.json", "--resamples", "1000000000"],
        "--resamples",
        limits.MAX_RESAMPLES,
    ),
    "report-bootstrap": (
        ["report", "in.json", "--bootstrap", "100000000"],
        "--bootstrap",
        limits.MAX_BOOTSTRAP,
    ),
    "pingpong-runs": (["pingpong-train", "-o", "t.json", "--runs", "10**9"], "--runs", 10000),
    "pingpong-pairs": (["pingpong-train", "-o", "t.json", "--pairs", "0"], "--pairs", None),
    "sensitivity-runs": (
        ["sensitivity-train", "mix.job", "--job", "milc", "-o", "t.json", "--runs", "0"],
        "--runs",
        None,
    ),
    "study-parallel": (["study", "s.toml", "--parallel", "100000"], "--parallel", 1024),
    "sweep-chunk": (["sweep", "count", "s.txt", "--chunk", "10000000000"], "--chunk", None),
    "counters-top": (["counters", "pts", "c.csv", "--top", "1e9"], "--top", None),
}


@pytest.mark.parametrize("case", sorted(COUNTS))
def test_counts_are_bounded(work, case):
    argv, option, limit = COUNTS[case]
    line = refused(argv, work, f"argument {option}: expected an integer from ")
    assert "(the limit)" in line
    if limit is not None:
        assert f"to {limit} (the limit)" in line


def test_resamples_0_is_refused_before_loading(work):
    line = refused(
        ["significance", "a=missing.json", "b=in.json", "--resamples", "0"], work, "--resamples"
    )
    assert "missing.json" not in line


@pytest.mark.parametrize(
    "argv, text",
    [
        (["report", "--help"], f"at most {limits.MAX_BOOTSTRAP}"),
        (["significance", "--help"], f"1 to {limits.MAX_RESAMPLES}"),
        (["mitigate", "--help"], f"1 to {limits.MAX_REPEAT}"),
        (["pingpong-train", "--help"], f"1 to {limits.MAX_PAIRS}"),
    ],
)
def test_help_names_the_limit(tmp_path, argv, text):
    r = run_limited(argv, tmp_path)
    assert r.returncode == 0 and text in " ".join(r.stdout.split()), r.stdout[-3000:]


def test_bootstrap_memory_is_bounded_by_blocks(monkeypatch):
    """Resamples drawn in blocks (MAX_CELLS) give the interval of one draw."""
    rng = np.random.default_rng(0)
    hist = {"lower": np.arange(1.0, 201.0), "upper": np.arange(2.0, 202.0)}
    iso = dict(hist, count=rng.integers(1, 50, 200))
    con = dict(hist, count=rng.integers(1, 50, 200))
    whole = bootstrap.bootstrap_histogram_impact(iso, con, False, 4000, rng=1)
    monkeypatch.setattr(bootstrap, "MAX_CELLS", 1000)  # blocks of 5 resamples
    assert bootstrap._blocks(4000, 200) == [5] * 800
    parts = bootstrap.bootstrap_histogram_impact(iso, con, False, 4000, rng=1)
    for key in whole:
        assert parts[key] == pytest.approx(whole[key], rel=0.02)
    lo, hi = bootstrap.bootstrap_interval(rng.normal(size=30), n_resamples=4000, rng=2)
    assert lo < 0.5 and hi > -0.5


# ---- input files


BOMB_READERS = {
    "report": ["report", "{f}"],
    "compare": ["compare", "{f}"],
    "html": ["html", "{f}", "-o", "out.html"],
    "plot-hist": ["plot", "hist", "{f}", "-o", "out.png"],
    "model-show": ["model", "show", "{f}"],
    "significance": ["significance", "a={f}", "b=in.json"],
}


@pytest.mark.parametrize("reader", sorted(BOMB_READERS))
def test_decompression_bomb_is_stopped_at_the_limit(work, bomb, reader):
    shutil.copy(bomb, work / "bomb.json.gz")
    argv = [a.format(f="bomb.json.gz") for a in BOMB_READERS[reader]]
    refused(argv, work, "bomb.json.gz: decompresses to more than the 128 MiB limit")


def test_file_larger_than_the_limit_is_not_read(work):
    with open(work / "huge.json", "wb") as fh:  # sparse: no disk, no time
        fh.truncate(limits.MAX_INPUT_BYTES + 1)
    refused(["report", "huge.json"], work, "huge.json: is larger than the 128 MiB limit")
    (work / "huge.toml").symlink_to("huge.json")
    refused(["study", "huge.toml"], work, "huge.toml: is larger than the 128 MiB limit")


DEEP_READERS = {
    "report": ["report", "deep.json"],
    "compare": ["compare", "deep.json"],
    "html": ["html", "deep.json", "-o", "out.html"],
    "plot-hist": ["plot", "hist", "deep.json", "-o", "out.png"],
    "model-show": ["model", "show", "deep.json"],
    "model-fit-latency": ["model", "fit-latency", "deep.json", "-o", "m.json"],
    "mitigate-model": ["mitigate", "mix.job", "--model", "milc=deep.json", "--repeat", "1"],
}


@pytest.mark.parametrize("reader", sorted(DEEP_READERS))
def test_json_nested_1000_deep_is_refused(work, reader):
    line = refused(DEEP_READERS[reader], work, "deep.json: JSON nested more than 64 levels")
    assert "RecursionError" not in line


def test_sweep_collect_refuses_a_deep_results_file(work):
    out = work / "sw"
    out.mkdir()
    (out / "0000.json").write_text(DEEP_JSON)
    # documented: one line per unreadable file, then the count
    r = run_limited(["sweep", "collect", "sw"], work)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    first = r.stderr.splitlines()[0]
    assert "0000.json: corrupt (JSON nested more than 64" in first
    (out / "sweep.json").write_text(DEEP_JSON)
    refused(["sweep", "collect", "sw"], work, "sweep.json: JSON nested more than 64 levels")


def test_toml_nested_100000_deep_is_refused(work):
    (work / "deep.toml").write_text("a = " + "[" * 100000 + "]" * 100000 + "\n")
    refused(["study", "deep.toml"], work, "deep.toml: TOML nested more than 64 levels")


def test_nesting_at_the_limit_is_read(tmp_path):
    ok = "[" * limits.MAX_NESTING + "]" * limits.MAX_NESTING
    assert infile.parse_json(ok, "ok") == json.loads(ok)
    deeper = "[" + ok + "]"
    with pytest.raises(infile.InputError, match="nested more than 64"):
        infile.parse_json(deeper, "deeper")


def test_gzip_reader_reads_members_and_refuses_truncation(tmp_path):
    two = tmp_path / "two.json.gz"
    two.write_bytes(gzip.compress(b'{"a": ') + gzip.compress(b"[1, 2]}"))
    assert infile.load_json(two) == {"a": [1, 2]}
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(b'{"a": [1, 2]}' * 100)[:30])
    with pytest.raises(infile.InputError, match="cut.json.gz: corrupt or truncated gzip"):
        infile.load_json(cut)


def test_symlink_loop_input_is_named(tmp_path):
    os.symlink("b", tmp_path / "a")
    os.symlink("a", tmp_path / "b")
    refused(["report", "a"], tmp_path, "a: symbolic link loop")
    refused(["counters", "pts", "a"], tmp_path, "a: symbolic link loop")
    refused(["study", "a"], tmp_path, "a: symbolic link loop")
    refused(["model", "show", "a"], tmp_path, "a: symbolic link loop")
    with pytest.raises(infile.InputError, match="symbolic link loop"):
        infile.read_text(Path(tmp_path / "a"))
