"""The executor of the run layer: it runs the command lines of run specs.

Each run is a child process in its own process group (started through
:mod:`contend.runs.children`, so SIGTERM or SIGINT of the harness stops it),
bounded by its spec's timeout (then SIGTERM to the group, ``GRACE_S``,
SIGKILL).  Its exit status maps to the run layer's errors
(:mod:`contend.runs.errors`): 0 done; 2 bad input, a :class:`UsageError`
with the child's first line (its "contend X: error:" prefix cut); any other
status, a signal or the timeout, a :class:`RunError`; a results file that
``read`` refuses, a :class:`RunError` too.  Both are prefixed with the
spec's name ("dcqcn run, seed 3: ...", "... failed: ...").

:meth:`Executor.run_all` runs a plan's specs at most ``parallel`` at once (a
thread pool), in the plan's order, with a progress line on stderr before
each (the spec's ``progress`` and an estimate of the time left) and one
after the last.  By default the first failure starts no further run and is
raised once the running ones have ended; ``keep_going`` records failures in
the outcome instead (``contend sweep run``).  Finished runs are reused by the
plans before they call it: :func:`reusable` (the results file of the same
command line) and :func:`results_ok` (any JSON object) are the two tests.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from .. import infile
from . import children
from .errors import RunError, UsageError
from .spec import RunSpec

GRACE_S = children.GRACE_S  # between SIGTERM and SIGKILL of a run past its timeout
SETUP_TIMEOUT_S = 120.0  # dry runs, topology and cluster queries
_ERROR_PREFIX = re.compile(r"^contend [a-z -]+: error: ")


def log_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# ------------------------------------------------------------------ one process


@dataclass
class Finished:
    """How a child process ended (``out``/``err``: '' when it wrote to a log)."""

    returncode: int
    out: str
    err: str
    wall_s: float
    timed_out: bool


def exit_reason(returncode: int) -> str:
    """'exit status N', or 'killed by signal N' for a negative status."""
    return f"killed by signal {-returncode}" if returncode < 0 else f"exit status {returncode}"


def stop_group(proc: subprocess.Popen, grace: float = GRACE_S) -> None:
    """SIGTERM to the process group, ``grace`` seconds, then SIGKILL."""
    if proc.poll() is None:
        children.signal_group(proc, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            children.signal_group(proc, signal.SIGKILL)


def run_process(cmd, timeout: float | None = None, sink=None, running: set | None = None):
    """Runs ``cmd`` in its own process group until it ends or ``timeout``
    passes; its stdout and stderr go to the open file ``sink`` (both, stdin
    closed) or are captured.  ``running``: a set that holds the process
    meanwhile (for :meth:`Executor.run_all` to stop it).  Returns
    :class:`Finished`."""
    cmd = [str(c) for c in cmd]
    if sink is None:
        kw = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}
    else:
        kw = {"stdin": subprocess.DEVNULL, "stdout": sink, "stderr": subprocess.STDOUT}
    t0 = time.monotonic()
    proc = children.start(cmd, **kw)
    if running is not None:
        running.add(proc)
    timed_out = False
    try:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            stop_group(proc)
            out, err = proc.communicate()
    finally:
        children.finished(proc)
        if running is not None:
            running.discard(proc)
    return Finished(proc.returncode, out or "", err or "", time.monotonic() - t0, timed_out)


def command_words(cmd) -> str:
    """The contend command of a command line, for messages: 'BINARY jobs'
    (after a launcher's words, when the binary follows one)."""
    words = [str(c) for c in cmd]
    for i, word in enumerate(words[:-1]):
        if Path(word).name == "contend":
            return f"{word} {words[i + 1]}"
    return " ".join(words[:2])


def failure(cmd, fin: Finished, timeout: float | None) -> Exception | None:
    """The error of a finished command (None when it succeeded): UsageError
    for exit status 2 (the child's first line), else RunError."""
    words = command_words(cmd)
    verb = words.split()[-1]
    if fin.timed_out:
        return RunError(f"timed out after {timeout:g} s: {words}")
    if fin.returncode == 2:
        lines = fin.err.strip().splitlines()
        return UsageError(_ERROR_PREFIX.sub("", lines[0]) if lines else f"{verb}: bad input")
    if fin.returncode != 0:
        return RunError(f"{verb} failed ({exit_reason(fin.returncode)}): {fin.err.strip()[-800:]}")
    return None


def run_command(cmd, timeout: float | None = SETUP_TIMEOUT_S) -> tuple[str, str]:
    """Runs ``cmd`` (captured) and raises :func:`failure`'s error; returns
    (stdout, stderr)."""
    fin = run_process(cmd, timeout)
    exc = failure(cmd, fin, timeout)
    if exc is not None:
        raise exc
    return fin.out, fin.err


def read_run(path) -> dict:
    """The JSON document a run wrote (contend.infile's limits); RunError naming
    the file when it is unreadable (the run, not the user, wrote it)."""
    return infile.load_json(path, "the results of the run", RunError)


# ------------------------------------------------------------------ reuse


def _without_output(argv) -> list:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("-o", "--output"):
            skip = True
        else:
            out.append(a)
    return out


def reusable(path: Path, argv) -> dict | None:
    """The results a finished run of the same command line left at ``path``
    (its recorded argv equal to ``argv`` after the binary, all but -o), or
    None: then the run is (re)done."""
    if not path.is_file():
        return None
    try:
        doc = infile.load_json(path)
    except ValueError:
        return None
    recorded = doc.get("argv") if isinstance(doc, dict) else None
    if not isinstance(recorded, list) or doc.get("dry_run") or not doc.get("passes"):
        return None
    return doc if _without_output(recorded) == _without_output(argv[1:]) else None


def results_ok(path: Path) -> str:
    """'' when ``path`` holds a JSON object, else why not."""
    if not path.exists():
        return "wrote no results file"
    try:
        doc = infile.load_json(path)
    except ValueError as exc:
        return f"results file unreadable ({exc})"
    return "" if isinstance(doc, dict) else "results file holds no JSON object"


# ------------------------------------------------------------------ a plan's runs


@dataclass
class Done:
    """A run that ended (or was reused): its results document (None when it
    failed or nothing reads it), its wall time, and why it failed ('': it did
    not; only with keep_going)."""

    spec: RunSpec
    doc: dict | None = None
    wall_s: float | None = None
    reused: bool = False
    why: str = ""

    @property
    def ok(self) -> bool:
        return not self.why


def _named(spec: RunSpec, exc: Exception) -> Exception:
    if not spec.name:
        return exc
    if isinstance(exc, UsageError):
        return UsageError(f"{spec.name}: {exc}")
    return RunError(f"{spec.name} failed: {exc}")


class Executor:
    """Runs the specs of a plan (module docstring).  ``log``: where progress
    lines go (stderr); ``quiet``: none."""

    def __init__(self, prog: str, *, parallel: int = 1, quiet: bool = False, log=None):
        self.prog, self.parallel, self.quiet = prog, parallel, quiet
        self.log = log or log_stderr

    def _progress(self, spec: RunSpec, started: float, finished: int, total: int) -> None:
        from ..formatting import format_duration

        left = ""
        if finished:
            rate = (time.monotonic() - started) / finished
            left = f", about {format_duration(rate * (total - finished))} left"
        self.log(f"{self.prog}: {spec.progress}{left}")

    def run_one(self, spec: RunSpec, cmd, read=None) -> Done:
        """One run, here and now (no progress line); raises as run_all does."""
        fin = run_process(cmd, spec.timeout)
        exc = failure(cmd, fin, spec.timeout)
        if exc is not None:
            raise _named(spec, exc)
        try:
            doc = read(spec) if read else None
        except (RunError, OSError, ValueError) as exc:
            raise _named(spec, RunError(str(exc))) from None
        return Done(spec, doc, fin.wall_s)

    def run_all(
        self,
        specs: list,
        command,
        *,
        read=None,
        before=None,
        after=None,
        sink=None,
        keep_going: bool = False,
        reused: int = 0,
    ) -> list:
        """Runs every spec (``command(spec)``: its command line); returns
        their :class:`Done` in the order of ``specs``.  Hooks, each called in
        the run's thread: ``before(spec)`` just before it starts;
        ``sink(spec)``, an open file for its output (else captured);
        ``read(spec)``, its results document after exit status 0 (raising
        ValueError, OSError or RunError when they are not complete);
        ``after(done)``, under the executor's lock, when it ended.
        ``reused``: runs the plan reused, for the closing line."""
        lock, stop = threading.Lock(), threading.Event()
        running: set = set()
        out: list = [None] * len(specs)
        count = [0]
        started = time.monotonic()

        def one(i: int, spec: RunSpec) -> None:
            if stop.is_set():
                return
            if spec.progress and not self.quiet:
                with lock:
                    self._progress(spec, started, count[0], len(specs))
            cmd = command(spec)
            if before:
                before(spec)
            fin = run_process(cmd, spec.timeout, sink(spec) if sink else None, running)
            done = Done(spec, None, fin.wall_s)
            exc = failure(cmd, fin, spec.timeout)
            if exc is None and read:
                try:
                    done.doc = read(spec)
                except (RunError, OSError, ValueError) as err:
                    exc = RunError(str(err))
            if exc is not None:
                if not keep_going:
                    stop.set()
                    raise _named(spec, exc)
                done.why = self._why(fin, spec, exc)
            with lock:
                out[i] = done
                count[0] += 1
                if after:
                    after(done)

        with ThreadPoolExecutor(max_workers=self.parallel) as pool:
            futures = [pool.submit(one, i, spec) for i, spec in enumerate(specs)]
            try:
                wait(futures, return_when=FIRST_EXCEPTION)
            except BaseException:  # a signal: no new run starts (children stops the others)
                stop.set()
                for f in futures:
                    f.cancel()
                raise
            for f in futures:
                f.cancel()
            for f in futures:
                if f.done() and not f.cancelled() and f.exception() is not None:
                    stop.set()
                    if keep_going:  # a failure of the harness itself: the others stop too
                        for proc in list(running):
                            stop_group(proc)
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise f.exception()
        ran = sum(1 for d in out if d is not None)
        if ran and not self.quiet and not keep_going:
            from ..formatting import format_duration

            self.log(
                f"{self.prog}: {ran} run(s) in {format_duration(time.monotonic() - started)}"
                + (f", {reused} reused" if reused else "")
            )
        return out

    @staticmethod
    def _why(fin: Finished, spec: RunSpec, exc: Exception) -> str:
        """A failed run's reason in keep_going's outcome, one phrase."""
        if children.stopping():
            return "interrupted"
        if fin.timed_out:
            return f"timed out after {spec.timeout:g} s (--timeout)"
        if fin.returncode != 0:
            return exit_reason(fin.returncode)
        return str(exc)
