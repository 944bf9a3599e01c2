"""Counter sources and derived stall signals (format A, Netscope eq. 6 and nic2hsn).

Public API:

* :func:`read_counters` (reader): any supported counter file or sysfs-like tree
  as counter samples, DataFrame[time_s, component, port, counter, value, unit];
* :func:`write_counters` (samples): a frame as the common CSV (format A);
* :func:`counter_deltas`, :func:`stall_intervals`, :func:`injection_stall`
  (derive): per-interval increases, per-link percent time stalled and per-node
  injection stall;
* :class:`TelemetryError`: bad input, ``file:line: what`` (a ValueError).

The command ``contend counters`` (cli) samples live sources, converts files and
prints PTs tables; docs/telemetry.md describes sources, units and derivations.
"""

from .derive import counter_deltas, injection_stall, stall_intervals
from .errors import TelemetryError
from .reader import SOURCES, detect_source, read_counters
from .samples import COLUMNS, make_frame, write_counters

__all__ = [
    "COLUMNS",
    "SOURCES",
    "TelemetryError",
    "counter_deltas",
    "detect_source",
    "injection_stall",
    "make_frame",
    "read_counters",
    "stall_intervals",
    "write_counters",
]
