"""Netscope's application models (eq. 2-5): message delivery time and delay sensitivity.

For one run of an application a on node set N, with the latency model's
one-way latency D (eq. 12) evaluated per sampling interval t:

    M_src,dst(t) = o_src + D_src,dst(t) + size / bw + o_dst                (eq. 3)  [us]
    M_s(t)  = mean over the C(|N|, 2) unordered node pairs of M, each pair's
              M the mean of its two directions                             (eq. 4)
    M_s^w(t) = sum over the job's traffic pairs (src, dst, bytes) of
              bytes * M_src,dst(t) / total bytes          (traffic-weighted, beyond the paper)
    M_a = time-weighted mean of M_s(t) over the sampling intervals covering the
          job's perform window                                             (eq. 5)

and over several runs T_a = c_a * M_a + k_a (eq. 2), fitted by ordinary least
squares (:func:`scipy.stats.linregress`).  Because D is linear in Q_l, both
means reduce to link weights (how much each link contributes to the mean
path) dotted with per-interval Q_l, which is how they are computed here.

Dimensionless delay sensitivity (docs/netscope.md, :func:`normalised_sensitivity`):

    delay_sensitivity = c_a * D_ref / T_ref   at the run with the smallest M_a
                        (D_ref its M_a less o + size/bw + o, T_ref its runtime)

the elasticity of runtime to network latency.  A pure ping-pong has 1, the
paper's normalisation ("the pingpong application has a delay sensitivity
equal to one"); an application whose runtime ignores congestion has 0.  It
does not grow with the length of a run, as c_a does, so it is the quantity
that orders applications, and the c_a the throttle's eq. 15 uses in (2 + c_a).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .errors import ModelError
from .latency import LatencyModel
from .paths import PathSet
from .queueing import Timeline, build_timeline

CONVERGED_PERCENT = 10.0  # Netscope Fig. 4b/4c: within 10 % of the final estimate


@dataclass(frozen=True)
class DeliveryConstants:
    """The parts of eq. 3 that are not network latency."""

    overhead_us: float  # o_src = o_dst
    msg_bytes: float  # message size
    nic_gbps: float  # NIC bandwidth, Gbit/s

    @property
    def bandwidth_delay_us(self) -> float:
        """size / bw in us."""
        return self.msg_bytes * 8.0 / (self.nic_gbps * 1e3)

    @property
    def fixed_us(self) -> float:
        """o_src + size / bw + o_dst."""
        return 2.0 * self.overhead_us + self.bandwidth_delay_us


def uniform_link_weights(paths: PathSet, nodes) -> np.ndarray:
    """Link weights of eq. 4: every unordered node pair equally likely, both directions averaged.

    Returns w (one per link id) with sum_l w_l x_l = mean over pairs of the
    path-averaged sum of x over the pair's links.
    """
    nodes = sorted({int(n) for n in nodes})
    if len(nodes) < 2:
        raise ModelError(f"the job runs on {len(nodes)} node(s): eq. 4 needs at least two")
    pairs = [(a, b) for a in nodes for b in nodes if a != b]
    weights = paths.pair_weights(pairs)
    return np.asarray(weights.sum(axis=0)).ravel() / len(pairs)


def traffic_link_weights(paths: PathSet, traffic_pairs):
    """Link weights of the traffic-weighted mean: directed pairs weighted by their bytes.

    ``traffic_pairs`` rows are [src, dst, bytes, messages] (contend-jobs traffic.pairs);
    pairs of a node with itself and pairs without bytes do not cross the network and
    are left out.  None when no byte crosses the network.
    """
    rows = [
        (int(p[0]), int(p[1]), float(p[2]))
        for p in traffic_pairs
        if int(p[0]) != int(p[1]) and float(p[2]) > 0
    ]
    if not rows:
        return None
    by_pair = {}
    for s, d, b in rows:
        by_pair[(s, d)] = by_pair.get((s, d), 0.0) + b
    pairs = list(by_pair)
    share = np.array([by_pair[p] for p in pairs]) / sum(by_pair.values())
    weights = paths.pair_weights(pairs)
    return np.asarray(weights.T @ share).ravel()


def latency_series_ns(
    model: LatencyModel, paths: PathSet, link_weights: np.ndarray, timeline: Timeline
) -> np.ndarray:
    """Per timeline segment: k_2 + sum_l w_l k_1[class(l)] Q_l(t), the weighted mean D in ns."""
    used = np.flatnonzero(link_weights)
    k = model.require_constants(paths, used)
    col_of = timeline.column_of()
    cols = np.array([col_of.get(int(link), -1) for link in used], dtype=int)
    padded = np.concatenate([timeline.excess, np.zeros((timeline.n_segments, 1))], axis=1)
    q = 1.0 + padded[:, cols]  # segments x used links
    return model.k_const_ns + q @ (link_weights[used] * k[used])


def temporal_mean(timeline: Timeline, series: np.ndarray, t_start: float, t_end: float):
    """(mean, coverage, intervals) of a per-segment series over [t_start, t_end] (eq. 5).

    Segments are weighted by their overlap with the window; NaN mean when no
    sampled segment overlaps it.
    """
    weights = timeline.window_weights([t_start], [t_end])[0]
    total = weights.sum()
    coverage = total / (t_end - t_start) if t_end > t_start else 0.0
    if total <= 0:
        return float("nan"), 0.0, 0
    return float(weights @ series / total), float(coverage), int(np.count_nonzero(weights))


@dataclass
class RunDelivery:
    """Expected message delivery time of one run (uniform and traffic-weighted)."""

    m_a_us: float
    m_a_weighted_us: float | None
    coverage: float  # share of the perform window covered by sampling intervals
    intervals: int  # sampling segments overlapping the window
    pts_clamped_intervals: int


def run_delivery(
    model: LatencyModel,
    paths: PathSet,
    intervals,
    nodes,
    traffic_pairs,
    window: tuple,
    constants: DeliveryConstants,
    source: str = "run",
) -> RunDelivery:
    """M_a of one run of a job over its perform window (eq. 3-5), from its PTs intervals."""
    uniform = uniform_link_weights(paths, nodes)
    weighted = traffic_link_weights(paths, traffic_pairs) if traffic_pairs is not None else None
    used = np.flatnonzero(uniform if weighted is None else (uniform + weighted))
    timeline = build_timeline(
        intervals, paths.link_index(), used, model.pts_clamp_percent, source=source
    )
    t_start, t_end = window
    m_uniform, coverage, n_int = temporal_mean(
        timeline, latency_series_ns(model, paths, uniform, timeline), t_start, t_end
    )
    if n_int == 0:
        first, last = timeline.span
        raise ModelError(
            f"{source}: no counter sampling interval overlaps the job's perform window "
            f"[{t_start:.6g}, {t_end:.6g}] s (the counters span [{first:.6g}, {last:.6g}] s): "
            "wrong counter file, or counters on another clock"
        )
    m_weighted = None
    if weighted is not None:
        m_weighted = temporal_mean(
            timeline, latency_series_ns(model, paths, weighted, timeline), t_start, t_end
        )[0]
        m_weighted = m_weighted / 1e3 + constants.fixed_us
    return RunDelivery(
        m_a_us=m_uniform / 1e3 + constants.fixed_us,
        m_a_weighted_us=m_weighted,
        coverage=coverage,
        intervals=n_int,
        pts_clamped_intervals=timeline.clamped,
    )


def degenerate_reason(m_us, t_s) -> str | None:
    """Why T = c M + k cannot be fitted on these runs (None when it can)."""
    m_us, t_s = np.asarray(m_us, float), np.asarray(t_s, float)
    if len(m_us) < 2:
        return f"{len(m_us)} run(s): the runtime fit needs at least two"
    if not np.all(np.isfinite(m_us)) or not np.all(np.isfinite(t_s)):
        return "a run has no finite M_a or T_a"
    scale = max(np.abs(m_us).max(), 1e-300)
    if np.ptp(m_us) <= 1e-9 * scale:  # rounding noise is no congestion variety
        return (
            f"M_a is the same in every run ({m_us[0]:.6g} us): congestion did not vary, "
            "so the slope is undefined; add runs under different congestion"
        )
    if np.ptp(t_s) <= 1e-9 * max(np.abs(t_s).max(), 1e-300):
        return (
            f"T_a is the same in every run ({t_s[0]:.6g} s): zero runtime variance, "
            "so the runtime fit's correlation is undefined"
        )
    return None


def normalised_sensitivity(c_a: float, d_ref_us: float, t_ref_s: float):
    """c_a * D_ref / T_ref: the elasticity of runtime to network latency at the
    least congested run (D_ref: its M_a less the parts of eq. 3 that are not
    latency, o + size/bw + o; T_ref: its measured runtime); 1 for a pure
    ping-pong of small messages.  None when T_ref is 0.  The measured T_ref,
    not the fitted c_a M_ref + k_a, so that an intercept k_a < 0 (runtime
    growing faster than linearly at high congestion) cannot inflate it; D, not
    M, so that the bandwidth delay of large messages (the same in every run)
    does not."""
    return None if t_ref_s <= 0 else float(c_a * d_ref_us / t_ref_s)


def fit_runtime(m_us, t_s, fixed_us=None) -> dict:
    """T_a = c_a M_a + k_a over runs (eq. 2); ModelError on degenerate input."""
    reason = degenerate_reason(m_us, t_s)
    if reason:
        raise ModelError(reason)
    m_us, t_s = np.asarray(m_us, float), np.asarray(t_s, float)
    res = stats.linregress(m_us, t_s)
    ref = int(np.argmin(m_us))
    m_ref, t_ref = float(m_us[ref]), float(t_s[ref])
    d_ref = m_ref - (float(fixed_us[ref]) if fixed_us is not None else 0.0)
    return {
        "c_a_s_per_us": float(res.slope),
        "c_a_stderr_s_per_us": float(res.stderr) if len(m_us) > 2 else None,
        "k_a_s": float(res.intercept),
        "r": float(res.rvalue),
        "m_ref_us": m_ref,
        "t_ref_s": t_ref,
        "d_ref_us": d_ref,
        "delay_sensitivity": normalised_sensitivity(res.slope, d_ref, t_ref),
    }


def _error_percent(value, final):
    if value is None or final is None or final == 0:
        return None
    return float(100.0 * (value - final) / final)


def _settled_after(rows: list, key: str):
    """First run count from which |error| stays within CONVERGED_PERCENT to the end."""
    settled = None
    for row in reversed(rows):
        err = row[key]
        if err is None or abs(err) > CONVERGED_PERCENT:
            break
        settled = row["runs"]
    return settled


def convergence(m_us, t_s, fixed_us=None) -> dict:
    """The estimate after 1..N runs against the final one (Netscope Fig. 4b/4c).

    Rows: runs, c_a_s_per_us, c_a_error_percent, delay_sensitivity,
    delay_sensitivity_error_percent (None while the first runs are degenerate).
    Error = 100 (estimate_n - final) / final.  Also the first run count after
    which each estimate stays within 10 % of its final value.
    """
    m_us, t_s = np.asarray(m_us, float), np.asarray(t_s, float)
    final = fit_runtime(m_us, t_s, fixed_us)
    rows = []
    for n in range(1, len(m_us) + 1):
        fx = None if fixed_us is None else fixed_us[:n]
        est = None if degenerate_reason(m_us[:n], t_s[:n]) else fit_runtime(m_us[:n], t_s[:n], fx)
        c = est["c_a_s_per_us"] if est else None
        ds = est["delay_sensitivity"] if est else None
        rows.append(
            {
                "runs": n,
                "c_a_s_per_us": c,
                "c_a_error_percent": _error_percent(c, final["c_a_s_per_us"]),
                "delay_sensitivity": ds,
                "delay_sensitivity_error_percent": _error_percent(ds, final["delay_sensitivity"]),
            }
        )
    return {
        "rows": rows,
        "within_percent": CONVERGED_PERCENT,
        "c_a_settled_after_runs": _settled_after(rows, "c_a_error_percent"),
        "delay_sensitivity_settled_after_runs": _settled_after(
            rows, "delay_sensitivity_error_percent"
        ),
    }


def run_order(n: int, order: str, seed: int) -> list:
    """Indices of the runs in the order the convergence table adds them."""
    if order == "given":
        return list(range(n))
    if order == "shuffled":
        return [int(i) for i in np.random.default_rng(seed).permutation(n)]
    raise ModelError(f"--order must be given or shuffled, not {order!r}")


def estimate(m_us, t_s, fixed_us=None) -> dict:
    """Runtime fit plus convergence table of one aggregation (uniform or weighted);
    fixed_us: per run the part of M that is not latency (o + size/bw + o)."""
    out = fit_runtime(m_us, t_s, fixed_us)
    out["convergence"] = convergence(m_us, t_s, fixed_us)
    return out
