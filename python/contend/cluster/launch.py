"""Running programs on the emulated cluster: ``exec`` on one node, ``run`` with mpirun.

``run`` starts Open MPI's ``mpirun`` inside the namespace of the first node
(with that node's hostname), because mpirun's out-of-band channel must reach
the daemons over the emulated network and the host namespace is left without
any interface in it. mpirun starts one ``orted`` per other node through the
cluster's launch agent (``rsh-agent`` in the state directory), which enters
the node's namespace and sets its hostname; MPI traffic is TCP restricted to
the cluster subnet, so every byte between nodes crosses the shaped links.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence

from . import netns, state
from .errors import ClusterError, UsageError
from .topology import find_node, hostfile


def _exit_status(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _wait_forwarding(proc: subprocess.Popen) -> int:
    """Wait for ``proc``; SIGINT reaches it through the terminal, SIGTERM/SIGHUP are forwarded."""

    def forward(signum, _frame):
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass

    old = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                return _exit_status(proc.wait())
            except KeyboardInterrupt:
                # the child got the same SIGINT from the terminal; let it wind down
                continue
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def exec_on_node(desc: dict, node_ref: str, argv: Sequence[str]) -> int:
    """Replace this process by ``argv`` running on node ``node_ref`` (namespace, hostname).

    ``node_ref`` may be ``sw`` for the switch namespace (hostname ``<prefix>sw``).
    Does not return on success: the exit status is the command's.
    """
    if not argv:
        raise UsageError("nothing to run: give a command after --")
    if node_ref in ("sw", "switch", desc["switch_namespace"]):
        ns, host = desc["switch_namespace"], f"{desc['prefix']}sw"
    else:
        node = find_node(desc, node_ref)
        ns, host = node["namespace"], node["hostname"]
    full = netns.ns_exec_argv(ns, host, argv)
    state.record_pid(desc["prefix"], os.getpid())
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp(full[0], full)  # the command keeps this PID (recorded above)
    except OSError as exc:
        raise ClusterError(f"cannot run {full[0]}: {exc}") from exc
    return 127  # not reached


def _mca_keys(opts: Sequence[str]) -> set:
    keys = set()
    for i, tok in enumerate(opts):
        if tok in ("--mca", "-mca", "--gmca", "-gmca") and i + 1 < len(opts):
            keys.add(opts[i + 1])
    return keys


def mpirun_argv(
    desc: dict,
    hostfile_path: str,
    np: int,
    user_opts: Sequence[str],
    program: Sequence[str],
    mpirun: str = "mpirun",
) -> list[str]:
    """The mpirun command line for ``program`` on cluster ``desc`` (without namespace entry).

    Defaults that the user overrides with ``--mca KEY VALUE`` (or ``OMPI_MCA_KEY``
    in the environment) are left out.
    """
    agent = os.path.join(state.state_dir(desc["prefix"]), "rsh-agent")
    subnet = desc["subnet"]
    defaults = [
        ("plm_rsh_agent", agent),
        ("plm_rsh_no_tree_spawn", "1"),
        ("pml", "ob1"),
        ("btl", "tcp,self"),
        ("btl_tcp_if_include", subnet),
        ("oob_tcp_if_include", subnet),
        ("osc", "^ucx"),
        ("mpi_yield_when_idle", "1"),
    ]
    given = _mca_keys(user_opts)
    argv = [mpirun, "--hostfile", hostfile_path, "--np", str(np), "--oversubscribe"]
    if "--bind-to" not in user_opts and "-bind-to" not in user_opts:
        # every "node" sees the same cores: binding would pile ranks on core 0
        argv += ["--bind-to", "none"]
    for key, value in defaults:
        if key in given or f"OMPI_MCA_{key}" in os.environ:
            continue
        argv += ["--mca", key, value]
    return argv + list(user_opts) + list(program)


def find_mpirun(name: str | None = None) -> str:
    """Path of Open MPI's mpirun: ``name`` if given, else ``mpirun.openmpi`` or ``mpirun``.

    ``mpirun.openmpi`` comes first because on Debian ``mpirun`` may be MPICH's
    when both are installed; ``run`` needs Open MPI's options.
    """
    for cand in [name] if name else ["mpirun.openmpi", "mpirun"]:
        exe = cand if os.sep in cand else shutil.which(cand)
        if exe and os.access(exe, os.X_OK):
            return exe
    raise UsageError(f"{name or 'mpirun'} not found: install Open MPI (Debian: openmpi-bin)")


def placement(desc: dict, np: int | None, ppn: int | None) -> tuple[int, int]:
    """Return (np, slots per node) for the request; ``UsageError`` if it does not fit."""
    nodes = len(desc["nodes"])
    if np is not None and np < 1:
        raise UsageError(f"--np must be at least 1 (got {np})")
    if ppn is not None and ppn < 1:
        raise UsageError(f"--ppn must be at least 1 (got {ppn})")
    if np is None:
        ppn = ppn or 1
        return nodes * ppn, ppn
    if ppn is None:
        ppn = max(1, math.ceil(np / nodes))
    if np > nodes * ppn:
        raise UsageError(f"--np {np} does not fit on {nodes} nodes with --ppn {ppn}")
    return np, ppn


def run_mpi(
    desc: dict,
    program: Sequence[str],
    *,
    np: int | None = None,
    ppn: int | None = None,
    mpirun_opts: Sequence[str] = (),
    mpirun: str | None = None,
    dry_run: bool = False,
) -> int:
    """Run ``program`` with mpirun across the cluster; return its exit status.

    Ranks are placed by slot: ``ppn`` consecutive ranks per node, nodes in order.
    """
    if not program:
        raise UsageError(
            "nothing to run: give the program after --, e.g. contend cluster run --np 4 -- ./a.out"
        )
    np, ppn = placement(desc, np, ppn)
    exe = find_mpirun(mpirun)
    sdir = state.state_dir(desc["prefix"])
    hf = os.path.join(sdir, f"run-{os.getpid()}.hostfile")
    argv = mpirun_argv(desc, hf, np, mpirun_opts, program, mpirun=exe)
    head = desc["nodes"][0]
    full = netns.ns_exec_argv(head["namespace"], head["hostname"], argv)
    if dry_run:
        print(shlex.join(full))
        return 0
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    state.write_atomic(hf, hostfile(desc, ppn))
    try:
        try:
            proc = subprocess.Popen(full, env=env)
        except OSError as exc:
            raise ClusterError(f"cannot start mpirun: {exc}") from exc
        state.record_pid(desc["prefix"], proc.pid)
        return _wait_forwarding(proc)
    finally:
        try:
            os.unlink(hf)
        except OSError:
            pass
