"""``contend locate RESULTS``: rank the links that slow a machine's pairs down.

Reads a ``contend pairs`` results file (or the rings a ``network``/``load``
run recorded with ``--record-rings``: :mod:`.rings`), gets the routing's paths between the
measured nodes from ``contend topology paths`` (or a paths file), fits a
per-link slowdown (:mod:`.infer`) and prints the links ranked, named as the
simulator's counter CSV names ports (``component:port``), with their
confidence and the links the measurements cannot separate from them.
Console script ``contend-locate``.  Bad input: one line, exit status 2,
before any fit; ``-o`` is written through a temporary file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from ..argtypes import count
from ..cluster.state import default_prefix
from ..cluster.topology import PREFIX_RE as CLUSTER_PREFIX_RE
from ..guard import guarded
from ..limits import clip
from ..models.errors import ModelError
from ..models.paths import HINT as PATHS_HINT
from ..models.paths import parse_paths, read_json
from ..outfile import check_distinct, check_output, write_text
from ..runs.binary import BinaryNotFound, find_binary
from .cluster import cluster_paths
from .infer import column_groups, fit, relative_excess
from .measurements import SCHEMA_NAME as PAIRS_SCHEMA
from .measurements import LocateError, pairs_of, read_results
from .rings import PHASES, load_rings, ring_weights

PROG = "contend locate"
EXIT_USAGE = 2
SCHEMA_NAME = "contend-locate"
SCHEMA_VERSION = "1.0"
TOP_MAX = 1000
BOOTSTRAP_MAX = 1000
MAX_PATHS_MAX = 1024
MEASUREMENTS_MAX = 1 << 24  # the most contend pairs or --record-rings writes
PAIRS_PER_CALL = 8000  # pairs named in one argument (Linux: 128 KiB at most per argument)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line on stderr, status 2, no usage dump
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Rank the links that slow pairs down, from all-pairs measurements (contend pairs)\n"
            "or the rings a contend network/load run recorded (--record-rings), and the\n"
            "routing's paths (contend topology paths).  Each pair's time per byte over the\n"
            "best pair's, minus 1, is modelled as the sum of per-link slowdowns along its\n"
            "path(s), fitted by non-negative least squares; a link at fraction f of its\n"
            "bandwidth shows a slowdown near 1/f - 1.  A ring rank's value is one such\n"
            "measurement of the four flows to and from its two ring neighbours (each link\n"
            "of them once).  Links crossed by exactly the same pairs cannot be separated\n"
            "and are reported together.  Confidence: the share of bootstrap resamples of\n"
            "the pairs that rank a link first (p_first) and within the top N (p_top).\n"
            "Method and limits: docs/locate.md."
        ),
        epilog=(
            "examples:\n"
            "  contend pairs --engine sim --topology fattree:leaves=32,nodes=4,uplinks=2 \\\n"
            "      --degrade leaf3:5=0.25 --seed 1 -o pairs.json\n"
            "  contend locate pairs.json            # the topology of a simulated run\n"
            "  contend locate mpi-pairs.json --topology-conf topology.conf -o located.json\n"
            "  contend cluster run -- contend pairs -o cl-pairs.json\n"
            "  contend locate cl-pairs.json --cluster   # the emulated cluster that is up\n"
            "  contend load --engine sim --topology fattree:leaves=32,nodes=4,uplinks=2 \\\n"
            "      --canaries rr_bw --measurements 2 --rings 30 --record-rings -o load.json\n"
            "  contend locate load.json --phase isolated"
        ),
    )
    p.add_argument(
        "results",
        metavar="RESULTS",
        help="a contend pairs results file, or contend network/load results with --record-rings",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--topology",
        metavar="SPEC",
        help="the machine as a topology spec (default: the simulated run's own)",
    )
    src.add_argument(
        "--topology-conf",
        metavar="FILE",
        help="a Slurm topology.conf; the results' node i is the file's i-th node",
    )
    src.add_argument(
        "--paths",
        metavar="FILE",
        help="a contend-paths file holding the measured node pairs (instead of a topology)",
    )
    src.add_argument(
        "--cluster",
        nargs="?",
        const=default_prefix(),
        metavar="PREFIX",
        help="the emulated cluster that is up (contend cluster; PREFIX default "
        "$CONTEND_CLUSTER_PREFIX, else ct): its leaf/spine tree, links named as contend "
        "cluster stats names them, nodes matched by host name",
    )
    p.add_argument("--routing", metavar="R", help="the routing (default: the run's, else the "
                   "topology's default)")  # fmt: skip
    p.add_argument(
        "--metric",
        choices=("bw", "lat"),
        default="bw",
        help="fit bandwidth (time per byte, default) or 8 B latency",
    )
    p.add_argument(
        "--phase",
        choices=PHASES,
        default="isolated",
        help="network/load results: the rings of the canaries alone (default) or under load",
    )
    p.add_argument(
        "--test",
        metavar="LIST",
        type=lambda s: [t.strip() for t in s.split(",") if t.strip()],
        help="network/load results: the ring tests to fit, comma-separated (default: every "
        "ring test recorded with values of --metric)",
    )
    p.add_argument(
        "--top",
        type=count(TOP_MAX),
        default=10,
        metavar="N",
        help=f"links shown and the N of p_top (default 10, at most {TOP_MAX})",
    )
    p.add_argument(
        "--bootstrap",
        type=count(BOOTSTRAP_MAX, 0),
        default=20,
        metavar="N",
        help=f"bootstrap resamples for the confidence (default 20, 0: none, at most "
        f"{BOOTSTRAP_MAX})",
    )
    p.add_argument(
        "--max-paths",
        type=count(MAX_PATHS_MAX),
        default=16,
        metavar="N",
        help="paths per pair taken from the routing (adaptive routings: a seeded sample; "
        f"default 16, at most {MAX_PATHS_MAX})",
    )
    p.add_argument(
        "--seed", type=count(2**63 - 1, 0), default=1, metavar="S", help="seed of the bootstrap"
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the ranking as JSON here (schemas/contend-locate.schema.json)",
    )
    p.add_argument("--contend", metavar="PATH", help="the contend binary (default: found)")
    return p


def _ranges(nodes) -> str:
    """0-7,9,12-15 of sorted distinct node numbers."""
    out, start, prev = [], None, None
    for n in nodes:
        if start is None:
            start = prev = n
        elif n == prev + 1:
            prev = n
        else:
            out.append(f"{start}-{prev}" if prev > start else f"{start}")
            start = prev = n
    if start is not None:
        out.append(f"{start}-{prev}" if prev > start else f"{start}")
    return ",".join(out)


def _topology_paths(binary, spec, routing, args_tail, out: Path) -> dict:
    cmd = [binary, "topology", "paths", "--topology", spec, "-q", "-o", str(out), *args_tail]
    if routing:
        cmd += ["--routing", routing]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        line = (r.stderr.strip().splitlines() or ["failed"])[-1]
        line = line.removeprefix("contend topology paths: ").removeprefix("error: ")
        line = line.removesuffix(" (see contend topology paths --help)")
        raise LocateError(f"contend topology paths: {clip(line, 400)}")
    return json.loads(out.read_text())


def _without_vcs(doc, source):
    """A paths document as links without their VCs: a slow link is slow on every VC."""
    try:
        for pair in doc.get("pairs", []) if isinstance(doc, dict) else []:
            if isinstance(pair, dict):
                pair.pop("vcs", None)
        return parse_paths(doc, source)
    except ModelError as exc:
        raise LocateError(str(exc)) from None


def _load_paths(path):
    try:
        doc = read_json(path, PATHS_HINT)
    except ModelError as exc:
        raise LocateError(str(exc)) from None
    return _without_vcs(doc, path)


def _merge_paths(docs) -> dict:
    """One paths document of several of one topology (links matched by name)."""
    index, links, pairs = {}, [], []
    for doc in docs:
        ids = []
        for link in doc["links"]:
            key = (link["component"], link["port"])
            if key not in index:
                index[key] = len(links)
                links.append(link)
            ids.append(index[key])
        for pair in doc["pairs"]:
            pair["paths"] = [[ids[i] for i in path] for path in pair["paths"]]
            pairs.append(pair)
    return {**docs[0], "links": links, "pairs": pairs}


def _paths_for(args, pairs, tmp: Path):
    """The PathSet of the measured pairs: from --paths, --cluster, or from the binary."""
    if args.paths:
        return _load_paths(args.paths)
    if args.cluster is not None:
        if args.routing:
            raise LocateError("--routing does not apply to --cluster (one path per pair)")
        return cluster_paths(args.cluster, pairs)
    if args.topology_conf:
        spec = f"slurm:{args.topology_conf}"
    elif args.topology:
        spec = args.topology
    elif pairs.topology:
        spec = pairs.topology
    else:
        raise LocateError(
            f"{pairs.source}: the results are not from a simulated fabric: give the machine "
            "with --topology SPEC, --topology-conf FILE or --paths FILE"
        )
    routing = args.routing or (pairs.routing if spec == pairs.topology else None)
    try:
        binary = find_binary(args.contend)
    except BinaryNotFound as exc:
        raise LocateError(str(exc)) from None
    probe = _topology_paths(binary, spec, routing, ["--pairs", "0:1"], tmp / "probe.json")
    if pairs.topology and probe["topology"] != pairs.topology:
        raise LocateError(
            f"{pairs.source}: the results ran on topology {pairs.topology}, not "
            f"{probe['topology']}: give the run's topology (or none)"
        )
    if pairs.max_node >= probe["nodes"]:
        raise LocateError(
            f"{pairs.source}: the results' ranks are on nodes 0..{pairs.max_node}, the topology "
            f"{probe['topology']} has {probe['nodes']} nodes (0..{probe['nodes'] - 1})"
        )
    nodes = sorted(set(pairs.src.tolist()) | set(pairs.dst.tolist()))
    measured = sorted(set(zip(pairs.src.tolist(), pairs.dst.tolist())))
    more = ["--max-paths", str(args.max_paths)]
    if 2 * len(measured) >= len(nodes) * (len(nodes) - 1):  # every pair of these nodes
        doc = _topology_paths(binary, spec, routing, ["--nodes", _ranges(nodes), *more],
                              tmp / "paths.json")  # fmt: skip
        return _without_vcs(doc, f"contend topology paths --topology {spec}")
    docs = []  # sampled rounds: the measured pairs, a command line's worth at a time
    for k in range(0, len(measured), PAIRS_PER_CALL):
        chunk = ",".join(f"{s}:{d}" for s, d in measured[k : k + PAIRS_PER_CALL])
        docs.append(_topology_paths(binary, spec, routing, ["--pairs", chunk, *more],
                                    tmp / f"paths{k}.json"))  # fmt: skip
    return _without_vcs(_merge_paths(docs), f"contend topology paths --topology {spec}")


def _units(links, weights):
    """Per link id: its unit and its peer's id (-1).  A unit joins a channel with
    its peer (the other direction of the cable, when the paths file names it)
    and with the links crossed by exactly the same pairs (inseparable)."""
    index = {_name(links, i): i for i in range(len(links))}
    peers = links["peer"] if "peer" in links else [""] * len(links)
    peer_of = np.array([index.get(p, -1) if p else -1 for p in peers], dtype=np.int64)
    parent = list(range(len(links)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i, j):
        parent[root(i)] = root(j)

    for i, j in enumerate(peer_of):
        if j >= 0:
            join(i, int(j))
    first_of: dict = {}
    for i, g in enumerate(column_groups(weights)):
        if g >= 0:
            join(i, first_of.setdefault(int(g), i))
    roots = [root(i) for i in range(len(links))]
    ids = {r: n for n, r in enumerate(dict.fromkeys(roots))}
    return np.array([ids[r] for r in roots], dtype=np.int64), peer_of


def _name(links, i) -> str:
    c, p = links.at[i, "component"], links.at[i, "port"]
    return f"{c}:{p}" if p != "" else c


def locate(args) -> tuple[str, dict]:
    doc, schema = read_results(args.results)
    source = str(args.results)
    if schema == PAIRS_SCHEMA:
        pairs = pairs_of(doc, source)
    else:
        pairs = load_rings(doc, source, args.metric, args.phase, args.test)
    del doc
    values = pairs.bw_mib_s if args.metric == "bw" else pairs.lat_us
    if len(values) > MEASUREMENTS_MAX:
        raise LocateError(f"{pairs.source}: more than {MEASUREMENTS_MAX} measurements")
    if not np.all(values > 0):
        raise LocateError(f"{pairs.source}: a pair with a {args.metric} of 0: nothing to fit")
    with tempfile.TemporaryDirectory(prefix="contend-locate-") as tmp:
        ps = _paths_for(args, pairs, Path(tmp))
    node_pairs = list(zip(pairs.src.tolist(), pairs.dst.tolist()))
    missing = ps.missing_pairs(node_pairs)
    if missing:
        s, d = missing[0]
        raise LocateError(
            f"{ps.source}: no path for the measured pair {s}->{d} ({len(missing)} missing): the "
            "paths do not match the results' nodes"
        )
    weights = ps.pair_weights(node_pairs)
    if pairs.rows is not None:  # rings: a rank waits on the flows to and from its neighbours
        weights = ring_weights(pairs.rows, weights)
    excess = relative_excess(values) if args.metric == "bw" else values / values.min() - 1.0
    links = ps.links
    unit_of, peer_of = _units(links, weights)
    f = fit(weights, excess, unit_of, args.top, args.bootstrap, args.seed)
    order = np.lexsort((np.arange(len(f.unit_score)), -f.unit_score))
    lead, members = {}, {}  # unit -> its channel with the largest slowdown; its links
    for i in range(len(links)):
        u = int(unit_of[i])
        members.setdefault(u, []).append(i)
        if u not in lead or f.slowdown[i] > f.slowdown[lead[u]]:
            lead[u] = i
    shown = []
    tiny = 1e-3 * float(f.unit_score.max(initial=0.0))  # below: the fit's noise
    for u in order[: args.top]:
        if f.unit_score[u] <= tiny:
            break
        i = lead[int(u)]
        j = int(peer_of[i])
        shown.append(
            {
                "rank": len(shown) + 1,
                "link": _name(links, i),
                "component": links.at[i, "component"],
                "port": links.at[i, "port"],
                "class": links.at[i, "link_class"],
                "slowdown": float(f.slowdown[i]),
                "fraction_estimate": float(1.0 / (1.0 + f.slowdown[i])),
                "pairs": int(f.pairs_crossing[i]),
                "peer": _name(links, j) if j >= 0 else None,
                "peer_slowdown": float(f.slowdown[j]) if j >= 0 else None,
                "p_first": float(f.p_first[u]) if args.bootstrap else None,
                "p_top": float(f.p_top[u]) if args.bootstrap else None,
                "inseparable_from": [_name(links, k) for k in members[int(u)] if k not in (i, j)],
            }
        )
    n_groups = sum(1 for i, g in enumerate(f.groups) if len(g) > 1 and g[0] == i)
    if not np.isfinite(f.slowdown).all():
        raise LocateError(f"{pairs.source}: the fit did not converge (non-finite slowdowns)")
    doc = {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "results": pairs.source,
        "topology": ps.topology,
        "routing": ps.routing,
        "metric": args.metric,
        "measured": pairs.measured,
        "measurements": int(weights.shape[0]),
        "left_out_same_node": pairs.same_node,
        "links_total": len(links),
        "inseparable_groups": n_groups,
        "bootstrap": args.bootstrap,
        "seed": args.seed,
        "top": args.top,
        "links": shown,
        "degraded": pairs.degraded,
    }
    return _table(doc), doc


def _what(doc) -> str:
    """What the measurements are: pairs, or ring positions of the named tests."""
    m = doc["measured"]
    return "pairs" if m == "pairs" else "ring positions (" + m.removeprefix("rings: ") + ")"


def _p(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def _table(doc) -> str:
    head = (
        f"contend locate: {doc['results']}: {doc['measurements']} {_what(doc)} on "
        f"{doc['topology']}, "
        f"routing {doc['routing']}, metric {doc['metric']}; {doc['links_total']} links, "
        f"{doc['inseparable_groups']} group(s) of links crossed by the same pairs"
    )
    others = [f"{r['peer']} {r['peer_slowdown']:.3f}" if r["peer"] else "-" for r in doc["links"]]
    w = max([16] + [len(r["link"]) for r in doc["links"]])  # the emulated cluster's are longer
    wo = max([22] + [len(o) for o in others])
    columns = (
        f"{'rank':>4}  {'link':<{w}} {'tier':<24} {'slowdown':>8} {'~fraction':>9} {'pairs':>6} "
        f"{'other direction':<{wo}} {'p_first':>7} {'p_top':>6}  same pairs as"
    )
    lines = [head, columns]
    for r, other in zip(doc["links"], others):
        lines.append(
            f"{r['rank']:>4}  {r['link']:<{w}} {r['class']:<24} {r['slowdown']:>8.3f} "
            f"{r['fraction_estimate']:>9.2f} {r['pairs']:>6} {other:<{wo}} {_p(r['p_first']):>7} "
            f"{_p(r['p_top']):>6}  {', '.join(r['inseparable_from'][:4])}"
            + (" ..." if len(r["inseparable_from"]) > 4 else "")
        )
    if not doc["links"]:
        lines.append("  no link slows any pair down (every pair at the best pair's speed)")
    if doc["degraded"]:
        truth = ", ".join(
            f"{d['component']}:{d['port']} ({d['peer_component']}:{d['peer_port']}) at "
            f"{d['fraction']:g}"
            for d in doc["degraded"]
        )
        lines.append(f"  the run degraded (--degrade): {truth}")
    return "\n".join(lines) + "\n"


def _cluster_flag(argv) -> list:
    """argv with a bare ``--cluster`` followed by a word that cannot be a cluster prefix
    (``pairs.json``) written ``--cluster=DEFAULT``, so that the word stays RESULTS."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg == "--":
            break
        if arg == "--cluster" and not CLUSTER_PREFIX_RE.fullmatch(out[i + 1]):
            out[i] = f"--cluster={default_prefix()}"
    return out


@guarded(PROG)
def main(argv=None) -> int:
    args = build_parser().parse_args(_cluster_flag(sys.argv[1:] if argv is None else argv))
    try:
        out = check_output(args.output, "output", LocateError) if args.output else None
        inputs = [("RESULTS", args.results), ("--topology-conf", args.topology_conf)]
        inputs.append(("--paths", args.paths))
        check_distinct(inputs, [("-o", out)], LocateError)
        table, doc = locate(args)
    except LocateError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(table)
    if out:
        write_text(out, json.dumps(doc, indent=1) + "\n", error=LocateError)
    return 0


if __name__ == "__main__":
    sys.exit(main())
