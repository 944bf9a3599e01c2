"""The emulated cluster's link counters (``contend cluster stats --csv F``) as format A.

File header ``time_s,component,counter,value`` (python/contend/cluster/stats.py):
per shaped link (component = link name such as ``n003-egress``,
``leaf0-uplink-up``) the root HTB qdisc's ``bytes`` and ``packets`` sent,
``drops`` (tail drops), ``overlimits`` (times the rate held a packet back) --
cumulative -- and ``backlog_bytes`` / ``backlog_packets``, the queue at the
sample (gauges).  time_s counts from the first sample (its wall-clock time is
logged on stderr by ``cluster stats``); it is kept as is, so windows shifted
onto that clock line up.  Port is empty.

The live source samples the same counters of a running cluster (its
description under the cluster state directory) with Unix times.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd

from ..csvread import read_table
from ..errors import TelemetryError, at
from ..samples import make_frame

NAME = "cluster"
HEADER = "time_s,component,counter,value"
UNITS = {
    "bytes": "bytes",
    "packets": "packets",
    "drops": "packets",
    "overlimits": "count",
    "backlog_bytes": "bytes_gauge",
    "backlog_packets": "packets_gauge",
}


def sniff(first_line: str) -> bool:
    return first_line == HEADER


def read(path) -> pd.DataFrame:
    path = Path(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = fh.readline().rstrip("\r\n")
    if first != HEADER:
        raise at(path, 1, f"header is {first[:80]!r}, expected {HEADER!r} (cluster stats)")
    table = read_table(path, HEADER.split(","), ("component", "counter"), ("time_s", "value"), 2)
    frame = table.frame
    table.fail(frame["component"].astype(object).to_numpy() == "", "field 'component' is empty")
    table.fail(
        frame["counter"].astype(object).to_numpy() == "",
        f"field 'counter' is empty (a line needs 4 fields: {HEADER})",
    )
    cats = [str(c) for c in frame["counter"].cat.categories]
    unit_of = np.array([UNITS.get(c, "count") for c in cats] + ["count"], dtype=object)
    unit = unit_of[frame["counter"].cat.codes.to_numpy()]
    return make_frame(
        frame["time_s"].to_numpy(float),
        frame["component"].astype(object).to_numpy(),
        "",
        frame["counter"].astype(object).to_numpy(),
        frame["value"].to_numpy(float),
        unit,
    )


class Live:
    """Samples the shaped links of a running emulated cluster (needs its privileges)."""

    def __init__(self, prefix: str):
        from ...cluster import state
        from ...cluster.errors import UsageError

        try:
            self.desc = state.load(prefix)
        except UsageError as exc:
            raise TelemetryError(str(exc)) from None
        self._sampler = None

    def sample(self, now=None) -> list:
        from ...cluster.shaping import COUNTERS
        from ...cluster.stats import LinkSampler

        if self._sampler is None:
            self._sampler = LinkSampler(self.desc)
        t = time.time() if now is None else now
        rows = []
        for link, counters in self._sampler.sample():
            for key in COUNTERS:
                if key in counters:
                    rows.append((t, link["component"], "", key, counters[key], UNITS[key]))
        return rows

    def close(self):
        if self._sampler is not None:
            self._sampler.close()
