"""InfiniBand port counters from sysfs: a live tree, or a text snapshot of it.

Layout (Linux, Documentation/ABI/stable/sysfs-class-infiniband):
``<root>/<device>/ports/<port>/counters/<counter>``, one integer per file, root
``/sys/class/infiniband``.  Units: port_xmit_data / port_rcv_data count octets
divided by 4 (unit ``octets4``), *_packets packets, port_xmit_wait ticks (the
tick length is a parameter of the PTs derivation, not of the samples), the
error counters events (``count``).  The 32-bit PortCounters saturate at
0xFFFFFFFF (derive flags them); the data and packet counters are 64-bit where
the adapter has extended counters.

Format A: component ``<host>:<device>``, port the port number.

Snapshot file (source ``ib-snapshot``): lines ``<path>:<value>`` as printed by
``grep -H . <root>/*/ports/*/counters/*``, each round of reads preceded by a
line ``# time_s=<unix seconds>``; an optional ``# host=<name>`` line names the
host (else the ``host`` parameter, else ``localhost``).  For example::

    while sleep 1; do echo "# time_s=$(date +%s.%N)"; \\
        grep -H . /sys/class/infiniband/*/ports/*/counters/*; done > ib.txt
"""

from __future__ import annotations

import re
import socket
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import TelemetryError, at
from ..samples import empty_frame, make_frame
from . import device_dirs

NAME = "ib-snapshot"
DEFAULT_ROOT = "/sys/class/infiniband"
SNAPSHOT_LINE = re.compile(
    r"^(?:.*/)?(?P<dev>[^/\s]+)/ports/(?P<port>\d+)/counters/(?P<counter>[A-Za-z0-9_]+)"
    r":\s*(?P<value>\d+)\s*$"
)


def unit_of(counter: str) -> str:
    """Unit of an InfiniBand port counter (format A)."""
    if counter in ("port_xmit_data", "port_rcv_data"):
        return "octets4"
    if counter == "port_xmit_wait":
        return "ticks"
    if counter.endswith(("packets", "pkts")):
        return "packets"
    return "count"


def default_host() -> str:
    return socket.gethostname().split(".")[0] or "localhost"


class Tree:
    """The counter files of an InfiniBand sysfs tree, read as one sample per call.

    Raises TelemetryError at construction when the root, a named device, a
    port's ``counters`` directory or every counter file is missing.
    """

    def __init__(self, root=DEFAULT_ROOT, devices=None, host=None, counters=None):
        self.root = Path(root)
        self.host = host or default_host()
        pattern = re.compile(counters) if counters else None
        found = device_dirs(self.root, devices, "InfiniBand", "give --root DIR")
        self.files = []  # (path, component, port, counter, unit)
        for dev in found:
            ports_dir = self.root / dev / "ports"
            if not ports_dir.is_dir():
                raise TelemetryError(f"{ports_dir}: no such directory (device {dev} has no ports)")
            for port_dir in sorted(ports_dir.iterdir(), key=lambda p: _port_key(p.name)):
                counters_dir = port_dir / "counters"
                if not counters_dir.is_dir():
                    raise TelemetryError(
                        f"{counters_dir}: no such directory (port {port_dir.name} of {dev} "
                        "has no counters)"
                    )
                for f in sorted(counters_dir.iterdir()):
                    if f.is_file() and (pattern is None or pattern.fullmatch(f.name)):
                        comp = f"{self.host}:{dev}"
                        self.files.append((f, comp, port_dir.name, f.name, unit_of(f.name)))
        if not self.files:
            raise TelemetryError(f"{self.root}: no counter file under */ports/*/counters")
        self._warned = set()

    def sample(self, now=None) -> list:
        """One row (time_s, component, port, counter, value, unit) per readable file."""
        t = time.time() if now is None else now
        rows = []
        for f, comp, port, counter, unit in self.files:
            try:
                value = int(f.read_text().strip())
            except (OSError, ValueError) as exc:
                if f not in self._warned:
                    self._warned.add(f)
                    why = exc.strerror if isinstance(exc, OSError) else "not an integer"
                    print(f"contend counters: warning: {f}: {why}; skipped", file=sys.stderr)
                continue
            rows.append((t, comp, port, counter, value, unit))
        return rows


def _port_key(name: str):
    return (0, int(name), "") if name.isdigit() else (1, 0, name)


def rows_to_frame(rows) -> pd.DataFrame:
    if not rows:
        return empty_frame()
    t, comp, port, counter, value, unit = zip(*rows)
    return make_frame(t, comp, port, counter, value, unit)


def read_tree(path, time_s=None, host=None) -> pd.DataFrame:
    """One sample of a sysfs-like tree (``time_s`` default: now)."""
    return rows_to_frame(Tree(path, host=host).sample(now=time_s))


def sniff(first_lines: list) -> bool:
    data = [ln for ln in first_lines if ln and not ln.startswith("#")]
    marks = any(ln.startswith("#") and "time_s" in ln for ln in first_lines)
    return bool(data) and marks and SNAPSHOT_LINE.match(data[0]) is not None


def read_snapshot(path, host=None) -> pd.DataFrame:
    """Read an ib-snapshot text file (see the module docstring)."""
    path = Path(path)
    try:
        lines = pd.Series(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), dtype=object
        )
    except OSError as exc:
        raise at(path, None, exc.strerror or str(exc)) from None
    if lines.empty:
        return empty_frame()
    stripped = lines.str.strip()
    comment = stripped.str.startswith("#").to_numpy()
    blank = (stripped == "").to_numpy()
    marks = stripped.str.extract(r"^#\s*time_s\s*=\s*(\S+)\s*$")[0]
    mark_t = pd.to_numeric(marks, errors="coerce")
    bad_mark = marks.notna().to_numpy() & mark_t.isna().to_numpy()
    if bad_mark.any():
        i = int(np.argmax(bad_mark))
        raise at(path, i + 1, f"time_s {marks.iloc[i]!r} is not a number")
    hosts = stripped.str.extract(r"^#\s*host\s*=\s*(\S+)\s*$")[0]
    data = ~comment & ~blank
    parsed = stripped.str.extract(SNAPSHOT_LINE)
    bad = data & parsed["dev"].isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise at(
            path,
            i + 1,
            f"expected <root>/<device>/ports/<port>/counters/<counter>:<integer>, got "
            f"{str(lines.iloc[i])[:80]!r}",
        )
    t = mark_t.ffill().to_numpy()
    no_time = data & np.isnan(t)
    if no_time.any():
        raise at(
            path,
            int(np.argmax(no_time)) + 1,
            "no '# time_s=<seconds>' line before this counter (one per round of reads)",
        )
    host_col = hosts.ffill().fillna(host or "localhost").to_numpy()
    p = parsed[data]
    comp = pd.Series(host_col[data], dtype=object) + ":" + p["dev"].to_numpy()
    counters = p["counter"].to_numpy()
    units = np.array([unit_of(c) for c in pd.unique(counters)], dtype=object)
    unit = units[pd.Index(pd.unique(counters)).get_indexer(counters)]
    return make_frame(
        t[data],
        comp.to_numpy(),
        p["port"].to_numpy(),
        counters,
        p["value"].astype(float).to_numpy(),
        unit,
    )
