"""Reproducer harness of the refusal tests (test_c_*.py, test_py_*.py,
test_reproducers.py, test_throttle_sources.py): a command run as the user
runs it, in its own process group with at most 1 GiB of address space and
10 s of CPU time (a bound on the work that holds on a loaded host; 60 s of
wall time catch a hang), must refuse its input with exit status 2 and one
line on stderr (naming the problem), no traceback, its inputs byte-identical
and no file added to or removed from its working directory."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import BUILD, mpi_env, run_bounded

MEMORY_LIMIT = 1 << 30
CPU_LIMIT_S = 10
TIME_LIMIT_S = 60


def contend_bin() -> Path:
    path = BUILD / "bin" / "contend"
    if not path.exists():
        pytest.fail(f"{path} not built: run `make build` (or set CONTEND_BUILD)")
    return path


def listing(d: Path) -> dict:
    """Every path under d (relative) with its bytes (a regular file), its
    target (a symbolic link) or its kind (a directory, pipe, device)."""
    out = {}
    for p in sorted(Path(d).rglob("*")):
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            value = ("link", os.readlink(p))
        elif stat.S_ISREG(st.st_mode):
            value = p.read_bytes()
        else:
            value = ("kind", stat.S_IFMT(st.st_mode))
        out[str(p.relative_to(d))] = value
    return out


def run(argv, cwd=None, timeout=TIME_LIMIT_S, memory=MEMORY_LIMIT, env=None):
    """`contend ARGV` (or ARGV itself when its first word is an absolute path)
    in cwd, within ``timeout`` s of wall time, CPU_LIMIT_S of CPU time and
    ``memory`` bytes of address space (None: no memory limit, for MPI
    launchers); the process group is killed and the test fails on timeout.  ``env`` replaces the environment (default: this one,
    with Open MPI allowed as root and without CONTEND_TRACEBACK)."""
    cmd = [str(a) for a in argv]
    if not os.path.isabs(cmd[0]):
        cmd = [str(contend_bin()), *cmd]
    if env is None:
        env = mpi_env()
        env.pop("CONTEND_TRACEBACK", None)
    return run_bounded(cmd, timeout=timeout, cwd=cwd, env=env, memory=memory, cpu_s=CPU_LIMIT_S)


def run_limited(argv, cwd, timeout=TIME_LIMIT_S, env=None):
    """`contend ARGV` in cwd within the memory and time limits."""
    return run(argv, cwd, timeout=timeout, env=env)


def assert_refused(r: subprocess.CompletedProcess, *words, status=2, dirs=None, before=None):
    """Exit ``status``, one stderr line holding every word, no traceback; with
    ``dirs`` and ``before`` (their listings taken before the run), every
    directory unchanged.  Returns the line."""
    lines = r.stderr.strip().splitlines()
    assert r.returncode == status, (r.args, r.returncode, r.stderr[-2000:])  # -24: SIGXCPU
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert len(lines) == 1, r.stderr[-2000:]
    for w in words:
        assert str(w) in lines[0], (w, lines[0])
    for d, b in zip(dirs or (), before or ()):
        a = listing(d)
        assert a.keys() == b.keys(), (d, sorted(set(a) ^ set(b)))
        changed = [k for k in b if a[k] != b[k]]
        assert not changed, (d, changed)
    return lines[0]


def refused(argv, cwd, needle: str, status: int = 2, extra_dirs=(), env=None) -> str:
    """Asserts `contend ARGV` (in cwd) refuses with ``status``, one stderr line
    holding ``needle`` and no traceback, leaving cwd (and ``extra_dirs``)
    byte-identical; returns the line."""
    dirs = [Path(cwd), *map(Path, extra_dirs)]
    before = [listing(d) for d in dirs]
    return assert_refused(run(argv, cwd, env=env), needle, status=status, dirs=dirs, before=before)
