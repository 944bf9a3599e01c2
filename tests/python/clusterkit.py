"""What the tests that run MPI on an emulated cluster share: whether this
machine can, the environment of `contend cluster`, the CLI, and a tapered
cluster that is always removed (and checked gone) afterwards."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("CONTEND_BUILD", REPO / "build"))
CONTEND = BUILD / "bin" / "contend"

# 12 nodes on 3 leaves: 100 Mbit/s node links, 8:1 taper (50 Mbit/s leaf
# uplinks), 512 KiB drop-tail queues
NODES, LEAVES = 12, 3
UP_ARGS = ["--node-rate", "100mbit", "--taper", "8:1", "--queue", "512kb"]


def skip_reason(*needed: Path) -> str:
    """Empty if this machine can run MPI on an emulated cluster, else why not."""
    if sys.platform != "linux":
        return "needs Linux network namespaces"
    if os.geteuid() != 0:
        return "needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN) to create network namespaces"
    for tool in ("ip", "tc", "unshare"):
        if shutil.which(tool) is None:
            return f"'{tool}' not found (Debian packages iproute2, util-linux)"
    if not (shutil.which("mpirun.openmpi") or shutil.which("mpirun")):
        return "Open MPI's mpirun not found (Debian package openmpi-bin)"
    proc = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return f"'ip netns' unavailable: {proc.stderr.strip()}"
    missing = [str(p) for p in (CONTEND, *needed) if not p.exists()]
    if missing:
        return f"{', '.join(missing)} not built (make build, or set CONTEND_BUILD)"
    return ""


def cluster_env(state_dir: Path, drop_prefixes=()) -> dict:
    """Environment for the CLI: the package on PYTHONPATH, a private state
    directory, no inherited cluster settings (nor variables starting with any
    of drop_prefixes), Open MPI allowed to run as root."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO / "python") + os.pathsep + e.get("PYTHONPATH", "")
    e["CONTEND_CLUSTER_DIR"] = str(state_dir)
    e.pop("CONTEND_CLUSTER_PREFIX", None)
    e.pop("CONTEND_CLUSTER_INJECT_FAULT", None)
    for key in [k for k in e if drop_prefixes and k.startswith(tuple(drop_prefixes))]:
        e.pop(key)
    e.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return e


def cli_argv(*args) -> list:
    return [sys.executable, "-m", "contend.cluster.cli", *map(str, args)]


def cli(env, *args, timeout=60, check=None) -> subprocess.CompletedProcess:
    """Run ``contend cluster ARGS``; ``check`` is the expected exit status, if any."""
    proc = subprocess.run(
        cli_argv(*args), env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if check is not None:
        assert proc.returncode == check, f"{args}: rc {proc.returncode}\n{proc.stderr}"
    return proc


def namespaces(prefix: str) -> set:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    names = {line.split()[0] for line in out.stdout.splitlines() if line.strip()}
    return {n for n in names if n.startswith(prefix + "-")}


@contextlib.contextmanager
def tapered_cluster(env, prefix: str):
    """The 12-node tapered cluster as (prefix, description); always removed."""
    try:
        cli(env, "up", "--prefix", prefix, "--nodes", NODES, "--leaves", LEAVES, *UP_ARGS, check=0)
        desc = json.loads(cli(env, "show", "--prefix", prefix, "--json", check=0).stdout)
        yield prefix, desc
    finally:
        cli(env, "down", "--prefix", prefix, timeout=120)
        assert not namespaces(prefix), f"namespaces of {prefix} left behind"


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the process group of ``proc`` (a session we started), then reap it."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()
