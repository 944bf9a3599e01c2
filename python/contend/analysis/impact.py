"""Congestion Impact and performance difference."""

from __future__ import annotations

import math


def _usable(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def congestion_impact(isolated, congested, higher_is_better: bool) -> float:
    """Congestion Impact of one statistic (GPCNeT eq. 1-2), from unrounded values.

    Latency-like metrics (lower is better): CI = congested / isolated.
    Bandwidth-like metrics (higher is better): CI = isolated / congested.
    CI > 1 means congestion made things worse.  Returns NaN when a value is
    missing or the denominator is not positive.
    """
    if not (_usable(isolated) and _usable(congested)):
        return math.nan
    num, den = (isolated, congested) if higher_is_better else (congested, isolated)
    if den <= 0:
        return math.nan
    return float(num) / float(den)


def performance_difference_pct(control: float, condition: float, higher_is_better: bool) -> float:
    """Mean performance difference of a condition vs. control, in percent.

    Signed so that negative means worse than control (as in the fat-tree
    poster's Table I): for bandwidth-like metrics (condition - control) /
    control, for time-like metrics (control - condition) / control.
    """
    if not (_usable(control) and _usable(condition)) or control == 0:
        return math.nan
    delta = condition - control if higher_is_better else control - condition
    return 100.0 * delta / control
