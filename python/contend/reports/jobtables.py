"""Tables of ``contend jobs`` results: per job and per motif, isolated vs. concurrent.

One row per job (``position`` 0) or motif with, for each pass, the mean run
time and its two-sided Student-t confidence interval, the slowdown
concurrent / isolated (``slowdown_ratio``) with Welch's t-test (``welch_p``), and the file's own Congestion
Impact at the average over ranks and repeats (``ci_mean``, StressBench eq. 3).

Basis of the mean and interval (column ``basis``):

* ``repeats``: the per-repetition run times the file records (schema 1.2:
  per repeat the slowest rank's time, as a job's run time is its slowest
  rank's); the slowdown then equals the file's ``ci.slowest_rank``;
* ``ranks x repeats``: files from before 1.2 have only the summary over ranks
  and repeats (count, mean, stddev); the interval is computed from it and
  treats ranks as independent samples, which they are not quite.

All times in seconds, never rounded here; :mod:`contend.formatting` renders.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

from .. import formatting as fmt
from ..analysis import (
    mean_interval,
    mean_interval_from_summary,
    welch_t_test,
    welch_t_test_from_summary,
)
from ..jobsresults import PASSES, JobsResults

# Tolerance when cross-checking the recomputed slowdown with the file's ci.slowest_rank.
SLOWDOWN_RTOL = 1e-9
PHASE_KEYS = ("count", "mean_s", "lo_s", "hi_s", "stddev_s", "median_s", "min_s", "max_s", "avg_s")
JOB_COLUMNS = (
    ["job", "position", "motif", "motif_label", "message_bytes", "ranks", "repeats", "basis"]
    + [f"{p}_{k}" for p in PASSES for k in PHASE_KEYS]
    + ["slowdown_ratio", "welch_p", "ci_mean", "ci_slowest_rank"]
)
# Time units for the human views: (name, seconds), the first the largest mean reaches.
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("us", 1e-6))


def _phase(values, summary_row, level: float, basis: str) -> dict:
    out = dict.fromkeys(PHASE_KEYS, math.nan)
    if summary_row is None:
        out["count"] = 0
        return out
    out["avg_s"] = summary_row["mean_s"]
    if basis == "repeats":
        data = values[np.isfinite(values)]
        mean, lo, hi = mean_interval(data, level)
        out.update(
            count=int(data.size),
            mean_s=mean,
            lo_s=lo,
            hi_s=hi,
            stddev_s=float(data.std(ddof=1)) if data.size > 1 else math.nan,
            median_s=float(np.median(data)) if data.size else math.nan,
            min_s=float(data.min()) if data.size else math.nan,
            max_s=float(data.max()) if data.size else math.nan,
        )
    else:
        n = int(summary_row["count"])
        mean, sd = summary_row["mean_s"], summary_row["stddev_s"]
        lo, hi = mean_interval_from_summary(mean, sd, n, level)
        out.update(
            count=n,
            mean_s=mean,
            lo_s=lo,
            hi_s=hi,
            stddev_s=sd,
            min_s=summary_row["min_s"],
            max_s=summary_row["max_s"],
        )
    return out


def _welch(iso: dict, con: dict, iso_values, con_values, basis: str) -> float:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # zero variance in both groups: p is NaN
        if basis == "repeats":
            test = welch_t_test(
                iso_values[np.isfinite(iso_values)], con_values[np.isfinite(con_values)]
            )
        else:
            test = welch_t_test_from_summary(
                (iso["mean_s"], iso["stddev_s"], iso["count"]),
                (con["mean_s"], con["stddev_s"], con["count"]),
            )
    return test.p


def jobs_table(results: JobsResults, level: float = 0.95) -> pd.DataFrame:
    """Every job and motif of a file, in file order (a job, then its motifs); see the
    module docstring for the columns."""
    rows = []
    summary = results.summary.set_index(["entry", "pass"])
    reps = results.repeats
    basis = "repeats" if results.has_repeats else "ranks x repeats"
    for entry, ident in results.entries.iterrows():
        row = ident.to_dict()
        row["basis"] = basis
        values, phases = {}, {}
        for name in PASSES:
            srow = summary.loc[(entry, name)] if (entry, name) in summary.index else None
            sel = reps[(reps["entry"] == entry) & (reps["pass"] == name)]
            values[name] = sel.sort_values("repeat")["time_s"].to_numpy(float)
            phases[name] = _phase(values[name], srow, level, basis)
            row.update({f"{name}_{k}": v for k, v in phases[name].items()})
            if srow is not None:
                row["ci_mean"] = srow["ci_mean"]
                row["ci_slowest_rank"] = srow["ci_slowest_rank"]
        iso, con = phases["isolated"], phases["concurrent"]
        ok = iso["mean_s"] > 0 and math.isfinite(con["mean_s"])
        row["slowdown_ratio"] = con["mean_s"] / iso["mean_s"] if ok else math.nan
        row["welch_p"] = _welch(iso, con, values["isolated"], values["concurrent"], basis)
        rows.append(row)
    frame = pd.DataFrame(rows, columns=JOB_COLUMNS)
    for key in ("ci_mean", "ci_slowest_rank", "slowdown_ratio", "welch_p"):
        frame[key] = frame[key].astype(float)
    for name in PASSES:
        frame[f"{name}_count"] = frame[f"{name}_count"].astype("Int64")
    return frame


def slowdown_mismatches(results: JobsResults, table: pd.DataFrame) -> list:
    """Rows whose recomputed slowdown differs from the file's ci.slowest_rank (repeats
    basis only: that is the same ratio of the same per-repetition means)."""
    if not results.has_repeats:
        return []
    problems = []
    for _, row in table.iterrows():
        if any(row[f"{p}_count"] != row["repeats"] for p in PASSES):
            continue  # a repeat without a time: the file's mean counts it as 0
        mine, theirs = row["slowdown_ratio"], row["ci_slowest_rank"]
        if math.isnan(mine) and (theirs is None or math.isnan(theirs)):
            continue
        if not (math.isfinite(theirs) and math.isclose(mine, theirs, rel_tol=SLOWDOWN_RTOL)):
            problems.append(
                f"{entry_name(row)}: slowdown recomputed {mine!r}, file has "
                f"ci.slowest_rank {theirs!r}"
            )
    return problems


def entry_name(row) -> str:
    """'job' or 'job/2 halo2d'."""
    if row["position"] == 0:
        return str(row["job"])
    return f"{row['job']}/{row['position']} {row['motif']}"


def motif_text(row) -> str:
    """A motif as the `contend jobs` table shows it: '3 halo2d (8000 B)'."""
    size = row["message_bytes"]
    suffix = f" ({int(size)} B)" if pd.notna(size) and size > 0 else ""
    return f"{int(row['position'])} {row['motif']}{suffix}"


def time_unit(table: pd.DataFrame) -> tuple:
    """(name, seconds) of the unit the human views use: the first of s, ms, us the
    largest mean reaches (us when nothing was timed)."""
    cols = [f"{p}_mean_s" for p in PASSES]
    top = pd.concat([table[c] for c in cols]).astype(float).abs().max()
    for name, scale in TIME_UNITS:
        if top >= scale:
            return name, scale
    return TIME_UNITS[-1]


def view(table: pd.DataFrame, passes, level: float, motifs: bool) -> tuple:
    """(frame, columns) of the human view of ``table`` (jobs or motifs rows): times in
    one unit named in the headers, the interval as +- its half-width."""
    unit, scale = time_unit(table)
    out = table.copy()
    pct = f"{level * 100:g}%"
    cols = [fmt.Column("job", "Job", "str")]
    if motifs:
        out["motif_text"] = [motif_text(r) for _, r in out.iterrows()]
        cols.append(fmt.Column("motif_text", "Motif", "str"))
    else:
        cols += [fmt.Column("ranks", "Ranks", "int"), fmt.Column("repeats", "Repeats", "int")]
    for name in PASSES:
        if name not in passes:
            continue
        out[f"{name}_mean"] = out[f"{name}_mean_s"] / scale
        out[f"{name}_pm"] = (out[f"{name}_hi_s"] - out[f"{name}_mean_s"]) / scale
        word = name.capitalize()
        cols += [
            fmt.Column(f"{name}_mean", f"{word} mean ({unit})"),
            fmt.Column(f"{name}_pm", f"{word} +-{pct} ({unit})"),
        ]
    if all(p in passes for p in PASSES):
        cols += [
            fmt.Column("slowdown_ratio", "Slowdown (x)"),
            fmt.Column("welch_p", "p", "p"),
            fmt.Column("ci_mean", "CI avg (x)"),
        ]
    return out, cols


def machine_columns() -> list:
    """Every column of :func:`jobs_table` for CSV and JSON (keys carry their units)."""
    kinds = {"job": "str", "motif": "str", "motif_label": "str", "basis": "str"}
    ints = {"position", "ranks", "repeats", "isolated_count", "concurrent_count"}
    return [
        fmt.Column(k, k, kinds.get(k, "int" if k in ints else ("p" if k == "welch_p" else "num")))
        for k in JOB_COLUMNS
    ]
