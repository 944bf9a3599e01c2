"""The inputs the fuzzers found (tests/fuzz/HARNESS/), through the command a
user would run: each finishes in bounded time with exit status 0 or 2,
never a crash or a hang, and a refusal is one message on stderr (no
traceback, no half-written output).  The harnesses themselves replay the
same files under ctest (fuzz_replay_*), see docs/fuzzing.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import BUILD, ROOT

REGRESSIONS = ROOT / "tests" / "fuzz"
CONTEND = BUILD / "bin" / "contend"


def run_bounded(cmd, timeout, cwd=None):
    """Runs cmd (no MPI: one process) with a time bound; output decoded
    leniently, since a message may quote the input's bytes."""
    proc = subprocess.run(
        [str(c) for c in cmd], capture_output=True, timeout=timeout, cwd=cwd, check=False
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def _inputs(harness):
    d = REGRESSIONS / harness
    return sorted(p for p in d.iterdir() if p.is_file()) if d.is_dir() else []


def _check_refusal(proc, out: Path | None = None):
    assert proc.returncode in (0, 2), (proc.returncode, proc.stderr[-2000:])
    if proc.returncode == 2:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert lines and "error" in lines[0], proc.stderr
        assert not any("Sanitizer" in ln or "Traceback" in ln for ln in lines)
        if out is not None:
            assert not out.exists(), "a refused input left an output file"


def test_every_harness_directory_has_a_harness():
    # counters: the library's readers turn a bad source off with a warning,
    # no command refuses them; their inputs replay under ctest only
    known = set(RUNNERS) | {"counters"}
    for d in REGRESSIONS.iterdir():
        assert d.name in known, f"tests/fuzz/{d.name}: no harness of that name"


def _run_topology_conf(path, tmp_path):
    conf = tmp_path / "topology.conf"
    conf.write_bytes(path.read_bytes())
    out = tmp_path / "paths.json"
    proc = run_bounded(
        [
            CONTEND,
            "topology",
            "paths",
            "--topology",
            f"slurm:{conf}",
            "--pairs",
            "0:1",
            "-o",
            out,
            "-q",
        ],
        timeout=60,
    )
    _check_refusal(proc, out)


def _run_topology(path, tmp_path):
    spec = path.read_bytes().decode("utf-8", "surrogateescape")
    out = tmp_path / "paths.json"
    proc = run_bounded(
        [CONTEND, "topology", "paths", "--topology", spec, "--pairs", "0:1", "-o", out, "-q"],
        timeout=60,
    )
    _check_refusal(proc, out)


def _run_jobfile(path, tmp_path):
    lines = path.read_bytes().split(b"\n")
    defines = []
    while len(lines) > 1 and lines[0].startswith(b"-D"):
        defines.append(lines.pop(0).decode("utf-8", "surrogateescape"))
    job = tmp_path / "fuzz.job"
    job.write_bytes(b"\n".join(lines))
    out = tmp_path / "jobs.json"
    proc = run_bounded(
        [CONTEND, "jobs", job, *defines, "--dry-run", "--nodes", "64", "-o", out], timeout=120
    )
    _check_refusal(proc, out)


def _run_options(path, tmp_path):
    # option inputs are refused (a valid one would start a measurement)
    args = path.read_bytes().decode("utf-8", "surrogateescape").split("\n")
    proc = run_bounded([CONTEND, *args], timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    _check_refusal(proc)


RUNNERS = {
    "topology_conf": _run_topology_conf,
    "topology": _run_topology,
    "jobfile": _run_jobfile,
    "options": _run_options,
}


@pytest.mark.parametrize("harness", sorted(RUNNERS))
def test_regressions_through_the_command(harness, tmp_path):
    """Every stored input of the harness; a harness with a runner here has
    inputs (a missing or empty directory fails: the case would test nothing)."""
    inputs = _inputs(harness)
    assert inputs, f"{REGRESSIONS / harness}: no stored regression inputs"
    for i, path in enumerate(inputs):
        case = tmp_path / f"case{i}"
        case.mkdir()
        RUNNERS[harness](path, case)
