"""HPE Slingshot NIC (Cassini, driver cxi) telemetry: a live tree or a text snapshot.

Layout: ``<root>/<device>/device/telemetry/<counter>``, root ``/sys/class/cxi``,
one file per counter holding ``<value>@<seconds>.<nanoseconds>`` (the value
and when it was read).  The counters are 56 bits wide and wrap; the pause
counters hni_tx_paused_<class> / hni_rx_paused_<class> count cycles of the
1 GHz Cassini clock during which that traffic class was paused (HPE's
cxi_stat turns their rate into a pause percentage as delta / s / 1e9).
Units: *_paused_* cycles, *pkts* / *packets* packets, *octets* bytes, others
``count``.

Format A: component ``<host>:<device>``, port empty (a Cassini NIC has one
port).  The files of one device read in one round carry timestamps a few
microseconds apart; a sample's time_s is the median of them, so that the
counters of a round share one time (a link's stall combines its pause classes).

Snapshot file (source ``cxi``): lines ``<path>:<value>@<sec>.<nsec>`` as printed
by ``grep -H . <root>/*/device/telemetry/hni_*``; rounds are separated by
comment lines (``# ...``, other than ``# host=``) or, without them, start
again when a file repeats;
``# host=<name>`` names the host (else the ``host`` parameter, else localhost).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import TelemetryError, at
from ..samples import empty_frame, make_frame
from . import device_dirs
from .ib_sysfs import default_host

NAME = "cxi"
DEFAULT_ROOT = "/sys/class/cxi"
DEFAULT_COUNTERS = r"hni_(tx|rx)_paused_\d+|hni_pkts_(sent|recv)_by_tc_\d+"
VALUE_RE = re.compile(r"^\s*(\d+)@(\d+)\.(\d{1,9})\s*$")
SNAPSHOT_LINE = re.compile(
    r"^(?:.*/)?(?P<dev>[^/\s]+)/device/telemetry/(?P<counter>[A-Za-z0-9_:]+)"
    r":\s*(?P<value>\d+)@(?P<sec>\d+)\.(?P<nsec>\d{1,9})\s*$"
)


def unit_of(counter: str) -> str:
    if "_paused_" in counter:
        return "cycles"
    if "pkts" in counter or "packets" in counter:
        return "packets"
    if "octets" in counter:
        return "bytes"
    return "count"


def parse_value(text: str):
    """(value, seconds) of a telemetry file's content, or None if malformed."""
    m = VALUE_RE.match(text)
    if not m:
        return None
    sec, nsec = m.group(2), m.group(3)
    return int(m.group(1)), int(sec) + int(nsec.ljust(9, "0")) * 1e-9


class Tree:
    """The telemetry files of a cxi sysfs tree, read as one sample per call."""

    def __init__(self, root=DEFAULT_ROOT, devices=None, host=None, counters=DEFAULT_COUNTERS):
        self.root = Path(root)
        self.host = host or default_host()
        pattern = re.compile(counters or ".*")
        found = device_dirs(self.root, devices, "cxi", "give --root")
        self.files = []
        for dev in found:
            tele = self.root / dev / "device" / "telemetry"
            if not tele.is_dir():
                raise TelemetryError(f"{tele}: no such directory (device {dev} has no telemetry)")
            for f in sorted(tele.iterdir()):
                if f.is_file() and pattern.fullmatch(f.name):
                    self.files.append((f, f"{self.host}:{dev}", f.name, unit_of(f.name)))
        if not self.files:
            raise TelemetryError(
                f"{self.root}: no telemetry file matching {pattern.pattern!r} under "
                "*/device/telemetry"
            )
        self._warned = set()

    def sample(self, now=None) -> list:
        rows = []
        for f, comp, counter, unit in self.files:
            try:
                parsed = parse_value(f.read_text())
            except OSError as exc:
                parsed, why = None, exc.strerror
            else:
                why = "not <value>@<seconds>.<nanoseconds>"
            if parsed is None:
                if f not in self._warned:
                    self._warned.add(f)
                    print(f"contend counters: warning: {f}: {why}; skipped", file=sys.stderr)
                continue
            value, t = parsed
            rows.append([t if now is None else now, comp, "", counter, value, unit])
        _round_times(rows)
        return [tuple(r) for r in rows]


def _round_times(rows):
    """Give the rows of each component the median of their times (in place)."""
    by_comp = {}
    for r in rows:
        by_comp.setdefault(r[1], []).append(r[0])
    med = {c: float(np.median(ts)) for c, ts in by_comp.items()}
    for r in rows:
        r[0] = med[r[1]]


def read_tree(path, host=None) -> pd.DataFrame:
    rows = Tree(path, host=host, counters=".*").sample()
    if not rows:
        return empty_frame()
    return make_frame(*zip(*rows))


def sniff(first_lines: list) -> bool:
    data = [ln for ln in first_lines if ln and not ln.startswith("#")]
    return bool(data) and SNAPSHOT_LINE.match(data[0]) is not None


def read_snapshot(path, host=None) -> pd.DataFrame:
    """Read a cxi snapshot text file (see the module docstring)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise at(path, None, exc.strerror or str(exc)) from None
    lines = pd.Series(text.splitlines(), dtype=object)
    if lines.empty:
        return empty_frame()
    stripped = lines.str.strip()
    comment = stripped.str.startswith("#").to_numpy()
    blank = (stripped == "").to_numpy()
    data = ~comment & ~blank
    hosts = stripped.str.extract(r"^#\s*host\s*=\s*(\S+)\s*$")[0]
    host_col = hosts.ffill().fillna(host or "localhost").to_numpy()
    parsed = stripped.str.extract(SNAPSHOT_LINE)
    bad = data & parsed["dev"].isna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise at(
            path,
            i + 1,
            "expected <root>/<device>/device/telemetry/<counter>:<value>@<seconds>.<nanoseconds>, "
            f"got {str(lines.iloc[i])[:80]!r}",
        )
    p = parsed[data]
    comp = (pd.Series(host_col[data], dtype=object) + ":" + p["dev"].to_numpy()).to_numpy()
    counter = p["counter"].to_numpy()
    nsec = p["nsec"].str.ljust(9, "0").astype(float).to_numpy()
    t = p["sec"].astype(float).to_numpy() + nsec * 1e-9
    host_line = hosts.notna().to_numpy()
    separator = comment & ~host_line
    if separator.any():
        rnd = np.cumsum(separator)[data]
    else:
        rnd = pd.DataFrame({"c": comp, "k": counter}).groupby(["c", "k"], sort=False).cumcount()
        rnd = rnd.to_numpy()
    rounds = pd.DataFrame({"c": comp, "r": rnd, "t": t})
    t = rounds.groupby(["c", "r"], sort=False)["t"].transform("median").to_numpy()
    kinds = pd.unique(counter)
    units = np.array([unit_of(c) for c in kinds] + ["count"], dtype=object)
    unit = units[pd.Index(kinds).get_indexer(counter)]
    return make_frame(t, comp, "", counter, p["value"].astype(float).to_numpy(), unit)
