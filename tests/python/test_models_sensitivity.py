"""Netscope delay sensitivity (contend.models, eq. 2-5) on the synthetic 6-node fabric.

Message delivery times are computed here by plain loops (models_synth) and
checked against the package; synthetic runtimes from a chosen c_a must give
it back within 5 %.
"""

import json

import numpy as np
import pandas as pd
import pytest
from contend.models import (
    DeliveryConstants,
    LatencyModel,
    ModelError,
    convergence,
    fit_runtime,
    load_job_run,
    parse_paths,
    run_delivery,
)
from contend.models.sensitivity import run_order
from models_synth import RunTruth, intervals, paths_doc
from scipy import stats

K_CLASS = {"injection": 100.0, "ejection": 200.0, "local": 50.0, "global": 300.0}
K_CONST = 1000.0
MODEL = LatencyModel("by-class", dict(K_CLASS), K_CONST)
PATHS = parse_paths(paths_doc(), "synthetic.paths.json")


def one_interval(pts: dict) -> pd.DataFrame:
    """One sampling interval [0, 1] s with the given PTs per (component, port)."""
    return pd.DataFrame(
        [(0.0, 1.0, c, p, v) for (c, p), v in pts.items()],
        columns=["t0_s", "t1_s", "component", "port", "pts_percent"],
    )


HAND_PTS = {  # Q = 2, 4, 1, 2, 5, 10 (others: no row, Q = 1)
    ("nic0", "0"): 50.0,
    ("A", "10"): 75.0,
    ("A", "11"): 0.0,
    ("B", "2"): 50.0,
    ("nic2", "0"): 80.0,
    ("B", "20"): 90.0,
}
HAND_CONSTS = DeliveryConstants(overhead_us=0.5, msg_bytes=1250, nic_gbps=10.0)  # 2 us fixed


def test_traffic_weighted_mean_on_three_nodes_by_hand():
    # D(0->2) = 100*2 + (50*4 + 50*1)/2 + 200*2 + 1000 = 1725 ns
    # D(2->4) = 100*5 + 300*10 + 200*1 + 1000        = 4700 ns
    # self traffic and pairs without bytes do not count
    traffic = [[0, 2, 1000, 1], [2, 4, 3000, 3], [4, 0, 0, 0], [2, 2, 500, 1]]
    out = run_delivery(
        MODEL, PATHS, one_interval(HAND_PTS), [0, 2, 4], traffic, (0.0, 1.0), HAND_CONSTS
    )
    assert HAND_CONSTS.fixed_us == pytest.approx(2.0)
    assert out.m_a_weighted_us == pytest.approx(2.0 + (1000 * 1.725 + 3000 * 4.7) / 4000)
    # eq. 4: pairs {0,2}, {0,4}, {2,4}, both directions averaged:
    # D(2->0) = 1750, D(0->4) = 4525, D(4->0) = 1650, D(4->2) = 1800 ns
    pair_means = [(1725 + 1750) / 2, (4525 + 1650) / 2, (4700 + 1800) / 2]
    assert out.m_a_us == pytest.approx(2.0 + np.mean(pair_means) / 1e3)
    assert out.coverage == pytest.approx(1.0) and out.intervals == 1


def test_no_traffic_means_no_weighted_estimate():
    out = run_delivery(MODEL, PATHS, one_interval(HAND_PTS), [0, 2], [], (0.0, 1.0), HAND_CONSTS)
    assert out.m_a_weighted_us is None


def test_window_outside_the_counters_is_refused():
    with pytest.raises(ModelError, match="no counter sampling interval overlaps"):
        run_delivery(MODEL, PATHS, one_interval(HAND_PTS), [0, 2], [], (5.0, 6.0), HAND_CONSTS)


def truth_m_a(frame, nodes, window, consts):
    """Eq. 3-5 by loops: mean over unordered pairs of both directions' D, window-averaged."""
    truth = RunTruth(frame)
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1 :]]
    d = [
        (
            truth.one_way_ns(K_CLASS, K_CONST, a, b, *window)
            + truth.one_way_ns(K_CLASS, K_CONST, b, a, *window)
        )
        / 2
        for a, b in pairs
    ]
    return consts.fixed_us + np.mean(d) / 1e3


def synthetic_runs(c_a, k_a, n=8, seed=11, noise=0.002):
    rng = np.random.default_rng(seed)
    consts = DeliveryConstants(1.0, 4096, 100.0)
    nodes, window = [0, 1, 2, 4, 5], (0.0023, 0.0171)
    m_pkg, m_true, t = [], [], []
    for level in np.linspace(1, 80, n):
        frame = intervals(rng, level)
        out = run_delivery(MODEL, PATHS, frame, nodes, [], window, consts)
        m_pkg.append(out.m_a_us)
        m_true.append(truth_m_a(frame, nodes, window, consts))
        t.append((c_a * m_true[-1] + k_a) * (1 + rng.normal(0, noise)))
    return np.array(m_pkg), np.array(m_true), np.array(t)


def test_runs_generated_from_c_a_give_it_back_within_5_percent():
    c_a, k_a = 0.02, 0.5  # s per us, s
    m_pkg, m_true, t = synthetic_runs(c_a, k_a)
    assert m_pkg == pytest.approx(m_true, rel=1e-9)  # eq. 5 per interval == loops
    fit = fit_runtime(m_pkg, t)
    assert fit["c_a_s_per_us"] == pytest.approx(c_a, rel=0.05)
    assert fit["k_a_s"] == pytest.approx(k_a, rel=0.05)
    assert fit["r"] > 0.99
    m_ref = m_pkg.min()
    assert fit["m_ref_us"] == m_ref
    t_ref = t[np.argmin(m_pkg)]  # the measured runtime of the least congested run (no fixed part)
    assert fit["t_ref_s"] == t_ref
    assert fit["delay_sensitivity"] == pytest.approx(fit["c_a_s_per_us"] * m_ref / t_ref)


def test_pure_ping_pong_has_delay_sensitivity_one():
    m = np.array([2.0, 3.5, 5.0, 9.0])
    t = 2 * 10000 * m * 1e-6  # T = 2 n M: 10,000 round trips, no compute
    fit = fit_runtime(m, t)
    assert fit["delay_sensitivity"] == pytest.approx(1.0)
    compute_bound = fit_runtime(m, t + 100.0)
    assert 0 < compute_bound["delay_sensitivity"] < 0.01


def test_c_a_grows_with_run_length_but_delay_sensitivity_does_not():
    """Issue 31: why c_a cannot order applications of different runtimes.  At
    seed 2 the LAMMPS-like proxy (26 ms alone, slowed 1.3-3.5x by the
    congestors) got a larger c_a than the MILC-like (7.4 ms alone, slowed
    4.3-6.4x): c_a is seconds lost per us, so an application k times as long
    with the same relative slowdown has k times the c_a.  The dimensionless
    delay sensitivity orders by relative slowdown, as the paper's does."""
    m = np.array([0.70, 0.83, 0.72, 1.34, 0.70, 1.02])  # us, the same placements for both
    slowdown = 1 + 6.0 * (m - m.min())  # relative, per run
    short_sensitive = fit_runtime(m, 0.0074 * slowdown)  # MILC-like
    long_mild = fit_runtime(m, 0.026 * (1 + 0.35 * (slowdown - 1)))  # LAMMPS-like
    assert long_mild["c_a_s_per_us"] > short_sensitive["c_a_s_per_us"]
    assert short_sensitive["delay_sensitivity"] > 2 * long_mild["delay_sensitivity"]
    # four times the iterations: four times c_a, the same delay sensitivity
    longer = fit_runtime(m, 4 * 0.0074 * slowdown)
    assert longer["c_a_s_per_us"] == pytest.approx(4 * short_sensitive["c_a_s_per_us"])
    assert longer["delay_sensitivity"] == pytest.approx(short_sensitive["delay_sensitivity"])


@pytest.mark.parametrize(
    "m, t, why",
    [
        ([3.0], [1.0], "at least two"),
        ([3.0, 3.0, 3.0], [1.0, 1.2, 0.9], "same in every run"),
        ([3.0, 4.0, 5.0], [2.0, 2.0, 2.0], "zero runtime variance"),
    ],
)
def test_degenerate_runs_are_refused(m, t, why):
    with pytest.raises(ModelError, match=why):
        fit_runtime(m, t)


def test_convergence_table_errors_match_independent_fits():
    rng = np.random.default_rng(4)
    m = rng.uniform(2, 10, 12)
    t = 0.03 * m + 1.0 + rng.normal(0, 0.02, 12)
    table = convergence(m, t)
    final = stats.linregress(m, t).slope
    errors = [None]
    for n in range(2, 13):
        errors.append(100 * (stats.linregress(m[:n], t[:n]).slope - final) / final)
    got = [row["c_a_error_percent"] for row in table["rows"]]
    assert got[0] is None and table["rows"][0]["c_a_s_per_us"] is None
    assert got[1:] == pytest.approx(errors[1:])
    settled = next(n for n in range(2, 13) if all(abs(e) <= 10 for e in errors[n - 1 :]))
    assert table["c_a_settled_after_runs"] == settled
    assert got[-1] == pytest.approx(0.0)


def test_shuffled_order_is_seeded():
    assert run_order(5, "given", 3) == [0, 1, 2, 3, 4]
    a = run_order(20, "shuffled", 3)
    assert a == run_order(20, "shuffled", 3) and sorted(a) == list(range(20))
    assert a != run_order(20, "shuffled", 4)


def jobs_doc(counters="run.csv", engine="sim", pass_clock=True):
    doc = {
        "schema": "contend-jobs",
        "schema_version": "1.1",
        "engine": engine,
        "dry_run": False,
        "seed": 5,
        "config": {"options": {"counters": counters, "node_gbps": 42}},
        "jobs": [
            {
                "name": "app",
                "nodes": [0, 2, 4],
                "traffic": {"messages": 4, "bytes": 4096, "pairs": [[0, 2, 4096, 4]]},
                "results": {"concurrent": {"perform_start_s": 0.001, "perform_end_s": 0.004}},
            }
        ],
    }
    if pass_clock:
        doc["pass_clock"] = [
            {"pass": "concurrent", "perform_t0_clock_s": 0.5, "perform_t0_unix_s": 1.7e9}
        ]
    return doc


def test_job_run_window_on_the_counter_clock(tmp_path):
    (tmp_path / "run.csv").write_text("x")
    res = tmp_path / "r.json"
    res.write_text(json.dumps(jobs_doc(counters="/elsewhere/run.csv")))
    run = load_job_run(res, "app")
    assert run.pass_name == "concurrent" and run.t_a_s == pytest.approx(0.003)
    assert run.window == pytest.approx((0.501, 0.504)) and run.clock == "engine"
    assert run.counters == tmp_path / "run.csv"  # found next to the results file
    assert run.nic_gbps == 42 and run.mean_msg_bytes == 1024
    res.write_text(json.dumps(jobs_doc(engine="mpi")))
    live = load_job_run(res, "app")
    assert live.window[0] == pytest.approx(1.7e9 + 0.001) and live.nic_gbps is None


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda d: d["jobs"][0].update(name="other"), "no job named 'app'"),
        (lambda d: d["config"]["options"].update(counters=""), "config.options.counters"),
        (lambda d: d["config"]["options"].update(counters="gone.csv"), "not found"),
        (lambda d: d.update(schema="contend-results"), "field 'schema'"),
        (
            lambda d: d["jobs"][0]["results"]["concurrent"].update(perform_end_s=0.0),
            "end > start",
        ),
    ],
)
def test_job_run_bad_input(tmp_path, change, match):
    (tmp_path / "run.csv").write_text("x")
    doc = jobs_doc()
    change(doc)
    res = tmp_path / "r.json"
    res.write_text(json.dumps(doc))
    with pytest.raises(ModelError, match=match):
        load_job_run(res, "app")
    with pytest.raises(ModelError, match="no 'isolated' pass"):
        res.write_text(json.dumps(jobs_doc()))
        load_job_run(res, "app", "isolated")
