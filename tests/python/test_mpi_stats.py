"""contend's streaming statistics against numpy on the same samples."""

import json
import subprocess

import numpy as np
import pytest
from conftest import BUILD

REL_ERR = 0.01  # documented bound of the log-bucketed quantiles


def summarize(values, higher_is_better=False):
    tool = BUILD / "bin" / "stats_tool"
    args = [str(tool)] + (["--higher-is-better"] if higher_is_better else [])
    text = "\n".join(repr(float(v)) for v in values)
    out = subprocess.run(args, input=text, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


DISTRIBUTIONS = {
    "lognormal_latency_us": lambda g: g.lognormal(mean=1.0, sigma=0.8, size=20000),
    "uniform": lambda g: g.uniform(0.5, 500.0, size=5000),
    "exponential_tail": lambda g: 2.0 + g.exponential(scale=30.0, size=30000),
    "bimodal": lambda g: np.concatenate([g.normal(2.0, 0.1, 9000), g.normal(300.0, 20.0, 1000)]),
    "bandwidth_mib_s": lambda g: g.normal(5000.0, 600.0, size=8000).clip(1.0),
    "tiny_sample": lambda g: g.uniform(1.0, 2.0, size=7),
}


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_quantiles_within_one_percent_of_numpy(name):
    values = DISTRIBUTIONS[name](np.random.default_rng(12345))
    s = summarize(values)
    assert s["count"] == len(values)
    assert s["mean"] == pytest.approx(np.mean(values), rel=1e-9)
    assert s["stddev"] == pytest.approx(np.std(values, ddof=1), rel=1e-6)
    assert s["min"] == np.min(values) and s["max"] == np.max(values)
    for key, q in (("p0_1", 0.001), ("p1", 0.01), ("p50", 0.5), ("p99", 0.99), ("p99_9", 0.999)):
        exact = np.quantile(values, q, method="inverted_cdf")
        assert abs(s[key] - exact) <= REL_ERR * abs(exact), (key, s[key], exact)
        assert s["min"] <= s[key] <= s["max"]


def test_tail_follows_direction_of_better():
    values = np.random.default_rng(3).normal(1000.0, 100.0, 4000)
    lat = summarize(values)
    bw = summarize(values, higher_is_better=True)
    assert lat["tail_99"] == lat["p99"]
    assert bw["tail_99"] == bw["p1"]
    assert bw["tail_99"] < np.median(values) < lat["tail_99"]


def test_empty_sample_gives_nulls():
    s = summarize([])
    assert s["count"] == 0 and s["mean"] is None and s["p99"] is None
