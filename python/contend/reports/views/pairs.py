"""The view of ``contend pairs`` results: the summary, the outliers (pairs,
sources and destinations whose bandwidth is at most half the median), the figure of ``plot pairs`` (the bandwidth heat map, source by
destination, nodes in the topology's order: leaves, pods and groups are
contiguous node numbers) and the HTML section.  Reading: :mod:`contend.locate.measurements`.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ... import formatting as fmt
from ...locate.measurements import SCHEMA_NAME, Pairs, load_pairs
from .. import html
from ..view import document_view

OUTLIER_RATIO = 0.5  # bandwidth / median at or below which a pair, source or destination is flagged
OUTLIERS_SHOWN = 10

PAIR_VIEW = [
    fmt.Column("src", "Source", "int"),
    fmt.Column("dst", "Destination", "int"),
    fmt.Column("bw_mib_s", "Bandwidth (MiB/s)"),
    fmt.Column("lat_us", "Latency (us)"),
    fmt.Column("ratio", "x median"),
]
NODE_VIEW = [
    fmt.Column("node", "Node", "int"),
    fmt.Column("pairs", "Pairs", "int"),
    fmt.Column("bw_mib_s", "Median bandwidth (MiB/s)"),
    fmt.Column("ratio", "x median"),
]
NOTES = (
    "Bandwidth: --iters messages of --bytes per pair and round, timed at the receiver; latency: "
    "half the mean 8 B round trip.  x median: a pair's bandwidth over the median pair's (a "
    "source's or destination's: the median of its pairs over the median of those medians); "
    f"flagged at {OUTLIER_RATIO:g} or less, at most {OUTLIERS_SHOWN} shown.  `contend locate` maps slow pairs to the links of their paths "
    "(docs/locate.md)."
)


def _ratio(x: np.ndarray) -> np.ndarray:
    return x / np.median(x)


def pair_frame(p: Pairs) -> pd.DataFrame:
    frame = pd.DataFrame({"src": p.src, "dst": p.dst, "bw_mib_s": p.bw_mib_s, "lat_us": p.lat_us})
    frame["ratio"] = _ratio(frame["bw_mib_s"].to_numpy(float))
    return frame


def _outlier_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame[frame["ratio"] <= OUTLIER_RATIO].sort_values(["ratio", "src", "dst"])
    return out.head(OUTLIERS_SHOWN).reset_index(drop=True)


def _outlier_nodes(frame: pd.DataFrame, side: str) -> pd.DataFrame:
    per = frame.groupby(side)["bw_mib_s"].agg(["median", "size"]).reset_index()
    per.columns = ["node", "bw_mib_s", "pairs"]
    per["ratio"] = _ratio(per["bw_mib_s"].to_numpy(float))
    out = per[per["ratio"] <= OUTLIER_RATIO].sort_values(["ratio", "node"])
    return out.head(OUTLIERS_SHOWN).reset_index(drop=True)


def summary_line(p: Pairs) -> str:
    bw, lat = p.bw_mib_s, p.lat_us
    where = f"simulated {p.topology}" if p.topology else "measured"
    return (
        f"{p.ranks} ranks on {p.nodes} nodes ({where}), {len(bw)} node pairs; bandwidth MiB/s "
        f"min {bw.min():.1f}, median {np.median(bw):.1f}, max {bw.max():.1f}; latency us min "
        f"{lat.min():.3f}, median {np.median(lat):.3f}, max {lat.max():.3f}"
        + (f"; {p.same_node} pairs within one node left out" if p.same_node else "")
    )


def _sections(p: Pairs) -> list:
    frame = pair_frame(p)
    return [
        ("Slowest pairs (outliers)", _outlier_pairs(frame), PAIR_VIEW),
        ("Slow sources", _outlier_nodes(frame, "src"), NODE_VIEW),
        ("Slow destinations", _outlier_nodes(frame, "dst"), NODE_VIEW),
    ]


def render_pairs(p: Pairs, form: str = "text", source=None) -> str:
    if form == "json":
        out = {"source": None if source is None else str(source), "summary": summary_line(p)}
        for title, frame, cols in _sections(p):
            rows = fmt.records(frame, [c.key for c in cols])
            for row in rows:  # iterrows makes every number of a mixed row a float
                row.update({c.key: int(row[c.key]) for c in cols if c.kind == "int"})
            out[title.split(" (")[0].lower().replace(" ", "_")] = rows
        return json.dumps(out, indent=1, allow_nan=False)
    if form == "csv":
        frame = pair_frame(p)
        return fmt.render(frame, [fmt.Column(k, k) for k in frame.columns], "csv")
    title = "contend pairs" + (f": {source}" if source else "")
    return fmt.text_report(title, [summary_line(p)], _sections(p), [NOTES], form)


def pairs_figure(p: Pairs, title: str = ""):
    """The bandwidth of every measured pair as a heat map, source (rows) by
    destination (columns), nodes in number order; unmeasured pairs blank."""
    import matplotlib.pyplot as plt

    n = p.max_node + 1
    grid = np.full((n, n), np.nan)
    grid[p.src, p.dst] = p.bw_mib_s
    fig, ax = plt.subplots(figsize=(7.0, 6.0))
    im = ax.imshow(grid, cmap="viridis", interpolation="nearest", origin="upper")
    fig.colorbar(im, ax=ax, label="bandwidth (MiB/s)")
    ax.set_xlabel("destination node")
    ax.set_ylabel("source node")
    ax.set_title(title or f"contend pairs: {p.source}", fontsize=9)
    fig.tight_layout()
    return fig


FIGURE_CAPTION = (
    "Bandwidth of every measured pair, source node (rows) by destination node (columns), nodes "
    "in the topology's order; dark rows, columns or blocks are slow sources, destinations or "
    "links; blank: not measured (sampled rounds) or within one node."
)


def html_section(p: Pairs, source: str) -> str:
    intro = [html.note(summary_line(p)), html.figure(pairs_figure(p), "pairs", FIGURE_CAPTION)]
    return html.document_section(f"contend pairs: {source}", intro, _sections(p), [NOTES])


PLOT_ABOUT = "the bandwidth heat map of one results file of `contend pairs`"

VIEW = document_view(
    "pairs", SCHEMA_NAME, load_pairs, render_pairs, html_section, pairs_figure, PLOT_ABOUT
)
