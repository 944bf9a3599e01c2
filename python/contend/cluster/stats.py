"""Counters of the shaped links: one-shot table or time series (CSV).

For every shaped link (see ``topology``) the counters of its root HTB qdisc:
``bytes`` and ``packets`` sent, ``drops`` (tail drops of the bfifo queue),
``overlimits`` (times the rate held a packet back), ``backlog_bytes`` and
``backlog_packets`` (instantaneous queue occupancy). The first four are
cumulative since ``up``.

Time series CSV: columns ``time_s,component,counter,value``; one row per link
and counter per sample; ``time_s`` is seconds since the first sample, whose
wall-clock time is logged on stderr when sampling starts (``time_s 0 =
<UTC time> (unix <seconds>)``), to line the samples up with other records
such as the ``started_utc`` of a results file.
"""

from __future__ import annotations

import contextlib
import csv
import io
import signal
import sys
import time
from typing import Callable, TextIO

from .. import outfile
from .errors import ClusterError, UsageError
from .netns import pid_alive, wait_until
from .shaping import COUNTERS, QdiscReader
from .topology import degraded_note
from .units import format_bytes, format_rate


class LinkSampler:
    """Samples the counters of all shaped links of a cluster description."""

    def __init__(self, desc: dict):
        self.links = desc["links"]
        spaces = []
        for link in self.links:
            if link["namespace"] not in spaces:
                spaces.append(link["namespace"])
        self.readers = {ns: QdiscReader(ns) for ns in spaces}

    def sample(self) -> list[tuple[dict, dict]]:
        """Return ``(link, counters)`` for every link (counters empty if unreadable)."""
        for r in self.readers.values():
            r.request()
        per_ns = {ns: r.read() for ns, r in self.readers.items()}
        return [(link, per_ns[link["namespace"]].get(link["dev"], {})) for link in self.links]

    def close(self) -> None:
        for r in self.readers.values():
            r.close()


def _title(desc: dict, what: str) -> str:
    """Table title: the cluster, ``what`` the counters cover, and its degraded links."""
    note = degraded_note(desc)
    return f"contend cluster '{desc['prefix']}': {what}" + (f"; degraded: {note}" if note else "")


def _missing_note(desc: dict) -> str:
    if desc.get("shaping", "on") == "off":
        return "not shaped: shaping is off, contend cluster shape --on restores it"
    return "no counters: link missing?"


def format_table(
    rows: list[tuple[dict, dict]], title: str = "", missing: str = "no counters: link missing?"
) -> str:
    """Fixed-width table of link counters with units in the headers.

    Links without counters get one line with ``missing`` in parentheses.
    """
    head = (
        f"{'link':<20} {'rate':>10} {'queue':>10} {'sent (MiB)':>12} {'packets':>11} "
        f"{'drops':>9} {'overlimits':>11} {'backlog (B)':>12} {'backlog (pkt)':>13}"
    )
    out = io.StringIO()
    if title:
        out.write(title + "\n")
    out.write(head + "\n" + "-" * len(head) + "\n")
    for link, c in rows:
        if not c:
            out.write(f"{link['component']:<20} ({missing})\n")
            continue
        out.write(
            f"{link['component']:<20} {format_rate(link['rate_bps']):>10} "
            f"{format_bytes(link['queue_bytes']):>10} {c['bytes'] / 2**20:>12.3f} "
            f"{c['packets']:>11d} {c['drops']:>9d} {c['overlimits']:>11d} "
            f"{c['backlog_bytes']:>12d} {c['backlog_packets']:>13d}\n"
        )
    return out.getvalue()


def delta_rows(first: list, last: list) -> list:
    """Counters of ``last`` minus ``first`` for cumulative counters (backlog from ``last``)."""
    out = []
    for (link, a), (_link, b) in zip(first, last):
        if not a or not b:
            out.append((link, b))
            continue
        d = dict(b)
        for key in ("bytes", "packets", "drops", "overlimits"):
            d[key] = b[key] - a[key]
        out.append((link, d))
    return out


def one_shot(desc: dict, out: TextIO = sys.stdout) -> None:
    """Print the counters of every shaped link of ``desc`` once, as a table."""
    sampler = LinkSampler(desc)
    try:
        rows = sampler.sample()
    finally:
        sampler.close()
    out.write(
        format_table(
            rows,
            _title(desc, "counters since up (or since shape --on)"),
            _missing_note(desc),
        )
    )


def time_series(
    desc: dict,
    interval: float,
    *,
    duration: float | None = None,
    until_pid: int | None = None,
    csv_path: str | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> int:
    """Sample every ``interval`` s until ``duration`` elapsed, ``until_pid`` exited or a signal.

    Writes the CSV to ``csv_path`` (through a temporary file, renamed when done)
    or to stdout; then prints a table of the changes over the sampled period
    (to stdout, or stderr when the CSV went to stdout). Returns the sample count.
    """
    if interval <= 0:
        raise UsageError("--sample-interval must be positive")
    if duration is not None and duration <= 0:
        raise UsageError("--duration must be positive")
    if until_pid is not None and not pid_alive(until_pid):
        raise UsageError(f"--until-pid {until_pid}: no such process")
    if csv_path:
        outfile.check_output(csv_path, "--csv file", UsageError)
        out = outfile.open_atomic(csv_path, "w", "--csv file", ClusterError, newline="")
    else:
        out = contextlib.nullcontext(sys.stdout)
    try:
        with out as fh:
            count, first, last, elapsed = _sample_into(fh, desc, interval, duration, until_pid, log)
    except OSError as exc:  # a write of the series failed (disk full): the CSV is not kept
        where = csv_path or "stdout"
        raise ClusterError(f"{where}: cannot write: {exc.strerror or exc}") from None
    summary = format_table(
        delta_rows(first, last),
        _title(desc, f"changes over {elapsed:.2f} s ({count} samples)"),
        _missing_note(desc),
    )
    (sys.stdout if csv_path else sys.stderr).write(summary)
    if csv_path:
        log(f"wrote {csv_path}")
    return count


def _sample_into(fh: TextIO, desc: dict, interval, duration, until_pid, log) -> tuple:
    """Samples into ``fh`` until the end (see time_series); returns (samples,
    first rows, last rows, seconds covered)."""
    stop = {"flag": False}

    def on_signal(_signum, _frame):
        stop["flag"] = True

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    sampler = LinkSampler(desc)
    count = 0
    first = last = None
    elapsed = 0.0
    try:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(["time_s", "component", "counter", "value"])
        start = None  # time_s 0 is the first sample itself
        while True:
            now = time.monotonic()
            if start is None:
                start = next_t = now
                wall = time.time()
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(wall))
                log(
                    f"sampling {len(sampler.links)} links every {interval:g} s; time_s 0 = "
                    f"{stamp}.{int(wall % 1 * 1000):03d}Z (unix {wall:.3f})"
                )
            rows = sampler.sample()
            t = now - start
            for link, c in rows:
                for key in COUNTERS:
                    if key in c:
                        writer.writerow([f"{t:.3f}", link["component"], key, c[key]])
            fh.flush()
            count += 1
            first = first or rows
            last = rows
            elapsed = t
            if stop["flag"]:
                break
            if duration is not None and t >= duration - 1e-9:
                break
            if until_pid is not None and not pid_alive(until_pid):
                break
            next_t += interval
            if duration is not None:
                next_t = min(next_t, start + duration)
            wait_until(next_t, stop, until_pid)
    finally:
        sampler.close()
        for s, h in old.items():
            signal.signal(s, h)
    return count, first, last, elapsed
