"""Welch's unequal-variance t-test and significance markers."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

DEFAULT_ALPHAS = (0.05, 0.01)


class WelchResult(NamedTuple):
    t: float
    p: float
    df: float


def welch_t_test(control, condition) -> WelchResult:
    """Two-sided Welch t-test of condition vs. control (scipy ttest_ind, equal_var=False).

    Needs at least two values in each group; returns NaNs otherwise.
    """
    a = np.asarray(control, dtype=float)
    b = np.asarray(condition, dtype=float)
    if a.size < 2 or b.size < 2:
        return WelchResult(math.nan, math.nan, math.nan)
    from scipy import stats  # imported here: scipy.stats takes ~1 s to import

    res = stats.ttest_ind(b, a, equal_var=False)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    den = va**2 / (a.size - 1) + vb**2 / (b.size - 1)
    df = (va + vb) ** 2 / den if den > 0 else math.nan
    return WelchResult(float(res.statistic), float(res.pvalue), float(df))


def welch_t_test_from_summary(control: tuple, condition: tuple) -> WelchResult:
    """Welch's test from (mean, sample stddev, n) of each group (scipy
    ttest_ind_from_stats, equal_var=False); NaNs unless both have n >= 2."""
    (ma, sa, na), (mb, sb, nb) = control, condition
    values = (ma, sa, mb, sb)
    if na < 2 or nb < 2 or not all(math.isfinite(v) for v in values):
        return WelchResult(math.nan, math.nan, math.nan)
    from scipy import stats

    res = stats.ttest_ind_from_stats(mb, sb, nb, ma, sa, na, equal_var=False)
    va, vb = sa**2 / na, sb**2 / nb
    den = va**2 / (na - 1) + vb**2 / (nb - 1)
    df = (va + vb) ** 2 / den if den > 0 else math.nan
    return WelchResult(float(res.statistic), float(res.pvalue), float(df))


def significance_marker(p: float, alphas=DEFAULT_ALPHAS) -> str:
    """'*' when p < the first alpha (0.05), '**' when also < the second (0.01), else ''."""
    if p is None or math.isnan(p):
        return ""
    return "*" * sum(1 for alpha in sorted(alphas, reverse=True) if p < alpha)
