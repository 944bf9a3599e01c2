"""The view of the results of ``contend jobs``: the per-job and per-motif
tables in text, markdown, CSV (jobs and motifs in one table, ``position`` 0
for a job) or JSON; the HTML section (the same tables with box plots of the
per-repetition times); ``plot jobs`` (those box plots, of one or more files).
"""

from __future__ import annotations

import json
import sys
from html import escape

from ... import formatting as fmt
from ...jobsresults import PASSES, SCHEMA_NAME, JobsResults, load_jobs
from .. import html
from ..jobtables import jobs_table, machine_columns, slowdown_mismatches, view
from ..view import Plot, UsageError, View, schema_is


def notes(results: JobsResults, level: float) -> str:
    pct = f"{level * 100:g}%"
    if results.has_repeats:
        basis = (
            "Times: per repetition, the slowest rank's run time of the job (of the motif's "
            f"invocation); mean over the repetitions with a {pct} Student-t interval (+-)."
        )
    else:
        basis = (
            "Times: this file (schema before 1.2) holds no per-repetition times: mean and "
            f"{pct} Student-t interval over ranks and repetitions, ranks taken as independent."
        )
    if not all(p in results.passes for p in PASSES):
        return basis + " One pass only: no slowdown (run `contend jobs --mode both`)."
    return (
        basis + " Slowdown = concurrent mean / isolated mean; p: Welch's two-sided t-test of "
        "the difference. CI avg = Congestion Impact at the average over ranks and "
        "repetitions, as `contend jobs` prints it (StressBench eq. 3)."
    )


def run_summary(results: JobsResults) -> str:
    doc, env = results.doc, results.environment
    library = fmt.clean_text(env["mpi_library"] or "n/a")
    return (
        f"contend jobs {doc['job_file']} ({doc['tool']['name']} {doc['tool']['version']}), "
        f"engine {results.engine}, mode {doc['mode']} (passes: {', '.join(results.passes)}), "
        f"seed {doc['seed']} ({doc['seed_source']}), {env['nodes']} nodes x "
        f"{results.ranks_per_node} ranks/node ({env['ranks']} ranks), {library}; "
        f"started {doc['started_utc']}, wall {doc['wall_s']:.1f} s"
    )


def split(table):
    """(jobs rows, motif rows) of a jobs table."""
    return table[table["position"] == 0], table[table["position"] > 0]


def render_jobs_report(results: JobsResults, form: str = "text", level: float = 0.95) -> str:
    """The report of one jobs results file in one of formatting.FORMATS."""
    table = jobs_table(results, level)
    jobs, motifs = split(table)
    machine = machine_columns()
    if form == "json":
        keys = [c.key for c in machine if c.key not in ("motif", "motif_label", "message_bytes")]
        motif_keys = [c.key for c in machine]
        out = {
            "source": str(results.path),
            "label": results.label,
            "command": "jobs",
            "job_file": results.doc["job_file"],
            "engine": results.engine,
            "mode": results.doc["mode"],
            "passes": results.passes,
            "seed": results.doc["seed"],
            "environment": results.environment,
            "level": level,
            "jobs": fmt.records(jobs, [k for k in keys if k != "position"]),
            "motifs": fmt.records(motifs, motif_keys),
        }
        return json.dumps(out, indent=1, allow_nan=False)
    if form == "csv":
        return fmt.render(table, machine, "csv")
    job_frame, job_cols = view(jobs, results.passes, level, motifs=False)
    motif_frame, motif_cols = view(motifs, results.passes, level, motifs=True)
    both = all(p in results.passes for p in PASSES)
    what = "isolated vs. concurrent" if both else f"{results.passes[0]} only"
    if form == "markdown":
        parts = [fmt.heading(results.label, form), "", run_summary(results)]
    else:
        parts = [f"contend report: {results.path}", fmt.note(run_summary(results), form)]
    parts += fmt.titled(f"Jobs: {what}", fmt.render(job_frame, job_cols, form), form)
    parts += fmt.titled(f"Motifs: {what}", fmt.render(motif_frame, motif_cols, form), form)
    parts += ["", fmt.note(notes(results, level), form)]
    return "\n".join(parts)


def check_slowdowns(results: JobsResults, stream=None) -> None:
    """Warn (on stderr) when a recomputed slowdown differs from the file's ci.slowest_rank."""
    for problem in slowdown_mismatches(results, jobs_table(results)):
        print(f"contend report: warning: {results.path}: {problem}", file=stream or sys.stderr)


# ---------------------------------------------------------------------- html


def _configuration(results: JobsResults) -> str:
    doc = results.doc
    pairs = results.run_pairs()
    pairs[1:1] = [
        ("job file", doc["job_file"]),
        ("engine / mode", f"{results.engine} / {doc['mode']} ({', '.join(results.passes)})"),
    ]
    pairs += [
        (
            "jobs",
            "; ".join(
                f"{j['name']}: nodes {','.join(map(str, j['nodes']))}, repeat {j['repeat']}"
                for j in doc["jobs"]
            ),
        ),
    ]
    return html.kv_table(pairs)


BOX_CAPTION = (
    "Box plots of the {what} per repetition (the slowest rank's), isolated (blue) and "
    "concurrent (orange) side by side: the box spans the quartiles, the line is the "
    "median, the diamond the mean, whiskers reach 1.5 IQR; dots are the repetitions "
    "(StressBench Figures 1-2)."
)


def html_section(results: JobsResults, level: float = 0.95) -> str:
    """One HTML section: configuration, jobs and motif tables, box plots (embedded)."""
    from .. import plots

    table = jobs_table(results, level)
    jobs, motifs = split(table)
    job_frame, job_cols = view(jobs, results.passes, level, motifs=False)
    motif_frame, motif_cols = view(motifs, results.passes, level, motifs=True)
    parts = [
        f"<h2>{escape(results.label)}</h2>",
        html.note(f"{results.path}: {run_summary(results)}"),
        "<h3>Configuration</h3>",
        _configuration(results),
        "<h3>Jobs</h3>",
        fmt.html_table(job_frame, job_cols),
    ]
    if results.has_repeats:
        parts.append(
            html.figure(
                plots.job_boxes_figure(
                    plots.job_times_frame(results), f"{results.label}: run time per job"
                ),
                f"box plots of job run times of {results.label}",
                BOX_CAPTION.format(what="jobs' run times"),
            )
        )
    parts += ["<h3>Motifs</h3>", fmt.html_table(motif_frame, motif_cols)]
    if results.has_repeats:
        parts.append(
            html.figure(
                plots.job_boxes_figure(
                    plots.job_times_frame(results, motifs=True),
                    f"{results.label}: time per motif invocation",
                ),
                f"box plots of motif times of {results.label}",
                BOX_CAPTION.format(what="motifs' times per invocation"),
            )
        )
    parts.append(html.note(notes(results, level)))
    return "\n".join(parts)


# -------------------------------------------------------------------- figure


def _plot(args):
    """``plot jobs``: box plots of the per-repetition times of one or more files."""
    import pandas as pd

    from .. import plots

    if not args.results:
        raise UsageError("plot jobs takes one or more results files of `contend jobs`")
    frames = []
    for path in args.results:
        jobs = load_jobs(path)
        if not jobs.has_repeats:
            raise UsageError(
                f"{path}: holds no per-repetition times (schema {jobs.doc['schema_version']}; "
                "they came with 1.2): rerun `contend jobs` with this version"
            )
        frame = plots.job_times_frame(jobs, motifs=args.motifs)
        if len(args.results) > 1:
            frame["panel"] = jobs.label + "/" + frame["panel"]
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    if frame.empty:
        raise UsageError("plot jobs: no repetition has a time in these files")
    what = "time per motif invocation" if args.motifs else "run time per job"
    names = ", ".join(str(p) for p in args.results)
    return plots.job_boxes_figure(frame, f"{what} (per repetition, slowest rank): {names}")


def _report(path, args) -> str:
    if args.bootstrap:
        raise UsageError(
            "--bootstrap resamples histograms of `contend network` / `contend load` "
            "results; a jobs report gives Student-t intervals (--level)"
        )
    jobs = load_jobs(path)
    check_slowdowns(jobs)
    return render_jobs_report(jobs, args.format, args.level)


VIEW = View(
    "jobs",
    recognises=schema_is(SCHEMA_NAME),
    load=lambda paths: [load_jobs(p) for p in paths],
    report=_report,
    html=lambda items, page: [html_section(jobs) for _, jobs in items],
    figures={
        "jobs": Plot(
            _plot,
            "box plots of the per-repetition run times of each job (the slowest rank's, in "
            "s/ms/us as each panel's axis says), isolated and concurrent side by side, from "
            "results of `contend jobs` (StressBench Figs 1-2)",
        )
    },
)
