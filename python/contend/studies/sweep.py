"""Sweeps: many contend commands run as independent processes.

A scenario file holds one scenario per line: the arguments of one contend
command, split like a shell does (:mod:`shlex`), e.g.::

    # dragonfly routings under the worst-case pattern
    name=df-ugal-0.5  sim --topology dragonfly:a=4,p=2,h=2 --traffic group_shift \\
                          --routing ugal --load 0.5
    load --engine sim --topology fattree:leaves=4,nodes=4,uplinks=2 --timeout 0.001

``#`` starts a comment, blank lines are skipped and a trailing ``\\``
continues a line.  Scenario ``I`` is the I-th scenario line (from 0, the
index of a Slurm array task); an optional first word ``name=NAME`` names it.
``contend sweep run`` checks every line before running any, then runs each
scenario as its own ``contend`` process, at most ``-j`` at a time (or only
``--task`` ones, for job arrays), writing ``DIR/NNNN-NAME.json`` (or
``DIR/NNNN.json`` when unnamed) and its ``.log``; ``contend sweep collect``
merges the results into one table.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shlex
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .. import infile
from ..argtypes import count, positive_float
from ..jsonfinite import check_finite
from ..limits import MAX_CHUNK, MAX_PARALLEL, clip, clip_repr
from ..outfile import check_distinct, check_output, check_output_dir, make_dir, write_text
from ..runs import children, engines
from ..runs.binary import BinaryNotFound, find_binary
from ..runs.errors import EXIT_FAILED, EXIT_USAGE
from ..runs.executor import Executor, results_ok
from ..runs.spec import RunSpec, contend_command

SCHEMA = "contend-sweep/1"
MANIFEST = "sweep.json"
SIM_COMMAND = "sim"  # `contend sim`: the simulator's own command, on no other engine
COMMANDS = (SIM_COMMAND, "network", "load", "jobs")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")
_RESULT_FILE = re.compile(r"(\d{4,})(?:-(.+))?\.json")


class SweepError(ValueError):
    """Bad scenario file, options or results directory (exit status 2)."""


# ------------------------------------------------------------------ scenarios


@dataclass(frozen=True)
class Scenario:
    index: int
    name: str  # given with name=, else the index
    args: tuple  # contend arguments, the command first
    source: str  # FILE:LINE
    named: bool = False

    @property
    def command(self) -> str:
        return self.args[0]

    @property
    def stem(self) -> str:
        """File name without extension: NNNN-NAME, or NNNN when unnamed."""
        return f"{self.index:04d}-{self.name}" if self.named else f"{self.index:04d}"

    def argv(self, contend: str, outdir: Path) -> list:
        """The command line that runs this scenario, writing DIR/STEM.json."""
        out = str(outdir / self.stem)
        return [contend] + [a.replace("{out}", out) for a in self.args] + ["-o", out + ".json"]


def _logical_lines(text: str):
    """(first line number, text) of each line, trailing backslashes joined."""
    start, parts = None, []
    for number, line in enumerate(text.splitlines(), 1):
        if start is None:
            start = number
        stripped = line.rstrip()
        backslashes = len(stripped) - len(stripped.rstrip("\\"))
        if backslashes % 2 == 1:  # continued
            parts.append(stripped[:-1])
            continue
        parts.append(line)
        yield start, " ".join(parts)
        start, parts = None, []
    if parts:
        yield start, " ".join(parts)


def _option_values(args, *names):
    """Values of the options ``names`` in args (``--opt V`` and ``--opt=V``)."""
    values = []
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                values.append(args[i + 1])
            elif arg.startswith(name + "="):
                values.append(arg[len(name) + 1 :])
    return values


def _check_args(args: list) -> str | None:
    """Why this contend command line cannot run in a sweep, or None."""
    command = args[0]
    if command not in COMMANDS:
        hint = " (write the arguments of one contend command, e.g. 'sim --load 0.5')"
        return f"unknown command '{command}': a sweep runs {', '.join(COMMANDS)}{hint}"
    rest = args[1:]
    for arg in rest:
        if arg in ("-o", "--output") or arg.startswith("--output="):
            return "-o/--output is set by contend sweep (DIR/NNNN-NAME.json); remove it"
        if arg in ("-h", "--help"):
            return f"{arg} runs no scenario"
    if command != SIM_COMMAND:
        given = _option_values(rest, "--engine")
        engine = given[-1] if given else engines.c_engine_default("--dry-run" in rest)
        if engine not in engines.c_in_process():
            return (
                f"'{command}' needs --engine {' (or '.join(engines.c_in_process())}) in a sweep: "
                f"every scenario is one process, and the {engine} engine needs mpirun"
            )
    for spec in _option_values(rest, "--topology"):
        if spec.startswith("slurm:") and not Path(spec[len("slurm:") :]).is_file():
            return f"--topology {spec}: no such file {spec[len('slurm:') :]}"
    if command == "jobs":
        if not rest or rest[0].startswith("-"):
            return "jobs needs its job file first: jobs FILE [options]"
        if not Path(rest[0]).is_file():
            return f"no such job file: {rest[0]}"
    return None


def parse_scenarios(text: str, source: str = "<string>") -> list:
    """Scenarios of a scenario file's text; SweepError listing every bad line."""
    scenarios, errors, names = [], [], {}
    for number, line in _logical_lines(text):
        where = f"{source}:{number}"
        try:
            args = shlex.split(line, comments=True)
        except ValueError as exc:  # e.g. "No closing quotation"
            errors.append(f"{where}: {str(exc)[0].lower()}{str(exc)[1:]}")
            continue
        if not args:
            continue
        index = len(scenarios)
        name, named = str(index), False
        if args[0].startswith("name="):
            name, named = args[0][len("name=") :], True
            args = args[1:]
            if not _NAME.fullmatch(name):
                errors.append(
                    f"{where}: bad name '{name}': letters, digits and . _ + - "
                    "(starting with a letter or digit)"
                )
            elif name in names:
                errors.append(f"{where}: name '{name}' is also used at {names[name]}")
            names.setdefault(name, where)
        if args and args[0] == "contend":  # a pasted `contend sim ...`
            args = args[1:]
        if not args:
            errors.append(f"{where}: no command after the name")
        elif (why := _check_args(args)) is not None:
            errors.append(f"{where}: {why}")
        scenarios.append(Scenario(index, name, tuple(args), where, named))
    if errors:
        if len(errors) == 1:
            raise SweepError(errors[0])
        raise SweepError(f"{len(errors)} errors in {source}:\n  " + "\n  ".join(errors))
    if not scenarios:
        raise SweepError(f"{source}: no scenarios (only comments and blank lines)")
    return scenarios


def load_scenarios(path) -> list:
    path = Path(path)
    text = infile.read_text(path, "a scenario file", SweepError)
    return parse_scenarios(text, str(path))


def parse_tasks(text: str) -> list:
    """'3' or '0-4,7' -> sorted distinct indices."""
    tasks = set()
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise SweepError(f"--task '{text}': expected indices like 3 or 0-4,7")
        first = int(m.group(1))
        tasks.update(range(first, int(m.group(2) or first) + 1))
    return sorted(tasks)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def select(scenarios: list, tasks: list, chunk: int = 1) -> list:
    """The scenarios of array tasks ``tasks`` when each task runs ``chunk`` scenarios."""
    ntasks = math.ceil(len(scenarios) / chunk)
    bad = [t for t in tasks if t >= ntasks]
    if bad:
        per = f" in tasks of {chunk}" if chunk > 1 else ""
        raise SweepError(
            f"--task {bad[0]}: out of range: {_plural(len(scenarios), 'scenario')}{per} "
            f"are tasks 0-{ntasks - 1}"
        )
    return [s for t in tasks for s in scenarios[t * chunk : (t + 1) * chunk]]


# ------------------------------------------------------------------- binary


def find_contend(explicit: str | None = None) -> str:
    """The contend binary that runs the scenarios: ``explicit`` (--contend),
    else the run layer's lookup (:mod:`contend.runs.binary`)."""
    try:
        return find_binary(explicit)
    except BinaryNotFound as exc:
        raise SweepError(str(exc)) from None


# ---------------------------------------------------------------------- run


@dataclass
class Outcome:
    scenario: Scenario
    ok: bool
    wall_s: float = 0.0
    why: str = ""
    skipped: bool = False


def _write_text(path: Path, text: str) -> None:
    """Writes path whole or not at all (a unique temporary in its directory, renamed:
    array tasks on several nodes may write at once)."""
    write_text(path, text, error=SweepError)


def write_manifest(outdir: Path, scenario_file, scenarios: list, contend: str) -> None:
    """DIR/sweep.json: every scenario of the file (collect finds missing results)."""
    doc = {
        "schema": SCHEMA,
        "scenario_file": str(Path(scenario_file).resolve()),
        "contend": contend,
        "scenarios": [
            {
                "index": s.index,
                "name": s.name,
                "source": s.source,
                "args": list(s.args),
                "results": s.stem + ".json",
                "log": s.stem + ".log",
            }
            for s in scenarios
        ],
    }
    # array tasks write the same content at once: each to its own name, then renames
    _write_text(outdir / MANIFEST, json.dumps(doc, indent=1) + "\n")


class WriteFailed(RuntimeError):
    """A file of the sweep (a log) could not be written, e.g. a full disk: the
    sweep stops (exit 1); the message names the file."""


def scenario_spec(s: Scenario, outdir: Path, timeout: float | None) -> RunSpec:
    """The run spec of a scenario: its contend command writing DIR/STEM.json."""
    out = str(outdir / s.stem)
    return RunSpec(
        command=tuple(a.replace("{out}", out) for a in s.args),
        output=out + ".json",
        timeout=timeout,
        name=s.stem,
    )


def run_scenarios(
    scenarios: list,
    outdir: Path,
    contend: str,
    jobs: int,
    timeout: float | None = None,
    resume: bool = False,
    stream=None,
) -> list:
    """Runs the scenarios, at most ``jobs`` at once (contend.runs.executor,
    keeping going past failures); one progress line each on stream.  Each
    writes its output to DIR/STEM.log, opened with a header naming its
    command line (a log that cannot be written stops the sweep: WriteFailed)
    and closed with its outcome."""
    stream = stream or sys.stderr
    total, outcomes = len(scenarios), []

    def report(o: Outcome) -> None:
        outcomes.append(o)
        failed = sum(not x.ok for x in outcomes)
        head = f"[{len(outcomes)}/{total}{f', {failed} failed' if failed else ''}]"
        if o.skipped:
            text = f"{head} done {o.scenario.stem} (results exist, --resume)"
        elif o.ok:
            text = f"{head} ok   {o.scenario.stem} ({o.wall_s:.2f} s)"
        else:
            log = outdir / f"{o.scenario.stem}.log"
            text = f"{head} FAIL {o.scenario.stem}: {o.why} ({o.scenario.source}; log {log})"
        print(text, file=stream, flush=True)

    of, logs = {}, {}
    for s in scenarios:
        if resume and not results_ok(outdir / f"{s.stem}.json"):
            report(Outcome(s, True, skipped=True))
        else:
            of[scenario_spec(s, outdir, timeout)] = s

    def command(spec: RunSpec) -> list:
        return contend_command(contend, spec)

    def before(spec: RunSpec) -> None:
        Path(spec.output).unlink(missing_ok=True)  # no stale results of a failed rerun

    def sink(spec: RunSpec):
        s = of[spec]
        path = outdir / f"{s.stem}.log"
        log = None
        try:
            log = open(path, "w", encoding="utf-8")  # noqa: SIM115 (after() closes)
            log.write(f"# contend sweep: scenario {s.index} '{s.name}' ({s.source})\n")
            log.write(f"# $ {shlex.join(command(spec))}\n")
            log.flush()
        except OSError as exc:
            if log is not None:
                with contextlib.suppress(OSError):
                    log.close()
            path.unlink(missing_ok=True)
            raise WriteFailed(f"{path}: cannot write the scenario's log: {exc.strerror}") from None
        logs[spec] = log
        return log

    def read(spec: RunSpec) -> dict:
        why = results_ok(Path(spec.output))
        if why:
            raise ValueError(why)
        return {}

    def after(done) -> None:
        s, log, why = of[done.spec], logs.pop(done.spec), done.why
        try:
            log.write(f"# {'failed: ' + why if why else 'ok'}, {done.wall_s:.2f} s\n")
            log.close()
        except OSError as exc:  # the scenario's outcome stands; the log lacks its last line
            with contextlib.suppress(OSError):
                log.close()
            why = why or f"cannot write {outdir / f'{s.stem}.log'}: {exc.strerror}"
        if why != "interrupted":
            report(Outcome(s, not why, done.wall_s, why))

    executor = Executor("contend sweep", parallel=jobs, quiet=True)
    executor.run_all(
        list(of), command, read=read, before=before, sink=sink, after=after, keep_going=True
    )
    return outcomes


# ------------------------------------------------------------------ collect


@dataclass(frozen=True)
class _Col:
    key: str
    header: str
    kind: str = "num"  # num | int | str (formatting.Column kinds)
    text: bool = True  # shown in the text table (CSV/JSON carry every column)


COLUMNS = (
    _Col("index", "#", "int"),
    _Col("scenario", "scenario", "str"),
    _Col("command", "command", "str", text=False),
    _Col("engine", "engine", "str", text=False),
    _Col("topology", "topology", "str"),
    _Col("traffic", "traffic", "str"),
    _Col("routing", "routing", "str"),
    _Col("cc", "cc", "str"),
    _Col("seed", "seed", "int", text=False),
    _Col("load", "load", "num", text=False),
    _Col("offered_load", "offered", "num"),
    _Col("accepted_load", "accepted", "num"),
    _Col("latency_mean_ns", "lat mean ns"),
    _Col("latency_p50_ns", "lat p50 ns", text=False),
    _Col("latency_p99_ns", "lat p99 ns"),
    _Col("latency_max_ns", "lat max ns", text=False),
    _Col("test", "test", "str"),
    _Col("ci_mean", "CI mean"),
    _Col("ci_tail_99", "CI 99%"),
    _Col("lat_mean_us", "lat mean us"),
    _Col("lat_tail_99_us", "lat 99% us"),
    _Col("bw_mean_mib_s", "BW mean MiB/s"),
    _Col("bw_tail_99_mib_s", "BW 99% MiB/s"),
    _Col("wall_s", "wall s", text=False),
    _Col("file", "file", "str", text=False),
)


def _sim_rows(doc: dict, base: dict) -> list:
    config = doc.get("config") or {}
    base = dict(
        base,
        engine=engines.Sim.name,
        topology=doc.get("topology"),
        traffic=doc.get("traffic"),
        routing=doc.get("routing"),
        cc=config.get("cc"),
        seed=doc.get("seed"),
    )
    rows = []
    for p in doc.get("points") or []:
        lat = p.get("latency_ns") or {}
        rows.append(
            dict(
                base,
                load=p.get("load"),
                offered_load=p.get("offered_load"),
                accepted_load=p.get("accepted_load"),
                latency_mean_ns=lat.get("mean"),
                latency_p50_ns=lat.get("p50"),
                latency_p99_ns=lat.get("p99"),
                latency_max_ns=lat.get("max"),
                wall_s=p.get("wall_s"),
            )
        )
    return rows


def _results_rows(doc: dict, base: dict) -> list:
    """network/load/jobs results: impact rows (load), canary rows (network), else one."""
    simulation = (doc.get("environment") or {}).get("simulation") or {}
    base = dict(
        base,
        command=doc.get("command", base["command"]),
        engine=doc.get("engine"),
        topology=simulation.get("topology"),
        routing=simulation.get("routing"),
        cc=simulation.get("cc"),
        seed=doc.get("seed"),
        wall_s=doc.get("wall_s"),
    )
    impact = doc.get("impact") or []
    if impact:
        return [
            dict(base, test=i.get("name"), ci_mean=i.get("ci_mean"), ci_tail_99=i.get("ci_tail_99"))
            for i in impact
        ]
    rows = []
    for t in doc.get("tests") or []:
        if t.get("role") != "canary" or t.get("phase") != "isolated":
            continue
        metric = t.get("metric")
        stats = t.get(metric) or {}
        prefix = {"lat_us": "lat", "bw_mib_s": "bw"}.get(metric)
        unit = {"lat_us": "us", "bw_mib_s": "mib_s"}.get(metric)
        if prefix is None:
            continue
        rows.append(
            dict(
                base,
                test=t.get("name"),
                **{
                    f"{prefix}_mean_{unit}": stats.get("mean"),
                    f"{prefix}_tail_99_{unit}": stats.get("tail_99"),
                },
            )
        )
    return rows or [base]


def _entries(outdir: Path) -> list:
    """(index, name, results file name) of every scenario of the sweep in DIR."""
    manifest = outdir / MANIFEST
    if manifest.exists():
        doc = infile.load_json(manifest, "a sweep manifest", SweepError)
        try:
            if doc.get("schema") != SCHEMA:
                raise ValueError(f"schema is {clip_repr(doc.get('schema'))}, not {SCHEMA}")
            entries = [(s["index"], s["name"], s["results"]) for s in doc["scenarios"]]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SweepError(f"{manifest}: not a sweep manifest ({clip(exc)})") from None
        for index, name, fname in entries:
            if not (isinstance(fname, str) and _RESULT_FILE.fullmatch(fname)):
                raise SweepError(
                    f"{manifest}: scenario {clip_repr(index)} names the results file "
                    f"{clip_repr(fname)}: expected NNNN[-NAME].json in the directory"
                )
        return entries
    entries = []
    for path in sorted(outdir.glob("*.json")):
        m = _RESULT_FILE.fullmatch(path.name)
        if m:
            index = int(m.group(1))
            entries.append((index, m.group(2) or str(index), path.name))
    return entries


def collect(outdir) -> tuple:
    """(rows, problems): the table of a sweep's results, and each unreadable file."""
    outdir = Path(outdir)
    if not outdir.is_dir():
        raise SweepError(f"{outdir}: no such directory")
    entries = _entries(outdir)
    if not entries:
        raise SweepError(f"{outdir}: no {MANIFEST} and no NNNN-NAME.json results")
    rows, problems = [], []
    for index, name, fname in entries:
        path = outdir / fname
        if not path.exists() and not path.is_symlink():
            log = path.with_suffix(".log")
            why = f"failed or still running, see {log}" if log.exists() else "not run"
            problems.append(f"{path}: missing (scenario {index} '{clip(name)}' {why})")
            continue
        try:
            doc = infile.load_json(path, "a results file of the sweep", SweepError)
        except SweepError as exc:
            why = str(exc).removeprefix(f"{path}: ")
            problems.append(f"{path}: corrupt ({why})")
            continue
        try:
            check_finite(doc, str(path))
        except ValueError as exc:
            problems.append(str(exc))
            continue
        base = {"index": index, "scenario": name, "command": None, "file": fname}
        schema = doc.get("schema") if isinstance(doc, dict) else None
        if schema == "contend-sim/1":
            rows += _sim_rows(doc, dict(base, command=SIM_COMMAND))
        elif schema in ("contend-results", "contend-jobs"):
            rows += _results_rows(doc, base)
        else:
            problems.append(f"{path}: not a contend results file (schema {clip_repr(schema)})")
    return rows, problems


def table(rows: list, fmt: str) -> str:
    """The collected rows in one of formatting.FORMATS (text: the main columns)."""
    import pandas as pd

    from ..formatting import Column, render

    keys = [c.key for c in COLUMNS]
    frame = pd.DataFrame(rows, columns=keys).astype(object)
    frame = frame.where(frame.notna(), None)
    present = [c for c in COLUMNS if frame[c.key].notna().any()]
    if fmt in ("text", "markdown"):
        mixed = frame["command"].nunique() > 1
        present = [c for c in present if c.text or (c.key == "command" and mixed)]
    return render(frame, [Column(c.key, c.header, c.kind) for c in present], fmt)


# ---------------------------------------------------------------------- CLI


def _positive_float(text: str) -> float:
    return positive_float(text, "number of seconds")


def cpus() -> int:
    """CPUs this process may use (its affinity, e.g. a Slurm allocation), else all."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cmd_run(args) -> int:
    scenarios = load_scenarios(args.scenarios)
    if args.count:
        print(math.ceil(len(scenarios) / args.chunk))
        return 0
    if args.output is None:
        raise SweepError("run needs -o DIR (where each scenario's results and log go)")
    chosen = scenarios if args.task is None else select(scenarios, args.task, args.chunk)
    contend = find_contend(args.contend)
    outdir = Path(args.output)
    check_output_dir(outdir, "-o results directory", SweepError)
    check_distinct(_run_inputs(args.scenarios, scenarios), _run_outputs(outdir, chosen), SweepError)
    created = not outdir.exists()
    make_dir(outdir, "-o results directory", SweepError)
    try:
        write_manifest(outdir, args.scenarios, scenarios, contend)
    except SweepError:
        if created:  # nothing of this sweep is left behind
            with contextlib.suppress(OSError):
                outdir.rmdir()
        raise
    jobs = args.jobs or cpus()
    begin = time.monotonic()
    try:
        with children.forward_signals():
            outcomes = run_scenarios(chosen, outdir, contend, jobs, args.timeout, args.resume)
    except WriteFailed as exc:
        print(f"contend sweep: error: {exc}; stopped the running scenarios", file=sys.stderr)
        return EXIT_FAILED
    except (children.Interrupted, KeyboardInterrupt) as exc:
        print("contend sweep: interrupted; stopped the running scenarios", file=sys.stderr)
        return children.interrupt_status(exc)
    failed = [o for o in outcomes if not o.ok]
    wall = time.monotonic() - begin
    summary = (
        f"contend sweep: {_plural(len(outcomes), 'scenario')}, {len(outcomes) - len(failed)} ok, "
        f"{len(failed)} failed, {wall:.1f} s wall (-j {jobs}); results in {outdir}"
    )
    print(summary, file=sys.stderr)
    if not failed:
        return 0
    for o in failed:
        print(f"  failed: {o.scenario.stem} ({o.scenario.source}): {o.why}", file=sys.stderr)
    redo = ",".join(str(o.scenario.index) for o in failed)
    print(
        f"  rerun them: contend sweep run {shlex.quote(str(args.scenarios))} "
        f"-o {shlex.quote(str(outdir))} --task {redo}",
        file=sys.stderr,
    )
    return EXIT_FAILED


def _run_inputs(scenario_file, scenarios: list) -> list:
    """(option, path) of the files a sweep reads: the scenario file, and the job
    files and slurm: topology files its scenarios name."""
    out = [("SCENARIOS", scenario_file)]
    for s in scenarios:
        rest = s.args[1:]
        if s.command == "jobs" and rest:
            out.append((f"the job file of {s.source}", rest[0]))
        for spec in _option_values(rest, "--topology"):
            if spec.startswith("slurm:"):
                out.append((f"the topology of {s.source}", spec[len("slurm:") :]))
    return out


def _run_outputs(outdir: Path, scenarios: list) -> list:
    """(option, path) of the files a sweep writes in -o DIR: the manifest, each
    scenario's results and log, and the files its {out} arguments name."""
    out = [("-o DIR's manifest", outdir / MANIFEST)]
    for s in scenarios:
        out += [("-o DIR's results", outdir / f"{s.stem}.json")]
        out += [("-o DIR's log", outdir / f"{s.stem}.log")]
        stem = str(outdir / s.stem)
        out += [
            (f"{{out}} of {s.source}", a.replace("{out}", stem)) for a in s.args if "{out}" in a
        ]
    return out


def cmd_count(args) -> int:
    print(math.ceil(len(load_scenarios(args.scenarios)) / args.chunk))
    return 0


def cmd_list(args) -> int:
    for s in load_scenarios(args.scenarios):
        print(f"{s.index}\t{s.stem}\t{s.source}\t{shlex.join(s.args)}")
    return 0


_SUFFIX_FORMATS = {".csv": "csv", ".json": "json", ".md": "markdown", ".txt": "text"}


def cmd_collect(args) -> int:
    fmt = None
    if args.output:
        fmt = _SUFFIX_FORMATS.get(Path(args.output).suffix.lower())
        if fmt is None:
            raise SweepError(f"-o {args.output}: name it .csv or .json (or .md, .txt)")
        check_output(args.output, "table", SweepError)
        if Path(args.directory).is_dir():
            inputs = [("DIR's manifest", Path(args.directory) / MANIFEST)]
            inputs += [
                ("DIR's results", Path(args.directory) / f)
                for _, _, f in _entries(Path(args.directory))
            ]
            check_distinct(inputs, [("-o", args.output)], SweepError)
    rows, problems = collect(args.directory)
    for p in problems:
        print(f"contend sweep collect: {p}", file=sys.stderr)
    if problems and not args.allow_missing:
        print(
            f"contend sweep collect: {len(problems)} of the results unreadable "
            "(--allow-missing: table of the rest)",
            file=sys.stderr,
        )
        return EXIT_USAGE
    print(table(rows, args.format))
    if args.output:
        _write_text(Path(args.output), table(rows, fmt) + "\n")
        print(f"wrote {args.output} ({len(rows)} rows)", file=sys.stderr)
    return 0


def add_parser(sub) -> None:
    """``contend sweep run|count|list|collect`` under the analysis command line."""
    p = sub.add_parser(
        "sweep",
        help="many scenarios as independent processes (local or a Slurm job array)",
        description="A scenario file has one contend command per line (sim, or "
        "network/load/jobs with --engine sim); run executes them as independent "
        "processes, in parallel or one per Slurm array task; collect merges the "
        "results.  Format: docs/simulator.md (Sweeps).",
    )
    ssub = p.add_subparsers(dest="sweep_command", required=True, parser_class=type(p))

    r = ssub.add_parser(
        "run",
        help="run the scenarios of a file",
        description="Checks every line first (exit 2, nothing run), then runs each scenario "
        "as its own contend process writing DIR/NNNN-NAME.json and .log; exit 1 when any "
        "failed.",
    )
    r.add_argument("scenarios", help="scenario file")
    r.add_argument("-o", "--output", metavar="DIR", help="results directory (created)")
    r.add_argument(
        "-j",
        "--jobs",
        type=count(MAX_PARALLEL),
        metavar="N",
        help=f"scenarios at once [count, at most {MAX_PARALLEL}; default: the CPUs this "
        f"process may use, here {cpus()}]",
    )
    r.add_argument(
        "--task",
        type=parse_tasks,
        metavar="I",
        help="only scenario I (or a list: 0-4,7), e.g. --task $SLURM_ARRAY_TASK_ID",
    )
    r.add_argument(
        "--chunk",
        type=count(MAX_CHUNK),
        default=1,
        metavar="K",
        help=f"with --task: task I runs scenarios I*K .. I*K+K-1 [count, at most {MAX_CHUNK}; "
        "default 1]",
    )
    r.add_argument(
        "--count", action="store_true", help="print the number of tasks (scenarios) and exit"
    )
    r.add_argument(
        "--timeout",
        type=_positive_float,
        metavar="S",
        help="stop a scenario after S wall seconds (it fails) [default none]",
    )
    r.add_argument(
        "--resume", action="store_true", help="skip scenarios whose results file is already there"
    )
    r.add_argument("--contend", metavar="PATH", help="contend binary [default: found, see docs]")
    r.set_defaults(func=cmd_run)

    c = ssub.add_parser(
        "count",
        help="number of scenarios (array size)",
        description="Prints the number of scenarios, e.g. "
        "sbatch --array=0-$(($(contend sweep count FILE)-1)) ...",
    )
    c.add_argument("scenarios", help="scenario file")
    c.add_argument(
        "--chunk",
        type=count(MAX_CHUNK),
        default=1,
        metavar="K",
        help=f"tasks of K scenarios each [count, at most {MAX_CHUNK}]",
    )
    c.set_defaults(func=cmd_count)

    ls = ssub.add_parser("list", help="index, file stem, FILE:LINE and arguments of each")
    ls.add_argument("scenarios", help="scenario file")
    ls.set_defaults(func=cmd_list)

    from ..formatting import FORMATS

    g = ssub.add_parser(
        "collect",
        help="merge a sweep's results into one table",
        description="One row per scenario and load point (sim), per impact entry (load) or "
        "per canary (network).  Prints a table; -o writes CSV or JSON (by suffix).  A "
        "missing or corrupt results file: exit 2.",
    )
    g.add_argument("directory", help="the -o DIR of contend sweep run")
    g.add_argument("-o", "--output", metavar="FILE", help="also write FILE.csv or FILE.json")
    g.add_argument(
        "-f", "--format", choices=FORMATS, default="text", help="stdout format [default text]"
    )
    g.add_argument(
        "--allow-missing",
        action="store_true",
        help="report missing or corrupt results but tabulate the rest (exit 0)",
    )
    g.set_defaults(func=cmd_collect)
