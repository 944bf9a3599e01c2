"""Child processes of the harnesses (study, mitigate, sweep, the training
commands): started in their own process group, stopped with their parent.
The executor (:mod:`contend.runs.executor`) starts every run through here.

Every child is started by :func:`start`, in a new session (its own process
group, so a launcher's ranks or a simulator's threads are reached as one),
and registered until :func:`finished`.  :func:`forward_signals` is the
context a harness runs in: on SIGTERM or SIGINT (scancel, kill, Ctrl-C) it
sends the signal to every registered group, waits up to ``GRACE_S`` for
them, kills what is left (SIGKILL), refuses to start any new child, and
then raises :class:`Interrupted` in the main thread.  So no child outlives
its harness.  Contract: ``forward_signals`` is entered from the main thread
only; :func:`start` and :func:`finished` may be called from any thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from contextlib import contextmanager

GRACE_S = 1.0  # between the forwarded signal and SIGKILL

_lock = threading.RLock()  # re-entrant: the handler may interrupt start() holding it
_running: set = set()
_stopping = threading.Event()


class Interrupted(Exception):
    """The harness got SIGTERM or SIGINT; its children are gone."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


def interrupt_status(exc: BaseException) -> int:
    """Exit status after Interrupted (128 + its signal) or KeyboardInterrupt (130)."""
    return exc.exit_status if isinstance(exc, Interrupted) else 128 + signal.SIGINT


def start(cmd, **popen_kw) -> subprocess.Popen:
    """Popen(cmd) in its own process group, registered for stop_all; raises
    Interrupted once the harness is stopping (no child starts after that)."""
    with _lock:
        if _stopping.is_set():
            raise Interrupted(signal.SIGTERM)
        proc = subprocess.Popen([str(c) for c in cmd], start_new_session=True, **popen_kw)
        _running.add(proc)
    return proc


def stopping() -> bool:
    """Whether the harness is stopping (a signal came): a child that ends now was stopped."""
    return _stopping.is_set()


def finished(proc: subprocess.Popen) -> None:
    """Unregister a child that has been waited for."""
    with _lock:
        _running.discard(proc)


def signal_group(proc, signum) -> None:
    """Send signum to the process group of proc (gone already: nothing)."""
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def stop_all(signum: int = signal.SIGTERM, grace: float = GRACE_S) -> None:
    """Signal every running child's group, wait up to ``grace`` s, then SIGKILL
    the groups still there and reap them.  Later start() calls raise."""
    with _lock:
        _stopping.set()
        procs = list(_running)
    for proc in procs:
        signal_group(proc, signum)
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for proc in procs:
        signal_group(proc, signal.SIGKILL)  # the group: a launcher's orphans too
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - unkillable (D state)
            pass
        finished(proc)


@contextmanager
def forward_signals(signals=(signal.SIGTERM, signal.SIGINT)):
    """Within the block, SIGTERM/SIGINT stop every child (stop_all) and then
    raise Interrupted in the main thread; old handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, _frame):
        stop_all(signum)
        raise Interrupted(signum)

    old = {s: signal.signal(s, on_signal) for s in signals}
    _stopping.clear()
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
