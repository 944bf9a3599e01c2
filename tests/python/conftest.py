"""Shared fixtures: the built binaries and a bounded mpirun helper.

MPI runs use Open MPI (mpirun.openmpi when present) oversubscribed on this
host with virtual nodes; every run has a timeout and is killed as a process
group (only processes these tests started)."""

import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CONTEND_BUILD", ROOT / "build"))
SCHEMAS = ROOT / "schemas"


def mpirun_path() -> str:
    """Open MPI's mpirun (the tests' launcher); the test is skipped without one."""
    for name in ("mpirun.openmpi", "mpirun"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no mpirun on PATH")


def mpi_env() -> dict:
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def _limits(memory, cpu_s):
    if not memory and not cpu_s:
        return None

    def limit():
        if memory:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if cpu_s:  # SIGXCPU at the limit: a load-independent bound on the work done
            resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))

    return limit


def run_bounded(cmd, timeout=120, cwd=None, env=None, memory=None, cpu_s=None):
    """Runs cmd in its own process group; on timeout kills that group and
    fails the test.  With memory (bytes) and cpu_s (seconds), each process's
    address space and CPU time are limited to them (a process over its CPU
    time is killed by SIGXCPU).  Returns a CompletedProcess (text output)."""
    proc = subprocess.Popen(
        [str(c) for c in cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        env=env or mpi_env(),
        start_new_session=True,
        preexec_fn=_limits(memory, cpu_s),  # noqa: PLW1509
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"timed out after {timeout} s: {' '.join(map(str, cmd))}\n{err[-2000:]}")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def otf2_built() -> bool:
    """Whether build/bin/contend reads and records OTF2 traces (`contend version`)."""
    r = subprocess.run(
        [BUILD / "bin" / "contend", "version"], check=False, capture_output=True, text=True
    )
    return any(line.split()[:2] == ["otf2", "yes:"] for line in r.stdout.splitlines())


@pytest.fixture(scope="session")
def contend_bin() -> Path:
    path = BUILD / "bin" / "contend"
    if not path.exists():
        pytest.fail(f"{path} not built: run `make build` (or set CONTEND_BUILD)")
    return path


@pytest.fixture(scope="session")
def mpirun():
    """mpirun(n, *contend_args, timeout=...) runs build/bin/contend on n ranks."""
    launcher = mpirun_path()
    binary = BUILD / "bin" / "contend"

    def run(n, *args, timeout=180, cwd=None):
        cmd = [launcher, "-n", str(n), "--oversubscribe", binary, *args]
        return run_bounded(cmd, timeout=timeout, cwd=cwd)

    return run


@pytest.fixture(scope="session")
def results_schema() -> dict:
    return json.loads((SCHEMAS / "contend-results.schema.json").read_text())


@pytest.fixture(scope="session")
def plan_schema() -> dict:
    return json.loads((SCHEMAS / "contend-plan.schema.json").read_text())


def as_nobody():
    """The command prefix that runs a program as user nobody (root reads
    files without read permission), or None when this is not possible."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    try:
        r = subprocess.run(
            [*prefix, sys.executable, "-c", "import contend"], check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return prefix if r.returncode == 0 else None


def mount_small_tmpfs(path: Path) -> None:
    """Makes path and mounts a 64 KiB tmpfs on it (the caller unmounts it);
    skips the test where mount is not permitted."""
    path.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")


def fill_fs(path: Path) -> None:
    """Leaves no free block on the file system of directory path."""
    fd = os.open(path / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
