"""``contend report`` and ``contend html`` on the Netscope model files.

Both model files (latency model, delay sensitivity) are made by ``contend
model`` from the synthetic inputs of test_models_cli; the views must show the
files' own numbers with units and self-contained, non-blank figures.
"""

import base64
import io
import json
import re

import matplotlib.image as mpimg
import pytest
from contend.cli import main as contend_main
from contend.models.cli import main as model_main
from contend.models.figures import latency_figure, sensitivity_figure
from test_models_cli import job_runs, latency  # noqa: F401  (module fixtures)

DATA_IMG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture(scope="module")
def sensitivity(latency, job_runs):  # noqa: F811
    tmp, model, _ = latency
    files, _ = job_runs
    out = tmp / "sensitivity.json"
    args = ["sensitivity", *map(str, files), "--latency", str(model), "--job", "app"]
    assert model_main([*args, "-o", str(out), "-q"]) == 0
    return out, json.loads(out.read_text())


def test_report_of_latency_model(latency, tmp_path):  # noqa: F811
    _, model, doc = latency
    out = tmp_path / "r.txt"
    assert contend_main(["report", str(model), "-o", str(out)]) == 0
    text = out.read_text()
    assert "Constants (eq. 12)" in text and "Accuracy of predicted RTT" in text
    assert "Abs. error p90 (%)" in text and "Within 30 % (% of samples)" in text
    assert f"{doc['k_const_ns']:.1f}" in text
    assert f"{doc['accuracy']['holdout']['abs_error_percent']['p50']:.3f}" in text
    assert contend_main(["report", str(model), "--format", "markdown", "-o", str(out)]) == 0
    table = [ln for ln in out.read_text().splitlines() if ln.startswith("|")]
    assert len(table) == 2 + 5 + 2 + 3  # two tables: head, rule and rows
    assert len({ln.count("|") for ln in table[:7]}) == 1  # no stray pipes in cells
    assert len({ln.count("|") for ln in table[7:]}) == 1
    assert contend_main(["report", str(model), "--format", "csv", "-o", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows[0] == "constant,link_class,value,unit"
    assert len(rows) == 1 + len(doc["k_link_ns_per_q"]) + 1
    assert contend_main(["report", str(model), "--format", "json", "-o", str(out)]) == 0
    machine = json.loads(out.read_text())
    assert machine["constants"][-1]["value"] == doc["k_const_ns"]  # unrounded


def test_report_of_sensitivity(sensitivity, tmp_path):
    path, doc = sensitivity
    out = tmp_path / "r.md"
    assert contend_main(["report", str(path), "--format", "markdown", "-o", str(out)]) == 0
    text = out.read_text()
    app = doc["applications"]["app"]
    assert "| app |" in text and "c_a (s per us)" in text and "Delay sensitivity (1)" in text
    assert f"{app['delay_sensitivity']:.3f}" in text
    assert text.count("convergence") == 2  # uniform and traffic-weighted tables


def test_html_of_both_model_files(latency, sensitivity, tmp_path):  # noqa: F811
    _, model, _ = latency
    sens, _ = sensitivity
    out = tmp_path / "models.html"
    assert contend_main(["html", str(model), str(sens), "-o", str(out)]) == 0
    html = out.read_text()
    images = DATA_IMG.findall(html)
    assert len(images) == 2  # RTT fit; runtime fit + convergence
    for data in images:
        img = mpimg.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert float(img[..., :3].std()) > 0.05
    assert not re.search(r'(src|href)="(?!data:)', html)
    for text in (
        "Latency model",
        "Constants (eq. 12)",
        "Delay sensitivity",
        "M_a (us)",
        "convergence, traffic-weighted",
        "2 model file(s)",
    ):
        assert text in html


def test_figures_mark_held_out_samples_and_fitted_line(latency, sensitivity):  # noqa: F811
    _, _, doc = latency
    fig = latency_figure(doc)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(lab.startswith("held out") for lab in labels) and "y = x" in labels
    n_hold = sum(s["set"] == "holdout" for s in doc["samples"])
    sizes = sorted(len(c.get_offsets()) for c in ax.collections)
    assert n_hold in sizes
    _, sdoc = sensitivity
    app = sdoc["applications"]["app"]
    fig = sensitivity_figure("app", app)
    line = fig.axes[0].get_lines()[0]
    x, y = line.get_data()
    assert y[0] == pytest.approx(app["c_a_s_per_us"] * x[0] + app["k_a_s"])
