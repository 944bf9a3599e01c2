"""Bad input the Python readers used to accept (exit 0) or report vaguely:
an unknown --canaries name, an LDMS file of text, negative raw counters, a
jobs results file with an impossible time, an unknown --tcp-cc, a short row
of the common CSV, a counter file sampled at one time, a 1 MB name echoed
whole; and the top-level guard (one line for an unexpected exception, the
traceback on request, KeyboardInterrupt untouched)."""

from __future__ import annotations

import gzip
import json
import shutil

import pytest
from conftest import ROOT
from contend import guard
from contend.cluster import netns
from contend.cluster.errors import UsageError as ClusterUsageError
from contend.formatting import format_number
from refusal import refused, run_limited

RESULTS = ROOT / "tests" / "fixtures" / "results"
TELEMETRY = ROOT / "tests" / "fixtures" / "telemetry"
COMMON = (TELEMETRY / "csv" / "common.csv").read_text()
HEADER = COMMON.splitlines()[0]


@pytest.fixture
def work(tmp_path):
    (tmp_path / "in.json").write_bytes(
        gzip.decompress((RESULTS / "load_vn1_n10.json.gz").read_bytes())
    )
    return tmp_path


def test_unknown_canary_is_refused_with_the_known_ones(work):
    line = refused(["compare", "in.json", "--canaries", "bogus"], work, "unknown canary 'bogus'")
    assert "rr_lat" in line
    refused(
        ["plot", "impact", "in.json", "--canaries", "rr_lat,bogus", "-o", "f.png"],
        work,
        "--canaries: unknown canary 'bogus'",
    )


def test_ldms_file_of_text_values_is_refused(tmp_path):
    header = (TELEMETRY / "ldms" / "ibmad.csv").read_text().splitlines()[0]
    fields = len(header.split(","))
    row = "1700000000.0001,100,node01," + ",".join(["junk"] * (fields - 3))
    (tmp_path / "l.csv").write_text(f"{header}\n{row}\n{row}\n")
    refused(["counters", "replay", "l.csv", "-o", "o.csv"], tmp_path, "l.csv:2: no metric column")


def test_negative_raw_counter_is_refused(tmp_path):
    rows = COMMON.splitlines()
    first = rows[1].split(",")
    first[4] = "-5"
    (tmp_path / "c.csv").write_text("\n".join([HEADER, ",".join(first), *rows[2:]]) + "\n")
    refused(["counters", "pts", "c.csv"], tmp_path, "c.csv:2: field 'value' is negative")


def test_short_row_of_the_common_csv_names_its_fields(tmp_path):
    rows = COMMON.splitlines()
    (tmp_path / "c.csv").write_text("\n".join([*rows[:3], "1.0,host1:mlx5_0,1", *rows[3:]]) + "\n")
    refused(["counters", "pts", "c.csv"], tmp_path, "c.csv:4: 3 fields, expected 6 (time_s,")


def test_counters_sampled_at_one_time_say_so(tmp_path):
    rows = [r for r in COMMON.splitlines()[1:] if "port_xmit_wait" in r][:3]
    rows = [",".join(["1"] + r.split(",")[1:]) for r in rows]
    (tmp_path / "c.csv").write_text("\n".join([HEADER, *rows]) + "\n")
    r = run_limited(["counters", "pts", "c.csv"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "every counter is sampled at one time only (time_s 1)" in r.stderr
    assert "no stall counter found" not in r.stderr


def test_impossible_job_time_is_refused(work):
    doc = json.loads(gzip.decompress((RESULTS / "jobs_both_vn1_n4.json.gz").read_bytes()))
    doc["jobs"][0]["results"]["isolated"]["slowest_rank_s"][0] = -1e308
    (work / "j.json").write_text(json.dumps(doc))
    refused(
        ["report", "j.json"],
        work,
        "j.json: jobs[0].results.isolated.slowest_rank_s[0] is -1e+308 s",
    )
    assert format_number(-1e308) == "-1e+308"
    assert format_number(123456789012.0) == "1.235e+11"


def test_unknown_tcp_congestion_control_is_refused(tmp_path, monkeypatch):
    if netns.tcp_cc_choices() is None:
        pytest.skip("the kernel lists no TCP congestion control here")
    line = refused(
        ["cluster", "up", "--nodes", "2", "--leaves", "1", "--tcp-cc", "bogus", "--prefix", "zz"],
        tmp_path,
        "--tcp-cc 'bogus': not a TCP congestion control of this kernel (available: ",
    )
    assert "reno" in line and "modprobe" in line
    avail = tmp_path / "avail"
    avail.write_text("reno cubic\n")
    monkeypatch.setattr(netns, "AVAILABLE_CC", str(avail))
    netns.check_tcp_cc("cubic")
    with pytest.raises(ClusterUsageError, match="available: reno cubic"):
        netns.check_tcp_cc("bbr")


def test_long_study_name_is_cut_in_the_message(tmp_path):
    (tmp_path / "s.toml").write_text(f'name = "{"x" * 1_000_000}"\nrepetitions = 1\n')
    line = refused(["study", "s.toml"], tmp_path, "job names are 1-64 letters")
    assert "...(1000002 characters)" in line and len(line) < 400


def test_long_schema_value_is_cut_in_the_message(work):
    doc = json.loads((work / "in.json").read_text())
    doc["tests"][0]["name"] = "y" * 1_000_000
    doc["tests"][0]["metric"] = "z" * 1_000_000
    (work / "big.json").write_text(json.dumps(doc))
    line = refused(["report", "big.json"], work, "big.json: invalid field tests[0]")
    assert "characters)" in line and len(line) < 1000


def test_guard_turns_an_unexpected_exception_into_one_line(capsys, monkeypatch):
    monkeypatch.delenv(guard.TRACEBACK_ENV, raising=False)

    @guard.guarded("contend x")
    def broken():
        raise KeyError("fields")

    assert broken() == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("contend x: error: unexpected KeyError: 'fields' (a defect of contend")

    @guard.guarded("contend x")
    def deep():
        raise RecursionError("maximum recursion depth exceeded")

    assert deep() == 2
    assert "input nested too deeply" in capsys.readouterr().err

    monkeypatch.setenv(guard.TRACEBACK_ENV, "1")
    with pytest.raises(KeyError):
        broken()

    @guard.guarded("contend x")
    def interrupted():
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()


def test_every_console_entry_point_is_guarded():
    """Each console script's function is wrapped by guard.guarded."""
    import importlib

    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    for name, target in scripts.items():
        module, func = target.split(":")
        mod = importlib.import_module(module)
        main = mod.main if module == "contend.cli" else getattr(mod, func)  # cli: entries call main
        assert hasattr(main, "__wrapped__"), name


def test_valid_files_still_read(work):
    """The limits are not in the way of correct files."""
    shutil.copy(work / "in.json", work / "again.json")
    r = run_limited(["compare", "in.json", "again.json"], work)
    assert r.returncode == 0 and "rr_lat" in r.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["mitigate", "mix.job", "--modes", "m" * 100_000],
        ["pingpong-train", "-o", "t.json", "--pair-list", "p" * 100_000],
        ["significance", "a=in.json", "b=in.json", "--alpha", "a" * 100_000],
    ],
    ids=["mitigate-modes", "pingpong-pair-list", "significance-alpha"],
)
def test_long_option_value_is_cut_in_the_message(work, argv):
    (work / "mix.job").write_text("[JOB_NAME] a\n[PLACEMENT] linear nodes=2\n[MOTIF] barrier\n")
    line = refused(argv, work, "...(10000")
    assert "characters)" in line
    assert len(line) < 400
