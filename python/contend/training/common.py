"""What the two training commands of the Netscope models share: GPCNeT's
congestors beside the measured jobs, the runs and their files, the options
and the command's shell.  ``contend pingpong-train`` (latency model,
:mod:`contend.training.pingpong`) and ``contend sensitivity-train`` (delay
sensitivity, :mod:`contend.training.sensitivity`) are plans of such runs.

A training run is one ``contend jobs`` run of a generated job file on an
engine (:mod:`contend.runs.engines`) with the fabric's counters recorded
meanwhile where the engine records them: ``sim`` (the run writes its own
counter CSV on the simulated clock), ``cluster`` (``contend cluster stats``
samples the links; the CSV's times are Unix seconds, the clock of the jobs'
``pass_clock.perform_t0_unix_s``); ``mpi`` (a launcher such as ``srun``)
records none: counters come from the site's collection, in Unix time.
Run i of ``--seed S`` has seed S * 1000 + i and writes OUT.runI.job, .json
and .csv beside ``-o OUT.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..argtypes import count, nonneg_float, positive_float
from ..limits import MAX_CONGESTOR_REPEAT, MAX_RUNS, clip_repr
from ..outfile import write_text
from ..runs import command
from ..runs.errors import UsageError
from ..runs.executor import Executor, log_stderr, read_run
from ..runs.files import check_files, check_output, write_json_atomic
from ..runs.spec import RunSpec

CONGESTORS = ("pairwise_a2a", "p2p_incast", "rma_put_incast", "rma_get_bcast")


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
                f"--congestion: {clip_repr(item)}: the fraction of the other nodes that run "
                "congestors must be in (0, 1]"
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


# ------------------------------------------------------------------ runs and files


def run_seed(seed: int, i: int) -> int:
    """The seed of run i of a training with --seed seed."""
    return seed * 1000 + i


def run_files(out: Path, name: str) -> tuple[Path, Path, Path]:
    """(job file, jobs results, counter CSV) of the run ``name`` ('run3')
    beside ``-o OUT.json``: OUT.run3.job, .json, .csv."""
    stem = out.name.removesuffix(".json")
    job, res, csv = (out.parent / f"{stem}.{name}.{ext}" for ext in ("job", "json", "csv"))
    return job, res, csv


def training_outputs(out: Path, runs: int) -> list:
    """(option, path) of every file a training command writes beside ``-o OUT``."""
    return [(f"-o's run file {i}", path) for i in range(runs) for path in run_files(out, f"run{i}")]


class Trainer:
    """A training's plan: its output and run files (checked by the output
    rule), its --congestion, its engine (``--engine`` and its options, the
    options after -- as simulator options) with the nodes it gives, and its
    runs, one after the other (:meth:`runs`, :meth:`run`)."""

    def __init__(self, prog: str, args, inputs=(), before=(), after=()):
        """``inputs``, ``before``, ``after``: (option, path) of the files the
        command reads, and writes besides -o before and after the run files."""
        self.out, self.args = Path(args.output), args
        check_output(self.out)
        outputs = [("-o", self.out), *before, *training_outputs(self.out, args.runs), *after]
        check_files(list(inputs), outputs)
        self.congestion = parse_congestion(args.congestion)
        self.extra = list(args.jobs_args)
        self.engine = command.engine_from_args(
            args, command.harness_binary("the training"), fabric=self.extra
        )
        if not self.engine.in_process and self.extra:
            raise UsageError(
                f"arguments after -- go to the simulator only (got {' '.join(self.extra)})"
            )
        self.nodes = self.engine.nodes()
        self.executor = Executor(prog, quiet=True)

    def runs(self):
        """(index, congestion, its label, seed, files) of each run in turn."""
        for i in range(self.args.runs):
            cong = self.congestion[i % len(self.congestion)]
            files = run_files(self.out, f"run{i}")
            yield i, cong, congestion_label(cong), run_seed(self.args.seed, i), files

    def record(self, i: int, label: str, congestors) -> dict:
        """The start of run i's entry in the training file; ``congestors``:
        [(motif, node count, repeat)]."""
        job, res, csv = run_files(self.out, f"run{i}")
        return {
            "run": i,
            "seed": run_seed(self.args.seed, i),
            "congestion": label,
            "congestors": [{"motif": m, "nodes": n, "repeat": rep} for m, n, rep in congestors],
            "job_file": job.name,
            "results": res.name,
            "counters": csv.name if self.engine.records_counters else None,
        }

    def document(self, schema: str, **fields) -> dict:
        """The training file's document, written atomically to -o."""
        doc = {"schema": schema, "schema_version": "1.0", "engine": self.engine.name, **fields}
        write_json_atomic(self.out, doc)
        return doc

    def run(self, text: str, files, seed: int, interval_us: float, defines=()) -> dict:
        """Writes the job file ``text`` and runs it once with its counters
        recorded (files: job, results, CSV); returns the results document."""
        job, res, csv = files
        write_text(job, text, error=UsageError)
        spec = RunSpec(
            job_file=job,
            seed=seed,
            options=command.run_options(self.args),
            defines=tuple(defines),
            extra=tuple(self.extra),
            output=res,
            counters=csv if self.engine.records_counters else None,
            counter_interval_us=interval_us,
            sample_interval_s=self.args.sample_interval,
            timeout=self.args.timeout,
        )
        with self.engine.sampling(spec):
            self.executor.run_one(spec, self.engine.command(spec))
        return read_run(res)


def training_parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    """The parser of a training command, to which it adds its own options
    between :func:`add_runs_options`, :func:`add_congestion_option` and
    :func:`add_training_options`."""
    tail = "\nArguments after -- go to every simulated run (e.g. --routing, --network)."
    return command.harness_parser(prog, description, epilog + tail)


def add_runs_options(p, runs: int) -> None:
    """-o (the training file) and --runs."""
    p.add_argument("-o", "--output", required=True, help="training file to write (JSON)")
    p.add_argument(
        "--runs",
        type=count(MAX_RUNS),
        default=runs,
        help=f"runs [count, 1 to {MAX_RUNS}, default %(default)s]",
    )


def add_congestion_option(p, default: str, why: str = "") -> None:
    """--congestion (``why``: the reason of the default)."""
    p.add_argument(
        "--congestion",
        default=default,
        help="per run in turn: none, or gpcnet[:F] = the congestors on a share F of the other "
        f"nodes [default %(default)s{why}]",
    )


def add_training_options(p) -> None:
    """The options every training command shares (argparse)."""
    command.add_engine_options(p)
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
    command.add_options(p, "seed", "timeout", "quiet")


def training_main(prog: str, parser: argparse.ArgumentParser, train, summary, argv=None) -> int:
    """The shell of a training command: parse, train (progress lines on
    stderr), bad input 2, a failed run 3, else print summary(args, doc)."""

    def body(args) -> int:
        doc = train(args, log_stderr)
        print(f"{prog}: {summary(args, doc)}")
        return 0

    return command.harness_main(
        prog,
        parser,
        body,
        argv,
        stopped="the runs were stopped (no training file written)",
        extra=True,
    )
