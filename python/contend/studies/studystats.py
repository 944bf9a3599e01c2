"""Statistics of a ``contend study`` results file (schema ``contend-study``).

Recomputed from the file's runs (``runs[].runtime_s``,
``runs[].bully_bandwidth``), so the runner, ``contend report``, the figure
and the HTML share one definition (seeds/fattree-congestion-poster.md,
Table I):

* performance difference of an application in a condition, in percent:
  100 x (control mean runtime - condition mean runtime) / control mean
  runtime; negative = the application ran slower than in the control;
* Welch's two-sided t-test of the condition's runtimes against the
  control's (scipy.stats.ttest_ind, equal_var=False), marked ``*`` at
  p < 0.05 and ``**`` at p < 0.01;
* per run difference (the figure): 100 x (control mean - run's runtime) /
  control mean;
* bully bandwidth per rank (Gb/s, as the bully motifs report it): per
  condition and bully, the slowest rank's over all runs, the mean over runs
  of the slowest rank's, and the mean over runs of the ranks' mean.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from ..analysis.impact import performance_difference_pct
from ..analysis.welch import DEFAULT_ALPHAS, significance_marker, welch_t_test
from ..results import ResultsError, check_versioned, load_document

SCHEMA_NAME = "contend-study"
SCHEMA_FILE = "contend-study.schema.json"
SCHEMA_VERSION = "1.0"
VALID_HINT = f"a results file written by `contend study FILE` (schema '{SCHEMA_NAME}')"
TABLE_COLUMNS = [
    "app", "condition", "n_control", "n", "control_mean_s", "mean_s", "difference_pct",
    "t", "df", "p", "marker",
]  # fmt: skip
BULLY_COLUMNS = [
    "condition", "bully", "runs", "runs_with_bandwidth", "slowest_rank_gbps_min",
    "slowest_rank_gbps_mean", "rank_gbps_mean", "key",
]  # fmt: skip


def validate_document(doc, source: str) -> None:
    """ResultsError naming the first bad field unless ``doc`` is a study file."""
    check_versioned(doc, source, SCHEMA_NAME, SCHEMA_FILE, VALID_HINT)
    conds = [c["name"] for c in doc["study"]["conditions"]]
    apps = doc["study"]["apps"]
    for i, run in enumerate(doc["runs"]):
        if run["condition"] not in conds:
            raise ResultsError(f"{source}: runs[{i}].condition {run['condition']!r} is unknown")
        if sorted(run["runtime_s"]) != sorted(apps):
            raise ResultsError(f"{source}: runs[{i}].runtime_s does not hold every application")


def load_study_results(path) -> dict:
    return load_document(path, validate_document, VALID_HINT)


def conditions(doc: dict) -> list:
    """Condition names, the control first."""
    return [c["name"] for c in doc["study"]["conditions"]]


def runtime_frame(doc: dict) -> pd.DataFrame:
    """One row per run and application: order_index, condition, repetition, seed, app, runtime_s."""
    rows = [
        {
            "order_index": r["order_index"],
            "condition": r["condition"],
            "repetition": r["repetition"],
            "seed": r["seed"],
            "app": app,
            "runtime_s": float(t),
        }
        for r in doc["runs"]
        for app, t in r["runtime_s"].items()
    ]
    cols = ["order_index", "condition", "repetition", "seed", "app", "runtime_s"]
    return pd.DataFrame(rows, columns=cols)


def difference_table(doc: dict, alphas=DEFAULT_ALPHAS) -> pd.DataFrame:
    """Per application and condition (the control's rows first, without a
    test): means, the difference vs. the control in % and Welch's test."""
    frame = runtime_frame(doc)
    control = doc["study"]["control"]
    rows = []
    for app in doc["study"]["apps"]:
        sel = frame[frame["app"] == app]
        ctl = sel.loc[sel["condition"] == control, "runtime_s"].to_numpy(float)
        ctl_mean = float(ctl.mean()) if ctl.size else math.nan
        for cond in conditions(doc):
            vals = sel.loc[sel["condition"] == cond, "runtime_s"].to_numpy(float)
            mean = float(vals.mean()) if vals.size else math.nan
            row = {
                "app": app,
                "condition": cond,
                "n_control": int(ctl.size),
                "n": int(vals.size),
                "control_mean_s": ctl_mean,
                "mean_s": mean,
                "difference_pct": math.nan,
                "t": math.nan,
                "df": math.nan,
                "p": math.nan,
                "marker": "",
            }
            if cond != control:
                with warnings.catch_warnings():  # deterministic runs: equal values
                    warnings.simplefilter("ignore", RuntimeWarning)
                    test = welch_t_test(ctl, vals)
                row.update(
                    difference_pct=performance_difference_pct(ctl_mean, mean, False),
                    t=test.t if math.isfinite(test.t) else math.nan,  # +-inf: no variance
                    df=test.df,
                    p=test.p,
                    marker=significance_marker(test.p, alphas),
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def table_one(doc: dict, alphas=DEFAULT_ALPHAS) -> pd.DataFrame:
    """The poster's Table I: one row per condition (not the control), one
    column per application, cells '-0.70%*' (difference vs. control and marker)."""
    diff = difference_table(doc, alphas)
    control = doc["study"]["control"]
    out = []
    for cond in conditions(doc):
        if cond == control:
            continue
        row = {"condition": cond}
        for app in doc["study"]["apps"]:
            r = diff[(diff["app"] == app) & (diff["condition"] == cond)].iloc[0]
            d = r["difference_pct"]
            row[app] = "n/a" if not math.isfinite(d) else f"{d:.2f}%{r['marker']}"
        out.append(row)
    return pd.DataFrame(out, columns=["condition", *doc["study"]["apps"]])


def per_run_difference(doc: dict) -> pd.DataFrame:
    """Each run's difference vs. the control's mean, in % (the figure's points)."""
    frame = runtime_frame(doc)
    control = doc["study"]["control"]
    means = frame[frame["condition"] == control].groupby("app")["runtime_s"].mean()
    frame["difference_pct"] = [
        performance_difference_pct(means.get(a, math.nan), t, False)
        for a, t in zip(frame["app"], frame["runtime_s"])
    ]
    return frame


def bully_table(doc: dict) -> pd.DataFrame:
    """Per condition and bully: its bandwidth per rank over the runs (Gb/s);
    NaN where the bully's motifs report none."""
    rows = []
    for cond in doc["study"]["conditions"]:
        for bully in cond["bullies"]:
            vals = [
                r["bully_bandwidth"].get(bully)
                for r in doc["runs"]
                if r["condition"] == cond["name"]
            ]
            got = [v for v in vals if v]
            lo = np.array([v["min_rank_gbps"] for v in got], dtype=float)
            mean = np.array([v["mean_rank_gbps"] for v in got], dtype=float)
            rows.append(
                {
                    "condition": cond["name"],
                    "bully": bully,
                    "runs": len(vals),
                    "runs_with_bandwidth": len(got),
                    "slowest_rank_gbps_min": float(lo.min()) if lo.size else math.nan,
                    "slowest_rank_gbps_mean": float(lo.mean()) if lo.size else math.nan,
                    "rank_gbps_mean": float(mean.mean()) if mean.size else math.nan,
                    "key": got[0]["key"] if got else "",
                }
            )
    return pd.DataFrame(rows, columns=BULLY_COLUMNS)


def order_check(doc: dict) -> dict:
    """Runs per condition and whether the order indices are 0..n-1 once each."""
    idx = sorted(r["order_index"] for r in doc["runs"])
    per = {c: 0 for c in conditions(doc)}
    for r in doc["runs"]:
        per[r["condition"]] += 1
    return {"runs_per_condition": per, "order_complete": idx == list(range(len(idx)))}


def summary_block(doc: dict) -> dict:
    """The ``summary`` object written into the file (plain JSON, NaN -> null)."""
    from ..formatting import records

    diff = difference_table(doc)
    bully = bully_table(doc)
    return {
        "difference_definition": (
            "100 x (control mean runtime - condition mean runtime) / control mean runtime; "
            "negative = slower than control"
        ),
        "test": "Welch two-sided t-test (scipy.stats.ttest_ind, equal_var=False); "
        "* p < 0.05, ** p < 0.01",
        "difference": records(diff, list(diff.columns)),
        "bully_bandwidth": records(bully, list(bully.columns)),
        **order_check(doc),
    }
