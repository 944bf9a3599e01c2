"""Reproducer runs of the C commands, bounded: a wall-clock timeout (the
process group is killed and the test fails), an address-space limit, and
the checks every refused run must pass (exit 2, one line naming the
problem, no traceback, inputs unchanged, nothing new in the directory)."""

import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import BUILD, mpi_env

GIB = 1 << 30


def contend() -> Path:
    path = BUILD / "bin" / "contend"
    if not path.exists():
        pytest.fail(f"{path} not built (set CONTEND_BUILD)")
    return path


def run(args, cwd=None, timeout=10, memory=GIB, env=None):
    """contend ARGS (or a full command when args[0] is a path) in its own
    process group, at most `timeout` s and `memory` bytes of address space
    (None: no limit, for MPI launchers).  Returns a CompletedProcess."""
    cmd = [str(a) for a in args]
    if not os.path.isabs(cmd[0]):
        cmd = [str(contend()), *cmd]
    prlimit = shutil.which("prlimit")
    if memory and prlimit:  # util-linux; without it the run is only timed
        cmd = [prlimit, f"--as={memory}", "--", *cmd]
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env or mpi_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"did not end within {timeout} s: {' '.join(cmd)}\n{err[-2000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def snapshot(directory: Path) -> dict:
    """Every file under directory with its bytes (symbolic links by target)."""
    out = {}
    for p in sorted(directory.rglob("*")):
        if p.is_symlink():
            out[p] = ("link", os.readlink(p))
        elif p.is_file():
            out[p] = p.read_bytes()
        else:
            out[p] = "dir" if p.is_dir() else "other"
    return out


def problem_lines(stderr: str) -> list:
    """The lines of a refusal that state a problem (not the --help hint)."""
    return [x for x in stderr.splitlines() if x.strip() and not x.startswith("Try '")]


def assert_refused(r, *words, before=None, directory=None):
    """Exit 2, one line naming the problem (with every word), no traceback;
    with before (a snapshot of directory), the directory unchanged."""
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = problem_lines(r.stderr)
    assert len(lines) == 1, r.stderr
    assert "Traceback" not in r.stderr and "error:" in lines[0], r.stderr
    for w in words:
        assert str(w) in lines[0], (w, lines[0])
    if before is not None:
        assert snapshot(directory) == before, "files changed or left behind"
    return lines[0]
