"""Synthetic results files (for benchmarks and tests of scale).

Builds a schema-valid ``contend load`` results document whose canary
histograms hold a chosen total number of samples, drawn from seeded
log-normal mixtures, bucketed exactly as the C benchmark does (log buckets of
relative error 1 %), with summary statistics computed from the samples.
"""

from __future__ import annotations

import math

import numpy as np

RELATIVE_ERROR = 0.01
GAMMA = (1 + RELATIVE_ERROR) / (1 - RELATIVE_ERROR)

CANARIES = (
    # name, label, metric, units, higher_is_better, msg bytes, share of samples, median
    ("rr_lat", "RR Two-sided Lat (8 B)", "lat_us", "usec", False, 8, 0.6, 2.0),
    (
        "rr_bw_sync",
        "RR Two-sided BW+Sync (131072 B)",
        "bw_mib_s",
        "MiB/s/rank",
        True,
        131072,
        0.2,
        4000.0,
    ),
    ("allreduce", "Multiple Allreduce (8 B)", "lat_us", "usec", False, 8, 0.2, 10.0),
)


def _histogram(samples: np.ndarray) -> dict:
    idx = np.floor(np.log(samples) / math.log(GAMMA)).astype(np.int64)
    keys, counts = np.unique(idx, return_counts=True)
    lower = GAMMA ** keys.astype(float)
    return {
        "scheme": "log",
        "relative_error": RELATIVE_ERROR,
        "lower": lower.tolist(),
        "upper": (lower * GAMMA).tolist(),
        "count": counts.tolist(),
    }


def _summary(samples: np.ndarray, higher_is_better: bool) -> dict:
    q = np.quantile(samples, [0.001, 0.01, 0.5, 0.99, 0.999], method="inverted_cdf")
    p0_1, p1, p50, p99, p99_9 = (float(v) for v in q)
    return {
        "count": int(samples.size),
        "mean": float(samples.mean()),
        "stddev": float(samples.std(ddof=1)) if samples.size > 1 else 0.0,
        "min": float(samples.min()),
        "max": float(samples.max()),
        "p0_1": p0_1,
        "p1": p1,
        "p50": p50,
        "p99": p99,
        "p99_9": p99_9,
        "tail_99": p1 if higher_is_better else p99,
        "tail_99_9": p0_1 if higher_is_better else p99_9,
    }


def _draw(rng, n: int, median: float, slowdown: float, higher_is_better: bool) -> np.ndarray:
    body = rng.lognormal(math.log(median), 0.25, n)
    tail = rng.random(n) < 0.03  # a congested-looking tail
    body[tail] *= rng.lognormal(math.log(4.0), 0.6, int(tail.sum()))
    return body / slowdown if higher_is_better else body * slowdown


def _test(name, label, metric, units, hib, msg, role, phase, during, samples) -> dict:
    summary = _summary(samples, hib)
    return {
        "name": name,
        "label": label,
        "role": role,
        "phase": phase,
        "during": during,
        "metric": metric,
        "units": units,
        "higher_is_better": hib,
        "message_bytes": msg,
        "ranks_sampled": 2,
        "measurements_done": 10,
        "timed_out": False,
        "elapsed_s": 1.0,
        metric: summary,
        "bulk_" + metric: summary,
        "histogram": _histogram(samples),
        "verify": {"enabled": False, "checked": 0, "errors": 0},
    }


def synthesize_results(
    total_samples: int = 1_000_000, seed: int = 1, slowdown: float = 1.5
) -> dict:
    """A results document whose canary histograms hold ``total_samples`` samples."""
    rng = np.random.default_rng(seed)
    tests, impact = [], []
    per_phase = {}
    for name, label, metric, units, hib, msg, share, median in CANARIES:
        n = max(1, round(total_samples * share / 2))
        per_phase[name] = (n, n)
    # make the counts add up exactly
    diff = total_samples - sum(a + b for a, b in per_phase.values())
    a, b = per_phase["rr_lat"]
    per_phase["rr_lat"] = (a + diff, b)
    for phase, factor in (("isolated", 1.0), ("congested", slowdown)):
        for name, label, metric, units, hib, msg, share, median in CANARIES:
            n = per_phase[name][0 if phase == "isolated" else 1]
            samples = _draw(rng, n, median, factor, hib)
            tests.append(
                _test(name, label, metric, units, hib, msg, "canary", phase, None, samples)
            )
    for name, label, metric, units, hib, msg, share, median in CANARIES:
        iso = next(t for t in tests if t["name"] == name and t["phase"] == "isolated")[metric]
        con = next(t for t in tests if t["name"] == name and t["phase"] == "congested")[metric]

        def ci(key, iso=iso, con=con, hib=hib):
            return iso[key] / con[key] if hib else con[key] / iso[key]

        impact.append(
            {
                "name": name,
                "metric": metric,
                "ci_mean": ci("mean"),
                "ci_p50": ci("p50"),
                "ci_tail_99": ci("tail_99"),
                "ci_tail_99_9": ci("tail_99_9"),
            }
        )
    nodes = 10
    return {
        "schema": "contend-results",
        "schema_version": "1.0",
        "tool": {"name": "contend", "version": "synthetic"},
        "command": "load",
        "argv": ["load", "--synthetic"],
        "started_utc": "2000-01-01T00:00:00Z",
        "finished_utc": "2000-01-01T00:00:10Z",
        "wall_s": 10.0,
        "seed": seed,
        "seed_source": "user",
        "config": {
            "options": {"synthetic": True},
            "load": {},
            "tests": {
                c[0]: {
                    "measurements": 10,
                    "rings": 30,
                    "iters": 200,
                    "warmup": 1,
                    "msg_bytes": c[5],
                }
                for c in CANARIES
            },
        },
        "environment": {
            "mpi_library": "synthetic",
            "mpi_standard": "3.1",
            "ranks": nodes,
            "nodes": nodes,
            "ranks_per_node_min": 1,
            "ranks_per_node_max": 1,
            "node_discovery": "virtual",
            "virtual_nodes": 1,
            "node_names": ["synthetic"] * nodes,
        },
        "placement": {
            "node_order": list(range(nodes)),
            "groups": [
                {"role": "canary", "name": "canaries", "nodes": [0, 1]},
                {"role": "congestor", "name": "synthetic", "nodes": list(range(2, nodes))},
            ],
            "subcommunicators": [],
        },
        "tests": tests,
        "impact": impact,
    }
