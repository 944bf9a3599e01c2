"""Netscope latency model (contend.models, eq. 6-12) on a synthetic 6-node fabric.

RTTs are generated from chosen constants by plain loops (models_synth) with
noise; the fit must give the constants back within 5 %.
"""

import numpy as np
import pandas as pd
import pytest
from contend.models import ModelError, fit_latency, predict_one_way_ns
from contend.models.latency import error_summary, split_holdout
from contend.models.queueing import build_timeline, queueing_delay, window_mean_excess
from models_synth import (
    K_CLASS,
    K_CONST,
    RunTruth,
    make_training,
    never_stalled,
    tied_local_and_global,
)


@pytest.fixture(scope="module")
def training():
    return make_training()


def test_queueing_delay_eq11_and_clamp():
    q, clamped = queueing_delay([0.0, 50.0, 75.0, 99.0, 99.5, 120.0, -3.0])
    assert q.tolist() == pytest.approx([1.0, 2.0, 4.0, 100.0, 100.0, 100.0, 1.0])
    assert clamped == 2


def test_window_mean_is_time_weighted_and_missing_rows_are_quiet():
    frame = pd.DataFrame(
        {
            "t0_s": [0.0, 1.0, 0.0, 2.0],
            "t1_s": [1.0, 2.0, 1.0, 3.0],
            "component": ["x", "x", "y", "y"],
            "port": ["0", "0", "1", "1"],
            "pts_percent": [50.0, 75.0, 0.0, 50.0],
        }
    )
    tl = build_timeline(frame, {("x", "0"): 0, ("y", "1"): 1})
    # window [0.5, 2.5]: x has Q 2 for 0.5 s, 4 for 1 s, no row (Q 1) for 0.5 s
    means = window_mean_excess(tl, [0.5, 5.0], [2.5, 6.0])
    assert means[0, 0] + 1 == pytest.approx((0.5 * 2 + 1.0 * 4 + 0.5 * 1) / 2.0)
    assert means[0, 1] + 1 == pytest.approx((0.5 * 1 + 1.0 * 1 + 0.5 * 2) / 2.0)
    assert np.isnan(means[1]).all()  # no sampled time in [5, 6]


def test_fit_gives_the_constants_back_within_5_percent(training):
    paths, samples, frames = training
    fit = fit_latency(paths, samples, frames, holdout=0.25, seed=7)
    model = fit.model
    for cls, k in K_CLASS.items():
        assert model.k_link_ns_per_q[cls] == pytest.approx(k, rel=0.05), cls
    assert model.k_const_ns == pytest.approx(K_CONST, rel=0.05)
    assert fit.parameters == 5 and fit.design_rank == 5
    assert fit.pts_clamped_intervals > 0  # clamp_some put PTs 99.7 rows on training paths
    held = fit.summary("holdout")
    assert held["samples"] == round(0.25 * len(samples))
    assert held["pearson_r"] > 0.99
    assert held["within_30_percent_share"] == 1.0


def test_holdout_split_is_seeded():
    a, b, c = split_holdout(40, 0.25, 1), split_holdout(40, 0.25, 1), split_holdout(40, 0.25, 2)
    assert a.sum() == 10 and (a == b).all() and not (a == c).all()
    assert split_holdout(3, 0.1, 0).sum() == 1  # at least one held out when asked
    assert split_holdout(10, 0.0, 0).sum() == 0
    with pytest.raises(ModelError):
        split_holdout(10, 1.0, 0)


def test_one_link_class_fits_a_single_constant():
    k_same = dict.fromkeys(K_CLASS, 200.0)
    paths, samples, frames = make_training(seed=5, k_class=k_same)
    fit = fit_latency(paths, samples, frames, link_classes="one", holdout=0.2, seed=1)
    assert list(fit.model.k_link_ns_per_q) == ["all"]
    assert fit.model.k_link_ns_per_q["all"] == pytest.approx(200.0, rel=0.05)
    assert fit.model.k_const_ns == pytest.approx(K_CONST, rel=0.05)


def test_predicted_one_way_latency_matches_eq12(training):
    paths, samples, frames = training
    fit = fit_latency(paths, samples, frames, holdout=0.0)
    truth = RunTruth(frames[3])
    model = fit.model
    pairs = [(0, 5), (5, 0), (2, 3), (1, 2)]
    got = predict_one_way_ns(model, paths, pairs, 0.0021, 0.0137, frames[3])
    want = [
        truth.one_way_ns(model.k_link_ns_per_q, model.k_const_ns, s, d, 0.0021, 0.0137)
        for s, d in pairs
    ]
    assert got == pytest.approx(want, rel=1e-9)


def test_class_no_training_path_crosses_is_undetermined_and_refused():
    # pairs within router A or B only: no path crosses the global links
    pairs = [(0, 1), (1, 0), (0, 2), (3, 1), (2, 3)]
    paths, samples, frames = make_training(seed=9, pairs=pairs)
    fit = fit_latency(paths, samples, frames, holdout=0.0)
    assert fit.model.k_link_ns_per_q["global"] is None
    assert fit.model.k_link_ns_per_q["local"] == pytest.approx(120.0, rel=0.05)
    with pytest.raises(ModelError, match="global"):
        predict_one_way_ns(fit.model, paths, [(0, 4)], 0.0, 0.01, frames[0])


def test_class_that_never_stalls_is_folded_into_the_constant():
    """No injection link ever stalls (as for the pairs of a ping-pong training on
    the simulator): every path crosses one, so its k_1 * Q = k_1 is a constant
    that cannot be told from k_2.  The fit folds it into k_2 instead of
    reporting a rank-deficient design."""
    paths, samples, frames = make_training(seed=11, frame_map=never_stalled("nic"))
    fit = fit_latency(paths, samples, frames, holdout=0.0)
    assert fit.folded == ["injection"]
    assert fit.parameters == 4 and fit.design_rank == 4
    k = fit.model.k_link_ns_per_q
    assert k["injection"] == 0.0
    for cls in ("ejection", "local", "global"):
        assert k[cls] == pytest.approx(K_CLASS[cls], rel=0.05), cls
    # one injection link per one-way path at Q = 1: k_2 absorbs its constant
    assert fit.model.k_const_ns == pytest.approx(K_CONST + K_CLASS["injection"], rel=0.05)
    assert fit.summary("all")["pearson_r"] > 0.99


def test_collinear_classes_still_give_a_rank_below_the_constants():
    """Local and global links stall alike and every training path crosses one of
    each per direction: their columns are equal (not constant), so the design
    rank is below the constants and the fit says so (the CLI warns)."""
    pairs = [(0, 4), (4, 0), (1, 5), (5, 1), (1, 4)]
    paths, samples, frames = make_training(seed=13, pairs=pairs, frame_map=tied_local_and_global)
    fit = fit_latency(paths, samples, frames, holdout=0.0)
    assert fit.folded == []
    assert fit.parameters == 5 and fit.design_rank == 4


def test_pairs_missing_from_paths_and_foreign_counters_are_refused(training):
    paths, samples, frames = training
    bad = samples.copy()
    bad.loc[0, "dst"] = 17
    with pytest.raises(ModelError, match="0->17|17->0"):
        fit_latency(paths, bad, frames)
    foreign = {run: f.assign(component="other") for run, f in frames.items()}
    with pytest.raises(ModelError, match="no counter row names a link"):
        fit_latency(paths, samples, foreign)


def test_error_summary_percentiles():
    measured = np.array([10.0, 10.0, 10.0, 10.0, 10.0])
    predicted = np.array([11.0, 9.0, 14.0, 10.0, 2.0])  # errors +10 -10 +40 0 -80 %
    out = error_summary(measured, predicted)
    assert out["abs_error_percent"]["p50"] == pytest.approx(10.0)
    assert out["abs_error_percent"]["p90"] == pytest.approx(np.percentile([10, 10, 40, 0, 80], 90))
    assert out["within_30_percent_share"] == pytest.approx(3 / 5)
    assert out["mean_error_percent"] == pytest.approx(-8.0)


def test_paths_with_vcs_name_per_vc_links():
    """A path crossing VCs above 0 is read as per-VC links (component, "P/vcV"),
    the names of the simulator's per-VC counter rows; all-zero VCs keep ports."""
    from contend.models.paths import parse_paths

    doc = {
        "schema": "contend-paths",
        "schema_version": "1.0",
        "topology": "t",
        "routing": "r",
        "nodes": 2,
        "links": [
            {"component": "nic0", "port": "0", "class": "injection"},
            {"component": "g0.r0", "port": "3", "class": "global"},
            {"component": "g1.r0", "port": "1", "class": "ejection"},
        ],
        "pairs": [{"src": 0, "dst": 1, "paths": [[0, 1, 2]], "vcs": [[0, 0, 1]]}],
    }
    ps = parse_paths(doc)
    named = [(ps.links["component"][i], ps.links["port"][i]) for i in ps.pairs[(0, 1)][0]]
    assert named == [("nic0", "0/vc0"), ("g0.r0", "3/vc0"), ("g1.r0", "1/vc1")]
    assert list(ps.links["link_class"]) == ["injection", "global", "ejection"]
    doc["pairs"][0]["vcs"] = [[0, 0, 0]]
    assert list(parse_paths(doc).links["port"]) == ["0", "3", "1"]
    doc["pairs"][0]["vcs"] = [[0, 1]]
    with pytest.raises(ModelError, match="match paths"):
        parse_paths(doc)
