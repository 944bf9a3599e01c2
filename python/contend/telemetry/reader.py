"""``read_counters``: any supported counter file (or sysfs-like tree) as format A.

Sources (``source=``): ``csv`` (format A itself), ``sim`` (the simulator's
counter CSV), ``cluster`` (``contend cluster stats --csv``), ``ldms`` (LDMS
store_csv), ``ib-snapshot`` (InfiniBand sysfs counters: a text snapshot, or
a directory laid out like /sys/class/infiniband), ``cxi`` (HPE cxi telemetry:
a text snapshot or a directory laid out like /sys/class/cxi); ``auto`` tells
them apart by the first lines (or the directory layout).
"""

from __future__ import annotations

import stat
from pathlib import Path

import pandas as pd

from .. import infile
from ..limits import MAX_CSV_BYTES
from .errors import TelemetryError, at
from .samples import HEADER as COMMON_HEADER
from .samples import read_common
from .sources import cluster, cxi, ib_sysfs, ldms, sim

SOURCES = ("auto", "csv", "sim", "cluster", "ldms", "ib-snapshot", "cxi")
# keyword parameters each source accepts
PARAMS = {
    "csv": (),
    "sim": ("keep_vcs",),
    "cluster": (),
    "ldms": (),
    "ib-snapshot": ("host", "time_s"),
    "cxi": ("host",),
}


def _first_lines(path: Path, n: int = 8) -> list:
    lines = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for _ in range(n):
            line = fh.readline()
            if not line:
                break
            lines.append(line.rstrip("\r\n"))
    return lines


def detect_source(path) -> str:
    """The source name of ``path`` (a file or a directory), or TelemetryError."""
    path = Path(path)
    if path.is_dir():
        if any(path.glob("*/ports/*/counters")):
            return "ib-snapshot"
        if any(path.glob("*/device/telemetry")):
            return "cxi"
        raise TelemetryError(
            f"{path}: a directory, but neither an InfiniBand sysfs tree (<dev>/ports/<n>/"
            "counters) nor a cxi one (<dev>/device/telemetry)"
        )
    lines = _first_lines(path)
    first = lines[0] if lines else ""
    if first == COMMON_HEADER:
        return "csv"
    if sim.sniff(first):
        return "sim"
    if cluster.sniff(first):
        return "cluster"
    if ldms.sniff(first) or any(h.is_file() for h in ldms.header_candidates(path)):
        return "ldms"
    if ib_sysfs.sniff(lines):
        return "ib-snapshot"
    if cxi.sniff(lines):
        return "cxi"
    raise at(
        path,
        1,
        f"cannot tell the counter format from {first[:60]!r}; give the source "
        f"({', '.join(SOURCES[1:])})",
    )


def check_input(path, source: str = "auto") -> Path:
    """TelemetryError unless ``path`` can be read as ``source`` (before any parsing)."""
    if source not in SOURCES:
        raise TelemetryError(f"unknown source {source!r} (one of {', '.join(SOURCES)})")
    path = Path(path)
    st = infile.stat_input(path, None, TelemetryError, directory_ok=True)
    if stat.S_ISDIR(st.st_mode):
        if source not in ("auto", "ib-snapshot", "cxi"):
            raise TelemetryError(f"{path}: is a directory (only ib-snapshot and cxi read trees)")
    else:
        infile.check_size(path, MAX_CSV_BYTES, None, TelemetryError)
        try:
            with open(path, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            raise TelemetryError(f"{path}: cannot read: {exc.strerror}") from None
    return path


def input_files(path, source: str = "auto") -> list:
    """The files reading ``path`` as ``source`` opens: itself, and an LDMS
    header beside it (for the output rule: no output may be one of them)."""
    path = Path(path)
    out = [path]
    if source in ("auto", "ldms") and not path.is_dir():
        out += [h for h in ldms.header_candidates(path) if h.is_file()]
    return out


def read_counters(path, source: str = "auto", **params) -> pd.DataFrame:
    """Read ``path`` as counter samples: DataFrame[time_s, component, port, counter, value, unit].

    ``source`` is one of SOURCES; ``params`` are passed to that source
    (sim: keep_vcs; ib-snapshot: host, time_s for a tree; cxi: host).
    Malformed input raises TelemetryError (a ValueError) ``file:line: what``.
    """
    path = check_input(path, source)
    if source == "auto":
        source = detect_source(path)
    unknown = sorted(set(params) - set(PARAMS[source]))
    if unknown:
        raise TelemetryError(
            f"source {source}: unknown parameter(s) {', '.join(unknown)} "
            f"(accepts: {', '.join(PARAMS[source]) or 'none'})"
        )
    if source == "csv":
        return read_common(path)
    if source == "sim":
        return sim.read(path, **params)
    if source == "cluster":
        return cluster.read(path)
    if source == "ldms":
        return ldms.read(path)
    if source == "ib-snapshot":
        if path.is_dir():
            return ib_sysfs.read_tree(path, **params)
        params.pop("time_s", None)
        return ib_sysfs.read_snapshot(path, **params)
    if path.is_dir():
        return cxi.read_tree(path, **params)
    return cxi.read_snapshot(path, **params)
