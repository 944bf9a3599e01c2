"""``contend study FILE``: the study runner (seeds/fattree-congestion-poster.md).

A study (:mod:`contend.studies.studyfile`) is a control and conditions, each run R
times.  All (condition, repetition) pairs are shuffled with the study's seed
and the order is recorded in the run directory's ``state.json`` before the
first run; each pair is one ``contend jobs`` run of a generated job file
(``DIR/jobs/``) writing its own results file (``DIR/runs/``).  The state is
rewritten atomically after every finished run; a restarted study skips the
runs whose results file is present and valid and redoes the others, so it
ends with exactly R repetitions per condition.  The study's results
(schema ``contend-study``) hold per run its condition, repetition, place in
the order, seed, results file, each application's runtime and the bullies'
bandwidth; the report (:mod:`contend.reports.views.study`) is the poster's Table I.

The study is a plan on the run layer (:mod:`contend.runs`): each run is a
run spec (its job file, the study's jobs_args, its seed and results file)
that the study's engine turns into a command line and the executor runs
(``--parallel``, ``--timeout``, progress, exit statuses).

``--slurm`` writes a batch script instead of running
(:mod:`contend.studies.studyslurm`); ``--collect`` writes the results of runs
made elsewhere (by that script).
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import signal
import sys
from dataclasses import dataclass
from pathlib import Path

from .. import infile
from ..guard import guarded
from ..limits import MAX_PARALLEL, clip_repr
from ..outfile import check_output_dir, make_dir
from ..runs import command
from ..runs.engines import engine_class, make_engine
from ..runs.errors import RunError, UsageError
from ..runs.executor import Done, Executor, log_stderr
from ..runs.files import check_files, check_output, document_head, utc_now, write_json_atomic
from ..runs.spec import RunSpec
from .studyfile import Study, load_study, select_conditions

PROG = "contend study"
STATE_SCHEMA = "contend-study-state"
STATE_FILE = "state.json"
# testing hook: the runner kills itself (SIGKILL) after this many finished runs
KILL_AFTER_ENV = "CONTEND_STUDY_KILL_AFTER"


@dataclass
class Run:
    order_index: int
    condition: str
    repetition: int
    seed: int
    job_file: Path
    results_file: Path

    def record(self, base: Path) -> dict:
        return {
            "order_index": self.order_index,
            "condition": self.condition,
            "repetition": self.repetition,
            "seed": self.seed,
            "job_file": os.path.relpath(self.job_file, base),
            "results_file": os.path.relpath(self.results_file, base),
        }


def run_seed(study: Study, repetition: int) -> int:
    """Seed of repetition r (1-based) in every condition: study seed + r - 1
    (common random numbers: repetition r of each condition draws alike)."""
    return study.seed + repetition - 1


def plan(study: Study, run_dir: Path) -> list:
    """Every (condition, repetition) pair, shuffled with the study's seed."""
    pairs = [(c, r) for c in study.all_conditions() for r in range(1, study.repetitions + 1)]
    random.Random(study.seed).shuffle(pairs)
    return [
        Run(
            i,
            c.name,
            r,
            run_seed(study, r),
            run_dir / "jobs" / f"{c.slug}-r{r}.job",
            run_dir / "runs" / f"{c.slug}-r{r}.json",
        )
        for i, (c, r) in enumerate(pairs)
    ]


# ------------------------------------------------------------------ state


def load_or_create_state(study: Study, run_dir: Path, runs: list) -> dict:
    """The run directory's state: created (order recorded) on the first call,
    checked against the study on later ones."""
    path = run_dir / STATE_FILE
    if path.exists():
        try:
            state = infile.load_json(path, "the study's state", UsageError)
        except UsageError as exc:
            raise UsageError(f"unreadable study state: {exc}; remove it to start over") from None
        if not isinstance(state, dict) or state.get("schema") != STATE_SCHEMA:
            raise UsageError(f"{path}: not a study state file ({STATE_SCHEMA})")
        if state.get("digest_sha256") != study.digest():
            raise UsageError(
                f"{run_dir} holds the runs of a different study (the study file's runs, seed, "
                "repetitions or engine changed since it started): give another --dir, or remove "
                "the directory to start over"
            )
        want = [r.record(run_dir) for r in runs]
        if state.get("order") != want:
            raise UsageError(f"{path}: its recorded order is not this study's; remove it")
        return state
    state = {
        "schema": STATE_SCHEMA,
        "schema_version": "1.0",
        "study": study.name,
        "digest_sha256": study.digest(),
        "created_utc": utc_now(),
        "updated_utc": utc_now(),
        "order_shuffle": f"random.Random({study.seed}).shuffle of (condition, repetition)",
        "order": [r.record(run_dir) for r in runs],
        "finished": [],
    }
    write_json_atomic(path, state)
    return state


def save_state(run_dir: Path, state: dict) -> None:
    state["updated_utc"] = utc_now()
    write_json_atomic(run_dir / STATE_FILE, state)


# ------------------------------------------------------------------ a run's file


def valid_run(run: Run, study: Study) -> dict | None:
    """The run's contend-jobs results if present, complete and made for this
    run (its jobs, its seed), else None (the run is (re)done)."""
    from ..jobsresults import parse_jobs

    try:
        doc = parse_jobs(infile.read_text(run.results_file), str(run.results_file))
    except ValueError:
        return None
    cond = study.condition(run.condition)
    want = [*study.app_names(), *(b.name for b, _ in cond.bullies)]
    if [j["name"] for j in doc["jobs"]] != want or doc.get("seed") != run.seed:
        return None
    for j in doc["jobs"]:
        res = (j.get("results") or {}).get("concurrent") or {}
        if res.get("perform_end_s") is None or res.get("perform_start_s") is None:
            return None
    return doc


def _find_gbps(block):
    """(key, slowest rank Gb/s, mean rank Gb/s) of the first key holding 'gbps'
    in a motif's results (a number, a list over ranks, or min/mean stats)."""
    if not isinstance(block, dict):
        return None
    for key, val in block.items():
        if "gbps" in key.lower():
            if isinstance(val, (int, float)) and not isinstance(val, bool):
                return key, float(val), float(val)
            if isinstance(val, list) and val and all(isinstance(v, (int, float)) for v in val):
                return key, float(min(val)), float(sum(val) / len(val))
            if isinstance(val, dict) and isinstance(val.get("min"), (int, float)):
                mean = val.get("mean", val["min"])
                return key, float(val["min"]), float(mean if mean is not None else val["min"])
    for val in block.values():
        if isinstance(val, dict):
            got = _find_gbps(val)
            if got:
                return got
    return None


def bully_bandwidth(job: dict) -> dict | None:
    """A bully's achieved bandwidth per rank in Gb/s from its motifs' results
    (the bully motifs report it), None when no motif reports one."""
    for motif in job.get("motifs", []):
        got = _find_gbps((motif.get("results") or {}).get("concurrent"))
        if got:
            key, lo, mean = got
            return {
                "motif": motif.get("name"),
                "key": key,
                "min_rank_gbps": lo,
                "mean_rank_gbps": mean,
            }
    return None


def run_entry(run: Run, study: Study, doc: dict, base: Path, wall_s, reused: bool) -> dict:
    cond = study.condition(run.condition)
    jobs = {j["name"]: j for j in doc["jobs"]}
    runtime = {}
    for app in study.app_names():
        res = jobs[app]["results"]["concurrent"]
        runtime[app] = float(res["perform_end_s"]) - float(res["perform_start_s"])
    return {
        **run.record(base),
        "reused": reused,
        "wall_s": wall_s if wall_s is not None else doc.get("wall_s"),
        "runtime_s": runtime,
        "nodes": {name: j["nodes"] for name, j in jobs.items()},
        "bully_bandwidth": {b.name: bully_bandwidth(jobs[b.name]) for b, _ in cond.bullies},
    }


# ------------------------------------------------------------------ engine


class Runner:
    """The study's engine (:mod:`contend.runs.engines`) and the tree of the
    machine that its dry runs place on: the one of ``--topology-conf`` in
    jobs_args, else the engine's (:meth:`~contend.runs.engines.Engine.placement_tree`),
    which the runs get too when they do not know it (the emulated cluster's
    topology.conf)."""

    def __init__(self, study: Study, local: bool = True):
        """``local``: the runs run here (False: --slurm, which only plans them)."""
        self.study = study
        self.engine = make_engine(
            study.engine, command.harness_binary("the study"), study.engine_options
        )
        self.binary = self.engine.binary
        given = _topology_conf_arg(study.jobs_args)
        own = [] if given else self.engine.placement_tree(local)
        self.tree = given or own
        self.own_tree = own if self.engine.tree_in_runs else []  # the runs need it
        self.extra = [*self.own_tree, *study.jobs_args]

    def hand(self) -> str | None:
        """The command line of a run by hand (FILE, SEED to fill in), when it
        differs from the study file's (the cluster's topology.conf)."""
        if not self.own_tree:
            return None
        wrap = self.engine.launch_prefix("contend")
        wrap += [] if "--" in wrap else ["--"]
        cmd = [*wrap, "contend", "jobs", "FILE", *self.extra, "--seed", "SEED"]
        return shlex.join(cmd) + " -o OUT.json"

    def nodes(self) -> int:
        return self.engine.nodes()

    def spec(self, run: Run, args, total: int) -> RunSpec:
        """The run's spec: its job file with the study's options, its seed, its file."""
        return RunSpec(
            job_file=run.job_file,
            seed=run.seed,
            options=command.run_options(args),
            extra=tuple(self.extra),
            output=run.results_file,
            timeout=args.timeout,
            name=f"{run.condition}, repetition {run.repetition}",
            progress=(
                f"run {run.order_index + 1}/{total}: {run.condition}, repetition "
                f"{run.repetition} (seed {run.seed})"
            ),
        )

    def dry_run(self, job_file: Path, seed: int, nodes: int, extra=()) -> dict:
        """The plan of a job file (`contend jobs --dry-run`): its errors are the
        study's bad input (exit 2 before anything runs)."""
        spec = RunSpec(job_file=job_file, seed=seed, extra=tuple(extra))
        return self.engine.dry_run(spec, nodes)


def _topology_conf_arg(args: list) -> list:
    """['--topology-conf', FILE] when `contend jobs` options give one, else []."""
    for i, a in enumerate(args):
        if a == "--topology-conf" and i + 1 < len(args):
            return [a, args[i + 1]]
        if a.startswith("--topology-conf="):
            return ["--topology-conf", a.split("=", 1)[1]]
    return []


def write_job_files(study: Study, runs: list, hand: str | None = None) -> None:
    for run in runs:
        cond = study.condition(run.condition)
        text = study.job_file(cond, run.repetition, run.seed, hand=hand)
        run.job_file.parent.mkdir(parents=True, exist_ok=True)
        if not run.job_file.is_file() or run.job_file.read_text() != text:
            from ..outfile import write_text

            write_text(run.job_file, text, error=UsageError)


def check_conditions(engine: Runner, study: Study, runs: list) -> None:
    """One dry run per condition (repetition 1's file): a bad motif, an
    overlap or a placement that does not fit stops the study before it runs."""
    nodes = engine.nodes()
    first = {}
    for run in runs:
        if run.repetition == 1:
            first[run.condition] = run
    for name, run in first.items():
        try:
            engine.dry_run(run.job_file, run.seed, nodes, engine.tree)
        except UsageError as exc:
            raise UsageError(f"condition {clip_repr(name)} ({run.job_file}): {exc}") from None


def check_study_files(study: Study, run_dir: Path, runs: list, output: Path, conf) -> None:
    """The output rule for a study: no file it writes (the results, the state,
    each run's job and results file, the batch script of --slurm) is a file it
    reads (the study file, its fragments, a topology.conf) or another output."""
    inputs = [("STUDY", study.inputs[0])] + [("a fragment (file =)", f) for f in study.inputs[1:]]
    tree = _topology_conf_arg(study.jobs_args)
    if tree:
        inputs.append(("jobs_args --topology-conf", tree[1]))
    if conf:
        inputs.append(("--topology-conf", conf))
    outputs = [("-o", output), ("--dir DIR's state", run_dir / STATE_FILE)]
    for run in runs:
        outputs += [("--dir DIR's job file", run.job_file)]
        outputs += [("--dir DIR's run results", run.results_file)]
    if conf:
        outputs.append(("--dir DIR's batch script", run_dir / "slurm" / "study.sbatch"))
    check_files(inputs, outputs)


# ------------------------------------------------------------------ runner


def execute(study: Study, run_dir: Path, runs: list, state: dict, args, log) -> dict:
    """Runs what is not finished, in the recorded order; {order_index: Done}."""
    runner = Runner(study)
    done, todo = {}, []
    for run in runs:
        doc = valid_run(run, study)
        if doc is not None:
            done[run.order_index] = Done(None, doc, None, reused=True)
        else:
            todo.append(run)
    if todo:
        (run_dir / "runs").mkdir(exist_ok=True)
        write_job_files(study, runs, runner.hand())
        check_conditions(runner, study, runs)
    state["finished"] = sorted(done)
    save_state(run_dir, state)
    if done and not args.quiet:
        log(f"{PROG}: {len(done)} of {len(runs)} run(s) already finished in {run_dir}: kept")
    kill_after = int(os.environ.get(KILL_AFTER_ENV, "0") or 0)
    by_spec = {}
    for run in todo:
        by_spec[runner.spec(run, args, len(runs))] = run

    def before(spec: RunSpec) -> None:
        Path(spec.output).unlink(missing_ok=True)  # a half-written file is redone

    def read(spec: RunSpec) -> dict:
        run = by_spec[spec]
        doc = valid_run(run, study)
        if doc is None:
            raise RunError(f"{run.results_file} is not a complete results file of its job file")
        return doc

    def after(d: Done) -> None:  # under the executor's lock
        done[by_spec[d.spec].order_index] = d
        state["finished"] = sorted(done)
        save_state(run_dir, state)
        if kill_after and sum(not x.reused for x in done.values()) >= kill_after:
            os.kill(os.getpid(), signal.SIGKILL)

    ex = Executor(PROG, parallel=args.parallel, quiet=args.quiet, log=log)
    ex.run_all(
        list(by_spec), runner.engine.command, read=read, before=before, after=after,
        reused=len(runs) - len(todo),
    )  # fmt: skip
    return done


def document(study: Study, run_dir: Path, runs: list, docs: dict, args) -> dict:
    from .studystats import SCHEMA_NAME, SCHEMA_VERSION, summary_block

    entries = []
    for r in runs:
        d = docs[r.order_index]
        entries.append(run_entry(r, study, d.doc, run_dir, d.wall_s, d.reused))
    doc = {
        **document_head(SCHEMA_NAME, SCHEMA_VERSION, ["study", *args.argv]),
        "run_dir": str(run_dir),
        "study": study.config(),
        "order_shuffle": f"random.Random({study.seed}).shuffle of (condition, repetition)",
        "runs": entries,
    }
    doc["summary"] = summary_block(doc)
    return doc


# ------------------------------------------------------------------ parser


def build_parser() -> argparse.ArgumentParser:
    p = command.harness_parser(
        PROG,
        (
            "Runs a study (docs/study.md): a control and conditions (bullies beside the\n"
            "applications, other placements), each repeated R times, in an order shuffled\n"
            "with the study's seed; each run is one `contend jobs` of a generated job file\n"
            "with its own results file.  Resumable: run the same command again after an\n"
            "interruption.  Reports per application and condition the mean performance\n"
            "difference vs. the control with Welch's t-test (the fat-tree poster's Table I)\n"
            "and the bullies' bandwidth per rank."
        ),
        (
            "Run directory (--dir): state.json (the order, the finished runs), jobs/ (each\n"
            "run's job file), runs/ (each run's contend-jobs results), study.json.\n\n"
            "Example (about a minute; docs/study.md):\n"
            "  contend study examples/study/fattree-bully.toml --dir fb -o fb.json\n"
            "  contend report fb.json;  contend plot study fb.json -o fb.png\n"
            "  contend study examples/study/fattree-bully.toml --dir fb --slurm \\\n"
            "      --topology-conf topology.conf      # writes fb/slurm/study.sbatch\n\n"
            "Exit status: 0 done; 2 bad input (nothing run); 3 a run failed (the finished\n"
            "ones are kept: run again to resume)."
        ),
    )
    p.add_argument("study", help="study file (TOML, docs/study.md)")
    p.add_argument("--dir", help="run directory [default study-NAME in the working directory]")
    p.add_argument("-o", "--output", help="the contend-study results [default DIR/study.json]")
    p.add_argument(
        "--conditions",
        metavar="NAME,...",
        help="only these conditions (and the control); the run directory is per selection",
    )
    command.add_engine_options(
        p,
        default=None,
        lead="run on this engine instead of the study file's (its table of the engine's options)",
        note="The emulated cluster is the one that is up (CONTEND_CLUSTER_PREFIX)",
        params=False,
    )
    command.add_options(
        p,
        "parallel",
        "timeout",
        helps={
            "parallel": f"runs at once [count, 1 to {MAX_PARALLEL}, default 1; 1 on an engine "
            "whose runs take the whole machine]"
        },
        defaults={"timeout": 3600},
    )
    p.add_argument(
        "--slurm",
        action="store_true",
        help="write DIR/slurm/study.sbatch (srun --nodelist per run, from --topology-conf) "
        "instead of running",
    )
    p.add_argument(
        "--topology-conf",
        metavar="FILE",
        help="Slurm topology.conf: node i of the placements is its i-th node [default: the "
        "study file's slurm.topology_conf]",
    )
    p.add_argument(
        "--collect",
        action="store_true",
        help="run nothing: write the results of the finished runs in DIR (all must be there)",
    )
    command.add_options(p, "quiet")
    return p


@guarded(PROG)
def main(argv=None) -> int:
    return command.harness_main(
        PROG,
        build_parser(),
        lambda args: _main(args, log_stderr),
        argv,
        stopped="the running runs were stopped (finished runs kept: run again to resume)",
    )


def _main(args, log) -> int:
    """main's work after parsing (its errors are main's to report)."""
    study = load_study(args.study, args.engine)
    if (
        engine_class(study.engine).whole_machine
        and args.parallel > 1
        and not (args.slurm or args.collect)
    ):
        raise UsageError(
            f"--parallel: the {study.engine} engine runs one run at a time (a run's jobs take "
            f"{engine_class(study.engine).whole_machine})"
        )
    if args.conditions is not None:
        names = [n.strip() for n in args.conditions.split(",") if n.strip()]
        select_conditions(study, names)
    run_dir = Path(args.dir or f"study-{study.name}")
    check_output_dir(run_dir, "--dir run directory", UsageError)
    output = Path(args.output) if args.output else run_dir / "study.json"
    runs = plan(study, run_dir)
    conf = args.topology_conf or study.slurm["topology_conf"]
    check_study_files(study, run_dir, runs, output, conf if args.slurm else None)
    make_dir(run_dir, "--dir run directory", UsageError)
    check_output(output)
    if args.slurm:
        from .studyslurm import write_slurm

        if not conf:
            raise UsageError("--slurm needs --topology-conf FILE (or slurm.topology_conf)")
        state = load_or_create_state(study, run_dir, runs)
        script = write_slurm(
            study, runs, run_dir, Path(conf), Path(args.study), Runner(study, local=False)
        )
        log(f"{PROG}: wrote {script} ({len(runs)} runs; submit with sbatch {script})")
        return 0
    state = load_or_create_state(study, run_dir, runs)
    if args.collect:
        docs = {}
        missing = []
        for run in runs:
            doc = valid_run(run, study)
            if doc is None:
                missing.append(run)
            else:
                docs[run.order_index] = Done(None, doc, None, reused=True)
        if missing:
            raise RunError(
                f"{len(missing)} of {len(runs)} run(s) have no valid results in "
                f"{run_dir / 'runs'} (first: {missing[0].results_file.name}); run them "
                "(resubmit the batch script, or run contend study without --collect)"
            )
    else:
        docs = execute(study, run_dir, runs, state, args, log)
    doc = document(study, run_dir, runs, docs, args)
    from .studystats import validate_document

    validate_document(doc, "the study's results")
    write_json_atomic(output, doc)
    from ..reports.views.study import render_study

    sys.stdout.write(render_study(doc, "text", source=str(output)) + "\n")
    if not args.quiet:
        log(f"{PROG}: wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
