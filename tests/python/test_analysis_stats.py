"""Statistics (contend.analysis) checked against scipy/numpy on known inputs."""

import math
from pathlib import Path

import numpy as np
import pytest
from contend.analysis import (
    bootstrap_histogram_impact,
    bootstrap_interval,
    congestion_impact,
    histogram_mean,
    histogram_quantile,
    histogram_tail_99,
    performance_difference_pct,
    significance_marker,
    welch_t_test,
)
from contend.reports.tables import add_bootstrap, impact_table, significance_table
from contend.results import load_many, load_results
from scipy import stats

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def test_welch_known_p_value():
    # R: t.test(c(1,2,3,4,5), c(2,4,6,8,10))  ->  t = -1.8974, df = 5.8824, p-value = 0.1075
    res = welch_t_test([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert res.t == pytest.approx(1.8974, abs=1e-4)  # condition - control: positive
    assert res.df == pytest.approx(5.8824, abs=1e-4)
    assert res.p == pytest.approx(0.1075, abs=1e-4)
    ref = stats.ttest_ind([2, 4, 6, 8, 10], [1, 2, 3, 4, 5], equal_var=False)
    assert res.p == ref.pvalue and res.t == ref.statistic


def test_welch_matches_textbook_formula():
    rng = np.random.default_rng(7)
    a, b = rng.normal(10, 1, 12), rng.normal(11, 3, 7)
    res = welch_t_test(a, b)
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    t = (b.mean() - a.mean()) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    p = 2 * stats.t.sf(abs(t), df)
    assert res.t == pytest.approx(t, rel=1e-12)
    assert res.df == pytest.approx(df, rel=1e-12)
    assert res.p == pytest.approx(p, rel=1e-10)


def test_welch_needs_two_values():
    assert math.isnan(welch_t_test([1.0], [2.0, 3.0]).p)


@pytest.mark.parametrize(
    "p,marker",
    [(0.2, ""), (0.05, ""), (0.049, "*"), (0.01, "*"), (0.0099, "**"), (float("nan"), "")],
)
def test_significance_marker(p, marker):
    assert significance_marker(p) == marker


def test_bootstrap_fixed_seed_is_reproducible_and_matches_numpy():
    data = np.arange(1.0, 21.0)
    a = bootstrap_interval(data, np.mean, 5000, 0.95, rng=np.random.default_rng(42))
    b = bootstrap_interval(data, np.mean, 5000, 0.95, rng=42)
    assert a == b
    # the same computation spelled out with numpy
    rng = np.random.default_rng(42)
    boot = data[rng.integers(0, data.size, size=(5000, data.size))].mean(axis=1)
    assert a == tuple(np.quantile(boot, [0.025, 0.975]))
    assert a[0] < data.mean() < a[1]


def test_bootstrap_agrees_with_scipy_percentile_interval():
    rng = np.random.default_rng(3)
    data = rng.lognormal(0.0, 0.5, 200)
    lo, hi = bootstrap_interval(data, np.mean, 20000, 0.95, rng=1)
    kwargs = {"n_resamples": 20000, "confidence_level": 0.95, "method": "percentile"}
    try:
        ref = stats.bootstrap((data,), np.mean, rng=np.random.default_rng(1), **kwargs)
    except TypeError:  # scipy < 1.15 names it random_state
        ref = stats.bootstrap((data,), np.mean, random_state=np.random.default_rng(1), **kwargs)
    width = hi - lo
    assert lo == pytest.approx(ref.confidence_interval.low, abs=0.05 * width)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=0.05 * width)


def test_bootstrap_rejects_bad_level():
    with pytest.raises(ValueError, match="confidence level"):
        bootstrap_interval([1.0, 2.0], level=1.5)


def test_congestion_impact_directions():
    assert congestion_impact(2.0, 6.0, higher_is_better=False) == 3.0
    assert congestion_impact(600.0, 200.0, higher_is_better=True) == 3.0
    assert math.isnan(congestion_impact(None, 2.0, False))
    assert math.isnan(congestion_impact(0.0, 2.0, False))


def test_performance_difference_sign():
    # worse than control is negative, whatever the metric's direction
    assert performance_difference_pct(100.0, 110.0, higher_is_better=False) == pytest.approx(-10)
    assert performance_difference_pct(100.0, 90.0, higher_is_better=True) == pytest.approx(-10)
    assert performance_difference_pct(100.0, 90.0, higher_is_better=False) == pytest.approx(10)


def test_histogram_statistics_on_known_buckets():
    lower, upper, count = [1.0, 2.0, 4.0], [2.0, 4.0, float("nan")], [2, 1, 1]
    assert histogram_mean(lower, upper, count) == pytest.approx((1.5 * 2 + 3 + 4) / 4)
    assert histogram_quantile(lower, upper, count, 0.5) == 1.5  # 2nd of 4 samples
    assert histogram_quantile(lower, upper, count, 0.51) == 3.0
    assert histogram_quantile(lower, upper, count, 1.0) == 4.0
    assert histogram_tail_99(lower, upper, count, higher_is_better=True) == 1.5
    assert histogram_tail_99(lower, upper, count, higher_is_better=False) == 4.0


def test_histogram_quantiles_track_fixture_summary():
    res = load_results(FIXTURES / "load_vn1_n10.json.gz")
    for idx, row in res.tests[res.tests["count"] > 0].iterrows():
        hist = res.histogram(idx)
        rel = 2.5 * row["relative_error"]
        for q, key in ((0.5, "p50"), (0.99, "p99"), (0.01, "p1")):
            got = histogram_quantile(hist["lower"], hist["upper"], hist["count"], q)
            assert got == pytest.approx(row[key], rel=rel), (row["name"], row["phase"], key)
        mean = histogram_mean(hist["lower"], hist["upper"], hist["count"])
        assert mean == pytest.approx(row["mean"], rel=rel)


def test_histogram_bootstrap_seeded_and_brackets_exact_ci():
    res = load_results(FIXTURES / "load_vn2_n16.json.gz")
    table = impact_table(res)
    a = add_bootstrap(res, table, 400, 0.95, seed=5)
    b = add_bootstrap(res, table, 400, 0.95, seed=5)
    assert a.equals(b)
    c = add_bootstrap(res, table, 400, 0.95, seed=6)
    assert not a[["ci_mean_lo"]].equals(c[["ci_mean_lo"]])
    for _, row in a.iterrows():
        assert row["ci_mean_lo"] <= row["ci_mean"] * 1.0001
        assert row["ci_mean"] <= row["ci_mean_hi"] * 1.0001


def test_histogram_bootstrap_interval_narrows_with_samples():
    rng = np.random.default_rng(0)
    edges = 1.02 ** np.arange(0, 200)
    small = {"lower": edges[:-1], "upper": edges[1:], "count": rng.integers(1, 5, 199)}
    big = dict(small, count=small["count"] * 1000)
    con_small = dict(small, lower=small["lower"] * 2, upper=small["upper"] * 2)
    con_big = dict(big, lower=big["lower"] * 2, upper=big["upper"] * 2)
    w_small = bootstrap_histogram_impact(small, con_small, False, 300, rng=1)["ci_mean"]
    w_big = bootstrap_histogram_impact(big, con_big, False, 300, rng=1)["ci_mean"]
    assert w_small[0] < 2.0 < w_small[1]
    assert (w_big[1] - w_big[0]) < (w_small[1] - w_small[0]) / 10


def test_significance_table_on_repeated_trials():
    single = FIXTURES / "single"
    groups = {
        "pairwise_a2a": load_many(sorted(single.glob("pairwise_a2a_s*.json.gz"))),
        "rma_put_incast": load_many(sorted(single.glob("rma_put_incast_s*.json.gz"))),
    }
    table = significance_table(groups, "pairwise_a2a", n_resamples=2000, seed=3)
    assert set(table["condition"]) == {"rma_put_incast"}
    assert len(table) == 3 * 4  # 3 canaries x (congested mean, 99%, CI mean, CI 99%)
    row = table[(table["name"] == "rr_lat") & (table["quantity"] == "CI mean")].iloc[0]
    ctl = [
        impact_table(r).set_index("name").loc["rr_lat", "ci_mean"] for r in groups["pairwise_a2a"]
    ]
    cond = [
        impact_table(r).set_index("name").loc["rr_lat", "ci_mean"] for r in groups["rma_put_incast"]
    ]
    ref = stats.ttest_ind(cond, ctl, equal_var=False)
    assert row["p"] == pytest.approx(ref.pvalue, rel=1e-12)
    assert row["control_mean"] == pytest.approx(np.mean(ctl))
    assert row["condition_mean"] == pytest.approx(np.mean(cond))
    assert row["marker"] == significance_marker(ref.pvalue)
    assert row["condition_lo"] <= row["condition_mean"] <= row["condition_hi"]
    expected = 100 * (np.mean(ctl) - np.mean(cond)) / np.mean(ctl)  # CI: lower is better
    assert row["difference_pct"] == pytest.approx(expected)
    with pytest.raises(ValueError, match="control condition"):
        significance_table(groups, "nope")
