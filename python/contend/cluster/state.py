"""State directory of a cluster: description, Slurm topology, hostfile, launch agent.

The state of cluster ``PREFIX`` lives in ``$CONTEND_CLUSTER_DIR/PREFIX/``
(default base ``/run/contend-cluster``). Files:

``cluster.json``   the description (``topology.describe``) plus ``status``
                   (``creating`` while ``up`` runs, ``up`` when complete)
``topology.conf``  Slurm tree topology (leaf switches and the spine)
``hostfile``       Open MPI hostfile, one slot per node
``rsh-agent``      launch agent used by ``run`` (hostname -> namespace)
``pids``           PIDs started by ``run``/``exec`` (one per line; informative)
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
from collections.abc import Iterator

from .. import infile
from .errors import UsageError
from .topology import DEFAULT_PREFIX

DEFAULT_BASE = "/run/contend-cluster"
STATE_FILES = ("cluster.json", "topology.conf", "hostfile", "rsh-agent", "pids")


def default_prefix() -> str:
    """The cluster a command means without ``--prefix``: ``$CONTEND_CLUSTER_PREFIX``, else
    ``ct``."""
    return os.environ.get("CONTEND_CLUSTER_PREFIX") or DEFAULT_PREFIX


def base_dir() -> str:
    """Base of all state directories (``CONTEND_CLUSTER_DIR`` or ``/run/contend-cluster``)."""
    return os.environ.get("CONTEND_CLUSTER_DIR") or DEFAULT_BASE


def state_dir(prefix: str) -> str:
    """State directory of cluster ``prefix``."""
    return os.path.join(base_dir(), prefix)


def write_atomic(path: str, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    d = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=d)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def locked(prefix: str) -> Iterator[None]:
    """Hold an exclusive lock for changes to cluster ``prefix`` (``up``/``down``).

    The lock is taken on the base directory itself (no lock file is left behind),
    so changes to all clusters of this machine are serialised; they are short.
    """
    base = base_dir()
    try:
        os.makedirs(base, exist_ok=True)
        fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise UsageError(f"cannot use state directory {base}: {exc.strerror}") from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def load(prefix: str, *, required: bool = True) -> dict | None:
    """Return the description of cluster ``prefix``; ``UsageError`` if absent and ``required``."""
    path = os.path.join(state_dir(prefix), "cluster.json")
    if not os.path.lexists(path):
        if not required:
            return None
        raise UsageError(
            f"no emulated cluster '{prefix}' is up ({path} not found); "
            f"start one with: contend cluster up --nodes N --leaves L --prefix {prefix}"
        )
    try:
        desc = infile.load_json(path, "a cluster description (cluster.json)", UsageError)
        if not isinstance(desc, dict):
            raise UsageError(f"{path}: not a cluster description (a JSON object)")
    except UsageError as exc:
        if not required:
            return None
        raise UsageError(f"cannot read the cluster's state: {exc}") from None
    if required and desc.get("status") != "up":
        raise UsageError(
            f"cluster '{prefix}' is incomplete (status {desc.get('status')!r}); "
            f"remove it with: contend cluster down --prefix {prefix}"
        )
    return desc


def save(prefix: str, desc: dict) -> None:
    write_atomic(os.path.join(state_dir(prefix), "cluster.json"), json.dumps(desc, indent=2) + "\n")


def record_pid(prefix: str, pid: int) -> None:
    """Append ``pid`` to the ``pids`` file of cluster ``prefix`` (best effort)."""
    with contextlib.suppress(OSError), open(os.path.join(state_dir(prefix), "pids"), "a") as fh:
        fh.write(f"{pid}\n")


def remove(prefix: str) -> None:
    """Remove the state directory of ``prefix``: only the files this package writes."""
    d = state_dir(prefix)
    if not os.path.isdir(d):
        return
    for name in os.listdir(d):
        if name in STATE_FILES or name.startswith((".tmp-", "run-")):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(d, name))
    with contextlib.suppress(OSError):
        os.rmdir(d)
