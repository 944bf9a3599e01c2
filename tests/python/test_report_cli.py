"""The command line: formats, console scripts, `python -m contend.report`, bad inputs."""

import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from contend.cli import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "results"
LOAD = FIXTURES / "load_vn1_n10.json.gz"
SINGLE = FIXTURES / "single"


def raw(path):
    return json.loads(gzip.decompress(path.read_bytes()))


def run(*argv, **kw):
    return subprocess.run(
        list(argv), check=False, capture_output=True, text=True, timeout=120, **kw
    )


def bad_files(tmp_path):
    """name -> (path, expected message fragment) for each kind of bad input."""
    doc = raw(LOAD)
    text = json.dumps(doc)
    out = {"missing": (tmp_path / "missing.json", "no such file")}
    trunc = tmp_path / "truncated.json"
    trunc.write_text(text[: len(text) * 2 // 3])
    out["truncated"] = (trunc, "not valid JSON (truncated or corrupt?)")
    v2 = copy.deepcopy(doc)
    v2["schema_version"] = "2.0"
    (tmp_path / "v2.json").write_text(json.dumps(v2))
    out["version"] = (tmp_path / "v2.json", "'schema_version' is '2.0'")
    empty = copy.deepcopy(doc)
    test = empty["tests"][1]
    summary = test[test["metric"]]
    for key in summary:
        summary[key] = 0 if key == "count" else None
    test["histogram"].update(lower=[], upper=[], count=[])
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    out["empty"] = (tmp_path / "empty.json", "empty samples")
    return out


@pytest.mark.parametrize("kind", ["missing", "truncated", "version", "empty"])
@pytest.mark.parametrize("command", ["report", "compare", "html", "plot"])
def test_bad_input_exit_2_in_process(tmp_path, capsys, kind, command):
    path, fragment = bad_files(tmp_path)[kind]
    argv = {
        "report": ["report", str(path)],
        "compare": ["compare", str(LOAD), str(path)],
        "html": ["html", str(path), "-o", str(tmp_path / "r.html")],
        "plot": ["plot", "hist", str(path), "-o", str(tmp_path / "h.png")],
    }[command]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"contend {command}: error: {path}")
    assert fragment in lines[0]
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "h.png").exists()


@pytest.mark.parametrize("kind", ["missing", "truncated", "version", "empty"])
def test_bad_input_subprocess_no_traceback(tmp_path, kind):
    path, fragment = bad_files(tmp_path)[kind]
    proc = run(sys.executable, "-m", "contend.report", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1 and fragment in proc.stderr


def test_usage_errors_exit_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", str(LOAD), "--format", "xml"])
    assert exc.value.code == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err
    assert main(["compare"]) == 2
    assert "give results files" in capsys.readouterr().err
    assert main(["significance", "a=" + str(LOAD)]) == 2
    assert "control group and at least one condition" in capsys.readouterr().err
    assert main(["significance", "nolabel"]) == 2
    assert "LABEL=FILE" in capsys.readouterr().err
    assert main(["plot", "hist", str(LOAD), "-o", str(tmp_path / "x.jpg")]) == 2
    assert "use a .png, .svg or .pdf" in capsys.readouterr().err
    assert main(["plot", "jobs", "-o", str(tmp_path / "j.png")]) == 2
    assert "results files of `contend jobs`" in capsys.readouterr().err
    assert main(["plot", "jobs", str(LOAD), "-o", str(tmp_path / "j.png")]) == 2
    assert "expected a results file written by `contend jobs" in capsys.readouterr().err
    missing_dir = tmp_path / "no" / "dir"
    assert main(["report", str(LOAD), "-o", str(missing_dir / "r.txt")]) == 2
    assert f"output directory {missing_dir} does not exist" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_python_m_contend_report():
    proc = run(sys.executable, "-m", "contend.report", str(LOAD), "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert "| rr_lat | usec |" in proc.stdout
    proc = run(
        sys.executable,
        "-m",
        "contend",
        "compare",
        str(LOAD),
        "--published",
        "--figure11",
        "--format",
        "csv",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1 + 3 + 7 * 3


def test_console_scripts_installed():
    bindir = Path(sys.executable).parent
    for name in ("report", "compare", "significance", "plot", "html"):
        script = bindir / f"contend-{name}"
        if not script.exists():
            pytest.skip(f"{script} missing: install with pip install -e . (console scripts)")
    proc = run(str(bindir / "contend-report"), str(LOAD), "-f", "csv")
    assert proc.returncode == 0 and proc.stdout.startswith("name,label,metric,units")
    proc = run(str(bindir / "contend-compare"), "--help")
    assert proc.returncode == 0 and "usage: contend compare" in proc.stdout


def test_c_binary_dispatches_to_contend_report():
    build = Path(os.environ.get("CONTEND_BUILD", ROOT / "build"))
    binary = build / "bin" / "contend"
    if not binary.exists():
        pytest.skip(f"{binary} not built")
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    if (
        not shutil.which("contend-report", path=env["PATH"])
        and not (binary.parent / "contend-report").exists()
    ):
        pytest.skip("contend-report not on PATH")
    proc = run(str(binary), "report", str(LOAD), "--format", "csv", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1].startswith("rr_lat,")


def test_report_output_file_and_bootstrap(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert (
        main(
            ["report", str(LOAD), "-f", "csv", "--bootstrap", "200", "--seed", "4", "-o", str(out)]
        )
        == 0
    )
    first = out.read_text()
    assert "ci_mean_lo" in first.splitlines()[0]
    assert (
        main(
            ["report", str(LOAD), "-f", "csv", "--bootstrap", "200", "--seed", "4", "-o", str(out)]
        )
        == 0
    )
    assert out.read_text() == first  # seeded: identical


def test_report_congestor_only_and_network(capsys):
    assert main(["report", str(FIXTURES / "congestor_only_vn1_n8.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "No canary tests" in out and "rma_get_bcast" in out
    assert main(["report", str(FIXTURES / "network_vn1_n4.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "isolated only" in out and "Congested avg" not in out and "alltoall" in out


def test_significance_cli(capsys):
    ctl = f"a2a={SINGLE}/pairwise_a2a_s*.json.gz"
    cond = f"put={SINGLE}/rma_put_incast_s*.json.gz"
    assert main(["significance", ctl, cond, "--resamples", "500", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "Control: a2a" in out and "Welch" in out and "* p < 0.05, ** p < 0.01" in out
    assert main(["significance", ctl, cond, "--resamples", "500", "-f", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == 12 and {r["n_control"] for r in rows} == {3}
    assert all(r["marker"] in ("", "*", "**") for r in rows)
