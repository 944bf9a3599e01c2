"""Seeded percentile-bootstrap confidence intervals."""

from __future__ import annotations

import math

import numpy as np

from .histogram import bucket_values

# Cells (resamples x values or buckets) drawn at once: memory stays bounded
# (about 8 bytes a cell, a few arrays) however many resamples are asked for.
# Draws at or below it are one call, so seeded results do not depend on it.
MAX_CELLS = 1 << 22


def _blocks(n_resamples: int, width: int):
    """Sizes of the resample blocks drawn one after the other."""
    step = max(1, MAX_CELLS // max(width, 1))
    if n_resamples <= step:
        return [n_resamples]
    return [min(step, n_resamples - i) for i in range(0, n_resamples, step)]


def _check(level: float, n_resamples: int) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples}")


def bootstrap_interval(
    values, statistic=np.mean, n_resamples: int = 10000, level: float = 0.95, rng=None
) -> tuple:
    """Percentile-bootstrap interval of ``statistic`` over ``values``.

    Resamples the values with replacement ``n_resamples`` times using the
    numpy Generator ``rng`` (or ``np.random.default_rng(rng)`` for a seed) and
    returns the (lower, upper) quantiles at (1 - level) / 2 and (1 + level) / 2.
    ``statistic`` must accept an array and an ``axis`` keyword.
    """
    _check(level, n_resamples)
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(rng)
    boot = np.concatenate(
        [
            statistic(data[rng.integers(0, data.size, size=(k, data.size))], axis=1)
            for k in _blocks(n_resamples, data.size)
        ]
    )
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def _resampled_stats(values, count, n_resamples, rng, q):
    count = np.asarray(count, dtype=np.int64)
    total = int(count.sum())
    rank = max(1, int(np.ceil(q * total)))
    means, tails = [], []
    for k in _blocks(n_resamples, count.size):
        boot = rng.multinomial(total, count / total, size=k)
        means.append(boot @ values / total)
        idx = (np.cumsum(boot, axis=1) < rank).sum(axis=1)
        tails.append(values[np.minimum(idx, values.size - 1)])
    return np.concatenate(means), np.concatenate(tails)


def _point_stats(values, count, q):
    count = np.asarray(count, dtype=np.int64)
    total = int(count.sum())
    rank = max(1, int(np.ceil(q * total)))
    idx = int(np.searchsorted(np.cumsum(count), rank, side="left"))
    return float(values @ count / total), float(values[idx])


def _point_impact(iso_v, iso_c, con_v, con_c, higher_is_better, q):
    iso_m, iso_t = _point_stats(iso_v, iso_c, q)
    con_m, con_t = _point_stats(con_v, con_c, q)
    if higher_is_better:
        return iso_m / con_m, iso_t / con_t
    return con_m / iso_m, con_t / iso_t


def bootstrap_histogram_impact(
    isolated: dict,
    congested: dict,
    higher_is_better: bool,
    n_resamples: int = 2000,
    level: float = 0.95,
    rng=None,
    anchor: dict | None = None,
) -> dict:
    """Bootstrap intervals of the mean and 99 % Congestion Impact of one canary.

    ``isolated`` and ``congested`` are histograms: dicts (or frames) with
    ``lower``, ``upper`` and ``count``.  Each resample draws as many samples
    as each histogram holds, from its buckets (multinomial), and recomputes
    both statistics (mean; p99 for latency, p1 for bandwidth) and their CI.
    Samples are treated as independent, which time-correlated measurements
    are not quite: read the interval as a lower bound on the uncertainty.
    Returns {'ci_mean': (lo, hi), 'ci_tail_99': (lo, hi)}: histogram
    estimates (relative error about the histogram's).  With ``anchor``
    ({'ci_mean': exact, 'ci_tail_99': exact}) each interval is scaled by
    exact / histogram-point-estimate, so it brackets the exact value the
    results file reports instead of the bucketed one.
    """
    _check(level, n_resamples)
    rng = np.random.default_rng(rng)
    q = 0.01 if higher_is_better else 0.99
    iso_v = bucket_values(isolated["lower"], isolated["upper"])
    con_v = bucket_values(congested["lower"], congested["upper"])
    iso_mean, iso_tail = _resampled_stats(iso_v, isolated["count"], n_resamples, rng, q)
    con_mean, con_tail = _resampled_stats(con_v, congested["count"], n_resamples, rng, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        if higher_is_better:
            ci_mean, ci_tail = iso_mean / con_mean, iso_tail / con_tail
        else:
            ci_mean, ci_tail = con_mean / iso_mean, con_tail / iso_tail
    alpha = (1.0 - level) / 2.0
    points = _point_impact(iso_v, isolated["count"], con_v, congested["count"], higher_is_better, q)
    out = {}
    for key, boot, point in zip(("ci_mean", "ci_tail_99"), (ci_mean, ci_tail), points):
        lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
        scale = 1.0
        if anchor is not None and anchor.get(key) is not None and point > 0:
            exact = float(anchor[key])
            scale = exact / point if math.isfinite(exact) else math.nan
        out[key] = (float(lo) * scale, float(hi) * scale)
    return out
