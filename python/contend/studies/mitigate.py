"""``contend mitigate MIX``: the Netscope comparison harness (seeds/netscope-ics21.md 6.2).

Runs a job mix (a delay-sensitive proxy beside congestor jobs) with ``contend
jobs`` on an engine (:mod:`contend.runs.engines`; the simulated fabric by
default): alone (``--mode isolated``: each job alone at the placement of the
seed) for every placement seed, then ``--repeat`` times per throttle mode
(``--mode concurrent --throttle MODE --throttle-ca ...``) with seeds seed0,
seed0+1, ...: the same placements in every mode.  It reports per mode and job
the runtime increase (runtime / isolated runtime) at p50/p90/p99 and its
mean, the node-seconds increase of the mix, the paper's headline ratio and
Welch's t-test of netscope against each mode (:mod:`contend.studies.mitigatestats`),
as a table on stdout and a ``contend-mitigate`` JSON file (``-o``).

The harness is a plan on top of the run layer (:mod:`contend.runs`): its
runs are run specs, which the engine turns into command lines and the
executor runs (process groups, timeouts, exit statuses, ``--parallel``,
progress).  ``--seed`` takes one straight path: ``args.seed`` ->
:func:`placement_seeds` (seed0 .. seed0+repeat-1) -> each :class:`Run`'s
seed -> its :class:`~contend.runs.spec.RunSpec` (:func:`plan`) -> ``--seed``
of its command line (:meth:`contend.runs.engines.Engine.jobs_argv`); the dry
run that names the mix's jobs takes seed0 the same way.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import infile
from ..argtypes import count
from ..guard import guarded
from ..limits import MAX_INPUT_BYTES, MAX_PARALLEL, MAX_REPEAT, clip_repr
from ..outfile import check_output_dir, make_dir
from ..runs import command
from ..runs.errors import RunError, UsageError
from ..runs.executor import Done, Executor, log_stderr, read_run, reusable
from ..runs.files import check_files, check_output, document_head, write_json_atomic
from ..runs.spec import RunSpec

PROG = "contend mitigate"
DEFAULT_MODES = "off,static:50%,dcqcn,netscope"
# Options the harness sets on every run itself: refused after --.
OWN_OPTIONS = {
    "--mode": "the harness runs --mode isolated, then --mode concurrent",
    "--seed": "use --seed (the first placement seed)",
    "-o": "the harness names each run's file (--keep-runs DIR keeps them)",
    "--output": "the harness names each run's file (--keep-runs DIR keeps them)",
    "--throttle": "use --modes",
    "--throttle-ca": "use --ca / --model",
    "--throttle-log": "one log file would be shared by every run",
    "--engine": "use --engine",
    "--dry-run": "the harness runs the mix",
    "--topology": "use --topology",
    "-D": "use -D before --",
    "--define": "use -D before --",
}


# ------------------------------------------------------------------ input


def parse_mode(text: str) -> str:
    """A throttle mode as `contend jobs --throttle` takes it, checked here so
    that a typo fails before any run."""
    mode = text.strip()
    if mode in ("off", "dcqcn", "netscope"):
        return mode
    if mode.startswith("static:"):
        rate = mode[len("static:") :]
        pct = rate.endswith("%")
        try:
            value = float(rate[:-1] if pct else rate)
        except ValueError:
            value = math.nan
        if math.isfinite(value) and value > 0 and (not pct or value <= 100):
            return mode
        raise UsageError(
            f"--modes: {clip_repr(mode)}: static takes a rate in Gbit/s or a share of the line rate "
            "in (0, 100]%, e.g. static:50% or static:25"
        )
    raise UsageError(
        f"--modes: unknown mode {clip_repr(mode)} (expected off, static:RATE[%], dcqcn, netscope)"
    )


def parse_modes(text: str) -> list:
    modes = [parse_mode(m) for m in text.split(",") if m.strip()]
    if not modes:
        raise UsageError("--modes is empty (e.g. off,static:50%,dcqcn,netscope)")
    dup = {m for m in modes if modes.count(m) > 1}
    if dup:
        raise UsageError(f"--modes: {', '.join(sorted(dup))} given twice")
    return modes


def parse_assignments(text_list, what: str) -> dict:
    """'A=x,B=y' (option repeatable) -> {'A': 'x', 'B': 'y'}; a job named twice is an error."""
    out = {}
    for text in text_list or ():
        for item in (t.strip() for t in text.split(",")):
            if not item:
                continue
            job, sep, value = item.partition("=")
            if not sep or not job or not value:
                raise UsageError(f"{what}: {clip_repr(item)}: write JOB=VALUE[,JOB=VALUE...]")
            if job in out:
                raise UsageError(f"{what}: job {clip_repr(job)} given twice")
            out[job] = value
    return out


def parse_ca(text_list) -> dict:
    out = {}
    for job, value in parse_assignments(text_list, "--ca").items():
        try:
            ca = float(value)
        except ValueError:
            ca = math.nan
        if not (math.isfinite(ca) and ca >= 0):
            raise UsageError(
                f"--ca: {job}={value}: the delay sensitivity c_a is a dimensionless number >= 0"
            )
        out[job] = ca
    return out


def read_model_ca(job: str, path: str) -> float:
    """c_a of ``job`` from a delay-sensitivity file of `contend model sensitivity`:
    the application named ``job``, else the file's only application; its
    dimensionless ``delay_sensitivity``, clipped at 0 as docs/netscope.md says."""
    from ..models.errors import ModelError
    from ..models.modelfile import SENSITIVITY_SCHEMA, load_model_file

    try:
        doc = load_model_file(path, expect=SENSITIVITY_SCHEMA)
    except ModelError as exc:
        raise UsageError(f"--model {job}={path}: {exc}") from None
    apps = doc["applications"]
    if job in apps:
        app = apps[job]
    elif len(apps) == 1:
        app = next(iter(apps.values()))
    else:
        raise UsageError(
            f"--model {job}={path}: the file has applications {', '.join(sorted(apps))}, "
            f"none named {clip_repr(job)}"
        )
    ds = app["delay_sensitivity"]
    if ds is None or not math.isfinite(ds):
        raise UsageError(
            f"--model {job}={path}: no delay sensitivity in the file (its fit failed; "
            "see `contend model show`): give --ca instead"
        )
    return max(0.0, float(ds))


def parse_ca_errors(text: str | None) -> list:
    if not text:
        return []
    out = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        try:
            e = float(item.rstrip("%"))
        except ValueError:
            e = math.nan
        if not math.isfinite(e) or e < -100:
            raise UsageError(
                f"--ca-error: {clip_repr(item)}: errors are percentages >= -100 (c_a x (1 + e/100))"
            )
        if e in out:
            raise UsageError(f"--ca-error: {item} given twice")
        out.append(e)
    return out


def parse_defines(items) -> dict:
    out = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise UsageError(f"-D {clip_repr(item)}: write NAME=VALUE")
        out[name] = value
    return out


def check_extra(extra: list) -> list:
    extra = [a for a in extra if a != "--"]
    for arg in extra:
        key = arg.split("=", 1)[0]
        if key.startswith("-D") and key != "--define":
            key = "-D"
        if key in OWN_OPTIONS:
            raise UsageError(f"{arg} after --: {OWN_OPTIONS[key]}")
    return extra


# ------------------------------------------------------------------- plan


@dataclass
class Condition:
    label: str  # 'dcqcn', 'netscope', 'netscope c_a-50%'
    throttle: str  # --throttle value
    ca_error_percent: float | None
    ca: dict  # job -> c_a passed with --throttle-ca

    def throttle_ca(self) -> str:
        return ",".join(f"{job}={ca:.10g}" for job, ca in self.ca.items())

    def record(self, proxy: str) -> dict:
        return {
            "label": self.label,
            "throttle": self.throttle,
            "ca_error_percent": self.ca_error_percent,
            "throttle_ca": self.throttle_ca(),
            "proxy_c_a": self.ca.get(proxy, 0.0),
        }


@dataclass
class Run:
    kind: str  # isolated | concurrent
    seed: int
    condition: Condition | None
    path: Path
    spec: RunSpec | None = None  # set by plan()

    @property
    def label(self) -> str:
        return "isolated" if self.condition is None else self.condition.label


def placement_seeds(seed: int, repeat: int) -> list:
    """The placement seeds of the runs: --seed, --seed+1, ... (--repeat of them)."""
    return [seed + i for i in range(repeat)]


def split_throttle_options(extra: list) -> tuple[list, list]:
    """(the --throttle* options, the rest) of the options after --: on a
    launcher they go to the throttle library, not to `contend jobs` (every
    throttle option takes a value)."""
    throttle, rest, i = [], [], 0
    while i < len(extra):
        a = extra[i]
        if a.startswith("--throttle"):
            take = 1 if "=" in a else 2
            throttle += extra[i : i + take]
            i += take
        else:
            rest.append(a)
            i += 1
    return throttle, rest


def plan(runs: list, args, engine, defines: dict) -> None:
    """Gives every run its spec: the mix on the engine with the run's seed,
    mode and throttle; on a launcher the throttle options after -- go to the
    throttle library of the concurrent runs (isolated runs run unthrottled)."""
    extra = list(args.jobs_args)
    throttle_extra = []
    if not engine.in_process:
        throttle_extra, extra = split_throttle_options(extra)
    per_label: dict = {}
    for run in runs:
        per_label.setdefault(run.label, []).append(run)
    for run in runs:
        throttle = ()
        if run.condition is not None:
            throttle = ("--throttle", run.condition.throttle)
            if run.condition.ca:
                throttle += ("--throttle-ca", run.condition.throttle_ca())
            if not engine.in_process:
                throttle += tuple(throttle_extra)
        group = per_label[run.label]
        what = "isolated" if run.condition is None else f"mode {run.label}"
        run.spec = RunSpec(
            job_file=args.mix,
            seed=run.seed,
            mode="isolated" if run.condition is None else "concurrent",
            throttle=throttle,
            options=command.run_options(args),
            defines=tuple(f"{k}={v}" for k, v in defines.items()),
            extra=tuple(extra),
            output=run.path,
            timeout=args.timeout,
            name=f"{run.label} run, seed {run.seed}",
            progress=f"{what}: run {group.index(run) + 1}/{len(group)} (seed {run.seed})",
        )


def mix_jobs(engine, args, defines: dict) -> list:
    """The names of the mix's jobs, from a dry run on the engine's nodes at
    the first placement seed."""
    spec = RunSpec(
        job_file=args.mix, seed=args.seed, defines=tuple(f"{k}={v}" for k, v in defines.items())
    )
    return [j["name"] for j in engine.dry_run(spec, engine.nodes())["jobs"]]


def slug(label: str) -> str:
    text = label.replace("%", "pct").replace("+", "p").replace("-", "m")
    return re.sub(r"[^A-Za-z0-9_.]+", "-", text).strip("-")


def run_file(run_dir: Path, label: str, seed: int) -> Path:
    """The results file of one run: DIR/LABEL-seedN.json (label slugged)."""
    return run_dir / f"{slug(label)}-seed{seed}.json"


def error_points(modes: list, errors: list) -> list:
    """The --ca-error values that get a condition of their own: netscope's own
    runs are the 0 % point when netscope is a mode."""
    return [e for e in errors if not (e == 0 and "netscope" in modes)]


def condition_labels(modes: list, errors: list) -> list:
    """The labels build_conditions gives, known before the mix is read."""
    from .mitigatestats import ca_error_label

    return list(modes) + [ca_error_label(e) for e in error_points(modes, errors)]


def run_files(run_dir: Path, seeds: list, iso_seeds: list, labels: list) -> list:
    """Every run file of the plan (isolated runs first within a seed)."""
    out = []
    for s in seeds:
        if s in iso_seeds:
            out.append(run_file(run_dir, "isolated", s))
        out += [run_file(run_dir, label, s) for label in labels]
    return out


def build_conditions(modes, ca: dict, jobs: list, proxy: str, errors: list) -> list:
    base_ca = {job: ca.get(job, 0.0) for job in jobs}
    from .mitigatestats import ca_error_label

    out = [Condition(m, m, None, dict(base_ca)) for m in modes]
    for e in error_points(modes, errors):
        scaled = dict(base_ca)
        scaled[proxy] = base_ca[proxy] * (1 + e / 100)
        out.append(Condition(ca_error_label(e), "netscope", e, scaled))
    return out


def _runtimes(doc: dict, kind: str, path: Path) -> dict:
    out = {}
    for job in doc["jobs"]:
        res = (job.get("results") or {}).get(kind)
        if not res or res.get("perform_end_s") is None or res.get("perform_start_s") is None:
            raise RunError(f"{path}: job {job['name']} has no {kind} pass")
        out[job["name"]] = float(res["perform_end_s"]) - float(res["perform_start_s"])
    return out


def _throttle_jobs(doc: dict) -> dict | None:
    sim = (doc.get("environment") or {}).get("simulation") or {}
    thr = sim.get("throttle")
    if not isinstance(thr, dict):
        return None
    return {
        j["job"]: {
            "c_a": j.get("ca"),
            "mean_rate_fraction": j.get("mean_rate_fraction"),
            "windows": j.get("windows"),
            "rate_cuts": j.get("rate_cuts"),
            "injected_delay_s": j.get("injected_delay_s"),
        }
        for j in thr.get("jobs", [])
    }


def execute(args, log) -> dict:
    """Plans, checks, runs; returns the contend-mitigate document."""
    binary = command.harness_binary("the harness")
    engine = command.engine_from_args(args, binary)
    if not engine.in_process and args.parallel > 1:
        raise UsageError(f"--parallel {args.parallel}: runs on real MPI share the nodes: use 1")
    infile.check_size(args.mix, MAX_INPUT_BYTES, "a job file", UsageError)
    if args.output:
        check_output(Path(args.output))
    modes = parse_modes(args.modes)
    ca = parse_ca(args.ca)
    models = parse_assignments(args.model, "--model")
    errors = parse_ca_errors(args.ca_error)
    defines = parse_defines(args.define)
    args.jobs_args = check_extra(args.jobs_args)
    both = sorted(set(ca) & set(models))
    if both:
        raise UsageError(f"c_a of {', '.join(both)} given by both --ca and --model: give one")
    seeds = placement_seeds(args.seed, args.repeat)
    iso_seeds = seeds[:1] if args.isolated_once else seeds
    outputs = [("-o", args.output)]
    if args.keep_runs:
        check_output_dir(args.keep_runs, "--keep-runs directory", UsageError)
        labels = condition_labels(modes, errors)
        outputs += [
            ("--keep-runs DIR's run file", path)
            for path in run_files(Path(args.keep_runs), seeds, iso_seeds, labels)
        ]
    inputs = [("MIX", args.mix)] + [(f"--model {job}", f) for job, f in models.items()]
    check_files(inputs, outputs)
    jobs = mix_jobs(engine, args, defines)
    for job, path in models.items():
        ca[job] = read_model_ca(job, path)
    proxy = args.proxy or jobs[0]
    unknown = sorted((set(ca) | {proxy}) - set(jobs))
    if unknown:
        raise UsageError(
            f"job(s) {', '.join(unknown)} not in {args.mix} (its jobs: {', '.join(jobs)})"
        )
    if errors and ca.get(proxy, 0.0) == 0:
        raise UsageError(
            f"--ca-error scales the proxy's c_a, but {proxy} has c_a 0: give --ca {proxy}=C_A "
            "or --model"
        )
    conds = build_conditions(modes, ca, jobs, proxy, errors)

    own_tmp = None
    if args.keep_runs:
        run_dir = make_dir(args.keep_runs, "--keep-runs directory", UsageError)
    else:
        own_tmp = tempfile.mkdtemp(prefix="contend-mitigate-")
        run_dir = Path(own_tmp)
    try:
        runs = []
        for s in seeds:
            if s in iso_seeds:
                runs.append(Run("isolated", s, None, run_file(run_dir, "isolated", s)))
            for c in conds:
                runs.append(Run("concurrent", s, c, run_file(run_dir, c.label, s)))
        plan(runs, args, engine, defines)
        done = _run_all(engine, runs, args, log)
        return _document(args, engine, defines, jobs, proxy, conds, ca, models, errors, runs, done)
    finally:
        if own_tmp:
            shutil.rmtree(own_tmp, ignore_errors=True)


def _run_all(engine, runs: list, args, log) -> list:
    """Runs (or reuses, --keep-runs) every run; returns their Done, in order."""
    done: list = [None] * len(runs)
    if args.keep_runs:
        for i, run in enumerate(runs):
            doc = reusable(run.path, engine.jobs_argv(run.spec))
            if doc is not None:
                done[i] = Done(run.spec, doc, None, reused=True)
    reused = sum(d is not None for d in done)
    if reused and not args.quiet:
        log(f"{PROG}: reusing {reused} finished run(s) in {args.keep_runs}")
    todo = [i for i, d in enumerate(done) if d is None]
    ex = Executor(PROG, parallel=args.parallel, quiet=args.quiet, log=log)
    ran = ex.run_all(
        [runs[i].spec for i in todo],
        engine.command,
        read=lambda spec: read_run(spec.output),
        reused=reused,
    )
    for i, d in zip(todo, ran):
        done[i] = d
    return done


def _ref(path: Path, args) -> str | None:
    if not args.keep_runs:
        return None
    base = Path(args.output).resolve().parent if args.output else Path.cwd()
    from ..models.modelfile import relative_to

    return relative_to(path, base)


def _document(args, engine, defines, jobs, proxy, conds, ca, models, errors, runs, done) -> dict:
    from .mitigatestats import SCHEMA_NAME, SCHEMA_VERSION, summary_block

    first_iso = next(done[i].doc for i, r in enumerate(runs) if r.condition is None)
    job_info = [
        {"name": j["name"], "nodes": len(j["nodes"]), "ranks": int(j["ranks"])}
        for j in first_iso["jobs"]
    ]
    isolated, concurrent = [], []
    for run, d in zip(runs, done):
        doc = d.doc
        entry = {
            "seed": run.seed,
            "file": _ref(run.path, args),
            "reused": d.reused,
            "wall_s": d.wall_s if d.wall_s is not None else doc.get("wall_s"),
        }
        if run.condition is None:
            entry["runtime_s"] = _runtimes(doc, "isolated", run.path)
            entry["nodes"] = {j["name"]: j["nodes"] for j in doc["jobs"]}
            isolated.append(entry)
        else:
            entry = {
                "condition": run.condition.label,
                "throttle": run.condition.throttle,
                "throttle_ca": run.condition.throttle_ca(),
                **entry,
                "runtime_s": _runtimes(doc, "concurrent", run.path),
                "throttle_summary": _throttle_jobs(doc),
            }
            concurrent.append(entry)
    # placements equal across modes: the harness relies on it, so it checks it
    place = {iso["seed"]: iso["nodes"] for iso in isolated}
    for run, d in zip(runs, done):
        if run.condition is not None and run.seed in place:
            got = {j["name"]: j["nodes"] for j in d.doc["jobs"]}
            if got != place[run.seed]:
                raise RunError(
                    f"{run.label} run, seed {run.seed}: placement differs from the isolated "
                    "run of the same seed (the ratio needs equal placements)"
                )
    idle = sorted(
        {
            r["condition"]
            for r in concurrent
            if r["throttle"] in ("dcqcn", "netscope")
            and r["throttle_summary"]
            and not any(j.get("windows") for j in r["throttle_summary"].values())
        }
    )
    if idle:
        log_stderr(
            f"{PROG}: warning: the controller closed no window in some runs of "
            f"{', '.join(idle)}: the runs are shorter than the throttle window (contend jobs' "
            "default is 1 s; simulated runs last milliseconds: add -- --throttle-window-us 20)"
        )
    doc = {
        **document_head(SCHEMA_NAME, SCHEMA_VERSION, ["mitigate", *args.argv]),
        "config": {
            "mix_file": str(args.mix),
            "engine": engine.name,
            "topology": engine.options.get("topology", ""),
            "launcher": " ".join(engine.launch_prefix()),
            "defines": defines,
            "jobs_args": list(args.jobs_args),
            "modes": [c.throttle for c in conds if c.ca_error_percent is None],
            "conditions": [c.record(proxy) for c in conds],
            "repeat": args.repeat,
            "seed": args.seed,
            "seeds": sorted({r.seed for r in runs if r.condition is not None}),
            "isolated_once": bool(args.isolated_once),
            "proxy": proxy,
            "c_a": {j: ca.get(j, 0.0) for j in jobs},
            "c_a_source": {
                j: (f"model:{models[j]}" if j in models else "option" if j in ca else "default 0")
                for j in jobs
            },
            "ca_error_percent": errors,
            "parallel": args.parallel,
            "timeout_s": args.timeout,
            "binary": engine.binary,
        },
        "jobs": job_info,
        "isolated": isolated,
        "runs": concurrent,
    }
    doc["summary"] = summary_block(doc)
    return doc


# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    p = command.harness_parser(
        PROG,
        (
            "Netscope's comparison of rate control (seeds/netscope-ics21.md 6.2, Table 5,\n"
            "Figures 5-7) on the simulated fabric: runs the job mix MIX alone, then --repeat\n"
            "times per throttle mode with all its jobs at once, at the same random placements\n"
            "in every mode (seeds --seed, --seed+1, ...), and reports per mode and job the\n"
            "runtime increase (runtime / isolated runtime at the same placement) at p50, p90,\n"
            "p99 and its mean, the node-seconds increase of the mix, the headline ratio\n"
            "(p99 - 1) / (netscope's p99 - 1) and Welch's t-test of netscope vs. each mode.\n"
            "Runtime = perform_end_s - perform_start_s of a job's pass (the engine's clock).\n"
            "Percentiles: numpy.percentile, linear interpolation (type 7)."
        ),
        (
            "Isolated runs: by default one per placement seed (each job alone on the nodes\n"
            "it gets in the concurrent runs of that seed), so that a run's increase compares\n"
            "equal placements: with random placements the isolated runtime itself depends\n"
            "on the nodes.  --isolated-once runs it for the first seed only (the paper's\n"
            "way: one isolated runtime per application).\n\n"
            "Arguments after -- go to every `contend jobs` run (simulator options such as\n"
            "--throttle-window-us, --throttle-gain, --network, --routing); the harness\n"
            "sets --mode, --seed, -o, --throttle and --throttle-ca itself.\n\n"
            "Example (about 10 s on 2 cores; docs/mitigate.md):\n"
            "  contend mitigate examples/mitigate/small.job --topology dragonfly:a=2,p=3,h=2 \\\n"
            "      --ca milc=6.67 --repeat 10 --parallel 2 -o mit.json \\\n"
            "      -- --throttle-window-us 20 --throttle-signal occupancy\n"
            "  contend report mit.json;  contend plot mitigate mit.json -o mit.png\n\n"
            "Exit status: 0 done; 2 bad input (nothing run); 3 a run failed (no -o file)."
        ),
    )
    p.add_argument("mix", help="job file of the mix (docs/jobfile.md): the proxy and congestors")
    p.add_argument(
        "--modes",
        default=DEFAULT_MODES,
        help="throttle modes to compare, comma-separated: off, static:RATE (Gbit/s, or N%% "
        "of the line rate), dcqcn, netscope [default %(default)s]",
    )
    p.add_argument(
        "--repeat",
        type=count(MAX_REPEAT),
        default=20,
        help="concurrent runs per mode, seeds --seed .. --seed+N-1 [count, 1 to "
        f"{MAX_REPEAT}, default %(default)s]",
    )
    command.add_options(p, "seed", helps={"seed": "first placement seed [default 1]"})
    p.add_argument(
        "--isolated-once",
        action="store_true",
        help="one isolated run (first seed) for all runs, as the paper; default: one per seed",
    )
    p.add_argument(
        "--ca",
        action="append",
        metavar="JOB=C_A,...",
        help="delay sensitivity c_a (dimensionless, >= 0) per job; jobs not named get 0",
    )
    p.add_argument(
        "--model",
        action="append",
        metavar="JOB=FILE,...",
        help="take JOB's c_a from a delay-sensitivity file of `contend model sensitivity` "
        "(its delay_sensitivity; the application named JOB, or the file's only one)",
    )
    p.add_argument(
        "--proxy",
        help="the delay-sensitive job (Welch test, --ca-error, headline) [default: first job]",
    )
    p.add_argument(
        "--ca-error",
        metavar="E,...",
        help="also run netscope with the proxy's c_a x (1 + E/100) for each E (the paper's "
        "Fig. 7: -100,-50,0,50,100) [percent]",
    )
    command.add_engine_options(
        p,
        note="On a launcher each concurrent run is `LAUNCHER contend throttle --throttle MODE "
        "--throttle-ca ... -- contend jobs ...`: the PMPI library throttles every rank with its "
        "own job's c_a; on the simulated fabric the NICs are throttled",
    )
    p.add_argument(
        "-D",
        dest="define",
        action="append",
        metavar="NAME=VALUE",
        help="set a job-file variable (repeatable)",
    )
    command.add_options(
        p,
        "parallel",
        "timeout",
        helps={
            "parallel": f"simulations at once [count, 1 to {MAX_PARALLEL}, default %(default)s]"
        },
    )
    p.add_argument("-o", "--output", help="write the contend-mitigate JSON results here")
    p.add_argument(
        "--keep-runs",
        metavar="DIR",
        help="keep every run's contend-jobs JSON here; a rerun with the same DIR reuses the "
        "finished runs made by the same command",
    )
    command.add_options(p, "quiet")
    return p


@guarded(PROG)
def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `--ca-error -100,-50` would read as an option to argparse: glue it on
    for i in range(len(argv) - 1):
        if argv[i] == "--ca-error" and re.match(r"^-[0-9.]", argv[i + 1]):
            argv[i : i + 2] = [f"--ca-error={argv[i + 1]}"]
            break
    return command.harness_main(
        PROG, build_parser(), _main, argv, stopped="the runs were stopped (no output written)",
        extra=True,
    )  # fmt: skip


def _main(args) -> int:
    """main's work after parsing (its errors are harness_main's to report)."""
    doc = execute(args, log_stderr)
    if args.output:
        write_json_atomic(Path(args.output), doc)
    from ..reports.views.mitigate import render_mitigate

    sys.stdout.write(render_mitigate(doc, "text", source=args.output) + "\n")
    if args.output and not args.quiet:
        log_stderr(f"{PROG}: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
