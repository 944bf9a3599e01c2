"""`contend report JOBS.json`: the per-job and per-motif tables of a ``contend jobs`` run.

Text, markdown, CSV (jobs and motifs in one table, ``position`` 0 for a job)
or JSON; :func:`html_section` gives the same tables with the box plots for
``contend html``.
"""

from __future__ import annotations

import base64
import json
import sys
from html import escape

from ... import formatting as fmt
from ...jobsresults import PASSES, JobsResults
from .. import plots
from ..jobtables import jobs_table, machine_columns, slowdown_mismatches, view


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
    head = "### " if form == "markdown" else ""
    gap = [""] if form == "markdown" else []
    both = all(p in results.passes for p in PASSES)
    what = "isolated vs. concurrent" if both else f"{results.passes[0]} only"
    if form == "markdown":
        parts = [f"## {results.label}", "", run_summary(results), ""]
    else:
        parts = [f"contend report: {results.path}", "  " + run_summary(results), ""]
    parts += [head + f"Jobs: {what}"] + gap + [fmt.render(job_frame, job_cols, form)]
    parts += ["", head + f"Motifs: {what}"] + gap + [fmt.render(motif_frame, motif_cols, form)]
    parts += ["", ("  " if form == "text" else "") + notes(results, level)]
    return "\n".join(parts)


def check_slowdowns(results: JobsResults, stream=None) -> None:
    """Warn (on stderr) when a recomputed slowdown differs from the file's ci.slowest_rank."""
    for problem in slowdown_mismatches(results, jobs_table(results)):
        print(f"contend report: warning: {results.path}: {problem}", file=stream or sys.stderr)


# ---------------------------------------------------------------------- html


def _img(fig, alt: str, caption: str) -> str:
    data = base64.b64encode(plots.figure_png_bytes(fig)).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{escape(alt)}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


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
    rows = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape(fmt.clean_text(v))}</td></tr>" for k, v in pairs
    )
    return f'<table class="kv">{rows}</table>'


BOX_CAPTION = (
    "Box plots of the {what} per repetition (the slowest rank's), isolated (blue) and "
    "concurrent (orange) side by side: the box spans the quartiles, the line is the "
    "median, the diamond the mean, whiskers reach 1.5 IQR; dots are the repetitions "
    "(StressBench Figures 1-2)."
)


def html_section(results: JobsResults, level: float = 0.95) -> str:
    """One HTML section: configuration, jobs and motif tables, box plots (embedded)."""
    table = jobs_table(results, level)
    jobs, motifs = split(table)
    job_frame, job_cols = view(jobs, results.passes, level, motifs=False)
    motif_frame, motif_cols = view(motifs, results.passes, level, motifs=True)
    parts = [
        f"<h2>{escape(results.label)}</h2>",
        f'<p class="note">{escape(str(results.path))}: {escape(run_summary(results))}</p>',
        "<h3>Configuration</h3>",
        _configuration(results),
        "<h3>Jobs</h3>",
        fmt.html_table(job_frame, job_cols),
    ]
    if results.has_repeats:
        parts.append(
            _img(
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
            _img(
                plots.job_boxes_figure(
                    plots.job_times_frame(results, motifs=True),
                    f"{results.label}: time per motif invocation",
                ),
                f"box plots of motif times of {results.label}",
                BOX_CAPTION.format(what="motifs' times per invocation"),
            )
        )
    parts.append(f'<p class="note">{escape(notes(results, level))}</p>')
    return "\n".join(parts)
