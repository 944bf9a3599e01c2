"""Format A, the common counter CSV ("counter samples"): frame, reading, writing.

Header exactly ``time_s,component,port,counter,value,unit``.  One row is one
counter of one port read at one time: ``time_s`` in seconds (Unix epoch for
live sources, seconds since the run's start for the simulator and the
emulated cluster), ``component`` the device/switch/node/link, ``port`` text
(may be empty), ``counter`` the source's own counter name, ``value`` the raw
value as read (cumulative counters stay cumulative), ``unit`` one word (ns,
ticks, bytes, octets4, packets, flits, cycles, count, bytes_gauge ...).

In memory the frame has exactly these six columns: ``time_s`` and ``value``
float64 (integers above 2**53 lose their lowest bits), the four text columns
pandas categories.  Rows are sorted by (component, port, counter, time_s).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..outfile import write_with
from .csvread import read_table
from .errors import TelemetryError, at

COLUMNS = ("time_s", "component", "port", "counter", "value", "unit")
HEADER = ",".join(COLUMNS)
TEXT_COLUMNS = ("component", "port", "counter", "unit")
UNIT_RE = re.compile(r"[a-z][a-z0-9_]*")


def make_frame(time_s, component, port, counter, value, unit) -> pd.DataFrame:
    """A format-A frame from six equal-length arrays (or scalars for the text columns)."""
    n = len(time_s)

    def text(x):
        if isinstance(x, str):
            return pd.Categorical([x] * n) if n else pd.Categorical([], categories=[x])
        return pd.Categorical(np.asarray(x, dtype=object).astype(str))

    frame = pd.DataFrame(
        {
            "time_s": np.asarray(time_s, dtype=float),
            "component": text(component),
            "port": text(port),
            "counter": text(counter),
            "value": np.asarray(value, dtype=float),
            "unit": text(unit),
        }
    )
    return sort_frame(frame)


def empty_frame() -> pd.DataFrame:
    return make_frame([], [], [], [], [], [])


def sort_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as categories; rows in (component, port, counter, time_s) order."""
    for c in TEXT_COLUMNS:
        if not isinstance(frame[c].dtype, pd.CategoricalDtype):
            frame[c] = frame[c].astype(str).astype("category")
    keys = ["component", "port", "counter", "time_s"]
    return frame.sort_values(keys, kind="stable").reset_index(drop=True)


def check_frame(frame, what: str = "counter samples") -> pd.DataFrame:
    """TelemetryError unless ``frame`` is a format-A frame (columns, finite numbers)."""
    if not isinstance(frame, pd.DataFrame):
        raise TelemetryError(f"{what}: expected a pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise TelemetryError(
            f"{what}: missing column(s) {', '.join(missing)} (format A has {HEADER}; "
            "read files with contend.telemetry.read_counters)"
        )
    for c in ("time_s", "value"):
        v = pd.to_numeric(frame[c], errors="coerce").to_numpy(dtype=float)
        if len(v) and not np.isfinite(v).all():
            raise TelemetryError(f"{what}: column {c} holds a missing or non-finite number")
    return frame


def read_common(path) -> pd.DataFrame:
    """Read a format-A file; TelemetryError ``file:line: what`` on malformed input."""
    path = Path(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = fh.readline().rstrip("\r\n")
    if first != HEADER:
        raise at(path, 1, f"header is {first[:80]!r}, expected {HEADER!r} (format A)")
    table = read_table(path, COLUMNS, TEXT_COLUMNS, ("time_s", "value"), first_line=2)
    frame = table.frame
    for c in ("component", "counter", "unit"):
        table.fail(
            frame[c].astype(object).to_numpy() == "",
            f"field '{c}' is empty (a line needs 6 fields: {HEADER})",
        )
    table.fail(
        frame["value"].to_numpy() < 0,
        "field 'value' is negative: a raw counter counts up from 0 (format A holds the "
        "value as read, not a difference)",
    )
    units = frame["unit"].cat.categories
    bad = [u for u in units if not UNIT_RE.fullmatch(str(u))]
    if bad:
        table.fail(frame["unit"].isin(bad).to_numpy(), f"unit {bad[0]!r} is not one word")
    frame = frame.reset_index(drop=True)
    frame["port"] = frame["port"].astype(str).astype("category")
    return sort_frame(frame)


def write_counters(frame: pd.DataFrame, path) -> Path:
    """Write ``frame`` as format A to ``path`` through a temporary file (renamed when done)."""
    check_frame(frame)
    path = Path(path)
    out = pd.DataFrame({c: frame[c] for c in COLUMNS})
    value = out["value"].to_numpy(dtype=float)
    if len(value) and np.all(value == np.round(value)) and np.all(np.abs(value) < 2.0**63):
        out["value"] = value.astype(np.int64)
    write_atomic(path, lambda fh: out.to_csv(fh, index=False, lineterminator="\n"))
    return path


def write_atomic(path, write) -> None:
    """Call ``write(fh)`` on a unique temporary file beside ``path``, then rename it
    into place (contend.outfile); nothing is left behind on failure."""
    write_with(path, write, "w", "CSV", TelemetryError, newline="")
