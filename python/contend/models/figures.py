"""Figures of the Netscope model files (matplotlib, Agg; drawn from the file's document).

* :func:`latency_figure`  predicted vs measured RTT with the y = x line (held-out
  samples marked) beside the percent error of each sample against its
  measured RTT, the +-30 % band of Netscope Fig. 4a shaded;
* :func:`sensitivity_figure`  one application's runtime T_a vs M_a with the fitted
  lines (uniform and traffic-weighted) beside the convergence of c_a with the
  number of runs (error against the final estimate, +-10 % band; Fig. 4b/4c).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from .latency import WITHIN_PERCENT
from .sensitivity import CONVERGED_PERCENT

SET_STYLE = {
    "train": {"color": "tab:blue", "marker": "o", "label": "training"},
    "holdout": {"color": "tab:red", "marker": "^", "label": "held out"},
}
EST_STYLE = {
    "uniform": {"color": "tab:blue", "marker": "o", "label": "uniform pairs (eq. 4)"},
    "traffic_weighted": {"color": "tab:orange", "marker": "s", "label": "traffic-weighted"},
}


def latency_figure(doc: dict, title: str | None = None):
    """Scatter of predicted vs measured RTT and the percent error per sample."""
    fig, (ax, ax_err) = plt.subplots(1, 2, figsize=(11, 4.6))
    samples = doc["samples"]
    lo, hi = np.inf, -np.inf
    for name, style in SET_STYLE.items():
        rows = [s for s in samples if s["set"] == name]
        if not rows:
            continue
        meas = np.array([s["rtt_us"] for s in rows])
        pred = np.array([s["rtt_pred_us"] for s in rows])
        acc = doc["accuracy"][name]
        r = acc["pearson_r"]
        label = f"{style['label']} ({len(rows)}, r = {r:.3f})" if r is not None else style["label"]
        ax.scatter(
            meas, pred, s=16, alpha=0.7, color=style["color"], marker=style["marker"], label=label
        )
        ax_err.scatter(
            meas,
            100.0 * (pred - meas) / meas,
            s=16,
            alpha=0.7,
            color=style["color"],
            marker=style["marker"],
            label=style["label"],
        )
        lo, hi = min(lo, meas.min(), pred.min()), max(hi, meas.max(), pred.max())
    if np.isfinite(lo):
        pad = 0.05 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="black", lw=1, label="y = x")
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(lo - pad, hi + pad)
    ax.set_xlabel("measured RTT (us)")
    ax.set_ylabel("predicted RTT (us)")
    ax.set_title("Predicted vs measured round-trip time")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(alpha=0.3)
    ax_err.axhspan(
        -WITHIN_PERCENT,
        WITHIN_PERCENT,
        color="tab:green",
        alpha=0.1,
        label=f"within {WITHIN_PERCENT:g} %",
    )
    ax_err.axhline(0, color="black", lw=1)
    ax_err.set_xlabel("measured RTT (us)")
    ax_err.set_ylabel("error of predicted RTT (%)")
    ax_err.set_title("Percent error (predicted - measured) / measured")
    ax_err.legend(fontsize=8)
    ax_err.grid(alpha=0.3)
    paths = doc["paths"]
    fig.suptitle(title or f"Latency model: {paths['topology']}, routing {paths['routing']}")
    fig.tight_layout()
    return fig


def sensitivity_figure(name: str, app: dict):
    """Runtime vs M_a with the fitted lines, and convergence of c_a with runs."""
    fig, (ax, ax_conv) = plt.subplots(1, 2, figsize=(11, 4.6))
    table = app["run_table"]
    t = np.array([r["t_a_s"] for r in table])
    shown = []
    for key, style in EST_STYLE.items():
        est = app["estimates"].get(key)
        col = "m_a_us" if key == "uniform" else "m_a_weighted_us"
        if est is None or any(r[col] is None for r in table):
            continue
        m = np.array([r[col] for r in table])
        ax.scatter(
            m,
            t,
            s=22,
            color=style["color"],
            marker=style["marker"],
            label=f"{style['label']}: r = {est['r']:.3f}",
        )
        xs = np.linspace(m.min(), m.max(), 50)
        ax.plot(xs, est["c_a_s_per_us"] * xs + est["k_a_s"], color=style["color"], lw=1.2)
        rows = est["convergence"]["rows"]
        runs = [row["runs"] for row in rows if row["c_a_error_percent"] is not None]
        errs = [row["c_a_error_percent"] for row in rows if row["c_a_error_percent"] is not None]
        ax_conv.plot(
            runs, errs, color=style["color"], marker=style["marker"], ms=4, label=style["label"]
        )
        shown.extend(errs)
    ax.set_xlabel("expected message delivery time M_a (us)")
    ax.set_ylabel("runtime T_a (s)")
    ax.set_title(f"{name}: T_a = c_a M_a + k_a ({app['pass']} pass)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax_conv.axhspan(
        -CONVERGED_PERCENT,
        CONVERGED_PERCENT,
        color="tab:green",
        alpha=0.1,
        label=f"within {CONVERGED_PERCENT:g} %",
    )
    ax_conv.axhline(0, color="black", lw=1)
    if shown:  # early estimates can be far off: keep the band readable
        top = min(max(1.1 * max(abs(e) for e in shown), 2 * CONVERGED_PERCENT), 200.0)
        ax_conv.set_ylim(-top, top)
    ax_conv.set_xlabel("runs used")
    ax_conv.set_ylabel("error of c_a vs final estimate (%)")
    ax_conv.set_title("Convergence of the delay sensitivity")
    ax_conv.legend(fontsize=8)
    ax_conv.grid(alpha=0.3)
    fig.tight_layout()
    return fig
