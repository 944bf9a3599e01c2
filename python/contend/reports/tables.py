"""Tables built from loaded results: impact (GPCNeT Table 2 layout), congestors,
comparisons across runs, published baselines and repeated-trial significance.

Every table is a pandas DataFrame with machine column names; numbers are the
results file's own values (never rounded here).  :mod:`contend.formatting`
renders them as text, markdown, CSV or JSON.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analysis import (
    bootstrap_histogram_impact,
    bootstrap_interval,
    congestion_impact,
    performance_difference_pct,
    significance_marker,
    welch_t_test,
)
from ..formatting import Column
from ..limits import clip, clip_repr
from ..results import Results
from .view import UsageError

IMPACT_COLUMNS = [
    "name",
    "label",
    "metric",
    "units",
    "higher_is_better",
    "isolated_count",
    "congested_count",
    "isolated_mean",
    "congested_mean",
    "isolated_tail_99",
    "congested_tail_99",
    "ci_mean",
    "ci_tail_99",
]
RUN_COLUMNS = ["run", "source", "mpi_library", "nodes", "ranks_per_node", "ranks"]

# ------------------------------------------- the columns the reports show
# (text, markdown and HTML: the *_VIEW lists; CSV and JSON: the *_MACHINE ones)

IMPACT_VIEW = [
    Column("name", "Canary", "str"),
    Column("units", "Units", "str"),
    Column("isolated_mean", "Isolated avg"),
    Column("congested_mean", "Congested avg"),
    Column("isolated_tail_99", "Isolated 99%"),
    Column("congested_tail_99", "Congested 99%"),
    Column("ci_mean", "CI avg"),
    Column("ci_tail_99", "CI 99%"),
]
IMPACT_MACHINE = (
    IMPACT_VIEW[:1]
    + [Column("label", "label", "str"), Column("metric", "metric", "str")]
    + IMPACT_VIEW[1:]
    + [
        Column("isolated_count", "isolated_count", "int"),
        Column("congested_count", "congested_count", "int"),
    ]
)
BOOTSTRAP_VIEW = [
    Column("ci_mean_lo", "CI avg lo"),
    Column("ci_mean_hi", "CI avg hi"),
    Column("ci_tail_99_lo", "CI 99% lo"),
    Column("ci_tail_99_hi", "CI 99% hi"),
]
CONGESTOR_VIEW = [
    Column("name", "Congestor", "str"),
    Column("phase", "Phase", "str"),
    Column("during", "During", "str"),
    Column("units", "Units", "str"),
    Column("mean", "Avg"),
    Column("tail_99", "99%"),
    Column("count", "Samples", "int"),
]
COMPARE_VIEW = [
    Column("run", "Run", "str"),
    Column("mpi_library", "MPI", "str"),
    Column("nodes", "Nodes", "int"),
    Column("ranks_per_node", "PPN", "str"),
] + IMPACT_VIEW
COMPARE_MACHINE = (
    COMPARE_VIEW[:4]
    + [Column("ranks", "ranks", "int"), Column("source", "source", "str")]
    + IMPACT_MACHINE
)
SIGNIFICANCE_VIEW = [
    Column("condition", "Condition", "str"),
    Column("name", "Canary", "str"),
    Column("quantity", "Quantity", "str"),
    Column("units", "Units", "str"),
    Column("n_control", "n ctl", "int"),
    Column("n_condition", "n", "int"),
    Column("control_mean", "Control"),
    Column("condition_mean", "Condition mean"),
    Column("condition_lo", "boot lo"),
    Column("condition_hi", "boot hi"),
    Column("difference_pct", "Diff %"),
    Column("p", "p", "p"),
    Column("marker", "Sig", "str"),
]
SIGNIFICANCE_MACHINE = SIGNIFICANCE_VIEW[:-2] + [
    Column("t", "t"),
    Column("p", "p", "p"),
    Column("marker", "marker", "str"),
]


# Tolerance when cross-checking recomputed CIs against the file's impact section.
CI_RTOL = 1e-9


def _phase_row(results: Results, name: str, phase: str):
    tests = results.tests
    rows = tests[(tests["name"] == name) & (tests["phase"] == phase) & tests["during"].isna()]
    return None if rows.empty else rows.iloc[0]


def impact_table(results: Results) -> pd.DataFrame:
    """Isolated vs. congested statistics and Congestion Impact per canary.

    One row per canary (GPCNeT Table 2 layout): mean and tail_99 (the "99%"
    value: p99 for latency, p1 for bandwidth) in each phase, copied from the
    file, and the CI at both, recomputed from those unrounded values
    (latency congested/isolated, bandwidth isolated/congested).  A canary
    without a congested phase (``contend network``) has NaN there.
    """
    rows = []
    for name in results.canaries():
        iso = _phase_row(results, name, "isolated")
        con = _phase_row(results, name, "congested")
        ref = iso if iso is not None else con
        hib = bool(ref["higher_is_better"])
        row = {
            "name": name,
            "label": ref["label"],
            "metric": ref["metric"],
            "units": ref["units"],
            "higher_is_better": hib,
        }
        for prefix, src in (("isolated", iso), ("congested", con)):
            row[f"{prefix}_count"] = np.nan if src is None else int(src["count"])
            row[f"{prefix}_mean"] = np.nan if src is None else src["mean"]
            row[f"{prefix}_tail_99"] = np.nan if src is None else src["tail_99"]
        row["ci_mean"] = congestion_impact(row["isolated_mean"], row["congested_mean"], hib)
        row["ci_tail_99"] = congestion_impact(
            row["isolated_tail_99"], row["congested_tail_99"], hib
        )
        rows.append(row)
    frame = pd.DataFrame(rows, columns=IMPACT_COLUMNS)
    for col in ("isolated_count", "congested_count"):
        frame[col] = frame[col].astype("Int64")
    return frame


def impact_mismatches(results: Results, table: pd.DataFrame | None = None) -> list:
    """Canaries whose recomputed CI differs from the file's impact section."""
    table = impact_table(results) if table is None else table
    stored = results.impact.set_index("name")
    problems = []
    for _, row in table.iterrows():
        if row["name"] not in stored.index:
            continue
        for key in ("ci_mean", "ci_tail_99"):
            mine, theirs = row[key], stored.loc[row["name"], key]
            if math.isnan(mine) and math.isnan(theirs):
                continue
            if not math.isclose(mine, theirs, rel_tol=CI_RTOL):
                problems.append(f"{row['name']}.{key}: recomputed {mine!r}, file has {theirs!r}")
    return problems


def add_bootstrap(
    results: Results, table: pd.DataFrame, n_resamples: int, level: float, seed: int
) -> pd.DataFrame:
    """Add bootstrap interval columns (ci_mean_lo/hi, ci_tail_99_lo/hi) to an impact table.

    Resamples each phase's histogram (see
    :func:`contend.analysis.bootstrap_histogram_impact`) with one numpy
    Generator seeded with ``seed``, canaries in table order.
    """
    rng = np.random.default_rng(seed)
    out = table.copy()
    for col in ("ci_mean_lo", "ci_mean_hi", "ci_tail_99_lo", "ci_tail_99_hi"):
        out[col] = np.nan
    tests = results.tests
    for i, row in out.iterrows():
        idx = {}
        for phase in ("isolated", "congested"):
            sel = tests[
                (tests["name"] == row["name"]) & (tests["phase"] == phase) & tests["during"].isna()
            ]
            if not sel.empty:
                idx[phase] = sel.index[0]
        if len(idx) < 2:
            continue
        anchor = {"ci_mean": row["ci_mean"], "ci_tail_99": row["ci_tail_99"]}
        res = bootstrap_histogram_impact(
            results.histogram(idx["isolated"]),
            results.histogram(idx["congested"]),
            bool(row["higher_is_better"]),
            n_resamples,
            level,
            rng,
            anchor=anchor,
        )
        out.loc[i, ["ci_mean_lo", "ci_mean_hi"]] = res["ci_mean"]
        out.loc[i, ["ci_tail_99_lo", "ci_tail_99_hi"]] = res["ci_tail_99"]
    return out


def congestor_table(results: Results) -> pd.DataFrame:
    """Congestor throughput alone and while loading each canary (mean, tail_99, samples)."""
    tests = results.tests
    rows = tests[tests["role"] == "congestor"]
    cols = [
        "name",
        "label",
        "phase",
        "during",
        "units",
        "count",
        "mean",
        "tail_99",
        "measurements_done",
        "timed_out",
    ]
    return rows[cols].reset_index(drop=True)


def _run_info(results: Results) -> dict:
    env = results.environment
    return {
        "run": results.label,
        "source": str(results.path),
        "mpi_library": env["mpi_library"],
        "nodes": int(env["nodes"]),
        "ranks_per_node": results.ranks_per_node,
        "ranks": int(env["ranks"]),
    }


def compare_table(runs: list) -> pd.DataFrame:
    """One impact table across runs, grouped by nodes, ranks per node and MPI library."""
    parts = []
    for order, results in enumerate(runs):
        table = impact_table(results)
        for key, value in _run_info(results).items():
            table[key] = value
        table["order"] = order
        parts.append(table)
    if not parts:
        return pd.DataFrame(columns=RUN_COLUMNS + IMPACT_COLUMNS)
    frame = pd.concat(parts, ignore_index=True)
    frame["_ppn"] = frame["ranks_per_node"].map(lambda s: int(str(s).split("-")[0]))
    frame = frame.sort_values(["nodes", "_ppn", "mpi_library", "order"], kind="stable")
    return frame[RUN_COLUMNS + IMPACT_COLUMNS].reset_index(drop=True)


def pick_canaries(frame: pd.DataFrame, wanted) -> pd.DataFrame:
    """The rows of the canaries named by ``--canaries`` (all when none are named);
    UsageError naming one that no run (or baseline) in ``frame`` has."""
    if not wanted:
        return frame
    have = list(dict.fromkeys(frame["name"]))
    unknown = [c for c in wanted if c not in have]
    if unknown:
        raise UsageError(
            f"--canaries: unknown canary {clip_repr(unknown[0])} (these results have: "
            f"{clip(', '.join(map(str, have)), 400) or 'none'})"
        )
    return frame[frame["name"].isin(wanted)]


# ---------------------------------------------------------------- significance

QUANTITIES = (
    # key, description, uses metric direction (else lower is better: a CI)
    ("congested_mean", "congested mean", True),
    ("congested_tail_99", "congested 99%", True),
    ("ci_mean", "CI mean", False),
    ("ci_tail_99", "CI 99%", False),
)

SIGNIFICANCE_COLUMNS = [
    "condition",
    "name",
    "quantity",
    "units",
    "n_control",
    "n_condition",
    "control_mean",
    "condition_mean",
    "difference_pct",
    "t",
    "p",
    "marker",
    "condition_lo",
    "condition_hi",
]


def significance_table(
    groups: dict,
    control: str,
    n_resamples: int = 10000,
    level: float = 0.95,
    seed: int = 0,
    alphas=(0.05, 0.01),
) -> pd.DataFrame:
    """Repeated trials: each condition's mean vs. the control's, with Welch's t-test.

    ``groups`` maps a condition label to its trials (loaded results files).
    For every canary and quantity (congested mean and 99 %, CI at mean and
    99 %) one value per trial is taken; the table gives both groups' means,
    the performance difference in percent (negative = worse than control,
    as in the fat-tree poster's Table I), Welch's t and two-sided p, a
    marker ('*' p < alphas[0], '**' p < alphas[1]) and a percentile-bootstrap
    interval of the condition's mean over its trials (seeded Generator).
    """
    if control not in groups:
        raise ValueError(
            f"control condition {control!r} is not one of the groups: {', '.join(groups)}"
        )
    per_trial = {}
    for label, trials in groups.items():
        frames = [impact_table(r).assign(trial=i) for i, r in enumerate(trials)]
        per_trial[label] = pd.concat(frames, ignore_index=True)
    rng = np.random.default_rng(seed)
    ctl = per_trial[control]
    rows = []
    for label, frame in per_trial.items():
        if label == control:
            continue
        for name in dict.fromkeys(frame["name"]):
            cond_rows = frame[frame["name"] == name]
            ctl_rows = ctl[ctl["name"] == name]
            if ctl_rows.empty:
                continue
            hib_metric = bool(cond_rows["higher_is_better"].iloc[0])
            for key, desc, uses_metric in QUANTITIES:
                a = ctl_rows[key].dropna().to_numpy(float)
                b = cond_rows[key].dropna().to_numpy(float)
                if a.size == 0 or b.size == 0:
                    continue
                hib = hib_metric if uses_metric else False
                test = welch_t_test(a, b)
                lo, hi = bootstrap_interval(b, np.mean, n_resamples, level, rng)
                rows.append(
                    {
                        "condition": label,
                        "name": name,
                        "quantity": desc,
                        "units": cond_rows["units"].iloc[0] if uses_metric else "ratio",
                        "n_control": a.size,
                        "n_condition": b.size,
                        "control_mean": float(a.mean()),
                        "condition_mean": float(b.mean()),
                        "difference_pct": performance_difference_pct(a.mean(), b.mean(), hib),
                        "t": test.t,
                        "p": test.p,
                        "marker": significance_marker(test.p, alphas),
                        "condition_lo": lo,
                        "condition_hi": hi,
                    }
                )
    return pd.DataFrame(rows, columns=SIGNIFICANCE_COLUMNS)


# ---------------------------------------------------------------- simulated fabric

STALLED_PORT_COLUMNS = [
    "component",
    "port",
    "peer",
    "tier",
    "stall_pct",
    "busy_pct",
    "xmit_data_bytes",
    "occupancy_bytes_mean",
]
TIER_COLUMNS = [
    "tier",
    "ports",
    "stall_mean_pct",
    "stall_max_pct",
    "busy_mean_pct",
    "xmit_data_bytes",
]


def sim_counters(results: Results) -> dict | None:
    """``environment.simulation.counters`` of an ``--engine sim`` run, else None."""
    sim = results.environment.get("simulation")
    if not isinstance(sim, dict):
        return None
    counters = sim.get("counters")
    return counters if isinstance(counters, dict) else None


def stalled_ports_table(results: Results, top: int = 10) -> pd.DataFrame:
    """The simulated fabric's most stalled output ports, most stalled first.

    One row per entry of ``counters.top_stalled`` (at most ``top``): stall and
    busy time as percent of the simulated time (100 x the file's fractions),
    bytes sent and the mean bytes queued in the downstream buffer.
    """
    counters = sim_counters(results) or {}
    rows = [
        {
            "component": p["component"],
            "port": int(p["port"]),
            "peer": p["peer"],
            "tier": p["tier"],
            "stall_pct": 100.0 * p["stall_fraction"],
            "busy_pct": 100.0 * p["busy_fraction"],
            "xmit_data_bytes": p.get("xmit_data_bytes", np.nan),
            "occupancy_bytes_mean": p.get("occupancy_bytes_mean", np.nan),
        }
        for p in counters.get("top_stalled") or []
    ]
    frame = pd.DataFrame(rows, columns=STALLED_PORT_COLUMNS)
    frame = frame.sort_values("stall_pct", ascending=False, kind="stable")
    return frame.head(top).reset_index(drop=True)


def _tier_order(name: str):
    """Along a packet's path: injection, up the levels, local, global, down, ejection."""
    if name.startswith("injection"):
        return (0, 0)
    if name.startswith("level "):
        try:
            src = int(name.split()[1].split("->")[0])
        except (IndexError, ValueError):
            return (4, 0)
        return (1, src) if name.endswith("(up)") else (5, -src)
    return {"local": (2, 0), "global": (3, 0)}.get(
        name, (6, 0) if name.startswith("ejection") else (4, 0)
    )


def tier_table(results: Results) -> pd.DataFrame:
    """``counters.by_tier`` in percent, tiers in the order a packet crosses them.

    Columns: tier, ports, mean and max stall and mean busy time as percent of
    the simulated time; ``xmit_data_bytes`` when the file has it per tier
    (NaN otherwise).
    """
    counters = sim_counters(results) or {}
    rows = [
        {
            "tier": t["tier"],
            "ports": int(t["ports"]),
            "stall_mean_pct": 100.0 * t["stall_fraction_mean"],
            "stall_max_pct": 100.0 * t["stall_fraction_max"],
            "busy_mean_pct": 100.0 * t["busy_fraction_mean"],
            "xmit_data_bytes": t.get("xmit_data_bytes", np.nan),
        }
        for t in counters.get("by_tier") or []
    ]
    rows.sort(key=lambda r: _tier_order(r["tier"]))
    frame = pd.DataFrame(rows, columns=TIER_COLUMNS)
    frame["ports"] = frame["ports"].astype("Int64")
    frame["xmit_data_bytes"] = frame["xmit_data_bytes"].astype(float)
    return frame
