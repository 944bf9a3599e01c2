"""Per-link queuing delay over time: Netscope eq. 6-11 on PTs intervals.

Input is the frame of :func:`contend.telemetry.stall_intervals` (format A's
derived view): one row per link (component, port) and sampling interval
[t0_s, t1_s) with its percent time stalled ``pts_percent`` (eq. 6).  The
expected queuing delay of a link in an interval is (eq. 11)

    Q_l = 100 / (100 - PTs),   PTs clamped to [0, 99] %

in units of the link's service time (1 = no stall); the clamp bounds Q_l at 100
and every clamped row is counted so that reports can say how often it bit.

A :class:`Timeline` holds, for one run, the *excess* delay Q_l - 1 of each
link over elementary time segments (the sampling intervals; split further
where intervals of different links overlap).  A link without a row in a
sampled segment had PTs 0 there (excess 0).  Time-weighted means over a window
[t_start_s, t_end_s] weight each segment by its overlap with the window and
divide by the sampled part of the window only (unsampled time is not assumed
quiet: it is left out, and :meth:`Timeline.coverage` reports the share).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .errors import ModelError

PTS_CLAMP_PERCENT = 99.0
INTERVAL_COLUMNS = ("t0_s", "t1_s", "component", "port", "pts_percent")


def queueing_delay(pts_percent, clamp: float = PTS_CLAMP_PERCENT):
    """(Q, clamped): eq. 11 on an array of PTs in %, and how many values exceeded ``clamp``.

    Negative PTs (counter noise) count as 0.
    """
    pts = np.asarray(pts_percent, dtype=float)
    clamped = int(np.count_nonzero(pts > clamp))
    pts = np.clip(pts, 0.0, clamp)
    return 100.0 / (100.0 - pts), clamped


@dataclass
class Timeline:
    """Excess queuing delay (Q_l - 1) of links over one run's elementary time segments."""

    edges: np.ndarray  # segment boundaries in s, length n_segments + 1
    sampled: np.ndarray  # bool per segment: some sampling interval covers it
    links: np.ndarray  # link ids (columns of ``excess``)
    excess: np.ndarray  # n_segments x len(links): Q_l - 1, 0 where the link had no row
    rows: int  # interval rows used
    clamped: int  # of those, rows whose PTs exceeded the clamp

    @property
    def n_segments(self) -> int:
        return len(self.edges) - 1

    @property
    def span(self) -> tuple:
        """(first, last) sampled time in s."""
        idx = np.flatnonzero(self.sampled)
        if not len(idx):
            return (float("nan"), float("nan"))
        return float(self.edges[idx[0]]), float(self.edges[idx[-1] + 1])

    def window_weights(self, t_start, t_end) -> np.ndarray:
        """(windows x segments) overlap in s of each window with each sampled segment."""
        t_start = np.atleast_1d(np.asarray(t_start, float))[:, None]
        t_end = np.atleast_1d(np.asarray(t_end, float))[:, None]
        lo = np.maximum(self.edges[None, :-1], t_start)
        hi = np.minimum(self.edges[None, 1:], t_end)
        return np.clip(hi - lo, 0.0, None) * self.sampled[None, :]

    def coverage(self, t_start, t_end) -> np.ndarray:
        """Share of each window [t_start, t_end] that sampling intervals cover (0..1)."""
        width = np.atleast_1d(np.asarray(t_end, float) - np.asarray(t_start, float))
        covered = self.window_weights(t_start, t_end).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(width > 0, covered / width, 0.0)

    def column_of(self) -> dict:
        return {int(link): j for j, link in enumerate(self.links)}


def check_intervals(frame: pd.DataFrame, source: str) -> None:
    """ModelError unless ``frame`` has the stall_intervals columns this module reads."""
    if not isinstance(frame, pd.DataFrame):
        raise ModelError(f"{source}: PTs intervals must be a pandas DataFrame")
    missing = [c for c in INTERVAL_COLUMNS if c not in frame.columns]
    if missing:
        raise ModelError(
            f"{source}: PTs intervals lack column(s) {', '.join(missing)} "
            f"(expected {', '.join(INTERVAL_COLUMNS)}, as contend.telemetry.stall_intervals "
            "returns)"
        )


def build_timeline(
    intervals: pd.DataFrame,
    link_index: dict,
    links=None,
    clamp: float = PTS_CLAMP_PERCENT,
    source: str = "PTs intervals",
) -> Timeline:
    """Timeline of one run from its PTs intervals.

    ``link_index`` maps (component, port-as-text) to link ids; rows of other links
    still mark their interval as sampled but carry no delay.  ``links`` restricts
    the columns to these link ids (default: every link of ``link_index`` seen in
    the rows).  Rows with t1_s <= t0_s or a missing PTs are ignored.
    """
    check_intervals(intervals, source)
    t0 = pd.to_numeric(intervals["t0_s"], errors="coerce").to_numpy(float)
    t1 = pd.to_numeric(intervals["t1_s"], errors="coerce").to_numpy(float)
    pts = pd.to_numeric(intervals["pts_percent"], errors="coerce").to_numpy(float)
    ok = np.isfinite(t0) & np.isfinite(t1) & np.isfinite(pts) & (t1 > t0)
    t0, t1, pts = t0[ok], t1[ok], pts[ok]
    comp = intervals["component"].astype(str).to_numpy()[ok]
    port = intervals["port"].map(_port_text).to_numpy()[ok]
    if not len(t0):
        raise ModelError(f"{source}: no usable PTs interval (empty, or every t1_s <= t0_s)")
    link_ids = np.array([link_index.get((c, p), -1) for c, p in zip(comp, port)], dtype=int)
    if links is None:
        links = np.unique(link_ids[link_ids >= 0])
    links = np.asarray(links, dtype=int)
    col_of = {int(link): j for j, link in enumerate(links)}

    edges = np.unique(np.concatenate([t0, t1]))
    first = np.searchsorted(edges, t0)
    last = np.searchsorted(edges, t1)  # exclusive segment index
    span = last - first
    row_of_seg = np.repeat(np.arange(len(t0)), span)
    seg = np.concatenate([np.arange(a, b) for a, b in zip(first, last)]) if len(t0) else []
    seg = np.asarray(seg, dtype=int)
    sampled = np.zeros(len(edges) - 1, dtype=bool)
    sampled[seg] = True

    cols = np.array([col_of.get(int(i), -1) if i >= 0 else -1 for i in link_ids], dtype=int)
    mine = cols >= 0
    q, clamped = queueing_delay(pts[mine], clamp)
    excess_row = np.zeros(len(t0))
    excess_row[mine] = q - 1.0
    keep = mine[row_of_seg]
    excess = np.zeros((len(edges) - 1, len(links)))
    count = np.zeros_like(excess)
    np.add.at(excess, (seg[keep], cols[row_of_seg[keep]]), excess_row[row_of_seg[keep]])
    np.add.at(count, (seg[keep], cols[row_of_seg[keep]]), 1.0)
    excess = np.divide(excess, count, out=np.zeros_like(excess), where=count > 0)
    return Timeline(
        edges=edges,
        sampled=sampled,
        links=links,
        excess=excess,
        rows=int(np.count_nonzero(mine)),
        clamped=clamped,
    )


def _port_text(value) -> str:
    """Ports as text the way paths files write them ('3', '' for none)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def window_mean_excess(timeline: Timeline, t_start, t_end) -> np.ndarray:
    """(windows x (links + 1)) time-weighted mean of Q_l - 1 over each window.

    Column j is ``timeline.links[j]``; the extra last column is 0, for links without
    counter rows (index it with -1).  Rows of windows without sampled time are NaN.
    """
    weights = timeline.window_weights(t_start, t_end)
    total = weights.sum(axis=1, keepdims=True)
    means = weights @ timeline.excess
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(total > 0, means / total, np.nan)
    return np.concatenate([means, np.where(total > 0, 0.0, np.nan)], axis=1)
