"""Figures: files are written in both formats and are not blank."""

from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
from contend.cli import main
from contend.reports import plots
from contend.reports.tables import compare_table
from contend.results import load_many, load_results

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
LOAD = FIXTURES / "load_vn1_n10.json.gz"
SINGLE = sorted((FIXTURES / "single").glob("*_s1.json.gz"))


def assert_not_blank(png: Path):
    img = mpimg.imread(png)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert float(img[..., :3].std()) > 0.05, f"{png} looks blank"


def test_histogram_figure_marks_mean_and_tail():
    res = load_results(LOAD)
    fig = plots.histogram_figure(res)
    axes = fig.axes
    assert len(axes) == 2 * 3  # isolated and congested rows, one column per canary
    ax = axes[0]
    assert ax.get_xscale() == "log"
    row = res.tests[(res.tests["name"] == "rr_lat") & (res.tests["phase"] == "isolated")].iloc[0]
    xs = sorted(line.get_xdata()[0] for line in ax.get_lines())
    assert xs == sorted([row["mean"], row["tail_99"]])
    colors = {line.get_color() for line in ax.get_lines()}
    assert colors == {plots.MEAN_COLOR, plots.TAIL_COLOR}
    plots.plt.close(fig)


def test_stair_arrays_cover_buckets_and_gaps():
    hist = pd.DataFrame({"lower": [1.0, 2.0, 8.0], "upper": [2.0, 4.0, np.nan], "count": [1, 2, 1]})
    edges, values = plots._stair_arrays(hist, 0.01)
    assert edges.tolist()[:4] == [1.0, 2.0, 4.0, 8.0]
    assert values.tolist() == [0.25, 0.5, 0.0, 0.25]
    assert edges[-1] > 8.0


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_plot_cli_hist(tmp_path, ext):
    out = tmp_path / f"hist.{ext}"
    assert main(["plot", "hist", str(LOAD), "-o", str(out)]) == 0
    assert out.stat().st_size > 5000
    if ext == "png":
        assert_not_blank(out)
    else:
        assert out.read_text().lstrip().startswith("<?xml")


def test_plot_congestor_panels(tmp_path):
    out = tmp_path / "congestors.png"
    assert (
        main(
            [
                "plot",
                "congestors",
                *map(str, SINGLE),
                "-o",
                str(out),
                "--canaries",
                "rr_lat,allreduce",
            ]
        )
        == 0
    )
    assert_not_blank(out)
    fig = plots.congestor_panels_figure(load_many(SINGLE), ["rr_lat"])
    labels = [ax.get_ylabel().split("\n")[0] for ax in fig.axes]
    assert labels == ["isolated", "p2p_incast", "pairwise_a2a", "rma_get_bcast", "rma_put_incast"]
    plots.plt.close(fig)


def test_impact_bars_log_axis(tmp_path):
    frame = compare_table(load_many([LOAD] + SINGLE))
    fig = plots.impact_bars_figure(frame)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    heights = sorted(p.get_height() for p in ax.patches)
    assert heights == sorted(frame["ci_mean"].tolist() + frame["ci_tail_99"].tolist())
    plots.plt.close(fig)
    out = tmp_path / "impact.svg"
    assert main(["plot", "impact", str(LOAD), "--published", "-o", str(out)]) == 0
    assert "Edison" in out.read_text()


def test_impact_bars_need_congested_runs():
    frame = compare_table(load_many([FIXTURES / "network_vn1_n4.json.gz"]))
    with pytest.raises(ValueError, match="no Congestion Impact"):
        plots.impact_bars_figure(frame)


def test_job_boxes_figure_on_synthetic_frame(tmp_path):
    # The figure on a made-up frame (real jobs results: test_report_jobs.py); the old
    # column names (job; phase 'congested') still work.
    rng = np.random.default_rng(0)
    rows = [
        {"job": job, "phase": phase, "time_s": rng.normal(base * f, 0.05 * base)}
        for job, base in (("sweep3d", 2.0), ("tealeaf", 1.0))
        for phase, f in (("isolated", 1.0), ("congested", 1.3))
        for _ in range(10)
    ]
    fig = plots.job_boxes_figure(pd.DataFrame(rows))
    assert [ax.get_title().split("\n")[0] for ax in fig.axes] == ["sweep3d", "tealeaf"]
    out = plots.save_figure(fig, tmp_path / "jobs.png")
    assert_not_blank(out)
    with pytest.raises(ValueError, match="needs columns"):
        plots.job_boxes_figure(pd.DataFrame({"job": []}))
