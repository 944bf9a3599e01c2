"""``contend sensitivity-train``: runs of one application job under varied
congestion, with the fabric's counters sampled meanwhile -- the training data
of the Netscope delay sensitivity model (seeds/netscope-ics21.md sections 4.1
and 6.1: application runtimes under synthetic congestion, random placements).

Each run is one ``contend jobs`` run of the user's job file (the application,
placed by its own [PLACEMENT], at random per run seed) plus, for congested
runs, GPCNeT's four congestors on a share of the remaining nodes (placed at
random too).  The jobs results and counter files it writes are what
``contend model sensitivity`` reads.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .. import infile
from ..argtypes import count
from ..guard import guarded
from ..limits import MAX_INPUT_BYTES, MAX_RUNS, clip_repr
from ..runs.errors import UsageError
from ..runs.files import check_files, check_output, write_json_atomic
from ..runs.spec import RunSpec
from .common import (
    CONGESTORS,
    RepeatCalibration,
    Trainer,
    add_training_options,
    congestion_label,
    congestor_jobs,
    parse_congestion,
    run_files,
    run_record,
    run_seed,
    training_main,
    training_outputs,
)

PROG = "contend sensitivity-train"
SCHEMA = "contend-sensitivity-train"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Runs one application job of a job file --runs times, alone and beside GPCNeT's\n"
            "four congestors (all-to-all, incast, RMA incast, RMA broadcast) on a share of\n"
            "the other nodes, at a random placement per run, with the fabric's counters\n"
            "sampled meanwhile: the training data of the Netscope delay sensitivity model\n"
            "(contend model sensitivity).  --congestion cycles over the runs; the paper's\n"
            "quick training alternates the extremes (none, full congestion)."
        ),
        epilog=(
            "Output: -o TRAIN.json (schema contend-sensitivity-train: the runs, their\n"
            "congestion and seeds) and beside it TRAIN.runN.job / .json / .csv (each run's\n"
            "job file, contend-jobs results and counters).\n\n"
            "Examples:\n"
            "  contend sensitivity-train examples/netscope/milc.job --job milc --runs 10 \\\n"
            "      -o milc.json\n"
            "  contend model sensitivity milc.json --latency latency.json -o milc.sens.json\n"
            "Arguments after -- go to every simulated run (e.g. --routing, --network)."
        ),
    )
    p.add_argument("job_file", help="job file holding the application job")
    p.add_argument("--job", required=True, help="the application job's name in the file")
    p.add_argument("-o", "--output", required=True, help="training file to write (JSON)")
    p.add_argument(
        "--runs",
        type=count(MAX_RUNS),
        default=10,
        help=f"runs [count, 1 to {MAX_RUNS}, default %(default)s]",
    )
    p.add_argument(
        "--congestion",
        default="none,gpcnet",
        help="per run in turn: none, or gpcnet[:F] = the congestors on a share F of the other "
        "nodes [default %(default)s: the paper's synthetic extremes]",
    )
    p.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="job-file variable (as contend jobs -D)",
    )
    add_training_options(p)
    return p


def plan(engine, job_file: Path, defines, nodes: int, job: str) -> tuple[int, str]:
    """Checks the job file with a dry run; returns (nodes its jobs take, its text)."""
    doc = engine.dry_run(RunSpec(job_file=job_file, defines=tuple(defines)), nodes)
    names = [j["name"] for j in doc["jobs"]]
    if job not in names:
        raise UsageError(f"{job_file}: no job named {clip_repr(job)} (jobs: {', '.join(names)})")
    clash = [n for n in names if n in CONGESTORS]
    if clash:
        raise UsageError(
            f"{job_file}: job name {clip_repr(clash[0])} is taken by the congestors this command adds"
        )
    return sum(len(j["nodes"]) for j in doc["jobs"]), infile.read_text(
        job_file, "a job file", UsageError
    )


def train(args, log) -> dict:
    out = Path(args.output)
    check_output(out)
    job_file = Path(args.job_file)
    infile.check_size(job_file, MAX_INPUT_BYTES, "a job file", UsageError)
    calibration = run_files(out, "calibration")
    calibration = [p.with_name("." + p.name) for p in calibration]  # hidden, removed after
    check_files(
        [("JOB_FILE", job_file)],
        [
            ("-o", out),
            *training_outputs(out, args.runs),
            *(("the calibration run's file", p) for p in calibration),
        ],
    )
    congestion = parse_congestion(args.congestion)
    trainer = Trainer(PROG, args)
    engine = trainer.engine
    nodes = engine.nodes()
    used, text = plan(engine, job_file, args.defines, nodes, args.job)
    free = nodes - used
    if any(c[0] == "gpcnet" for c in congestion) and free < 2 * len(CONGESTORS):
        raise UsageError(
            f"the job file takes {used} of {nodes} nodes: {free} left, fewer than the "
            f"{2 * len(CONGESTORS)} the four congestors need"
        )
    calib = RepeatCalibration(args.congestor_repeat)
    window_s, interval_us = None, args.counter_interval_us
    frozen: dict = {}  # congestor share -> the repeats every congested run uses
    runs = []

    def run_once(congestors, files, seed, window):
        """One run; returns (results, the job's entry, its time, congestors' ends)."""
        header = f"# generated by contend sensitivity-train from {job_file}\n"
        ivl = interval_us or max(5.0, (window or 1e-3) * 1e6 / 10)
        body = header + text + "\n\n" + congestor_jobs(congestors)
        results = trainer.run(body, files, seed, ivl, defines=args.defines)
        app = next(j for j in results["jobs"] if j["name"] == args.job)
        r = app["results"]["concurrent"]
        ends = [
            j["results"]["concurrent"]["perform_end_s"] - r["perform_end_s"]
            for j in results["jobs"]
            if j["name"] in CONGESTORS
        ]
        return results, app, r["perform_end_s"] - r["perform_start_s"], ends

    for i in range(args.runs):
        cong = congestion[i % len(congestion)]
        share = int(cong[1] * free) // len(CONGESTORS) if cong[0] == "gpcnet" else 0
        files = run_files(out, f"run{i}")
        label = congestion_label(cong)
        seed = run_seed(args.seed, i)
        t0 = time.monotonic()
        if share >= 2 and share not in frozen:
            # calibration runs (not kept): learn repeats that outlast the job, then keep
            # twice those for every congested run, so all see the same congestion
            try:
                for attempt in range(4):
                    congestors = [
                        (name, share, calib.repeat(name, share, window_s or 1e-3))
                        for name in CONGESTORS
                    ]
                    if not args.quiet:
                        log(f"[sensitivity-train] calibrating the congestors ({attempt + 1})")
                    results, _, took, ends = run_once(
                        congestors, calibration, run_seed(args.seed, 999), window_s
                    )
                    window_s = max(window_s or 0, took)
                    calib.learn(results, {name: (n, rep) for name, n, rep in congestors})
                    if min(ends) >= 0 or args.congestor_repeat:
                        break
                grow = 1 if args.congestor_repeat else 2
                frozen[share] = {name: rep * grow for name, _, rep in congestors}
            finally:
                for f in calibration:
                    f.unlink(missing_ok=True)
        congestors = (
            [(name, share, frozen[share][name]) for name in CONGESTORS] if share >= 2 else []
        )
        if not args.quiet:
            log(
                f"[sensitivity-train] run {i + 1}/{args.runs}: congestion {label} "
                f"({len(congestors) * share} congestor nodes)"
            )
        results, app, took, ends = run_once(congestors, files, seed, window_s)
        window_s = max(window_s or 0, took)
        runs.append(
            {
                **run_record(i, seed, label, congestors, files, engine),
                "runtime_s": took,
                "congestors_outlasted_job": bool(ends) and min(ends) >= 0,
            }
        )
        if not args.quiet:
            log(
                f"[sensitivity-train]   {args.job}: {took * 1e3:.3f} ms on nodes "
                f"{','.join(map(str, app['nodes'][:8]))}{',...' if len(app['nodes']) > 8 else ''}"
                f" ({time.monotonic() - t0:.1f} s)"
            )
    doc = {
        "schema": SCHEMA,
        "schema_version": "1.0",
        "engine": engine.name,
        "job_file": str(job_file),
        "job": args.job,
        "defines": args.defines,
        "seed": args.seed,
        "jobs_args": engine.simulator_args(),
        "runs": runs,
    }
    write_json_atomic(out, doc)
    return doc


def _summary(args, doc) -> str:
    times = [r["runtime_s"] for r in doc["runs"]]
    return (
        f"{len(times)} runs of {doc['job']} ({min(times) * 1e3:.3f}-{max(times) * 1e3:.3f} ms) "
        f"-> {args.output}; next: contend model sensitivity {args.output} --latency LATENCY.json"
    )


@guarded(PROG)
def main(argv=None) -> int:
    return training_main(PROG, build_parser(), train, _summary, argv)


if __name__ == "__main__":
    sys.exit(main())
