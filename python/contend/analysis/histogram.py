"""Statistics of log-bucketed histograms (bucket i holds values in (lower, upper]).

Bucket values are represented by the bucket midpoint (lower + upper) / 2;
an unbounded last bucket (upper NaN) is represented by its lower edge.
These estimates carry the histogram's relative error; the exact mean is in
the results file's summary.
"""

from __future__ import annotations

import numpy as np


def bucket_values(lower, upper) -> np.ndarray:
    """Representative value of each bucket."""
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    return np.where(np.isnan(upper), lower, 0.5 * (lower + upper))


def histogram_mean(lower, upper, count) -> float:
    """Mean of the samples a histogram holds (bucket midpoints weighted by counts)."""
    count = np.asarray(count, dtype=float)
    total = count.sum()
    if total <= 0:
        return float("nan")
    return float(np.dot(bucket_values(lower, upper), count) / total)


def histogram_quantile(lower, upper, count, q: float) -> float:
    """Nearest-rank quantile q in [0, 1]: the value of the ceil(q * n)-th sample."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile q must be in [0, 1], got {q}")
    count = np.asarray(count, dtype=np.int64)
    total = int(count.sum())
    if total <= 0:
        return float("nan")
    rank = max(1, int(np.ceil(q * total)))
    idx = int(np.searchsorted(np.cumsum(count), rank, side="left"))
    return float(bucket_values(lower, upper)[idx])


def histogram_tail_99(lower, upper, count, higher_is_better: bool) -> float:
    """The value 99 % of samples are better than: p99 for latency, p1 for bandwidth."""
    return histogram_quantile(lower, upper, count, 0.01 if higher_is_better else 0.99)
