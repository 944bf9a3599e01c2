"""``contend counters``: sample live counter sources, convert counter files, print PTs.

Console script ``contend-counters`` (``contend counters ...`` from the C binary).
Subcommands:

* ``sample --source ib|cxi|cluster ... -o FILE``: a live source every interval
  into the common CSV (format A);
* ``replay FILE -o OUT``: any supported counter file as the common CSV;
* ``pts FILE``: per-link per-interval percent time stalled (Netscope eq. 6) and
  the per-node injection stall (nic2hsn), as CSV or as tables.

Bad input gives one line on stderr and exit status 2 before anything is read
or written; outputs are written through a temporary file and renamed.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import pandas as pd

from .. import outfile
from ..argtypes import count, positive_float
from ..guard import guarded
from ..limits import MAX_SAMPLES, MAX_TOP, clip_repr
from . import derive, reader, sampler
from . import stallrules as rules
from .errors import TelemetryError
from .samples import write_atomic, write_counters

PROG = "contend counters"
EXIT_USAGE = 2
_UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, status 2, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def parse_seconds(text: str) -> float:
    """Seconds from ``1s``, ``200ms``, ``100us``, ``2m``, ``0.5`` (plain: seconds)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([a-z]*)\s*", str(text))
    if not m or m.group(2) not in ("", *_UNITS):
        raise argparse.ArgumentTypeError(
            f"expected a duration such as 1s, 200ms, 100us or 0.5 (seconds), got {clip_repr(text)}"
        )
    value = float(m.group(1)) * _UNITS.get(m.group(2), 1.0)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive duration, got {clip_repr(text)}")
    return value


def _bits(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 8 <= value <= 64:
        raise argparse.ArgumentTypeError(
            f"expected a counter width of 8..64 bits, got {clip_repr(text)}"
        )
    return value


def _tick(text: str):
    try:
        rules.parse_tick(text)
    except TelemetryError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def check_output(path, what: str = "output") -> Path:
    """TelemetryError unless ``path`` names a file in an existing, writable directory."""
    return outfile.check_output(path, what, TelemetryError)


SOURCE_HELP = (
    "input format: auto (tell from the first lines), csv (format A), sim (the simulator's "
    "counter CSV), cluster (contend cluster stats --csv), ldms (LDMS store_csv), ib-snapshot "
    "(InfiniBand sysfs counters: grep -H snapshot text or a sysfs-like directory), cxi (HPE "
    "cxi telemetry: grep -H snapshot text or a sysfs-like directory) [default auto]"
)

DESCRIPTION = """\
Counter sources for congestion analysis (Netscope, ICS'21, sec. 4.2 and 6.1).
Every source becomes one format, the common counter CSV (format A):
  time_s,component,port,counter,value,unit
time_s in s (Unix epoch for live sources, s since the run's start for the
simulator and the emulated cluster), value the raw counter as read.
From it `pts` derives per link and sampling interval the percent time stalled
PTs = 100 * Ts / Tm (eq. 6) and per node the injection stall (nic2hsn).
See docs/telemetry.md for sources, units and how each source's stall counter
becomes ns.

Examples:
  contend counters sample --source ib --interval 1s --duration 60 -o ib.csv
  contend counters sample --source cxi --interval 200ms --until-pid 4242 -o cxi.csv
  contend counters replay run.counters.csv -o run.common.csv
  contend counters pts run.counters.csv --top 10
  contend counters pts ib.csv --tick-ns quantum@200 -o pts.csv --injection-csv nic2hsn.csv
"""


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG, description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser(
        "sample",
        help="read a live source every interval into the common CSV",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Read a live counter source at a fixed interval into the common CSV (format A).
Sources: ib (InfiniBand port counters, <root>/<device>/ports/<n>/counters/*),
cxi (HPE Slingshot NIC telemetry, <root>/<device>/device/telemetry/*, each
file <value>@<sec>.<nsec>), cluster (the shaped links of a running emulated
cluster).  Sampling ends after --count samples, after --duration, when
--until-pid exits, or on Ctrl-C / SIGTERM, keeping what was sampled; the file
is written under a temporary name and renamed at the end.

Examples:
  contend counters sample --source ib --interval 1s --count 60 -o ib.csv
  contend counters sample --source ib --root tests/fixtures/telemetry/ib/sysfs \\
      --host node01 --interval 100ms --count 3 -o ib.csv
  contend counters sample --source cxi --device cxi0 --interval 0.5 --duration 30s -o cxi.csv
  contend counters sample --source cluster --prefix ct --interval 1s --until-pid 1234 -o ct.csv
""",
    )
    s.add_argument(
        "--source",
        required=True,
        choices=("ib", "cxi", "cluster"),
        help="live source: ib, cxi or cluster",
    )
    s.add_argument(
        "--root",
        metavar="DIR",
        help="sysfs class directory [default /sys/class/infiniband for ib, /sys/class/cxi for cxi]",
    )
    s.add_argument(
        "--device",
        action="append",
        metavar="D",
        help="device to read (repeat or comma-separate) [default all]",
    )
    s.add_argument(
        "--host",
        metavar="NAME",
        help="host name in component names <host>:<device> [default this host]",
    )
    s.add_argument(
        "--counters",
        metavar="REGEX",
        help=f"counter files to read (full match) [default ib: all; cxi: {rules_default_cxi()}]",
    )
    s.add_argument(
        "--prefix",
        metavar="P",
        help="emulated cluster prefix (cluster) [default $CONTEND_CLUSTER_PREFIX or ct]",
    )
    s.add_argument(
        "--interval",
        type=parse_seconds,
        default=1.0,
        metavar="T",
        help="sampling interval, with unit (1s, 200ms, 100us) or in s [default 1s]",
    )
    stop = s.add_mutually_exclusive_group()
    stop.add_argument(
        "--duration",
        type=parse_seconds,
        metavar="T",
        help="stop after this time, with unit or in s",
    )
    stop.add_argument(
        "--count",
        type=count(MAX_SAMPLES),
        metavar="N",
        help=f"stop after N samples [count, at most {MAX_SAMPLES}]",
    )
    stop.add_argument(
        "--until-pid",
        type=count(2**31 - 1),
        metavar="PID",
        help="stop (after one last sample) when process PID exits",
    )
    s.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the common CSV to write (format A)"
    )

    r = sub.add_parser(
        "replay",
        help="convert a counter file to the common CSV",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Convert any supported counter file to the common CSV (format A): the
simulator's counter CSV, contend cluster stats --csv, LDMS store_csv,
InfiniBand or cxi sysfs snapshots (text or directory), or format A itself.

Examples:
  contend counters replay run.counters.csv -o run.common.csv
  contend counters replay ibmad.csv --source ldms -o ib.common.csv
  contend counters replay ib-snapshot.txt --host node01 -o ib.csv
""",
    )
    r.add_argument("file", metavar="FILE", help="counter file (or sysfs-like directory)")
    r.add_argument(
        "--source", default="auto", choices=reader.SOURCES, metavar="SRC", help=SOURCE_HELP
    )
    _add_read_options(r)
    r.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the common CSV to write (format A)"
    )

    t = sub.add_parser(
        "pts",
        help="per-link percent time stalled and per-node injection stall",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Percent time stalled per link (component, port) and sampling interval,
PTs = 100 * Ts / Tm (Netscope eq. 6), from each source's stall counter:
InfiniBand port_xmit_wait (ticks x --tick-ns), the simulator's xmit_wait_ns,
cxi hni_tx_paused_<class> (cycles x --cycle-ns, largest class), Aries
STALLED/(STALLED+FLITS) (or cycles of --aries-clock-hz), and for the emulated
cluster an analog from the queue backlog (see docs/telemetry.md).  Also the
per-node injection stall (Netscope's nic2hsn): the PTs of each node's
injection link.  Counter wraps are corrected; resets and saturated 32-bit
counters leave their interval out (noted on stderr).

With -o the link table is written as CSV (t0_s,t1_s,component,port,stall_ns,
interval_ns,pts_percent) and --injection-csv writes t0_s,t1_s,node,pts_percent;
without -o the --top most stalled links and nodes are printed as tables.

Examples:
  contend counters pts run.counters.csv --top 10
  contend counters pts ib.csv --tick-ns switch-ib@100 -o pts.csv
  contend counters pts ib.csv --tick-ns 10.24 --injection-csv nic2hsn.csv -o pts.csv
""",
    )
    t.add_argument("file", metavar="FILE", help="counter file (or sysfs-like directory)")
    t.add_argument(
        "--source", default="auto", choices=reader.SOURCES, metavar="SRC", help=SOURCE_HELP
    )
    _add_read_options(t)
    t.add_argument(
        "--tick-ns",
        type=_tick,
        metavar="X",
        help="InfiniBand port_xmit_wait tick: ns, or DEVICE@GBPS[xLANES] with DEVICE "
        "quantum (8 B of port time), switch-ib (32 B per lane) or symbol (1 B per "
        f"lane), e.g. quantum@200 [unit ns, default {rules.DEFAULT_TICK_NS:g}]",
    )
    t.add_argument(
        "--cycle-ns",
        type=positive_float,
        default=rules.CASSINI_CYCLE_NS,
        metavar="X",
        help="cxi pause counter cycle [unit ns, default 1 (1 GHz)]",
    )
    t.add_argument(
        "--aries-clock-hz",
        type=positive_float,
        metavar="F",
        help="read Aries stall counters as cycles of this clock instead of the "
        "stalled/(stalled+flits) ratio [unit Hz, default ratio]",
    )
    t.add_argument(
        "--wrap-bits",
        type=_bits,
        metavar="N",
        help="width of every counter, overriding the per-source widths [unit bits]",
    )
    t.add_argument(
        "--sparse",
        action="store_true",
        help="simulator: only intervals with a row, not every link x interval",
    )
    t.add_argument("-o", "--output", metavar="OUT.csv", help="write the link PTs table here")
    t.add_argument(
        "--injection-csv", metavar="FILE", help="write the per-node injection stall here"
    )
    t.add_argument(
        "--top",
        type=count(MAX_TOP),
        default=10,
        metavar="N",
        help=f"links and nodes in the printed tables [count, at most {MAX_TOP}; default 10]",
    )
    return p


def rules_default_cxi() -> str:
    from .sources.cxi import DEFAULT_COUNTERS

    return DEFAULT_COUNTERS


def _add_read_options(p):
    p.add_argument(
        "--host",
        metavar="NAME",
        help="ib-snapshot/cxi: host of components <host>:<device> when the file names "
        "none [default localhost]",
    )
    p.add_argument(
        "--keep-vcs",
        action="store_true",
        help="sim: keep per-VC rows as port <p>/vc<v> [default dropped]",
    )


def _read_params(args) -> dict:
    source = args.source
    params = {}
    if args.host and source in ("auto", "ib-snapshot", "cxi"):
        params["host"] = args.host
    if args.keep_vcs and source in ("auto", "sim"):
        params["keep_vcs"] = True
    return params


def _check_files(args, outputs) -> None:
    """The output rule: no output is the counter file read, its header, or another output."""
    inputs = []
    if getattr(args, "file", None) is not None:
        reader.check_input(args.file, args.source)
        inputs = [("FILE", f) for f in reader.input_files(args.file, args.source)]
    outfile.check_distinct(inputs, outputs, TelemetryError)


def _read(args):
    path = reader.check_input(args.file, args.source)
    source = reader.detect_source(path) if args.source == "auto" else args.source
    params = {k: v for k, v in _read_params(args).items() if k in reader.PARAMS[source]}
    return reader.read_counters(path, source=source, **params), source


def _cmd_sample(args, log) -> int:
    out = check_output(args.output)
    _check_files(args, [("-o", out)])
    devices = None
    if args.device:
        devices = [d for item in args.device for d in item.split(",") if d]
    if args.source == "cluster":
        if args.root or devices or args.counters:
            raise TelemetryError("--root, --device and --counters are for ib and cxi")
        from .sources.cluster import Live

        src = Live(args.prefix or os.environ.get("CONTEND_CLUSTER_PREFIX") or "ct")
    elif args.source == "ib":
        from .sources.ib_sysfs import DEFAULT_ROOT, Tree

        src = Tree(args.root or DEFAULT_ROOT, devices, args.host, args.counters)
    else:
        from .sources.cxi import DEFAULT_COUNTERS, DEFAULT_ROOT
        from .sources.cxi import Tree as CxiTree

        src = CxiTree(
            args.root or DEFAULT_ROOT, devices, args.host, args.counters or DEFAULT_COUNTERS
        )
    if args.until_pid is not None and not sampler.pid_alive(args.until_pid):
        raise TelemetryError(f"--until-pid {args.until_pid}: no such process")
    sampler.run(
        src,
        args.interval,
        out,
        count=args.count,
        duration=args.duration,
        until_pid=args.until_pid,
        log=log,
    )
    return 0


def _cmd_replay(args, log) -> int:
    out = check_output(args.output)
    _check_files(args, [("-o", out)])
    frame, source = _read(args)
    write_counters(frame, out)
    span = (frame["time_s"].min(), frame["time_s"].max()) if len(frame) else (0.0, 0.0)
    log(
        f"contend counters: {len(frame)} rows ({source}), {frame['component'].nunique()} "
        f"components, time_s {span[0]:.6g}..{span[1]:.6g} s -> {out}"
    )
    return 0


def _cmd_pts(args, log) -> int:
    out = check_output(args.output) if args.output else None
    inj_out = check_output(args.injection_csv, "injection") if args.injection_csv else None
    _check_files(args, [("-o", out), ("--injection-csv", inj_out)])
    frame, _source = _read(args)
    events: list = []
    params = {
        "tick_ns": args.tick_ns,
        "cycle_ns": args.cycle_ns,
        "aries_clock_hz": args.aries_clock_hz,
        "wrap_bits": args.wrap_bits,
        "dense": not args.sparse,
    }
    links = derive.stall_intervals(frame, events=events, **params)
    nodes = derive.injection_stall(frame, **params)
    counters = set(frame["counter"].astype(str).unique()) if len(frame) else set()
    if "port_xmit_wait" in counters and args.tick_ns is None:
        log(
            f"contend counters: note: port_xmit_wait ticks taken as {rules.DEFAULT_TICK_NS:g} ns "
            "(IBA symbol time at SDR); give --tick-ns for your devices (e.g. quantum@200)"
        )
    _log_events(events, log)
    over = links["pts_percent"] > 100.5
    if over.any():
        log(
            f"contend counters: note: {int(over.sum())} intervals above 100 % (largest "
            f"{links['pts_percent'].max():.1f} %): check the tick or cycle length"
        )
    if links.empty:
        log(f"contend counters: {args.file}: {_why_no_intervals(frame)} (see docs/telemetry.md)")
    if out is not None:
        write_atomic(out, lambda fh: links.to_csv(fh, index=False, lineterminator="\n"))
        log(f"contend counters: {len(links)} link intervals -> {out}")
    if inj_out is not None:
        write_atomic(inj_out, lambda fh: nodes.to_csv(fh, index=False, lineterminator="\n"))
        log(f"contend counters: {len(nodes)} node intervals -> {inj_out}")
    if out is None:
        print(format_links(links, args.top))
        print()
        print(format_nodes(nodes, args.top))
    return 0


def _why_no_intervals(frame: pd.DataFrame) -> str:
    """Why a counter frame gave no PTs interval: no rows, one sample time, or no
    stall counter among its counters."""
    if frame.empty:
        return "no counter samples in the file"
    times = frame.groupby(["component", "port", "counter"], observed=True)["time_s"].nunique()
    if times.max() < 2:
        distinct = frame["time_s"].nunique()
        when = f"time_s {frame['time_s'].iloc[0]:.6g}" if distinct == 1 else f"{distinct} times"
        return (
            f"every counter is sampled at one time only ({when}): PTs needs two samples of "
            "a counter (an interval)"
        )
    return "no stall counter found"


def _log_events(events, log):
    if not events:
        return
    ev = pd.DataFrame(events)
    for (kind, counter), grp in ev.groupby(["event", "counter"], sort=True):
        first = grp.iloc[0]
        port = f" port {first['port']}" if first["port"] else ""
        log(
            f"contend counters: note: {len(grp)} x {kind} of {counter} (first: "
            f"{first['component']}{port} at time_s {first['time_s']:.6g}): {first['detail']}"
        )


def format_links(links: pd.DataFrame, top: int) -> str:
    """The ``top`` links with the highest time-weighted mean PTs, as a table with units."""
    if links.empty:
        return "no link intervals"
    g = links.groupby(["component", "port"], sort=False, observed=True)
    summary = g.agg(
        intervals=("pts_percent", "size"),
        stall_ns=("stall_ns", "sum"),
        interval_ns=("interval_ns", "sum"),
        max_pts=("pts_percent", "max"),
    ).reset_index()
    summary["mean_pts"] = 100.0 * summary["stall_ns"] / summary["interval_ns"]
    summary = summary.sort_values(["mean_pts", "max_pts"], ascending=False).head(top)
    head = (
        f"{'link (component port)':<28} {'intervals':>9} {'mean PTs (%)':>12} "
        f"{'max PTs (%)':>11} {'stalled (ms)':>12} {'sampled (ms)':>12}"
    )
    lines = [
        f"Most stalled links ({links.groupby(['component', 'port']).ngroups} links)",
        head,
        "-" * len(head),
    ]
    for r in summary.itertuples():
        name = f"{r.component} {r.port}".strip()
        lines.append(
            f"{name:<28} {r.intervals:>9d} {r.mean_pts:>12.3f} {r.max_pts:>11.3f} "
            f"{r.stall_ns / 1e6:>12.3f} {r.interval_ns / 1e6:>12.3f}"
        )
    return "\n".join(lines)


def format_nodes(nodes: pd.DataFrame, top: int) -> str:
    """The ``top`` nodes with the highest mean injection stall, as a table with units."""
    if nodes.empty:
        return "no injection links (nic2hsn) in this source"
    w = (nodes["t1_s"] - nodes["t0_s"]).to_numpy(float)
    frame = nodes.assign(
        w=w, wp=w * nodes["pts_percent"].to_numpy(float), key=nodes["node"].astype(str)
    )
    g = frame.groupby("key", sort=False)
    summary = g.agg(
        intervals=("w", "size"), w=("w", "sum"), wp=("wp", "sum"), max_pts=("pts_percent", "max")
    ).reset_index()
    summary["mean_pts"] = summary["wp"] / summary["w"]
    summary = summary.sort_values(["mean_pts", "max_pts"], ascending=False).head(top)
    head = f"{'node':<20} {'intervals':>9} {'mean PTs (%)':>12} {'max PTs (%)':>11}"
    lines = [f"Injection stall per node (nic2hsn, {len(g)} nodes)", head, "-" * len(head)]
    for r in summary.itertuples():
        lines.append(f"{r.key:<20} {r.intervals:>9d} {r.mean_pts:>12.3f} {r.max_pts:>11.3f}")
    return "\n".join(lines)


@guarded(PROG)
def main(argv=None) -> int:
    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    args = build_parser().parse_args(argv)
    try:
        if args.command == "sample":
            return _cmd_sample(args, log)
        if args.command == "replay":
            return _cmd_replay(args, log)
        return _cmd_pts(args, log)
    except TelemetryError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # pragma: no cover - output piped into head
        return 0


if __name__ == "__main__":
    sys.exit(main())
