"""Reproducer harness of the refusal tests (test_py_outputs.py, test_py_limits.py,
test_py_readers.py): a command run as the user runs it, in a subprocess with
at most 1 GiB of address space and 10 s, must refuse its input with exit
status 2 and one line on stderr, no traceback, its inputs byte-identical and
no file added to or removed from its working directory."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
from pathlib import Path

import pytest
from conftest import BUILD

MEMORY_LIMIT = 1 << 30
TIME_LIMIT_S = 10


def contend_bin() -> Path:
    path = BUILD / "bin" / "contend"
    if not path.exists():
        pytest.fail(f"{path} not built: run `make build` (or set CONTEND_BUILD)")
    return path


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


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


def run_limited(argv, cwd, timeout=TIME_LIMIT_S, env=None):
    """Runs `contend ARGV` in cwd within the memory and time limits; the
    process group is killed on timeout and the test fails."""
    cmd = [str(contend_bin()), *map(str, argv)]
    full_env = dict(os.environ)
    full_env.pop("CONTEND_TRACEBACK", None)
    full_env.update(env or {})
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_memory,  # noqa: PLW1509 - the tests start no threads
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"did not finish in {timeout} s: contend {' '.join(map(str, argv))}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


def refused(argv, cwd, needle: str, status: int = 2, extra_dirs=(), env=None) -> str:
    """Asserts `contend ARGV` (in cwd) refuses with ``status``, one stderr line
    holding ``needle`` and no traceback, leaving cwd (and ``extra_dirs``)
    byte-identical; returns the line."""
    dirs = [Path(cwd), *map(Path, extra_dirs)]
    before = [listing(d) for d in dirs]
    r = run_limited(argv, cwd, env=env)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == status, (argv, r.returncode, r.stderr[-2000:])
    assert "Traceback" not in r.stderr, r.stderr[-2000:]
    assert len(lines) == 1, r.stderr[-2000:]
    assert needle in lines[0], lines[0]
    after = [listing(d) for d in dirs]
    for d, b, a in zip(dirs, before, after):
        assert a.keys() == b.keys(), (d, sorted(set(a) ^ set(b)))
        changed = [k for k in b if a[k] != b[k]]
        assert not changed, (d, changed)
    return lines[0]
