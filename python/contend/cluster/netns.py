"""Thin wrappers around ``ip`` and ``tc`` (iproute2) and namespace processes.

Every command that changes the system goes through ``run_cmd`` so that a
failure becomes a ``ClusterError`` naming the command and its message. Nothing
here touches the host's own interfaces: links are created directly inside the
cluster's namespaces (``ip -n NS``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..limits import clip_repr
from .errors import ClusterError, UsageError

CAP_NET_ADMIN = 12
CAP_SYS_ADMIN = 21


def _effective_caps() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("CapEff:"):
                    return int(line.split()[1], 16)
    except OSError:
        pass
    return 0


def require_privileges() -> None:
    """Raise ``UsageError`` unless we can create network namespaces and shape links."""
    caps = _effective_caps()
    if os.geteuid() == 0 or (caps >> CAP_NET_ADMIN & 1 and caps >> CAP_SYS_ADMIN & 1):
        return
    raise UsageError(
        "the emulated cluster needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create "
        "network namespaces and shape links. Without root, emulate nodes with the plain "
        "binary instead: mpirun -np 8 contend --virtual-nodes 2 ..."
    )


def require_tools(names: Iterable[str] = ("ip", "tc")) -> None:
    """Raise ``UsageError`` if a needed program is not on ``PATH``."""
    missing = [n for n in names if shutil.which(n) is None]
    if missing:
        raise UsageError(
            f"missing program(s) {', '.join(missing)}: install the Debian package "
            "iproute2 (ip, tc) and util-linux (unshare)"
        )


def run_cmd(
    argv: Sequence[str], *, input: str | None = None, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess:
    """Run ``argv`` capturing output; raise ``ClusterError`` if it fails and ``check``."""
    try:
        proc = subprocess.run(
            list(argv), check=False, input=input, capture_output=True, text=True, timeout=timeout
        )
    except FileNotFoundError as exc:
        raise ClusterError(f"cannot run {argv[0]}: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(f"timed out after {timeout:g} s: {' '.join(argv)}") from exc
    if check and proc.returncode != 0:
        msg = (proc.stderr or proc.stdout).strip()
        detail = f"\n{input.strip()}" if input else ""
        raise ClusterError(f"command failed ({proc.returncode}): {' '.join(argv)}: {msg}{detail}")
    return proc


def ip_batch(namespace: str | None, lines: Sequence[str]) -> None:
    """Run ``ip`` commands (without the leading ``ip``) in ``namespace`` in one process."""
    if not lines:
        return
    argv = ["ip"] + (["-n", namespace] if namespace else []) + ["-batch", "-"]
    run_cmd(argv, input="\n".join(lines) + "\n")


def tc_batch(namespace: str, lines: Sequence[str]) -> None:
    """Run ``tc`` commands (without the leading ``tc``) in ``namespace`` in one process."""
    if not lines:
        return
    run_cmd(["tc", "-n", namespace, "-batch", "-"], input="\n".join(lines) + "\n")


def list_namespaces() -> list[str]:
    """Names of the named network namespaces (``ip netns list``)."""
    proc = run_cmd(["ip", "netns", "list"])
    return [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def add_namespace(name: str) -> None:
    run_cmd(["ip", "netns", "add", name])


def delete_namespace(name: str) -> None:
    run_cmd(["ip", "netns", "delete", name], check=False)


def namespace_pids(name: str) -> list[int]:
    """PIDs of the processes whose network namespace is ``name`` (``ip netns pids``)."""
    proc = run_cmd(["ip", "netns", "pids", name], check=False)
    if proc.returncode != 0:
        return []
    return [int(tok) for tok in proc.stdout.split() if tok.isdigit()]


def ns_exec_argv(namespace: str, hostname: str | None, argv: Sequence[str]) -> list[str]:
    """Argv running ``argv`` in ``namespace``, in a fresh UTS namespace named ``hostname``.

    The chain execs (``ip netns exec`` -> ``unshare`` -> ``sh`` -> program) so the
    returned process keeps one PID from start to finish.
    """
    base = ["ip", "netns", "exec", namespace]
    if not hostname:
        return base + list(argv)
    return (
        base
        + [
            "unshare",
            "--uts",
            "sh",
            "-c",
            'hostname "$0" || exit 126; exec "$@"',
            hostname,
        ]
        + list(argv)
    )


def set_sysctl(namespace: str, key: str, value: str) -> bool:
    """Write ``/proc/sys/<key>`` inside ``namespace``; return False if it failed."""
    path = "/proc/sys/" + key.replace(".", "/")
    proc = run_cmd(
        ["ip", "netns", "exec", namespace, "sh", "-c", f'echo "$1" > {path}', "sh", value],
        check=False,
    )
    return proc.returncode == 0


AVAILABLE_CC = "/proc/sys/net/ipv4/tcp_available_congestion_control"


def tcp_cc_choices() -> tuple[list, list] | None:
    """(available, loadable) TCP congestion controls of this kernel: the ones
    registered now, and the tcp_NAME modules the kernel loads when the sysctl
    names them; None when the kernel does not say (no /proc)."""
    try:
        with open(AVAILABLE_CC) as fh:
            available = fh.read().split()
    except OSError:
        return None
    base = Path("/lib/modules") / os.uname().release / "kernel" / "net" / "ipv4"
    loadable = sorted(
        {p.name.split(".")[0][len("tcp_") :] for p in base.glob("tcp_*.ko*")} - set(available)
    )
    return available, loadable


def check_tcp_cc(name: str) -> None:
    """UsageError unless ``name`` is a TCP congestion control this kernel has
    or can load (checked before the cluster is made)."""
    choices = tcp_cc_choices()
    if choices is None:
        return
    available, loadable = choices
    if name in available or name in loadable:
        return
    more = f"; loadable modules: {' '.join(loadable)}" if loadable else ""
    raise UsageError(
        f"--tcp-cc {clip_repr(name)}: not a TCP congestion control of this kernel (available: "
        f"{' '.join(available) or 'none'}{more}; another one needs its module: modprobe "
        "tcp_NAME)"
    )


def wait_until(deadline: float, stop: dict, until_pid=None) -> bool:
    """Sleeps until time.monotonic() reaches deadline, in steps of at most
    0.1 s, or until stop["flag"] is set or process until_pid ends.
    Returns True if until_pid ended."""
    while not stop["flag"]:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        time.sleep(min(left, 0.1))
        if until_pid is not None and not pid_alive(until_pid):
            return True
    return False


def pid_alive(pid: int) -> bool:
    """Whether process pid exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie is not alive for our purposes
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def terminate_namespace_processes(namespaces: Sequence[str], grace: float = 3.0) -> int:
    """Stop every process inside ``namespaces``: SIGTERM, then SIGKILL after ``grace`` s.

    Only processes found with ``ip netns pids`` in these namespaces are signalled
    (never by name). Returns how many distinct processes were signalled.
    """
    me = os.getpid()
    signalled: set[int] = set()

    def collect() -> list[int]:
        pids = []
        for ns in namespaces:
            pids.extend(p for p in namespace_pids(ns) if p != me)
        return sorted(set(pids))

    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 2.0), (signal.SIGKILL, 2.0)):
        pids = [p for p in collect() if pid_alive(p)]
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, sig)
                signalled.add(pid)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and any(pid_alive(p) for p in pids):
            time.sleep(0.05)
    return len(signalled)


def check_usable() -> None:
    """Raise ``UsageError`` if ``ip netns`` cannot be used (tools or privileges)."""
    require_tools(("ip", "tc", "unshare"))
    require_privileges()
