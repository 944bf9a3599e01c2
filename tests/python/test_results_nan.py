"""Results holding NaN or Infinity are rejected when loaded, naming the key path."""

import gzip
import json
import re
from pathlib import Path

import pytest
from contend.cli import main as analysis_main
from contend.jsonfinite import key_path, non_finite_path
from contend.models.cli import main as model_main

RESULTS = Path(__file__).resolve().parents[1] / "fixtures" / "results"
LOAD = RESULTS / "load_vn1_n10.json.gz"
JOBS = RESULTS / "jobs_both_vn1_n4.json.gz"


def raw(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def poisoned(tmp_path, source, where, token):
    """A copy of ``source`` with the number at ``where`` replaced by ``token``."""
    doc = raw(source)
    node = doc
    for part in where[:-1]:
        node = node[part]
    node[where[-1]] = "@@POISON@@"
    path = tmp_path / f"{source.name.split('.')[0]}-{token.strip('-')}.json"
    path.write_text(json.dumps(doc).replace('"@@POISON@@"', token))
    return path


def load_where():
    doc = raw(LOAD)
    metric = doc["tests"][3]["metric"]
    return ("tests", 3, metric, "mean"), f"tests[3].{metric}.mean"


JOBS_WHERE = ("jobs", 1, "motifs", 0, "results", "concurrent", "slowest_rank_s", 2)
JOBS_PATH = "jobs[1].motifs[0].results.concurrent.slowest_rank_s[2]"


def one_line_error(capsys, prog):
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"{prog}: error: ")
    return lines[0]


@pytest.mark.parametrize(
    "token, word", [("NaN", "NaN"), ("Infinity", "Infinity"), ("-Infinity", "-Infinity")]
)
@pytest.mark.parametrize("command", ["report", "compare", "significance", "plot", "html"])
def test_results_file_with_nan_exit_2(tmp_path, capsys, token, word, command):
    where, shown = load_where()
    bad = poisoned(tmp_path, LOAD, where, token)
    argv = {
        "report": ["report", bad],
        "compare": ["compare", LOAD, bad],
        "significance": ["significance", f"a={LOAD}", f"b={bad}"],
        "plot": ["plot", "hist", bad, "-o", tmp_path / "h.png"],
        "html": ["html", LOAD, bad, "-o", tmp_path / "r.html"],
    }[command]
    assert analysis_main([str(a) for a in argv]) == 2
    line = one_line_error(capsys, f"contend {command}")
    assert f"{bad}: {shown} is {word}" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == [bad.name]


def test_overflowing_number_is_infinity(tmp_path, capsys):
    where, shown = load_where()
    bad = poisoned(tmp_path, LOAD, where, "1e999")  # json turns it into inf
    assert analysis_main(["report", str(bad)]) == 2
    assert f"{shown} is Infinity" in one_line_error(capsys, "contend report")


@pytest.mark.parametrize("command", ["report", "plot", "html"])
def test_jobs_file_with_nan_exit_2(tmp_path, capsys, command):
    bad = poisoned(tmp_path, JOBS, JOBS_WHERE, "NaN")
    argv = {
        "report": ["report", bad],
        "plot": ["plot", "jobs", bad, "-o", tmp_path / "j.png"],
        "html": ["html", bad, "-o", tmp_path / "j.html"],
    }[command]
    assert analysis_main([str(a) for a in argv]) == 2
    assert f"{bad}: {JOBS_PATH} is NaN" in one_line_error(capsys, f"contend {command}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [bad.name]


def test_model_commands_reject_nan(tmp_path, capsys):
    from contend.models.errors import ModelError
    from contend.models.jobruns import load_job_run

    latency = tmp_path / "latency.json"
    latency.write_text('{"schema": "contend-latency-model", "constants": {"a_us": NaN}}')
    argv = ["sensitivity", str(JOBS), str(JOBS), "--latency", str(latency), "--job", "app"]
    assert model_main([*argv, "-o", str(tmp_path / "s.json")]) == 2
    assert f"{latency}: constants.a_us is NaN" in one_line_error(
        capsys, "contend model sensitivity"
    )
    assert model_main(["show", str(latency)]) == 2
    assert f"{latency}: constants.a_us is NaN" in one_line_error(capsys, "contend model show")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latency.json"]
    # the jobs results the sensitivity command reads, through the same reader
    bad = poisoned(tmp_path, JOBS, JOBS_WHERE, "NaN")
    with pytest.raises(ModelError, match=re.escape(f"{bad}: {JOBS_PATH} is NaN")):
        load_job_run(bad, "app")


def test_sweep_collect_reports_nan(tmp_path, capsys):
    where, shown = load_where()
    d = tmp_path / "sweep"
    d.mkdir()
    (d / "0001-a.json").write_bytes(gzip.decompress(LOAD.read_bytes()))
    poisoned(d, LOAD, where, "NaN").rename(d / "0002-b.json")
    assert analysis_main(["sweep", "collect", str(d)]) == 2
    err = capsys.readouterr().err
    assert f"{d / '0002-b.json'}: {shown} is NaN" in err


def test_key_paths():
    assert key_path(["tests", 3, "isolated", "avg_us"]) == "tests[3].isolated.avg_us"
    assert key_path([]) == "(top level)"
    assert key_path([2, "x"]) == "[2].x"
    doc = {"a": [1, 2.5, {"b": None, "c": [0.0, float("nan")]}], "d": float("inf")}
    assert non_finite_path(doc)[0] == "a[2].c[1]"  # the first in document order
    del doc["a"]
    assert non_finite_path(doc) == ("d", float("inf"))
    assert non_finite_path({"ok": [1, 2.0, None, "NaN"]}) is None  # a string is not a number
