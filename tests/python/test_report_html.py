"""The HTML report: self-contained, and renders with its images in headless Chromium."""

import base64
import io
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image as mpimg
import pytest
from contend.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"
LOAD = FIXTURES / "load_vn1_n10.json.gz"
LOAD2 = FIXTURES / "load_vn2_n16.json.gz"

DATA_IMG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"')


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("html") / "report.html"
    assert main(["html", str(LOAD), str(LOAD2), "--published", "-o", str(out)]) == 0
    return out


def test_html_is_self_contained(report):
    html = report.read_text()
    assert html.startswith("<!DOCTYPE html>")
    images = DATA_IMG.findall(html)
    assert len(images) == 3  # impact bars + one histogram figure per run
    for data in images:
        img = mpimg.imread(io.BytesIO(base64.b64decode(data)), format="png")
        assert float(img[..., :3].std()) > 0.05
    # nothing fetched from elsewhere
    assert not re.search(r'(src|href)="(?!data:)', html)
    assert "http://" not in html and "https://" not in html
    # configuration and tables are there
    for text in (
        "seed",
        "Open MPI",
        "Congestion Impact",
        "rr_bw_sync",
        "Edison 5575n x24",
        "load_vn2_n16",
        "--virtual-nodes",
    ):
        assert text in html


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_html_renders_in_headless_chromium(report, tmp_path):
    browser = chromium()
    if browser is None:
        pytest.skip(
            "Chromium is not installed (Debian: apt-get install chromium); "
            "scripts/bootstrap.sh test installs it"
        )
    shot = tmp_path / "shot.png"
    cmd = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        f"--screenshot={shot}",
        "--window-size=1200,2600",
        report.as_uri(),
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    img = mpimg.imread(shot)
    assert img.shape[0] == 2600 and img.shape[1] == 1200
    rgb = img[..., :3]
    assert float(rgb.std()) > 0.05, "screenshot is blank"
    # The figures are rendered: their coloured bars show on the page, while the tables and
    # text are black, grey and white only.
    saturation = rgb.max(axis=-1) - rgb.min(axis=-1)
    coloured = float((saturation > 0.2).mean())
    assert coloured > 0.01, f"only {coloured:.2%} coloured pixels: figures missing?"
