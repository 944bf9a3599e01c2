"""The view of the results of ``contend study``: the poster's Table I and the
long table (text, markdown, CSV, JSON), the bullies' bandwidth, the figure of
``plot study`` (per-run difference vs. the control per application and
condition) and the HTML section.  Numbers come from :mod:`contend.studies.studystats`.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import formatting as fmt
from ...studies.studystats import (
    SCHEMA_NAME,
    bully_table,
    conditions,
    difference_table,
    load_study_results,
    order_check,
    per_run_difference,
    table_one,
)
from .. import html
from ..view import document_view

DIFF_VIEW = [
    fmt.Column("app", "Application", "str"),
    fmt.Column("condition", "Condition", "str"),
    fmt.Column("n", "n", "int"),
    fmt.Column("mean_ms", "Mean runtime (ms)"),
    fmt.Column("difference_pct", "Diff vs control (%)"),
] + fmt.welch_columns("marker")
BULLY_VIEW = [
    fmt.Column("condition", "Condition", "str"),
    fmt.Column("bully", "Bully", "str"),
    fmt.Column("runs", "Runs", "int"),
    fmt.Column("slowest_rank_gbps_min", "Slowest rank, min (Gb/s)"),
    fmt.Column("slowest_rank_gbps_mean", "Slowest rank, mean (Gb/s)"),
    fmt.Column("rank_gbps_mean", "Rank mean (Gb/s)"),
]
NOTES = (
    "Diff = 100 x (control mean runtime - condition mean runtime) / control mean runtime: "
    "negative = the application performed worse than in the control (the poster's Table I). "
    "Runtime = perform_end_s - perform_start_s of the application's job in the run (engine "
    "clock: simulated on --engine sim). Welch two-sided t-test of the condition's runtimes vs. "
    "the control's (scipy.stats.ttest_ind, equal_var=False): * p < 0.05, ** p < 0.01. "
    "Bully bandwidth: achieved Gb/s per rank as the bully motifs report it (n/a: the bully's "
    "motifs report none)."
)
POSTER_NOTE = (
    "Published reference, not this run (seeds/fattree-congestion-poster.md, LLNL Quartz, 224 "
    "nodes per application): Table I, AMG/UMT/pF3D: light bully -0.70/-0.68/0.00 %, adjacent "
    "leaf -1.74/-0.52/-0.02 %, bisection -6.47/-1.94/0.00 %, incast -0.74*/0.01/-0.14 %, "
    "interleaved -3.17/-0.47*/-0.66* %; bully bandwidth: slowest rank >= 49.5 Gb/s in most "
    "runs, about 30 Gb/s (bisection) and 45 Gb/s or more (adjacent leaf) beside the "
    "applications; incast about 81 Gb/s per receiver."
)


def _diff(doc: dict) -> pd.DataFrame:
    d = difference_table(doc)
    d["mean_ms"] = d["mean_s"] * 1e3
    return d


TABLE_ONE = "Mean performance difference vs. control"


def _one_view(doc: dict) -> list:
    """Table I's columns: the condition, then one per application."""
    return [fmt.Column("condition", "Congestion type", "str")] + [
        fmt.Column(a, a, "str") for a in doc["study"]["apps"]
    ]


def summary_line(doc: dict) -> str:
    st = doc["study"]
    chk = order_check(doc)
    per = ", ".join(f"{c} {n}" for c, n in chk["runs_per_condition"].items())
    opts = st["engine_options"]  # the simulator's has its topology
    eng = st["engine"] + (f" {opts['topology']}" if "topology" in opts else "")
    return (
        f"study {st['name']} ({st['file']}) on {eng}: {len(st['apps'])} application(s) "
        f"({', '.join(st['apps'])}), control {st['control']!r} + {len(st['conditions']) - 1} "
        f"condition(s), {st['repetitions']} repetitions, seed {st['seed']}, randomized order; "
        f"runs: {per}"
    )


def _sections(doc: dict, table_one_title: str) -> list:
    """The tables of the text and HTML reports: (title, frame, columns)."""
    bully = bully_table(doc)
    sections = [
        (table_one_title, table_one(doc), _one_view(doc)),
        ("Per application and condition", _diff(doc), DIFF_VIEW),
    ]
    if not bully.empty:
        sections.append(("Bully bandwidth per rank", bully, BULLY_VIEW))
    return sections


def render_study(doc: dict, form: str = "text", source=None) -> str:
    if form == "json":
        one, diff, bully = table_one(doc), _diff(doc), bully_table(doc)
        out = {
            "source": None if source is None else str(source),
            "study": doc["study"],
            "table_one": fmt.records(one, list(one.columns)),
            "difference": fmt.records(diff, list(diff.columns)),
            "bully_bandwidth": fmt.records(bully, list(bully.columns)),
            **order_check(doc),
        }
        return json.dumps(out, indent=1, allow_nan=False)
    if form == "csv":
        diff = _diff(doc)
        keys = [k for k in diff.columns if k != "mean_ms"]
        return fmt.render(diff, [fmt.Column(k, k) for k in keys], "csv")
    return fmt.text_report(
        "contend study" + (f": {source}" if source else ""),
        [summary_line(doc)],
        _sections(doc, f"{TABLE_ONE} (Table I; * p < 0.05, ** p < 0.01)"),
        [NOTES, POSTER_NOTE],
        form,
    )


# ----------------------------------------------------------------- figure


def study_figure(doc: dict, title: str = ""):
    """One panel per application: each run's difference vs. the control's
    mean (%) per condition, box plot with the runs as points; the conditions'
    markers (* / **) over the boxes."""
    import matplotlib.pyplot as plt

    frame = per_run_difference(doc)
    diff = difference_table(doc)
    apps = doc["study"]["apps"]
    conds = conditions(doc)
    fig, axes = plt.subplots(
        1, len(apps), figsize=(max(4.0, 1.1 * len(conds)) * len(apps), 4.4), squeeze=False
    )
    rng = np.random.default_rng(0)  # jitter of the points only
    for ax, app in zip(axes[0], apps):
        data = [
            frame[(frame["app"] == app) & (frame["condition"] == c)]["difference_pct"].to_numpy(
                float
            )
            for c in conds
        ]
        ax.boxplot(data, showfliers=False)
        for k, vals in enumerate(data, start=1):
            ax.plot(k + rng.uniform(-0.12, 0.12, vals.size), vals, "o", ms=3, alpha=0.6)
            mark = diff[(diff["app"] == app) & (diff["condition"] == conds[k - 1])]["marker"]
            if len(mark) and mark.iloc[0] and vals.size:
                ax.annotate(mark.iloc[0], (k, np.nanmax(vals)), ha="center", va="bottom")
        ax.axhline(0, color="black", lw=0.8, ls=":")
        ax.set_xticks(range(1, len(conds) + 1))
        ax.set_xticklabels(conds, rotation=30, ha="right")
        ax.set_ylabel("difference vs. control mean (%)  (negative = slower)")
        ax.set_title(app)
    fig.suptitle(title or f"contend study {doc['study']['name']}: performance vs. control")
    fig.tight_layout()
    return fig


FIGURE_CAPTION = (
    "Each run's performance difference vs. the control's mean runtime, per application and "
    "condition (negative = slower); boxes: quartiles, whiskers 1.5 IQR; * / **: Welch's test "
    "of the condition vs. the control at p < 0.05 / 0.01."
)


def html_section(doc: dict, source: str) -> str:
    intro = [
        html.note(summary_line(doc)),
        html.figure(study_figure(doc), "study", FIGURE_CAPTION),
    ]
    sections = _sections(doc, f"{TABLE_ONE} (Table I)")
    return html.document_section(f"contend study: {source}", intro, sections, [NOTES, POSTER_NOTE])


PLOT_ABOUT = (
    "each run's performance difference vs. the control per application and condition, from "
    "one results file of `contend study` (the fat-tree poster's Table I as a figure)"
)

VIEW = document_view(
    "study",
    SCHEMA_NAME,
    load_study_results,
    render_study,
    html_section,
    study_figure,
    PLOT_ABOUT,
)
