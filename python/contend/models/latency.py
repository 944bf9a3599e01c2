"""Netscope's network latency model (eq. 6-12): fit on ping-pong RTTs, predict one-way D.

As implemented (the interpretation of eq. 12; docs/netscope.md):

    D(n1, n2) = sum_{S_i in S*} k_s * sum_{l in S_i} k_1[class(l)] * Q_l  +  k_2    [ns]

* S* = the paths the routing gives the pair, as listed in the paths JSON; k_s =
  1 / |S*| (every listed path equally likely), so D is the path-averaged sum.
* k_1 is one constant per link class (``by-class``, the paths file's classes) or
  one for every link (``one``), in ns per unit of Q; k_2 is one constant in ns.
* Q_l = 100 / (100 - PTs_l) per link (eq. 11, PTs clamped to 99 %), for a
  sample the time-weighted mean over the sampling intervals overlapping its
  window (see :mod:`contend.models.queueing`).
* Only round trips are measurable, so the constants are fitted on
  RTT(a, b) = D(a, b) + D(b, a) by non-negative least squares
  (:func:`scipy.optimize.nnls`): k >= 0, as delays are.

A class whose links no training path crosses cannot be fitted: its constant is
``None`` (undetermined) and predicting a path that crosses it is refused.  A
class whose links never stalled in the training, crossed as many times by every
path, is folded into k_2 (its k_1 is 0, listed in ``LatencyFit.folded``): its
constant and k_2 are not identifiable apart (:func:`unexcited_columns`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .errors import ModelError
from .paths import PathSet
from .queueing import PTS_CLAMP_PERCENT, Timeline, build_timeline, window_mean_excess

LINK_CLASS_MODES = ("by-class", "one")
ONE_CLASS = "all"
SAMPLE_COLUMNS = ("run", "src", "dst", "t_start_s", "t_end_s", "rtt_us")
WITHIN_PERCENT = 30.0  # the error bound of Netscope's Fig. 4a


@dataclass
class LatencyModel:
    """Fitted constants of eq. 12 (what a model file needs to predict D)."""

    link_classes: str  # "by-class" | "one"
    k_link_ns_per_q: dict  # model class -> ns per unit Q (None: undetermined)
    k_const_ns: float
    pts_clamp_percent: float = PTS_CLAMP_PERCENT

    @property
    def classes(self) -> list:
        return list(self.k_link_ns_per_q)

    def model_class(self, link_class: str) -> str:
        return ONE_CLASS if self.link_classes == "one" else link_class

    def link_constants(self, paths: PathSet) -> np.ndarray:
        """k_1 of every link of ``paths`` (by link id); NaN for classes without a constant."""
        out = np.full(len(paths.links), np.nan)
        for i, cls in enumerate(paths.links["link_class"]):
            k = self.k_link_ns_per_q.get(self.model_class(cls))
            if k is not None:
                out[i] = k
        return out

    def require_constants(self, paths: PathSet, link_ids) -> np.ndarray:
        """link_constants(), refusing when any of ``link_ids`` lacks a constant."""
        k = self.link_constants(paths)
        bad = [int(i) for i in np.unique(np.asarray(link_ids, int)) if np.isnan(k[i])]
        if bad:
            classes = sorted({paths.links["link_class"].iat[i] for i in bad})
            known = ", ".join(c for c, v in self.k_link_ns_per_q.items() if v is not None)
            raise ModelError(
                f"{paths.source}: paths cross link class(es) {', '.join(map(repr, classes))} "
                f"for which the latency model has no constant (fitted: {known}); refit with "
                "training paths that cross them, or with --link-classes one"
            )
        return k


def class_index(paths: PathSet, classes: list, mode: str) -> np.ndarray:
    """Column of each link id in the (classes) design matrix; -1 for unknown classes."""
    pos = {c: j for j, c in enumerate(classes)}
    if mode == "one":
        return np.zeros(len(paths.links), dtype=int)
    return np.array([pos.get(c, -1) for c in paths.links["link_class"]], dtype=int)


def _link_terms(paths: PathSet, pairs, t_start, t_end, timeline: Timeline):
    """(weights, q, unsampled): the nonzero link weights k_s of each pair (COO), the
    window-mean Q_l of each such (pair, link), and which pairs' windows had no
    sampled time."""
    weights = paths.pair_weights(pairs).tocoo()
    col_of = timeline.column_of()
    cols = np.array([col_of.get(int(link), -1) for link in weights.col], dtype=int)
    excess = window_mean_excess(timeline, t_start, t_end)
    q = 1.0 + excess[weights.row, cols]
    return weights, q, np.isnan(excess[:, -1])


def class_path_sums(
    paths: PathSet,
    pairs,
    t_start,
    t_end,
    timeline: Timeline,
    link_class_col: np.ndarray,
    n_classes: int,
) -> np.ndarray:
    """(pairs x classes): per class, sum over the pair's links of k_s * mean Q_l.

    The mean Q_l is time-weighted over [t_start, t_end] of each item; rows of
    windows without sampled time are NaN.
    """
    weights, q, unsampled = _link_terms(paths, pairs, t_start, t_end, timeline)
    out = np.zeros((len(pairs), n_classes))
    np.add.at(out, (weights.row, link_class_col[weights.col]), weights.data * q)
    out[unsampled] = np.nan
    return out


def _pearson(x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(stats.pearsonr(x, y)[0])


def error_summary(measured, predicted) -> dict:
    """Distribution of the percent error of predicted RTT (Netscope Fig. 4a)."""
    measured, predicted = np.asarray(measured, float), np.asarray(predicted, float)
    if not len(measured):
        return {
            "samples": 0,
            "pearson_r": None,
            "rmse_us": None,
            "mean_error_percent": None,
            "abs_error_percent": {k: None for k in ("p25", "p50", "p75", "p90")},
            "within_30_percent_share": None,
        }
    err = 100.0 * (predicted - measured) / measured
    absq = np.percentile(np.abs(err), [25, 50, 75, 90])
    return {
        "samples": len(measured),
        "pearson_r": _pearson(measured, predicted),
        "rmse_us": float(np.sqrt(np.mean((predicted - measured) ** 2))),
        "mean_error_percent": float(err.mean()),
        "abs_error_percent": dict(zip(("p25", "p50", "p75", "p90"), map(float, absq))),
        "within_30_percent_share": float(np.mean(np.abs(err) <= WITHIN_PERCENT)),
    }


@dataclass
class LatencyFit:
    """A fitted model with its training report."""

    model: LatencyModel
    samples: pd.DataFrame  # per used sample: run, src, dst, window, rtt_us, rtt_pred_us, set
    holdout_fraction: float
    seed: int
    design_rank: int
    parameters: int
    folded: list = field(default_factory=list)  # classes folded into k_2 (unexcited_columns)
    dropped: list = field(default_factory=list)  # samples without sampled time
    intervals: int = 0
    pts_clamped_intervals: int = 0
    links_with_counters: int = 0
    errors: str = "absolute"  # the squared errors minimised: absolute or relative

    def summary(self, which: str) -> dict:
        rows = self.samples if which == "all" else self.samples[self.samples["set"] == which]
        return error_summary(rows["rtt_us"], rows["rtt_pred_us"])


def check_samples(samples: pd.DataFrame, source: str = "training samples") -> pd.DataFrame:
    """The samples frame with its columns typed; ModelError naming bad rows."""
    if not isinstance(samples, pd.DataFrame):
        raise ModelError(f"{source}: samples must be a pandas DataFrame")
    missing = [c for c in SAMPLE_COLUMNS if c not in samples.columns]
    if missing:
        raise ModelError(f"{source}: samples lack column(s) {', '.join(missing)}")
    out = samples.reset_index(drop=True).copy()
    for col in ("t_start_s", "t_end_s", "rtt_us"):
        out[col] = pd.to_numeric(out[col], errors="coerce").astype(float)
    bad = ~(np.isfinite(out["rtt_us"]) & (out["rtt_us"] > 0))
    bad |= ~(np.isfinite(out["t_start_s"]) & np.isfinite(out["t_end_s"]))
    bad |= out["t_end_s"] <= out["t_start_s"]
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise ModelError(
            f"{source}: sample {i} (run {out['run'].iat[i]}): rtt_us must be > 0 and "
            "t_end_s > t_start_s, both finite"
        )
    return out


def rtt_design(
    paths: PathSet,
    samples: pd.DataFrame,
    intervals: dict,
    classes: list,
    mode: str,
    clamp: float = PTS_CLAMP_PERCENT,
):
    """Design matrix of RTT = D(a,b) + D(b,a) for every sample.

    Returns (X, stats): X has one column per class (forward plus reverse path sums
    of k_s * Q_l) and a last column of 2 (the two one-way constants k_2); rows of
    samples whose window has no sampled time are NaN.  ``intervals`` maps each
    run to its PTs intervals frame.
    """
    link_class_col = class_index(paths, classes, mode)
    fwd_pairs = list(zip(samples["src"].astype(int), samples["dst"].astype(int)))
    rev_pairs = [(d, s) for s, d in fwd_pairs]
    paths.require_pairs(fwd_pairs + rev_pairs, "training (both directions)")
    X = np.full((len(samples), len(classes) + 1), np.nan)
    info = {"intervals": 0, "pts_clamped_intervals": 0, "links_with_counters": set()}
    for run, rows in samples.groupby("run", sort=False):
        if run not in intervals:
            raise ModelError(f"run {run}: no PTs intervals given for it")
        idx = rows.index.to_numpy()
        f = [fwd_pairs[i] for i in idx]
        r = [rev_pairs[i] for i in idx]
        used = np.unique(
            np.concatenate([paths.pair_weights(f).indices, paths.pair_weights(r).indices])
        )
        timeline = build_timeline(
            intervals[run], paths.link_index(), used, clamp, source=f"run {run}"
        )
        if not timeline.rows:
            raise ModelError(
                f"run {run}: no counter row names a link of {paths.source} (component, port): "
                "the counters and the paths file describe different fabrics or name ports "
                "differently"
            )
        info["intervals"] += timeline.rows
        info["pts_clamped_intervals"] += timeline.clamped
        info["links_with_counters"].update(
            int(link) for j, link in enumerate(timeline.links) if timeline.excess[:, j].any()
        )
        ts, te = rows["t_start_s"].to_numpy(), rows["t_end_s"].to_numpy()
        sums = class_path_sums(paths, f, ts, te, timeline, link_class_col, len(classes))
        sums += class_path_sums(paths, r, ts, te, timeline, link_class_col, len(classes))
        X[idx, :-1] = sums
        X[idx, -1] = 2.0
    X[np.isnan(X[:, :-1]).any(axis=1)] = np.nan
    info["links_with_counters"] = len(info["links_with_counters"])
    return X, info


def split_holdout(n: int, fraction: float, seed: int) -> np.ndarray:
    """Boolean mask of held-out samples: round(fraction * n) of them, seeded."""
    if not 0 <= fraction < 1:
        raise ModelError(f"--holdout must be a fraction in [0, 1), got {fraction}")
    n_hold = round(fraction * n)
    if fraction > 0 and n >= 2:
        n_hold = min(max(n_hold, 1), n - 1)
    mask = np.zeros(n, dtype=bool)
    mask[np.random.default_rng(seed).permutation(n)[:n_hold]] = True
    return mask


def unexcited_columns(X: np.ndarray) -> np.ndarray:
    """Which class columns of a design (last column: the constant) hold the same
    value in every row: the class's links never stalled (Q_l = 1) and every path
    crosses as many of them (a dragonfly path has one injection and one ejection
    link).  Such a column is a multiple of the constant column, so the class's
    k_1 cannot be told from k_2; the fit folds it into k_2 (its k_1 is 0).
    The constant column itself is never flagged."""
    cls = X[:, :-1]
    out = np.zeros(X.shape[1], dtype=bool)
    if len(cls):
        out[:-1] = np.ptp(cls, axis=0) <= 1e-9 * np.abs(cls).max(axis=0)
    return out


def nnls_fit(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares with columns scaled to unit norm (same solution set)."""
    norms = np.linalg.norm(X, axis=0)
    norms[norms == 0] = 1.0
    coef, _ = optimize.nnls(X / norms, y)
    return coef / norms


def fit_latency(
    paths: PathSet,
    samples: pd.DataFrame,
    intervals: dict,
    link_classes: str = "by-class",
    holdout: float = 0.25,
    seed: int = 0,
    clamp: float = PTS_CLAMP_PERCENT,
    errors: str = "absolute",
) -> LatencyFit:
    """Fit eq. 12's constants on ping-pong RTT samples.

    ``samples``: DataFrame with columns run, src, dst, t_start_s, t_end_s, rtt_us
    (times on the run's counter clock); ``intervals``: run -> PTs intervals frame
    (columns t0_s, t1_s, component, port, pts_percent).  A seeded ``holdout``
    share of the samples is kept out of the fit and reported separately.
    ``errors``: "absolute" minimises the squared RTT errors (the paper's least
    squares); "relative" the squared errors relative to each measured RTT, so
    that a few congested samples of tens of us do not set the constants that
    uncongested RTTs of 1 us are predicted with.
    """
    if errors not in ("absolute", "relative"):
        raise ModelError("--errors must be absolute or relative")
    if link_classes not in LINK_CLASS_MODES:
        raise ModelError(f"--link-classes must be one of {', '.join(LINK_CLASS_MODES)}")
    samples = check_samples(samples)
    classes = paths.classes if link_classes == "by-class" else [ONE_CLASS]
    X, info = rtt_design(paths, samples, intervals, classes, link_classes, clamp)
    usable = ~np.isnan(X).any(axis=1)
    dropped = [int(i) for i in np.flatnonzero(~usable)]
    if not usable.any():
        raise ModelError(
            "no training sample's window [t_start_s, t_end_s] overlaps a sampling interval "
            "of its run's counters: the samples and counters use different clocks?"
        )
    X, used_samples = X[usable], samples[usable].reset_index(drop=True)
    y_ns = used_samples["rtt_us"].to_numpy() * 1e3
    held = split_holdout(len(y_ns), holdout, seed)
    train = ~held
    determined = np.abs(X[train]).sum(axis=0) > 0
    folded = determined & unexcited_columns(X[train])
    fitted = determined & ~folded
    n_params = int(fitted.sum())
    if train.sum() <= n_params:
        raise ModelError(
            f"{int(train.sum())} training sample(s) for {n_params} constants: the fit needs "
            "more samples than constants (more ping-pong runs, a smaller --holdout, or "
            "--link-classes one)"
        )
    coef = np.zeros(X.shape[1])
    w = 1.0 / y_ns[train] if errors == "relative" else np.ones(int(train.sum()))
    coef[fitted] = nnls_fit(X[train][:, fitted] * w[:, None], y_ns[train] * w)
    rank = int(np.linalg.matrix_rank(X[train][:, fitted]))
    k_link = {c: (float(coef[j]) if determined[j] else None) for j, c in enumerate(classes)}
    model = LatencyModel(link_classes, k_link, float(coef[-1]), clamp)
    pred_us = (X[:, fitted] @ coef[fitted]) / 1e3
    used_samples["rtt_pred_us"] = pred_us
    used_samples["set"] = np.where(held, "holdout", "train")
    return LatencyFit(
        model=model,
        samples=used_samples,
        holdout_fraction=holdout,
        seed=seed,
        design_rank=rank,
        parameters=n_params,
        folded=[c for j, c in enumerate(classes) if folded[j]],
        dropped=dropped,
        intervals=info["intervals"],
        pts_clamped_intervals=info["pts_clamped_intervals"],
        links_with_counters=info["links_with_counters"],
        errors=errors,
    )


def predict_one_way_ns(
    model: LatencyModel, paths: PathSet, pairs, t_start, t_end, intervals: pd.DataFrame
) -> np.ndarray:
    """D(src, dst) in ns of each ordered pair over its window, from one run's PTs intervals.

    ``pairs`` is a list of (src, dst); ``t_start``/``t_end`` one window per pair (or
    scalars).  NaN where the window has no sampled time.
    """
    pairs = [(int(s), int(d)) for s, d in pairs]
    t_start = np.broadcast_to(np.asarray(t_start, float), (len(pairs),))
    t_end = np.broadcast_to(np.asarray(t_end, float), (len(pairs),))
    used = paths.pair_weights(pairs).indices
    k = model.require_constants(paths, used)
    timeline = build_timeline(
        intervals, paths.link_index(), np.unique(used), model.pts_clamp_percent
    )
    weights, q, unsampled = _link_terms(paths, pairs, t_start, t_end, timeline)
    out = np.full(len(pairs), model.k_const_ns)
    np.add.at(out, weights.row, weights.data * k[weights.col] * q)
    out[unsampled] = np.nan
    return out
