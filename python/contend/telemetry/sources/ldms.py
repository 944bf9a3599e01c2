"""LDMS store_csv files as format A (InfiniBand and Aries samplers).

store_csv (ldms-store_csv(7): https://github.com/ovis-hpc/ldms/blob/main/ldms/src/
store/ldms-store_csv.rst; LDMS docs https://ovis-hpc.readthedocs.io/en/latest/)
writes one header line ``#Time,Time_usec,ProducerName,<metric>...``
(``#Time_msec`` with time_format=1; the header may instead live in a
``<file>.HEADER`` beside the data), then one line per stored
metric set: Time in seconds since the epoch with microseconds, the producer
(host), the metrics in the order the sampler added them.  Sampler-base
metrics (component_id, job_id, app_id) and strings are metadata, not counters.

Metric columns become counters of a component and port:

* ibmad_sampler (ldms-sampler_ibmad_sampler(7)): one set per InfiniBand port,
  metadata columns ``ca_name`` and ``port``, counters named as in sysfs
  (port_xmit_wait ...): component ``<producer>:<ca_name>``, port ``port``;
* sysclassib (ldms-sampler_sysclassib(7)): one wide set, metrics
  ``ib.<counter>#<ca>.<port>``: component ``<producer>:<ca>``, port ``<port>``;
* aries_nic_mmr / aries_rtr_mmr (ldms-sampler_aries_mmr(7)): NIC counters
  ``AR_NIC_*`` (e.g. AR_NIC_NETMON_ORB_EVENT_CNTR_REQ_STALLED, _REQ_FLITS) on
  component ``<producer>``, port empty; router tile counters ``AR_RTR_r_c_*``
  (AR_RTR_r_c_INQ_PRF_ROWBUS_STALL_CNT, AR_RTR_r_c_INQ_PRF_INCOMING_FLIT_VC0..7)
  on component ``aries_rtr_id`` (else the producer), port ``r_c``;
* any other ``<name>#<suffix>`` metric: component ``<producer>``, port ``<suffix>``;
  plain metrics: component ``<producer>``, port empty.

Rate columns (``<name>.rate``, derived by the sampler) and ``.userdata`` columns
are left out; ``<name>.value`` is read as ``<name>``.  Units: InfiniBand names
as in sysfs (octets4, ticks, packets, count), Aries ``*FLIT*`` flits,
``*STALL*`` cycles, ``*PKTS*`` packets, everything else count.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..csvread import NA_TEXT, read_table
from ..errors import at
from ..samples import empty_frame, make_frame
from .ib_sysfs import unit_of as ib_unit

NAME = "ldms"
META = {
    "Time",
    "Time_msec",
    "Time_usec",
    "ProducerName",
    "component_id",
    "job_id",
    "app_id",
    "ca_name",
    "port",
    "aries_rtr_id",
    "job_start",
    "job_end",
    "job_slot_list",
    "job_slot_list_tail",
    "uid",
    "gid",
    "instance",
}
TEXT_META = ("ProducerName", "ca_name", "aries_rtr_id")
_IB_NAMES = re.compile(
    r"(port_|symbol_|link_|local_|excessive_|VL15_|COUNTER_|unicast_|multicast_)\w*"
)
_SYSCLASSIB = re.compile(r"ib\.(?P<counter>\w+)#(?P<ca>[^.#]+)\.(?P<port>\d+)")
_ARIES_RTR = re.compile(r"AR_RTR_(?P<pt>PT_)?(?P<r>\d+)_(?P<c>\d+)_\w+")
_SUFFIX = re.compile(r"(?P<counter>[^#]+)#(?P<port>.+)")


def sniff(first_line: str) -> bool:
    return first_line.startswith(("#Time,", "#Time_msec,"))


def header_candidates(path: Path) -> list:
    """Where store_csv puts the header of a data file kept apart: FILE.HEADER,
    or NAME.HEADER.N for a rolled-over NAME.N."""
    path = Path(path)
    candidates = [path.with_name(path.name + ".HEADER")]
    m = re.fullmatch(r"(.+)\.(\d+)", path.name)
    if m:
        candidates.append(path.with_name(f"{m.group(1)}.HEADER.{m.group(2)}"))
    return candidates


def _header(path: Path):
    """(column names, line of the first data row) from the file or its .HEADER."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        first = fh.readline().rstrip("\r\n")
    if sniff(first):
        return _split(first), 2
    for header in header_candidates(path):
        if header.is_file():
            with open(header, encoding="utf-8", errors="replace") as fh:
                line = fh.readline().rstrip("\r\n")
            if sniff(line):
                return _split(line), 1
            raise at(header, 1, "not an LDMS store_csv header (#Time,Time_usec,ProducerName,...)")
    raise at(
        path,
        1,
        f"header is {first[:80]!r}, expected an LDMS store_csv header "
        "(#Time,Time_usec,ProducerName,...) or a .HEADER file beside it",
    )


def _split(line: str) -> list:
    return [c.strip().strip('"') for c in line.lstrip("#").split(",")]


def _metric(name: str):
    """The metric name of a column (``.value`` suffix removed), or None to leave it out."""
    if name in META or name.endswith((".userdata", ".rate")) or ".rate#" in name:
        return None
    name = name.removesuffix(".value")
    return name


def _unit(counter: str) -> str:
    if counter.startswith("AR_"):
        if "FLIT" in counter:
            return "flits"
        if "STALL" in counter:
            return "cycles"
        if "PKTS" in counter:
            return "packets"
        return "count"
    if _IB_NAMES.fullmatch(counter):
        return ib_unit(counter)
    return "count"


def _numeric_first_row(path, names, first_line):
    """Columns whose first data value is a number (the others are text metadata)."""
    row = pd.read_csv(
        path,
        header=None,
        names=names,
        skiprows=first_line - 1,
        nrows=1,
        dtype=str,
        keep_default_na=False,
        comment="#",
    )
    if row.empty:
        return set()
    vals = row.iloc[0]
    ok = pd.to_numeric(vals, errors="coerce").notna() | vals.isin(NA_TEXT)
    return {c for c, good in zip(names, ok) if good}


def read(path) -> pd.DataFrame:
    path = Path(path)
    names, first_line = _header(path)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise at(path, 1, f"column {dup!r} appears twice in the header")
    time_col = "Time" if "Time" in names else "Time_msec" if "Time_msec" in names else None
    if time_col is None or "ProducerName" not in names:
        raise at(path, 1, "the header needs Time (or Time_msec) and ProducerName columns")
    numeric = _numeric_first_row(path, names, first_line)
    metrics = [(c, _metric(c)) for c in names]
    metrics = [(c, m) for c, m in metrics if m is not None and c in numeric]
    num_cols = (
        [time_col] + (["Time_usec"] if time_col == "Time_msec" else []) + [c for c, _ in metrics]
    )
    text_cols = [c for c in names if c not in num_cols]
    table = read_table(path, names, text_cols, num_cols, first_line, comment="#")
    frame = table.frame
    if frame.empty:
        return empty_frame()
    if not metrics:
        raise at(
            path,
            table.line(frame.index[0]),
            "no metric column holds a number (every column but the metadata is text): "
            "not the counters of an LDMS sampler",
        )
    table.fail(
        frame["ProducerName"].astype(object).to_numpy() == "", "field 'ProducerName' is empty"
    )
    t = frame[time_col].to_numpy(float)
    if time_col == "Time_msec":
        t = t / 1e3 + frame["Time_usec"].to_numpy(float) / 1e6
    producer = pd.Series(frame["ProducerName"].astype(object).to_numpy(), dtype=object)
    has_ca = "ca_name" in frame.columns and "port" in frame.columns
    if has_ca:
        ca = pd.Series(frame["ca_name"].astype(object).to_numpy(), dtype=object)
        ca_comp = (producer + ":" + ca).to_numpy()
        ca_port = pd.Series(frame["port"].astype(object).to_numpy()).astype(str).to_numpy()
    router = producer.to_numpy()
    if "aries_rtr_id" in frame.columns:
        rid = frame["aries_rtr_id"].astype(object).to_numpy()
        router = np.where(rid != "", rid, router)
    times, comps, ports, counters, values = [], [], [], [], []
    n = len(frame)
    for col, name in metrics:
        m = _SYSCLASSIB.fullmatch(name)
        if m:
            comp, port, counter = (
                (producer + ":" + m.group("ca")).to_numpy(),
                m.group("port"),
                m.group("counter"),
            )
        elif _ARIES_RTR.fullmatch(name):
            a = _ARIES_RTR.fullmatch(name)
            port = ("pt" if a.group("pt") else "") + f"{a.group('r')}_{a.group('c')}"
            comp, counter = router, name
        elif name.startswith("AR_"):
            comp, port, counter = producer.to_numpy(), "", name
        elif _SUFFIX.fullmatch(name):
            s = _SUFFIX.fullmatch(name)
            comp, port, counter = producer.to_numpy(), s.group("port"), s.group("counter")
        elif has_ca and _IB_NAMES.fullmatch(name):
            comp, port, counter = ca_comp, ca_port, name
        else:
            comp, port, counter = producer.to_numpy(), "", name
        times.append(t)
        comps.append(comp)
        ports.append(np.full(n, port, dtype=object) if isinstance(port, str) else port)
        counters.append(np.full(n, counter, dtype=object))
        values.append(frame[col].to_numpy(float))
    counter = np.concatenate(counters)
    kinds = pd.unique(counter)
    units = np.array([_unit(c) for c in kinds] + ["count"], dtype=object)
    return make_frame(
        np.concatenate(times),
        np.concatenate(comps),
        np.concatenate(ports),
        counter,
        np.concatenate(values),
        units[pd.Index(kinds).get_indexer(counter)],
    )
