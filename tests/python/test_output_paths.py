"""`-o` of the Python commands (contend.outfile): checked before any work, written
through a unique temporary, nothing left behind on failure."""

import gzip
import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import as_nobody, run_bounded
from contend import outfile
from contend.cli import main as analysis_main
from contend.models.cli import main as model_main
from contend.telemetry.cli import main as counters_main
from contend.training import pingpong as pingpong_train
from contend.training import sensitivity as sensitivity_train

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "fixtures" / "results"
LOAD = RESULTS / "load_vn1_n10.json.gz"
JOBS = RESULTS / "jobs_both_vn1_n4.json.gz"
COUNTERS = ROOT / "tests" / "fixtures" / "telemetry" / "csv" / "common.csv"


def run(main, argv):
    """Exit status of an in-process main (argparse errors raise SystemExit)."""
    try:
        return main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code


def sweep_dir(base: Path) -> Path:
    d = base / "sweep"
    d.mkdir()
    (d / "0001-a.json").write_bytes(gzip.decompress(LOAD.read_bytes()))
    return d


# (program, argv builder: (out, base) -> argv, what the out path is named after)
COMMANDS = {
    "report": (analysis_main, lambda o, b: ["report", LOAD, "-o", o]),
    "report-jobs": (analysis_main, lambda o, b: ["report", JOBS, "-f", "json", "-o", o]),
    "compare": (analysis_main, lambda o, b: ["compare", LOAD, "-o", o]),
    "significance": (
        analysis_main,
        lambda o, b: ["significance", f"a={LOAD}", f"b={LOAD}", "-o", o],
    ),
    "plot-hist": (analysis_main, lambda o, b: ["plot", "hist", LOAD, "-o", o]),
    "plot-jobs": (analysis_main, lambda o, b: ["plot", "jobs", JOBS, "-o", o]),
    "html": (analysis_main, lambda o, b: ["html", LOAD, JOBS, "-o", o]),
    "sweep-collect": (analysis_main, lambda o, b: ["sweep", "collect", sweep_dir(b), "-o", o]),
    "model-fit": (model_main, lambda o, b: ["fit-latency", "train.json", "-o", o]),
    "model-fit-plot": (
        model_main,
        lambda o, b: ["fit-latency", "train.json", "-o", b / "m.json", "--plot", o],
    ),
    "model-sensitivity": (
        model_main,
        lambda o, b: ["sensitivity", JOBS, "--latency", "m.json", "--job", "app", "-o", o],
    ),
    "model-sensitivity-plot": (
        model_main,
        lambda o, b: [
            "sensitivity",
            JOBS,
            "--latency",
            "m.json",
            "--job",
            "app",
            "-o",
            b / "s.json",
            "--plot",
            o,
        ],
    ),
    "counters-sample": (
        counters_main,
        lambda o, b: ["sample", "--source", "cluster", "--count", "1", "-o", o],
    ),
    "counters-replay": (counters_main, lambda o, b: ["replay", COUNTERS, "-o", o]),
    "counters-pts": (counters_main, lambda o, b: ["pts", COUNTERS, "-o", o]),
    "counters-pts-injection": (
        counters_main,
        lambda o, b: ["pts", COUNTERS, "--injection-csv", o],
    ),
    "pingpong-train": (pingpong_train.main, lambda o, b: ["-o", o]),
    "sensitivity-train": (
        sensitivity_train.main,
        lambda o, b: [ROOT / "examples" / "jobs" / "quickstart.job", "--job", "app", "-o", o],
    ),
}
# the output's name where the command checks its extension first
NAMES = {"plot-hist": "fig.png", "plot-jobs": "fig.png", "sweep-collect": "table.csv"}
NAMES.update({k: "fig.png" for k in COMMANDS if k.endswith("-plot")})


def listing(d: Path) -> list:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*"))


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_output_names_a_directory_exits_2_at_once(tmp_path, capsys, command):
    main, argv = COMMANDS[command]
    base = tmp_path / "work"
    base.mkdir()
    out = base / NAMES.get(command, "out.json")
    out.mkdir()  # -o names an existing directory
    args = argv(out, base)
    before = listing(base)
    assert run(main, args) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert f"{out}: is a directory" in lines[0], lines[0]
    assert ".tmp" not in lines[0]
    assert listing(base) == before  # no temporary, no output, nothing else


@pytest.mark.parametrize("command", ["report", "plot-jobs", "html", "counters-replay"])
def test_missing_output_directory_is_named(tmp_path, capsys, command):
    main, argv = COMMANDS[command]
    missing = tmp_path / "no" / "such"
    out = missing / NAMES.get(command, "out.json")
    assert run(main, argv(out, tmp_path)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{out}:" in err and f"directory {missing} does not" in err
    assert listing(tmp_path) == []


@pytest.mark.parametrize("command", ["report-jobs", "plot-jobs", "html", "counters-replay"])
def test_written_whole_with_plain_permissions(tmp_path, capsys, command):
    main, argv = COMMANDS[command]
    out = tmp_path / NAMES.get(command, "out.json")
    old = os.umask(0o022)
    try:
        assert run(main, argv(out, tmp_path)) == 0
    finally:
        os.umask(old)
    capsys.readouterr()
    assert listing(tmp_path) == [out.name]  # no temporary left beside it
    assert stat.S_IMODE(out.stat().st_mode) == 0o644  # not mkstemp's 0600
    assert out.stat().st_size > 100


def test_failed_write_leaves_target_and_no_temporary(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("old\n")

    def fail(fh):
        fh.write("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        outfile.write_with(target, fail)
    assert target.read_text() == "old\n"
    assert listing(tmp_path) == ["keep.txt"]


def test_failed_rename_names_the_target(tmp_path, monkeypatch):
    target = tmp_path / "t.json"

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", dst)

    monkeypatch.setattr(outfile.os, "replace", refuse)
    with pytest.raises(outfile.OutputError) as exc:
        outfile.write_text(target, "{}\n")
    assert str(exc.value) == f"{target}: cannot write: Permission denied"
    assert listing(tmp_path) == []


def test_unique_temporaries(tmp_path):
    """Two writers of one file at once get different temporaries."""
    target = tmp_path / "r.json"
    with outfile.open_atomic(target) as a, outfile.open_atomic(target) as b:
        temps = listing(tmp_path)
        assert len(temps) == 2 and all(t.startswith(".r.json.") for t in temps)
        a.write("a")
        b.write("b")
    assert target.read_text() in ("a", "b") and listing(tmp_path) == ["r.json"]


def test_output_dash_is_stdout(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert analysis_main(["report", str(JOBS), "-f", "json", "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["command"] == "jobs"
    assert listing(tmp_path) == []


def test_output_below_unreachable_directory_exits_2():
    """An output whose directory the user may not enter (a root-only directory,
    seen as user nobody): one line naming it, exit 2, nothing written."""
    prefix = as_nobody()
    if prefix is None:
        pytest.skip("root, and cannot run Python as user nobody (setpriv) to drop the privilege")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        locked = work / "locked"
        (locked / "w").mkdir(parents=True)
        locked.chmod(0o700)
        src = work / "in.json.gz"
        shutil.copy(RESULTS / "network_vn1_n4.json.gz", src)
        src.chmod(0o644)
        cmd = [sys.executable, "-m", "contend", "report", src, "-o", locked / "w" / "x.csv"]
        r = run_bounded([*prefix, *cmd], timeout=60)
        assert r.returncode == 2, (r.returncode, r.stderr)
        assert r.stderr.count("\n") == 1 and "Permission denied" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        assert sorted(p.name for p in (locked / "w").iterdir()) == []
