"""The simulator's counter CSV (``contend jobs|sim --engine sim --counters F``) as format A.

Header ``time_s,component,port,vc,counter,value`` (src/engine_sim/counters.h):
time_s in seconds since the run's start; component a router label or
``nicN``; counters xmit_data_bytes (bytes), xmit_packets (packets),
xmit_wait_ns (ns a packet waited for credit; at a NIC the injection stall),
busy_ns (ns), occupancy_bytes (mean bytes held downstream over the interval: a
gauge).  Port-level rows have an empty vc (the union over VCs); per-VC rows are
dropped unless ``keep_vcs``, which keeps them as port ``<p>/vc<v>``.  Rows are
written only for ports that changed since the previous sample: a missing row
means "unchanged", which contend.telemetry.derive accounts for.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..csvread import read_table
from ..errors import at
from ..samples import sort_frame

NAME = "sim"
HEADER = "time_s,component,port,vc,counter,value"
UNITS = {
    "xmit_data_bytes": "bytes",
    "xmit_packets": "packets",
    "xmit_wait_ns": "ns",
    "busy_ns": "ns",
    "occupancy_bytes": "bytes_gauge",
}


def sniff(first_line: str) -> bool:
    return first_line == HEADER


def read(path, keep_vcs: bool = False) -> pd.DataFrame:
    """Read a simulator counter CSV into a format-A frame."""
    path = Path(path)
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = fh.readline().rstrip("\r\n")
    if first != HEADER:
        raise at(path, 1, f"header is {first[:80]!r}, expected {HEADER!r} (simulator counters)")
    names = HEADER.split(",")
    table = read_table(path, names, ("component", "port", "vc", "counter"), ("time_s", "value"), 2)
    frame = table.frame
    table.fail(frame["component"].astype(object).to_numpy() == "", "field 'component' is empty")
    table.fail(
        frame["counter"].astype(object).to_numpy() == "",
        "field 'counter' is empty (a line needs 6 fields: " + HEADER + ")",
    )
    vc = frame["vc"].astype(object).to_numpy()
    port_level = vc == ""
    if keep_vcs:
        port = frame["port"].astype(object).to_numpy()
        port = np.where(port_level, port, port + "/vc" + vc.astype(str))
        frame = frame.assign(port=pd.Categorical(port.astype(str)))
    else:
        frame = frame[port_level]
    cats = [str(c) for c in frame["counter"].cat.categories]
    unit_of = np.array([UNITS.get(c, "count") for c in cats] + ["count"], dtype=object)
    unit = pd.Categorical(unit_of[frame["counter"].cat.codes.to_numpy()])

    def cat(col):
        values = frame[col]
        if isinstance(values.dtype, pd.CategoricalDtype):
            return values.cat.remove_unused_categories().array
        return pd.Categorical(values.astype(str))

    out = pd.DataFrame(
        {
            "time_s": frame["time_s"].to_numpy(float),
            "component": cat("component"),
            "port": cat("port"),
            "counter": cat("counter"),
            "value": frame["value"].to_numpy(float),
            "unit": unit,
        }
    )
    return sort_frame(out)
