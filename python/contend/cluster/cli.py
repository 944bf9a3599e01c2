"""Command line of the emulated cluster: ``contend cluster up|run|exec|stats|shape|show|down``.

Installed as ``contend-cluster``; the ``contend`` binary dispatches
``contend cluster ARGS`` to it. Exit status: 0 success, 2 bad input / missing
privilege / conflicting cluster, 1 a failed system operation; ``run`` and
``exec`` return the program's status.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence

from ..guard import TRACEBACK_ENV, guarded, report
from . import launch, lifecycle, netns, state, stats
from .errors import ClusterError, UsageError
from .topology import DEFAULT_PREFIX, degraded_note, make_spec, parse_degrade, validate_prefix
from .units import format_bytes, format_rate

PROG = "contend cluster"

DESCRIPTION = """\
Emulate a small cluster on this machine: every node is a network namespace,
leaf switches and a spine are bridges in a switch namespace, and every link
is shaped in both directions (HTB rate + bounded FIFO queue), so MPI traffic
over TCP really queues, drops and delays other traffic. Needs root.
"""

EPILOG = """\
examples:
  contend cluster up --nodes 8 --leaves 2 --node-rate 100mbit --taper 2:1
  contend cluster run --np 8 -- ./a.out
  contend cluster run --np 16 --ppn 2 -- build/bin/contend load --seed 1
  contend cluster stats
  contend cluster stats --sample-interval 0.5 --duration 30 --csv links.csv
  contend cluster exec n003 -- hostname
  contend cluster shape --off               # same cluster, links unlimited
  contend cluster shape --on                # shaping restored
  contend cluster shape --degrade leaf1-uplink=0.25   # one uplink at a quarter
  contend cluster down
"""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser that reports errors as one line and exits with status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _add_prefix(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--prefix",
        default=state.default_prefix(),
        help="cluster name prefix for namespaces, hostnames and the state directory "
        "(default %(default)s, or $CONTEND_CLUSTER_PREFIX)",
    )


def _add_degrade(p) -> None:
    p.add_argument(
        "--degrade",
        action="append",
        metavar="LINK=FRACTION",
        help="shape LINK to FRACTION (0 < FRACTION <= 1) of its configured rate: a cable "
        "(n003, leaf1-uplink: both directions) or one direction (n003-egress, "
        "leaf1-uplink-up; names as in stats); repeatable",
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    q = sub.add_parser(
        "up",
        help="create the cluster",
        description="Create N node namespaces and a switch namespace with one bridge per "
        "leaf and a spine bridge; shape node links (injection rate) and leaf uplinks "
        "(taper) in both directions with an HTB rate and a bfifo queue. Writes "
        "cluster.json, topology.conf (Slurm) and hostfile to the state directory "
        "($CONTEND_CLUSTER_DIR/PREFIX, default /run/contend-cluster/PREFIX).",
        allow_abbrev=False,
    )
    q.add_argument("--nodes", type=int, required=True, help="number of nodes (>= 2)")
    q.add_argument("--leaves", type=int, required=True, help="leaf switches (must divide --nodes)")
    q.add_argument(
        "--node-rate",
        default="1gbit",
        help="injection rate of every node link "
        "(default %(default)s; units bit/kbit/mbit/gbit, or bps/kbps/mbps bytes/s)",
    )
    g = q.add_mutually_exclusive_group()
    g.add_argument("--uplink-rate", help="rate of each leaf-to-spine uplink")
    g.add_argument(
        "--taper",
        help="uplink taper A:B: uplink rate = nodes per leaf x node rate "
        "x B/A (default 1:1; 2:1 as on a 2:1 fat tree)",
    )
    q.add_argument(
        "--queue",
        default="256kb",
        help="buffer of every shaped link direction "
        "(bfifo limit; default %(default)s, kb = 1024 bytes)",
    )
    q.add_argument(
        "--tcp-cc",
        default="reno",
        help="TCP congestion control inside the nodes, one the kernel has or can load "
        "(/proc/sys/net/ipv4/tcp_available_congestion_control; default %(default)s: "
        "loss-based, fills queues like a saturated fabric)",
    )
    q.add_argument(
        "--no-gso",
        action="store_true",
        help="send MTU-size packets from the "
        "nodes (exact queueing granularity, about 3x the CPU; keep rates low)",
    )
    _add_degrade(q)
    _add_prefix(q)

    q = sub.add_parser(
        "run",
        help="run an MPI program across the nodes",
        usage=f"{PROG} run [--np N] [--ppn K] [--prefix NAME] [mpirun options] -- PROGRAM [ARGS]",
        description="Run PROGRAM with Open MPI's mpirun, one node per namespace: mpirun runs "
        "on the first node, daemons reach the others through the cluster's launch agent, MPI "
        "uses TCP on the emulated subnet only. Options not listed here are passed to mpirun. "
        "Exit status is the program's.",
        allow_abbrev=False,
    )
    q.add_argument(
        "-n", "-np", "--np", dest="np", type=int, help="number of ranks (default: nodes x ppn)"
    )
    q.add_argument("--ppn", type=int, help="ranks per node (default: ceil(np / nodes), else 1)")
    q.add_argument(
        "--mpirun", help="Open MPI's mpirun to use (default: mpirun.openmpi, else mpirun)"
    )
    q.add_argument("--dry-run", action="store_true", help="print the command, do not run it")
    _add_prefix(q)

    q = sub.add_parser(
        "exec",
        help="run a command on one node",
        usage=f"{PROG} exec [--prefix NAME] NODE -- COMMAND [ARGS]",
        description="Run COMMAND in the namespace of NODE (index, n003, hostname, or sw for "
        "the switch namespace) with the node's hostname. Exit status is the command's.",
        allow_abbrev=False,
    )
    q.add_argument("node", help="node: 3, n003, <prefix>n003, or sw")
    _add_prefix(q)

    q = sub.add_parser(
        "stats",
        help="counters of the shaped links",
        description="Per shaped link (n003-egress, n003-ingress, leaf0-uplink-up, "
        "leaf0-uplink-down ...): bytes, packets, drops, overlimits, backlog. Without "
        "--sample-interval prints one table; with it records a time series CSV "
        "(time_s,component,counter,value) and prints the changes over the period.",
        allow_abbrev=False,
    )
    q.add_argument("--sample-interval", type=float, metavar="SEC", help="sampling period")
    g = q.add_mutually_exclusive_group()
    g.add_argument("--duration", type=float, metavar="SEC", help="stop after SEC seconds")
    g.add_argument("--until-pid", type=int, metavar="PID", help="stop when PID exits")
    q.add_argument("--csv", metavar="FILE", help="write the time series here (default stdout)")
    _add_prefix(q)

    q = sub.add_parser(
        "shape",
        help="remove, restore or degrade the shaping of the links",
        description="Remove the rate limits and queues of every link (--off: the links run "
        "at the speed of the software path, with no queue of their own), restore them "
        "(--on: the rates and queues given to up) or restore them with some links slower "
        "(--degrade LINK=FRACTION, a known slow link for contend locate). --on and --off "
        "undo earlier degradations. Namespaces, addresses, hostnames and running processes "
        "stay as they are, so the same run can be repeated with and without shaping. "
        "Counters restart at zero when shaping is restored.",
        allow_abbrev=False,
    )
    g = q.add_mutually_exclusive_group(required=True)
    g.add_argument("--off", action="store_true", help="remove the shaping (unlimited links)")
    g.add_argument("--on", action="store_true", help="restore the shaping given to up")
    _add_degrade(g)
    _add_prefix(q)

    q = sub.add_parser(
        "show",
        help="describe the cluster",
        allow_abbrev=False,
        description="Print the nodes, switches and rates of the cluster.",
    )
    q.add_argument("--json", action="store_true", help="print cluster.json")
    _add_prefix(q)

    q = sub.add_parser("list", help="list clusters on this machine", allow_abbrev=False)

    q = sub.add_parser(
        "down",
        help="remove the cluster",
        description="Stop the processes inside the cluster's namespaces, delete the namespaces "
        "(with all their links and bridges) and the state directory. Idempotent.",
        allow_abbrev=False,
    )
    _add_prefix(q)
    p._subparsers_map = sub.choices  # type: ignore[attr-defined]
    return p


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _split_dashdash(argv: Sequence[str], what: str) -> tuple[list[str], list[str]]:
    argv = list(argv)
    if "--" not in argv:
        if any(a in ("-h", "--help") for a in argv):
            return argv, []
        raise UsageError(
            f"{what}: put the command after --, e.g. "
            f"{PROG} {what} {'n001 ' if what == 'exec' else ''}-- hostname"
        )
    i = argv.index("--")
    return argv[:i], argv[i + 1 :]


def _cmd_up(args: argparse.Namespace) -> int:
    spec = make_spec(
        nodes=args.nodes,
        leaves=args.leaves,
        node_rate=args.node_rate,
        uplink_rate=args.uplink_rate,
        taper=args.taper,
        queue=args.queue,
        prefix=args.prefix,
        tcp_cc=args.tcp_cc,
        gso=not args.no_gso,
        degrade=args.degrade,
    )
    netns.check_tcp_cc(spec.tcp_cc)
    ncpu = os.cpu_count() or 1
    if spec.nodes > 8 * ncpu:
        _log(
            f"warning: {spec.nodes} nodes on {ncpu} cores: processes of all nodes share "
            "the cores, so CPU rather than links may limit the traffic"
        )
    if spec.node_rate_bps > 1_000_000_000:
        _log("warning: node rates above 1gbit are usually limited by the CPU, not the shaping")
    desc = lifecycle.up(spec, log=_log)
    hosts = desc["nodes"]
    print(
        f"cluster '{spec.prefix}' up: {spec.nodes} nodes ({hosts[0]['hostname']}.."
        f"{hosts[-1]['hostname']}) on {spec.leaves} leaf switch(es) + spine; "
        f"node links {format_rate(spec.node_rate_bps)}, uplinks "
        f"{format_rate(spec.uplink_rate_bps)}"
        + (f" (taper {spec.taper})" if spec.taper else "")
        + f", queues {format_bytes(spec.queue_bytes)}; "
        f"state in {state.state_dir(spec.prefix)} ({desc['setup_seconds']:.2f} s)"
        + (f"; degraded: {degraded_note(desc)}" if desc["degraded"] else "")
    )
    return 0


def _cmd_down(args: argparse.Namespace) -> int:
    res = lifecycle.down(args.prefix)
    if res["namespaces"] == 0:
        print(f"cluster '{args.prefix}': nothing to remove")
    else:
        print(
            f"cluster '{args.prefix}' down: removed {res['namespaces']} namespaces, "
            f"stopped {res['processes']} processes"
        )
    return 0


def _cmd_shape(args: argparse.Namespace) -> int:
    on = args.on or bool(args.degrade)
    desc = lifecycle.set_shaping(args.prefix, enabled=on, degrade=parse_degrade(args.degrade))
    r = desc["rates"]
    if on:
        print(
            f"cluster '{desc['prefix']}': shaping on ({desc['changed']} links): node links "
            f"{r['node']}, uplinks {r['uplink']}, queues {desc['queue']}"
            + (f"; degraded: {degraded_note(desc)}" if desc["degraded"] else "")
            + "; counters restart at 0"
        )
    else:
        print(
            f"cluster '{desc['prefix']}': shaping off (removed from {desc['changed']} links): "
            "links are unlimited and unqueued; restore with: contend cluster shape --on"
            + (f" --prefix {desc['prefix']}" if desc["prefix"] != DEFAULT_PREFIX else "")
        )
    return 0


def _cmd_show(args: argparse.Namespace) -> int:
    desc = state.load(args.prefix)
    if args.json:
        print(json.dumps(desc, indent=2))
        return 0
    r = desc["rates"]
    print(
        f"cluster '{desc['prefix']}' ({len(desc['nodes'])} nodes, {len(desc['leaves'])} "
        f"leaves; subnet {desc['subnet']}; state {state.state_dir(desc['prefix'])})"
    )
    shaped = desc.get("shaping", "on") == "on"
    print(
        f"  node links {r['node']}, uplinks {r['uplink']}"
        + (f" (taper {desc['taper']})" if desc.get("taper") else "")
        + f", queues {desc['queue']}, TCP {desc.get('tcp_congestion_control') or 'default'}"
        + ("" if shaped else "; shaping OFF (links unlimited; shape --on restores it)")
    )
    if desc.get("degraded"):
        print(f"  degraded: {degraded_note(desc)} (shape --on restores the rates)")
    print(f"  {'node':<6} {'hostname':<14} {'namespace':<14} {'address':<16} leaf")
    for n in desc["nodes"]:
        print(
            f"  {n['name']:<6} {n['hostname']:<14} {n['namespace']:<14} "
            f"{n['address']:<16} leaf{n['leaf']}"
        )
    return 0


def _cmd_list(_args: argparse.Namespace) -> int:
    netns.check_usable()
    for prefix in lifecycle.list_clusters():
        desc = state.load(prefix, required=False)
        what = (
            f"{len(desc['nodes'])} nodes, status {desc.get('status')}"
            + (", shaping off" if desc.get("shaping") == "off" else "")
            + (f", {len(desc['degraded'])} link(s) degraded" if desc.get("degraded") else "")
            if desc
            else "namespaces without state (remove with down)"
        )
        print(f"{prefix}: {what}")
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    netns.check_usable()
    desc = state.load(args.prefix)
    if args.sample_interval is None:
        if args.duration is not None or args.until_pid is not None or args.csv:
            raise UsageError("--duration, --until-pid and --csv need --sample-interval")
        stats.one_shot(desc)
        return 0
    stats.time_series(
        desc,
        args.sample_interval,
        duration=args.duration,
        until_pid=args.until_pid,
        csv_path=args.csv,
        log=_log,
    )
    return 0


def _dispatch(argv: list[str]) -> int:
    parser = build_parser()
    subs = parser._subparsers_map  # type: ignore[attr-defined]
    if argv and argv[0] == "run":
        opts, program = _split_dashdash(argv[1:], "run")
        args, mpirun_opts = subs["run"].parse_known_args(opts)
        validate_prefix(args.prefix)
        netns.check_usable()
        desc = state.load(args.prefix)
        return launch.run_mpi(
            desc,
            program,
            np=args.np,
            ppn=args.ppn,
            mpirun_opts=mpirun_opts,
            mpirun=args.mpirun,
            dry_run=args.dry_run,
        )
    if argv and argv[0] == "exec":
        opts, command = _split_dashdash(argv[1:], "exec")
        args = subs["exec"].parse_args(opts)
        validate_prefix(args.prefix)
        netns.check_usable()
        desc = state.load(args.prefix)
        return launch.exec_on_node(desc, args.node, command)
    args = parser.parse_args(argv)
    if hasattr(args, "prefix"):
        validate_prefix(args.prefix)
    if args.command in ("down",):
        netns.check_usable()
    handler = {
        "up": _cmd_up,
        "down": _cmd_down,
        "show": _cmd_show,
        "list": _cmd_list,
        "stats": _cmd_stats,
        "shape": _cmd_shape,
    }[args.command]
    return handler(args)


@guarded(PROG)
def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of ``contend-cluster``: runs the command, exits with its status."""
    argv = list(sys.argv[1:] if argv is None else argv)

    def on_term(signum, _frame):
        raise SystemExit(128 + signum)

    # SIGTERM unwinds like an error, so that a partial 'up' is rolled back
    signal.signal(signal.SIGTERM, on_term)
    try:
        status = _dispatch(argv)
    except (UsageError, ClusterError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        status = exc.exit_status
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        status = 130
    except Exception as exc:
        if os.environ.get(TRACEBACK_ENV):
            raise
        status = report(PROG, exc)
    sys.exit(status)


if __name__ == "__main__":
    main()
