"""Training runs of the Netscope models: one ``contend jobs`` run of a job file
on an engine, with the fabric's counters sampled meanwhile, and GPCNeT's
congestors added on a share of the nodes.  Shared by ``contend
pingpong-train`` (latency model) and ``contend sensitivity-train`` (delay
sensitivity).

Engines: ``sim`` (the run writes its own counter CSV on the simulated clock),
``cluster`` (``contend cluster run`` with ``contend cluster stats`` sampling
the links meanwhile; the CSV's times are rewritten to Unix seconds, the clock
of the jobs' ``pass_clock.perform_t0_unix_s``), ``mpi`` (a launcher such as
``srun``; counters come from the site's collection, in Unix time).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .. import infile, outfile
from ..argtypes import count, nonneg_float, positive_float, split_dashes
from ..guard import TRACEBACK_ENV, report
from ..limits import MAX_CONGESTOR_REPEAT, MAX_NODES, clip_repr
from ..runs import children

EXIT_USAGE = 2
EXIT_FAIL = 3
CONGESTORS = ("pairwise_a2a", "p2p_incast", "rma_put_incast", "rma_get_bcast")


class UsageError(ValueError):
    """Bad input: one message, exit status 2."""


class RunError(RuntimeError):
    """A run failed after it started: exit status 3."""


def contend_binary() -> str:
    """The contend binary (C): CONTEND_BIN, else a `contend` that is not a
    script next to this program as started (build/bin, where contend-X is a
    link into the virtual environment whose own `contend` is the Python
    launcher), then next to its link target (an install prefix), else the
    first on PATH that is not a script."""
    from ..launcher import _is_binary

    env = os.environ.get("CONTEND_BIN")
    if env:
        return env
    here = Path(sys.argv[0])
    dirs = [here.absolute().parent, here.resolve().parent]
    dirs += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    for base in dirs:
        if _is_binary(base / "contend"):
            return str(base / "contend")
    return "contend"


def run_command(cmd, timeout: float) -> tuple[str, str]:
    """Runs cmd in its own process group; exit 2 becomes UsageError (the
    child's first line without its "contend X: error:" prefix), other
    failures RunError.  Returns (stdout, stderr)."""
    proc = children.start(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RunError(f"timed out after {timeout:g} s: {cmd[0]} {cmd[1]}") from None
    finally:
        children.finished(proc)
    if proc.returncode == 2:
        first = err.strip().splitlines()[0] if err.strip() else f"{cmd[1]}: bad input"
        raise UsageError(re.sub(r"^contend [a-z -]+: error: ", "", first))
    if proc.returncode != 0:
        raise RunError(f"{cmd[1]} failed (exit {proc.returncode}): {err.strip()[-800:]}")
    return out, err


def parse_congestion(text: str) -> list[tuple[str, float]]:
    """'none,gpcnet:0.5,gpcnet' -> [('none', 0), ('gpcnet', 0.5), ('gpcnet', 1)]."""
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        name, _, frac = item.partition(":")
        if name == "none" and not frac:
            out.append(("none", 0.0))
            continue
        if name != "gpcnet":
            raise UsageError(
                f"--congestion: unknown item {clip_repr(item)} (expected none or gpcnet[:FRACTION])"
            )
        try:
            f = float(frac) if frac else 1.0
        except ValueError:
            f = -1.0
        if not 0 < f <= 1:
            raise UsageError(
                f"--congestion: {clip_repr(item)}: the fraction of the other nodes that run congestors "
                "must be in (0, 1]"
            )
        out.append(("gpcnet", f))
    if not out:
        raise UsageError("--congestion is empty (e.g. none,gpcnet:0.5,gpcnet)")
    return out


def congestion_label(cong: tuple[str, float]) -> str:
    return "none" if cong[0] == "none" else f"gpcnet:{cong[1]:g}"


def congestor_jobs(congestors, iters: int = 16) -> str:
    """Job-file text of GPCNeT's congestors, given as [(motif, nodes, repeat)]
    where nodes is a node list or a count (placed at random by contend jobs)."""
    lines = []
    for name, nodes, repeat in congestors:
        where = (
            f"[PLACEMENT] random nodes={nodes}"
            if isinstance(nodes, int)
            else f"[NID_LIST] {','.join(map(str, nodes))}"
        )
        lines += [
            f"[JOB_NAME] {name}",
            where,
            f"[REPEAT] {repeat}",
            f"[MOTIF] {name} iters={iters} warmup=0",
            "",
        ]
    return "\n".join(lines)


class RepeatCalibration:
    """Repeats that keep each congestor busy for `margin` times the window to
    cover: a congestor's repeat takes about c * n seconds on n nodes (each of
    these patterns moves n - 1 or n messages per iteration); c is learnt from
    the last run that had the congestor.  Before that, `first` repeats."""

    def __init__(self, fixed: int, first: int = 20, margin: float = 3.0):
        self.fixed, self.first, self.margin = fixed, first, margin
        self.c: dict[str, float] = {}

    def repeat(self, name: str, n: int, window_s: float) -> int:
        if self.fixed:
            return self.fixed
        if name not in self.c:
            return self.first
        return max(
            1, min(MAX_CONGESTOR_REPEAT, int(self.margin * window_s / (self.c[name] * n)) + 1)
        )

    def learn(self, results: dict, used: dict) -> None:
        """used: {job name: (nodes, repeat)} of the congestors of that run."""
        for job in results["jobs"]:
            if job["name"] in used:
                res = job["results"]["concurrent"]
                took = res["perform_end_s"] - res["perform_start_s"]
                n, rep = used[job["name"]]
                if took > 0:
                    self.c[job["name"]] = took / (rep * n)


def read_run(path) -> dict:
    """The JSON document a run wrote (contend.infile's limits); RunError naming
    the file when it is unreadable (the run, not the user, wrote it)."""
    return infile.load_json(path, "the results of the run", RunError)


def topology_nodes(text: str) -> int:
    """Node count from the JSON `contend topology paths -q` prints."""
    doc = infile.parse_json(text, "contend topology paths", RunError)
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), int):
        raise RunError("contend topology paths printed no node count")
    return doc["nodes"]


def check_output(path: Path) -> None:
    outfile.check_output(path, error=UsageError)


def check_files(inputs, outputs) -> None:
    """The output rule (contend.outfile.check_distinct) as a UsageError."""
    outfile.check_distinct(inputs, outputs, UsageError)


def training_outputs(out: Path, runs: int, exts=("job", "json", "csv")) -> list:
    """(option, path) of every file a training command writes beside ``-o OUT``:
    OUT.runN.EXT for each run."""
    stem = out.name.removesuffix(".json")
    return [
        (f"-o's run file {i}", out.parent / f"{stem}.run{i}.{ext}")
        for i in range(runs)
        for ext in exts
    ]


def write_json_atomic(path: Path, doc: dict) -> None:
    """Whole or not at all: a unique temporary beside path, renamed into place."""
    outfile.write_text(path, json.dumps(doc, indent=1) + "\n", error=UsageError)


def cluster_description() -> dict:
    out = subprocess.run(
        [contend_binary(), "cluster", "show", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise UsageError(
            "--engine cluster: no emulated cluster is up (start one with `contend cluster up`)"
        )
    try:
        return infile.parse_json(out.stdout, "the cluster's description", UsageError)
    except UsageError as exc:
        raise UsageError(
            f"--engine cluster: cannot read the cluster's description: {exc}"
        ) from None


def _shift_csv_times(path: Path, offset: float) -> None:
    """Adds offset to the time_s column (first column) of a counter CSV."""

    def shift(dst):  # streams: the new file is a temporary until renamed over path
        with open(path, newline="") as src:
            r, w = csv.reader(src), csv.writer(dst, lineterminator="\n")
            w.writerow(next(r))
            for row in r:
                row[0] = f"{float(row[0]) + offset:.6f}"
                w.writerow(row)

    outfile.write_with(path, shift, "w", "counter CSV", UsageError, newline="")


@dataclass
class Engine:
    """Where training runs go, and how counters are sampled there."""

    name: str  # sim | cluster | mpi
    sim_args: list = field(default_factory=list)  # --topology ... and pass-through options
    launcher: str = ""
    sample_interval_s: float = 0.2
    timeout_s: float = 1800
    binary: str = field(default_factory=contend_binary)

    def run(
        self, job_file: Path, seed: int, results: Path, counters: Path, interval_us: float, extra=()
    ) -> dict:
        """Runs `contend jobs job_file` once; returns the results document with
        its counter file (or None) on the same clock as its pass_clock."""
        jobs = ["jobs", job_file, "--seed", seed, "-o", results, "-q", *extra]
        if self.name == "sim":
            run_command(
                [
                    self.binary,
                    *jobs,
                    "--engine",
                    "sim",
                    *self.sim_args,
                    "--counters",
                    counters,
                    "--counter-interval-us",
                    f"{interval_us:g}",
                ],
                self.timeout_s,
            )
        elif self.name == "cluster":
            self._run_cluster(jobs, counters)
        else:
            run_command([*shlex.split(self.launcher), self.binary, *jobs], self.timeout_s)
        return read_run(results)

    def fabric_args(self) -> list:
        """sim_args without the options of the jobs alone (ranks per node), which
        `contend topology` does not take: the fabric is the same at any count."""
        out, skip = [], False
        for a in self.sim_args:
            if skip:
                skip = False
            elif a == "--ranks-per-node":
                skip = True
            elif not str(a).startswith("--ranks-per-node="):
                out.append(a)
        return out

    def clock_key(self) -> str:
        """The pass_clock entry on the counters' clock."""
        return "perform_t0_clock_s" if self.name == "sim" else "perform_t0_unix_s"

    def _run_cluster(self, jobs, counters: Path) -> None:
        stats = children.start(
            [
                self.binary,
                "cluster",
                "stats",
                "--sample-interval",
                f"{self.sample_interval_s:g}",
                "--csv",
                str(counters),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        unix0 = None
        try:
            line = stats.stderr.readline()  # "sampling N links ...; time_s 0 = ... (unix T)"
            m = re.search(r"\(unix ([0-9.]+)\)", line)
            if not m:
                raise RunError(f"contend cluster stats did not start: {line.strip()}")
            unix0 = float(m.group(1))
            launcher = (
                shlex.split(self.launcher)
                if self.launcher
                else [self.binary, "cluster", "run", "--"]
            )
            run_command([*launcher, self.binary, *jobs], self.timeout_s)
        finally:
            if stats.poll() is None:
                stats.send_signal(signal.SIGTERM)
            try:
                stats.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(stats.pid, signal.SIGKILL)
                stats.communicate()
            children.finished(stats)
        _shift_csv_times(counters, unix0)  # relative -> Unix seconds


def engine_nodes(engine: Engine, nodes_option: int) -> tuple[int, dict | None]:
    """Node count of the engine (and the cluster description on the cluster)."""
    if engine.name == "sim":
        out, _ = run_command(
            [engine.binary, "topology", "paths", "-q", *engine.fabric_args(), "--pairs", "0:1"], 60
        )
        return topology_nodes(out), None
    if engine.name == "cluster":
        desc = cluster_description()
        return len(desc["nodes"]), desc
    if not engine.launcher or not nodes_option:
        raise UsageError("--engine mpi needs --launcher 'CMD ...' and --nodes N")
    return nodes_option, None


def add_engine_options(p) -> None:
    """The options every training command shares (argparse)."""
    p.add_argument(
        "--engine",
        choices=("sim", "cluster", "mpi"),
        default="sim",
        help="where the runs go: the simulated fabric (default), the emulated cluster "
        "(needs `contend cluster up`), or real MPI through --launcher",
    )
    p.add_argument(
        "--topology",
        default="dragonfly:a=4,p=4,h=2",
        help="sim: fabric topology spec (contend jobs --help) [default %(default)s, 144 nodes]",
    )
    p.add_argument(
        "--congestor-repeat",
        type=count(MAX_CONGESTOR_REPEAT, 0),
        default=0,
        help="repeats of each congestor's motif (0: 20 in the first congested run, then enough "
        f"to outlast the measured job, learnt from the runs before) [count, at most "
        f"{MAX_CONGESTOR_REPEAT}]",
    )
    p.add_argument(
        "--counter-interval-us",
        type=nonneg_float,
        default=0,
        help="sim: counter sampling interval (0: a tenth of the expected window, at least 5 us) "
        "[us]",
    )
    p.add_argument(
        "--sample-interval",
        type=positive_float,
        default=0.2,
        help="cluster: link counter sampling interval [s, default %(default)s]",
    )
    p.add_argument(
        "--launcher",
        default="",
        help="mpi: the command that starts one rank per node, e.g. 'srun -N 64 -n 64' "
        "(cluster: default `contend cluster run --`)",
    )
    p.add_argument(
        "--nodes",
        type=count(MAX_NODES, 0),
        default=0,
        help=f"mpi: nodes the launcher gives [count, at most {MAX_NODES}]",
    )
    p.add_argument("--seed", type=int, default=1, help="seed of placements and runs")
    p.add_argument(
        "--timeout",
        type=lambda t: positive_float(t, "timeout"),
        default=1800,
        help="per run [s, default %(default)s]",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")


def command_main(prog: str, parser, train, summary, argv=None) -> int:
    """The shell of a training command: parse, train (with progress lines on
    stderr), one message and exit 2 for bad input or 3 for a failed run, else
    print summary(args, doc) and return 0."""

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    own, extra = split_dashes(sys.argv[1:] if argv is None else argv)
    try:
        args = parser.parse_args(own)
        args.jobs_args = extra  # to every simulated run
        with children.forward_signals():
            doc = train(args, log)
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except RunError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return EXIT_FAIL
    except (children.Interrupted, KeyboardInterrupt) as e:
        status = children.interrupt_status(e)
        print(
            f"{prog}: interrupted; the runs were stopped (no training file written)",
            file=sys.stderr,
        )
        return status
    except Exception as e:
        if os.environ.get(TRACEBACK_ENV):
            raise
        return report(prog, e)
    print(f"{prog}: {summary(args, doc)}")
    return 0


def engine_from(args) -> Engine:
    extra = list(args.jobs_args)
    if args.engine != "sim" and extra:
        raise UsageError(f"arguments after -- go to the simulator only (got {' '.join(extra)})")
    return Engine(
        name=args.engine,
        sim_args=["--topology", args.topology, *extra] if args.engine == "sim" else [],
        launcher=args.launcher,
        sample_interval_s=args.sample_interval,
        timeout_s=args.timeout,
    )
