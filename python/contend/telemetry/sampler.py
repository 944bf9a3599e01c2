"""The live sampling loop: read a source every interval into the common CSV.

Rows go to a unique temporary file beside the output (contend.outfile), flushed after every round, and
the file is renamed into place when sampling ends: after ``count`` rounds, once
``duration`` seconds have passed, when process ``until_pid`` is gone, or on
SIGINT/SIGTERM (which end the loop cleanly with what was sampled).  Rounds are
scheduled on the monotonic clock at multiples of the interval from the first;
a round that overruns skips the missed ticks instead of bunching up.
"""

from __future__ import annotations

import csv
import signal
import sys
import time
from pathlib import Path

from ..cluster.netns import pid_alive, wait_until
from ..outfile import open_atomic
from .errors import TelemetryError
from .samples import COLUMNS


def _value_text(value) -> str:
    if isinstance(value, int):
        return str(value)
    f = float(value)
    return str(int(f)) if f.is_integer() and abs(f) < 2**63 else repr(f)


def run(
    reader,
    interval_s: float,
    out_path,
    *,
    count: int | None = None,
    duration: float | None = None,
    until_pid: int | None = None,
    log=lambda msg: print(msg, file=sys.stderr, flush=True),
) -> tuple:
    """Sample ``reader.sample()`` every ``interval_s`` into ``out_path``.

    Returns (rounds, rows) written.  ``reader.close()`` is called if present.
    """
    out_path = Path(out_path)
    stop = {"flag": False}

    def on_signal(_signum, _frame):
        stop["flag"] = True

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    rounds = rows = 0
    try:
        with open_atomic(out_path, "w", "counter CSV", TelemetryError, newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(COLUMNS)
            start = time.monotonic()
            tick = 0
            final = False
            while not stop["flag"]:
                for t, comp, port, counter, value, unit in reader.sample():
                    writer.writerow([f"{t:.6f}", comp, port, counter, _value_text(value), unit])
                    rows += 1
                fh.flush()
                rounds += 1
                if count is not None and rounds >= count:
                    break
                if final or (until_pid is not None and not pid_alive(until_pid)):
                    break
                elapsed = time.monotonic() - start
                if duration is not None and elapsed >= duration - 1e-9:
                    break
                tick = max(tick + 1, int(elapsed / interval_s) + 1)
                next_t = start + tick * interval_s
                if duration is not None:
                    next_t = min(next_t, start + duration)
                if wait_until(next_t, stop, until_pid):
                    final = True  # one last round: the counters up to its end
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        if hasattr(reader, "close"):
            reader.close()
    log(f"contend counters: {rounds} samples, {rows} rows -> {out_path}")
    return rounds, rows
