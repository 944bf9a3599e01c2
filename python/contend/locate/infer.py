"""Per-link slowdown from pair measurements and the routing's paths.

Model: a pair's time per byte, relative to the best pair's, exceeds 1 by the
sum of the slowdowns of the links its path crosses (path-averaged over the
routing's paths: :meth:`contend.models.paths.PathSet.pair_weights`)::

    t_pair / t_best - 1 = sum_l w_pair,l * x_l,   x_l >= 0

solved by non-negative least squares (:func:`nnls`, on the sparse system).
A link at fraction f of its bandwidth that alone slows its pairs gives
x = 1/f - 1 (3 at 25 %).  Links crossed by exactly the same pairs with the
same weights cannot be told apart by any measurement of these pairs: they
are merged into one unknown before the fit and reported together.
What is ranked is a unit: a link as a cable (its two directions, two
channels, two counter rows) joined with every link no measurement separates
from it; a unit's score is the largest slowdown of its links.
Confidence: the fit is repeated on bootstrap resamples of the pairs; a
unit's ``p_first`` is the share of resamples that rank it first, ``p_top``
the share that rank it within the top N.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

ITER_POWER = 60  # power iterations for the step size
ITER_MAX = 20000  # FISTA iterations at most
TOL = 1e-6  # relative change of x that ends them


@dataclass
class Fit:
    slowdown: np.ndarray  # per link id of the paths file (merged links share their group's)
    groups: list  # per link id: the link ids crossed by the same pairs (itself included)
    pairs_crossing: np.ndarray  # per link id: measurements whose paths cross it
    unit_score: np.ndarray  # per unit (a cable: both directions): the larger slowdown
    p_first: np.ndarray  # per unit: share of resamples ranking it first
    p_top: np.ndarray  # per unit: share of resamples ranking it within the top N
    excess: np.ndarray  # per measurement: t / t_best - 1


def relative_excess(bw: np.ndarray) -> np.ndarray:
    """t / t_best - 1 for bandwidths bw (t = 1 / bw)."""
    return bw.max() / bw - 1.0


def column_groups(weights) -> np.ndarray:
    """Per link: the id of its group of links crossed by the same pairs with the
    same weights (-1: crossed by none)."""
    csc = weights.tocsc()
    csc.sort_indices()
    return _column_groups(csc)[1]


def _column_groups(a: sparse.csc_matrix):
    """Columns with the same rows and weights: (representative column ids, group of each)."""
    seen: dict = {}
    rep_of = np.empty(a.shape[1], dtype=np.int64)
    reps = []
    for j in range(a.shape[1]):
        lo, hi = a.indptr[j], a.indptr[j + 1]
        if lo == hi:
            rep_of[j] = -1
            continue
        key = (a.indices[lo:hi].tobytes(), np.round(a.data[lo:hi], 12).tobytes())
        if key not in seen:
            seen[key] = len(reps)
            reps.append(j)
        rep_of[j] = seen[key]
    return np.asarray(reps, dtype=np.int64), rep_of


def nnls(
    a: sparse.csr_matrix, b: np.ndarray, w: np.ndarray | None = None, x0: np.ndarray | None = None
) -> np.ndarray:
    """argmin_{x >= 0} sum_i w_i (a x - b)_i^2 (w: row weights, default 1; x0: a
    start, e.g. the unweighted solution for a bootstrap resample).

    Accelerated projected gradient (FISTA, Beck and Teboulle 2009) on the
    sparse system: a few hundred sparse products, where scipy's lsq_linear
    (trust-region reflective with LSMR) takes about 100 times longer at
    16,384 pairs x 2,048 links and reaches the same minimum (the tests
    compare the two)."""
    n = a.shape[1]
    if n == 0:
        return np.zeros(0)
    w = np.ones(a.shape[0]) if w is None else w
    at = a.T.tocsr()
    v = np.full(n, 1.0 / np.sqrt(n))
    lip = 0.0
    for _ in range(ITER_POWER):  # the largest eigenvalue of a' W a: the step's bound
        u = at @ (w * (a @ v))
        lip = float(np.linalg.norm(u))
        if lip == 0.0:
            return np.zeros(n)
        v = u / lip
    lip *= 1.05
    x = np.zeros(n) if x0 is None else np.maximum(x0, 0.0)
    y = x.copy()
    t = 1.0
    for _ in range(ITER_MAX):
        xn = np.maximum(y - (at @ (w * (a @ y - b))) / lip, 0.0)
        tn = (1.0 + np.sqrt(1.0 + 4.0 * t * t)) / 2.0
        y = xn + (t - 1.0) / tn * (xn - x)
        done = np.linalg.norm(xn - x) <= TOL * max(float(np.linalg.norm(xn)), 1e-300)
        x, t = xn, tn
        if done:
            break
    return x


def _ranks(x: np.ndarray) -> np.ndarray:
    """Rank (0 = largest) of every entry; ties share the better rank."""
    order = np.argsort(-x, kind="stable")
    rank = np.empty(len(x), dtype=np.int64)
    rank[order] = np.arange(len(x))
    return rank


def _unit_max(x: np.ndarray, unit_of: np.ndarray, n_units: int) -> np.ndarray:
    out = np.zeros(n_units)
    np.maximum.at(out, unit_of, x)
    return out


def fit(
    weights: sparse.csr_matrix,
    excess: np.ndarray,
    unit_of: np.ndarray,
    top: int,
    bootstrap: int,
    seed: int,
) -> Fit:
    """Fit the per-link slowdown: weights (measurements x links), excess per
    measurement; unit_of maps each link to its unit (the cable it is one
    direction of), the thing ranked."""
    csc = weights.tocsc()
    csc.sort_indices()
    reps, rep_of = _column_groups(csc)
    a = weights[:, reps].tocsr()
    n_units = int(unit_of.max()) + 1 if len(unit_of) else 0

    def per_link(x_rep):
        return np.where(rep_of >= 0, x_rep[np.maximum(rep_of, 0)] if len(reps) else 0.0, 0.0)

    x_all = nnls(a, excess)
    slowdown = per_link(x_all)
    members: dict = {}
    for j, g in enumerate(rep_of):
        if g >= 0:
            members.setdefault(int(g), []).append(j)
    groups = [members[int(g)] if g >= 0 else [j] for j, g in enumerate(rep_of)]
    first = np.zeros(n_units)
    within = np.zeros(n_units)
    rng = np.random.default_rng(seed)
    m = weights.shape[0]
    for _ in range(bootstrap):
        counts = np.bincount(rng.integers(0, m, size=m), minlength=m).astype(float)
        rk = _ranks(_unit_max(per_link(nnls(a, excess, counts, x_all)), unit_of, n_units))
        first += rk == 0
        within += rk < top
    if bootstrap:
        first /= bootstrap
        within /= bootstrap
    return Fit(
        slowdown=slowdown,
        groups=groups,
        pairs_crossing=np.diff(csc.indptr),
        unit_score=_unit_max(slowdown, unit_of, n_units),
        p_first=first,
        p_top=within,
        excess=excess,
    )
