"""`contend report`, `plot pairs` and `html` of `contend pairs` results: the
summary, the pairs and destinations whose bandwidth is at most half the
median (checked against the routing's paths over a degraded link), the heat
map, the HTML section, and one-line refusals."""

import json

import matplotlib.image as mpimg
import pytest
from conftest import BUILD, run_bounded

BIN = BUILD / "bin" / "contend"
TREE = "fattree:leaves=4,nodes=4,uplinks=2"


@pytest.fixture(scope="module")
def degraded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pairs")
    res, paths = tmp / "pairs.json", tmp / "paths.json"
    r = run_bounded(
        [BIN, "pairs", "--engine", "sim", "--topology", TREE, "--degrade", "leaf0:5=0.25",
         "--seed", "3", "-q", "-o", res], timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = run_bounded([BIN, "topology", "paths", "--topology", TREE, "-q", "-o", paths])
    assert r.returncode == 0, r.stderr
    doc = json.loads(paths.read_text())
    names = [f"{lk['component']}:{lk['port']}" for lk in doc["links"]]
    crossing = {
        (p["src"], p["dst"])
        for p in doc["pairs"]
        if {"leaf0:5", "spine1:0"} & {names[i] for i in p["paths"][0]}
    }
    return tmp, res, crossing


def test_report_flags_the_pairs_and_destinations_behind_the_slow_link(degraded):
    _, res, crossing = degraded
    r = run_bounded([BIN, "report", res, "--format", "json"])
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "16 ranks on 16 nodes" in out["summary"]
    flagged = {(p["src"], p["dst"]) for p in out["slowest_pairs"]}
    assert all(isinstance(n, int) for pair in flagged for n in pair)
    # most cross the slow link; a few share a round with its congestion tree
    assert len(flagged & crossing) >= 0.8 * len(flagged) > 0
    # a destination is slow when most pairs into it cross the slow link
    into = {d: sum((s, d) in crossing for s in range(16) if s != d) for d in range(16)}
    expected = {d for d, n in into.items() if n > 15 / 2}
    assert {d["node"] for d in out["slow_destinations"]} == expected
    assert all(d["ratio"] <= 0.5 for d in out["slow_destinations"])
    text = run_bounded([BIN, "report", res])
    assert text.returncode == 0 and "Slow destinations" in text.stdout


def test_plot_pairs_draws_the_heat_map_and_html_embeds_it(degraded):
    tmp, res, _ = degraded
    png, page = tmp / "heat.png", tmp / "page.html"
    r = run_bounded([BIN, "plot", "pairs", res, "-o", png])
    assert r.returncode == 0, r.stderr
    assert mpimg.imread(png).shape[0] > 100
    r = run_bounded([BIN, "html", res, "-o", page])
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    assert "<h2>contend pairs:" in html and "data:image/png;base64" in html


def test_plot_pairs_takes_one_file(degraded):
    tmp, res, _ = degraded
    out = tmp / "never.png"
    r = run_bounded([BIN, "plot", "pairs", res, res, "-o", out])
    assert r.returncode == 2 and "one results file" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not out.exists()
