"""Figures (matplotlib, Agg backend; PNG, SVG or PDF chosen by the file extension).

* :func:`histogram_figure`  isolated vs. congested histograms of each canary on
  a log x axis, mean (red) and 99 % value (green) marked (GPCNeT Figures 1-3, 6-7);
* :func:`congestor_panels_figure`  isolated on top, then one row per
  single-congestor run (GPCNeT Figures 4-5);
* :func:`impact_bars_figure`  Congestion Impact at mean and 99 % across runs
  on a log y axis (GPCNeT Figure 11);
* :func:`tier_stall_figure`  the simulated fabric's stall time per tier (mean
  and max over each tier's ports) as bars;
* :func:`job_boxes_figure`  per-repetition run times of each job (or motif) alone
  vs. in contention as box plots, mean as a diamond (StressBench Figures 1-2),
  from ``contend jobs`` results via :func:`job_times_frame`.
"""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FuncFormatter, NullFormatter

from ..formatting import format_number
from ..outfile import write_with
from ..results import Results

FIGURE_FORMATS = ("png", "svg", "pdf")
MEAN_COLOR = "tab:red"
TAIL_COLOR = "tab:green"
PHASE_COLORS = {"isolated": "tab:blue", "congested": "tab:orange"}
JOB_PHASE_COLORS = {"isolated": "tab:blue", "concurrent": "tab:orange"}
# Up to this many repetitions per box, each is drawn as a dot; beyond, outliers only.
JOB_DOTS_MAX = 30
CANARY_COLORS = [
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:gray",
    "tab:olive",
    "tab:cyan",
    "tab:red",
]


def _log_label(value, _pos=None) -> str:
    """Plain-text tick labels for log axes (mathtext labels are slow to lay out)."""
    if value <= 0:
        return ""
    if 1e-3 <= value < 1e5:
        return f"{value:g}"
    return f"1e{round(float(np.log10(value)))}"


def _plain_log_axis(axis) -> None:
    axis.set_major_formatter(FuncFormatter(_log_label))
    axis.set_minor_formatter(NullFormatter())


def _stair_arrays(hist: pd.DataFrame, relative_error: float):
    """Edges and per-bucket fractions of a sparse log histogram, gaps filled with 0."""
    lower = hist["lower"].to_numpy(float)
    upper = hist["upper"].to_numpy(float).copy()
    if np.isnan(upper).any():
        ratio = (1.0 + relative_error) / (1.0 - relative_error) if relative_error < 1 else 2.0
        upper = np.where(np.isnan(upper), lower * ratio, upper)
    frac = hist["count"].to_numpy(float) / hist["count"].sum()
    gap = np.r_[False, lower[1:] > upper[:-1] * (1 + 1e-12)]
    edges = [lower[0]]
    values = []
    for lo, hi, f, g in zip(lower, upper, frac, gap):
        if g:
            values.append(0.0)
            edges.append(lo)
        values.append(f)
        edges.append(hi)
    return np.asarray(edges), np.asarray(values)


def draw_histogram(ax, hist: pd.DataFrame, stats: pd.Series, color: str, log_y: bool = True):
    """One histogram panel: fraction of samples per bucket, mean and 99 % lines."""
    edges, values = _stair_arrays(hist, float(stats.get("relative_error", 0.01)))
    ax.stairs(values, edges, fill=True, color=color, alpha=0.75, linewidth=0)
    ax.set_xscale("log")
    _plain_log_axis(ax.xaxis)
    if log_y:
        ax.set_yscale("log")
        _plain_log_axis(ax.yaxis)
        positive = values[values > 0]
        ax.set_ylim(max(positive.min() * 0.5, 1e-9), 1.5)
    ax.axvline(stats["mean"], color=MEAN_COLOR, linewidth=1.2, label="mean")
    ax.axvline(stats["tail_99"], color=TAIL_COLOR, linewidth=1.2, linestyle="--", label="99%")
    ax.text(
        0.98,
        0.95,
        f"n={int(stats['count']):,}\nmean {stats['mean']:.4g}\n99% {stats['tail_99']:.4g}",
        transform=ax.transAxes,
        ha="right",
        va="top",
        fontsize=7,
        bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0},
    )
    ax.grid(True, which="major", alpha=0.3)


def _row_of(results: Results, name: str, phase: str):
    tests = results.tests
    sel = tests[(tests["name"] == name) & (tests["phase"] == phase) & tests["during"].isna()]
    return None if sel.empty else sel.index[0]


def _panels(rows: list, canaries: list, title: str, log_y: bool):
    """rows: [(row label, Results, phase, color)]; one column per canary."""
    ncol, nrow = max(1, len(canaries)), max(1, len(rows))
    width, height = max(5.5, 3.6 * ncol + 0.6), 1.9 * nrow + 1.2
    fig, axes = plt.subplots(nrow, ncol, figsize=(width, height), sharex="col", squeeze=False)
    for c, name in enumerate(canaries):
        for r, (label, results, phase, color) in enumerate(rows):
            ax = axes[r][c]
            idx = _row_of(results, name, phase)
            if idx is None:
                ax.text(
                    0.5,
                    0.5,
                    f"no {phase} data",
                    ha="center",
                    va="center",
                    transform=ax.transAxes,
                    fontsize=8,
                )
                ax.set_xscale("log")
                _plain_log_axis(ax.xaxis)
            else:
                stats = results.tests.loc[idx]
                draw_histogram(ax, results.histogram(idx), stats, color, log_y)
                if r == 0:
                    ax.set_title(stats["label"], fontsize=9)
                if r == nrow - 1:
                    ax.set_xlabel(stats["units"], fontsize=8)
            if c == 0:
                ax.set_ylabel(f"{label}\nfraction", fontsize=8)
            ax.tick_params(labelsize=7)
    handles = [
        plt.Line2D([], [], color=MEAN_COLOR, label="mean"),
        plt.Line2D(
            [], [], color=TAIL_COLOR, linestyle="--", label="99% (p99 latency, p1 bandwidth)"
        ),
    ]
    fig.legend(handles=handles, loc="lower center", fontsize=7, ncol=2, frameon=False)
    fig.suptitle(textwrap.fill(title, int(width * 11)), fontsize=10, x=0.02, ha="left")
    # fixed margins in inches: tight_layout costs a full extra draw
    fig.subplots_adjust(
        left=0.85 / width,
        right=1 - 0.15 / width,
        bottom=0.8 / height,
        top=1 - 0.75 / height,
        wspace=0.22,
        hspace=0.18,
    )
    return fig


def _pick_canaries(results: Results, canaries) -> list:
    available = results.canaries()
    if not canaries:
        return available
    unknown = [c for c in canaries if c not in available]
    if unknown:
        raise ValueError(
            f"{results.path}: no canary {', '.join(unknown)}; this file has "
            f"{', '.join(available) or 'none'}"
        )
    return list(canaries)


def run_title(results: Results) -> str:
    env = results.environment
    return (
        f"{results.label}: contend {results.command}, {env['nodes']} nodes x "
        f"{results.ranks_per_node} ranks/node, {env['mpi_library']}"
    )


def histogram_figure(results: Results, canaries=None, log_y: bool = True):
    """Isolated (top) vs. congested (bottom) histogram of each canary."""
    canaries = _pick_canaries(results, canaries)
    if not canaries:
        raise ValueError(f"{results.path}: no canary tests to plot (a --congestor-only run?)")
    rows = [("isolated", results, "isolated", PHASE_COLORS["isolated"])]
    if (results.tests["phase"] == "congested").any():
        rows.append(("congested", results, "congested", PHASE_COLORS["congested"]))
    return _panels(rows, canaries, run_title(results), log_y)


def congestor_name(results: Results) -> str:
    """The congestor(s) of a load run, joined with '+'."""
    groups = results.doc["placement"]["groups"]
    names = [g["name"] for g in groups if g["role"] == "congestor"]
    return "+".join(names) if names else "no congestor"


def congestor_panels_figure(runs: list, canaries=None, log_y: bool = True):
    """Isolated (from the first run) on top, then one row per run with its congestor."""
    if not runs:
        raise ValueError("give at least one results file of a single-congestor load run")
    canaries = _pick_canaries(runs[0], canaries)
    rows = [("isolated", runs[0], "isolated", PHASE_COLORS["isolated"])]
    for i, results in enumerate(runs):
        rows.append(
            (
                congestor_name(results),
                results,
                "congested",
                CANARY_COLORS[(i + 1) % len(CANARY_COLORS)],
            )
        )
    env = runs[0].environment
    title = (
        f"Canaries with one congestor at a time: {env['nodes']} nodes x "
        f"{runs[0].ranks_per_node} ranks/node, {env['mpi_library']}"
    )
    return _panels(rows, canaries, title, log_y)


def impact_bars_figure(frame: pd.DataFrame, title: str = "Congestion Impact"):
    """Grouped bars: per run, CI at mean (solid) and 99 % (hatched) per canary; log y.

    ``frame`` has the columns of :func:`contend.reports.tables.compare_table` (run,
    name, ci_mean, ci_tail_99); runs keep their order of appearance.
    """
    data = frame.dropna(subset=["ci_mean", "ci_tail_99"], how="all")
    if data.empty:
        raise ValueError(
            "no Congestion Impact to plot: give results of `contend load` runs "
            "(a `contend network` run has no congested phase)"
        )
    runs = list(dict.fromkeys(data["run"]))
    names = list(dict.fromkeys(data["name"]))
    nbar = 2 * len(names)
    width = 0.8 / nbar
    fig, ax = plt.subplots(figsize=(min(14.0, max(5.0, 0.16 * nbar * len(runs) + 2.0)), 4.6))
    x = np.arange(len(runs))
    for j, name in enumerate(names):
        color = CANARY_COLORS[j % len(CANARY_COLORS)]
        sub = data[data["name"] == name].drop_duplicates("run").set_index("run")
        for k, (key, hatch, suffix) in enumerate(
            (("ci_mean", None, "avg"), ("ci_tail_99", "//", "99%"))
        ):
            vals = [sub[key].get(run, np.nan) if run in sub.index else np.nan for run in runs]
            pos = x - 0.4 + width * (2 * j + k + 0.5)
            ax.bar(
                pos,
                vals,
                width,
                color=color,
                alpha=0.85 if k == 0 else 0.55,
                hatch=hatch,
                edgecolor="black",
                linewidth=0.4,
                label=f"{name} {suffix}",
            )
    ax.set_yscale("log")
    _plain_log_axis(ax.yaxis)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(
        runs,
        rotation=30 if len(runs) > 3 else 0,
        ha="right" if len(runs) > 3 else "center",
        fontsize=8,
    )
    ax.set_ylabel("Congestion Impact (log)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=7, ncol=len(names), frameon=False, loc="upper left")
    fig.tight_layout()
    return fig


def tier_stall_figure(tiers: pd.DataFrame, title: str = "Stall time per tier"):
    """Bars per tier of the simulated fabric: mean (solid) and max (hatched) stall.

    ``tiers`` has the columns of :func:`contend.reports.tables.tier_table` (tier,
    ports, stall_mean_pct, stall_max_pct); tiers keep their order.
    """
    if tiers.empty:
        raise ValueError("no tiers to plot: not a results file of an --engine sim run")
    names = list(tiers["tier"])
    x = np.arange(len(names))
    width = 0.38
    fig, ax = plt.subplots(figsize=(max(5.0, 1.25 * len(names) + 1.5), 3.8))
    for k, (key, label, hatch, alpha) in enumerate(
        (
            ("stall_mean_pct", "mean over the tier's ports", None, 0.85),
            ("stall_max_pct", "most stalled port", "//", 0.55),
        )
    ):
        vals = tiers[key].to_numpy(float)
        bars = ax.bar(
            x + (k - 0.5) * width,
            vals,
            width,
            color=CANARY_COLORS[k],
            alpha=alpha,
            hatch=hatch,
            edgecolor="black",
            linewidth=0.4,
            label=label,
        )
        ax.bar_label(bars, labels=[f"{v:.3g}" for v in vals], fontsize=7, padding=1)
    ax.set_xticks(x)
    ax.set_xticklabels(
        [f"{textwrap.fill(n, 14)}\n({int(p)} ports)" for n, p in zip(names, tiers["ports"])],
        fontsize=7,
    )
    top = float(np.nanmax(tiers[["stall_mean_pct", "stall_max_pct"]].to_numpy(float)))
    ax.set_ylim(0, max(top * 1.15, 1.0))
    ax.set_ylabel("stalled (% of simulated time)")
    ax.set_title(textwrap.fill(title, 90), fontsize=10)
    ax.grid(True, axis="y", which="major", alpha=0.3)
    ax.legend(fontsize=7, frameon=False, loc="upper right")
    fig.tight_layout()
    return fig


def job_times_frame(results, motifs: bool = False) -> pd.DataFrame:
    """Per-repetition times of a :class:`contend.jobsresults.JobsResults` for
    :func:`job_boxes_figure`: columns panel ('job' or 'job: 2 halo2d'), phase
    ('isolated' / 'concurrent'), time_s; repeats without a time dropped."""
    ent = results.entries
    ent = ent[ent["position"] > 0] if motifs else ent[ent["position"] == 0]
    names = {
        i: (r["job"] if r["position"] == 0 else f"{r['job']}: {int(r['position'])} {r['motif']}")
        for i, r in ent.iterrows()
    }
    reps = results.repeats[results.repeats["entry"].isin(names)]
    reps = reps[np.isfinite(reps["time_s"].to_numpy(float))]
    order = {e: k for k, e in enumerate(names)}
    reps = reps.assign(_order=reps["entry"].map(order)).sort_values(["_order", "repeat"])
    return pd.DataFrame(
        {
            "panel": reps["entry"].map(names).to_numpy(),
            "phase": reps["pass"].to_numpy(),
            "time_s": reps["time_s"].to_numpy(float),
        }
    )


def _time_scale(values) -> tuple:
    top = float(np.nanmax(values)) if len(values) else 0.0
    for unit, scale in (("s", 1.0), ("ms", 1e-3)):
        if top >= scale:
            return unit, scale
    return "us", 1e-6


def job_boxes_figure(frame: pd.DataFrame, title: str = "Job run times", ncols: int = 4):
    """Box plots of run times alone vs. in contention, one panel per job (StressBench
    Figures 1-2).

    ``frame``: one row per repetition with columns ``panel`` (or ``job``), ``phase``
    ('isolated', 'concurrent'; 'congested' is read as concurrent) and ``time_s``.
    Each panel has its own time axis (unit in its label) with the two phases side
    by side: the box spans the quartiles, the line is the median, the diamond the
    mean; the repetitions are drawn as dots (outliers only above JOB_DOTS_MAX
    per box).  The panel title gives the slowdown
    (concurrent mean / isolated mean) when both phases are there.
    """
    frame = frame.rename(columns={"job": "panel"}) if "panel" not in frame else frame
    need = {"panel", "phase", "time_s"}
    if not need <= set(frame.columns):
        raise ValueError(
            f"job frame needs columns {sorted(need)} (or job for panel), got {sorted(frame.columns)}"
        )
    if frame.empty:
        raise ValueError("no per-repetition times to plot")
    frame = frame.assign(phase=frame["phase"].replace({"congested": "concurrent"}))
    panels = list(dict.fromkeys(frame["panel"]))
    phases = [p for p in ("isolated", "concurrent") if (frame["phase"] == p).any()]
    ncol = max(1, min(ncols, len(panels)))
    nrow = -(-len(panels) // ncol)
    width, height = max(4.5, 2.7 * ncol + 0.6), 2.5 * nrow + 1.0
    fig, axes = plt.subplots(nrow, ncol, figsize=(width, height), squeeze=False)
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, panels):
        data = [
            frame[(frame["panel"] == panel) & (frame["phase"] == p)]["time_s"].to_numpy(float)
            for p in phases
        ]
        unit, scale = _time_scale(np.concatenate(data))
        keep = [k for k, d in enumerate(data) if d.size]
        dots = max(d.size for d in data) <= JOB_DOTS_MAX
        box = ax.boxplot(
            [data[k] / scale for k in keep],
            positions=keep,
            widths=0.55,
            showmeans=True,
            patch_artist=True,
            medianprops={"color": "black"},
            meanprops={
                "marker": "D",
                "markerfacecolor": "white",
                "markeredgecolor": "black",
                "markersize": 5,
            },
            flierprops={"markersize": 0 if dots else 3, "alpha": 0.6},
        )
        for patch, k in zip(box["boxes"], keep):
            patch.set_facecolor(JOB_PHASE_COLORS[phases[k]])
            patch.set_alpha(0.7)
        rng = np.random.default_rng(0)  # fixed jitter: the same file gives the same figure
        for k in keep if dots else ():
            x = k + rng.uniform(-0.12, 0.12, data[k].size)
            ax.plot(x, data[k] / scale, "o", color="black", markersize=2.5, alpha=0.6)
        ax.yaxis.get_major_formatter().set_useOffset(False)  # no "+1.498e1" over the title
        ax.set_xticks(range(len(phases)))
        ax.set_xticklabels(phases, fontsize=8)
        ax.set_xlim(-0.6, len(phases) - 0.4)
        ax.set_ylabel(f"time ({unit})", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, axis="y", alpha=0.3)
        head = textwrap.fill(str(panel), 30)
        if len(phases) == 2 and all(d.size for d in data) and data[0].mean() > 0:
            head += f"\nslowdown {format_number(data[1].mean() / data[0].mean())}x"
        ax.set_title(head, fontsize=8)
    fig.suptitle(textwrap.fill(title, int(width * 11)), fontsize=10, x=0.02, ha="left")
    fig.tight_layout()
    return fig


def figure_format(path) -> str:
    """The figure format named by a file's extension; ValueError unless png, svg or pdf."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FIGURE_FORMATS:
        raise ValueError(
            f"{path}: unsupported figure format {fmt!r}: use a .png, .svg or .pdf name"
        )
    return fmt


def save_figure(fig, path, error=ValueError) -> Path:
    """Write a figure as PNG, SVG or PDF (by extension), whole or not at all, and close it."""
    path = Path(path)
    try:
        fmt = figure_format(path)
        write_with(path, lambda fh: fig.savefig(fh, format=fmt, dpi=110), "wb", "figure", error)
    finally:
        plt.close(fig)
    return path


def figure_png_bytes(fig, dpi: int = 100) -> bytes:
    """PNG bytes of a figure (for embedding); closes it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()
