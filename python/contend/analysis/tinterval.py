"""Student-t confidence interval of a mean, from samples or from their summary."""

from __future__ import annotations

import math

import numpy as np


def _check(level: float) -> None:
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")


def mean_interval_from_summary(mean: float, stddev: float, n: int, level: float = 0.95) -> tuple:
    """(lo, hi): the two-sided Student-t interval of a mean of ``n`` samples with sample
    standard deviation ``stddev`` (ddof 1); NaNs when n < 2 or a value is missing."""
    _check(level)
    if n is None or n < 2 or not (math.isfinite(mean) and math.isfinite(stddev)):
        return (math.nan, math.nan)
    from scipy import stats  # imported here: scipy.stats takes ~1 s to import

    if stddev == 0:
        return (float(mean), float(mean))
    lo, hi = stats.t.interval(level, n - 1, loc=mean, scale=stddev / math.sqrt(n))
    return (float(lo), float(hi))


def mean_interval(values, level: float = 0.95) -> tuple:
    """(mean, lo, hi) of ``values`` (NaNs dropped) with a two-sided Student-t interval
    at ``level``; the interval is NaN with fewer than two values."""
    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    _check(level)
    if data.size == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(data.mean())
    sd = float(data.std(ddof=1)) if data.size > 1 else math.nan
    return (mean,) + mean_interval_from_summary(mean, sd, data.size, level)
