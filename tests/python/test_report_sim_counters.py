"""`contend report` and `contend html` on results of `--engine sim`: the simulated
fabric's most stalled ports and its per-tier picture (environment.simulation.counters)."""

import base64
import copy
import io
import json
import re
from pathlib import Path

import matplotlib.image as mpimg
import pytest
from conftest import BUILD, ROOT, run_bounded
from contend import formatting as fmt
from contend.cli import main
from contend.reports.views.results import SIM_TOP_PORTS

FIXTURES = ROOT / "tests" / "fixtures" / "results"
NETWORK = FIXTURES / "network_vn1_n4.json.gz"
LOAD = FIXTURES / "load_vn1_n10.json.gz"
STALLED = "Simulated fabric: most stalled ports"
PER_TIER = "Simulated fabric: per tier"
DATA_IMG = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]*)"')


def simulate(out: Path, *args) -> dict:
    binary = BUILD / "bin" / "contend"
    if not binary.exists():
        pytest.fail(f"{binary} not built: run `make build` (or set CONTEND_BUILD)")
    # --timeout is simulated seconds: keep it tiny, the default 10 s takes minutes
    r = run_bounded(
        [binary, *args, "--engine", "sim", "--seed", "1", "-q", "-o", out],
        timeout=120,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def fattree(tmp_path_factory):
    """A `contend load` run on a 2-level fat tree with 2 uplinks per leaf (congested)."""
    out = tmp_path_factory.mktemp("sim") / "fattree.json"
    doc = simulate(
        out, "load", "--topology", "fattree:leaves=4,nodes=4,uplinks=2", "--timeout", "0.0005"
    )
    return out, doc


@pytest.fixture(scope="module")
def dragonfly(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim") / "dragonfly.json"
    doc = simulate(out, "network", "--topology", "dragonfly:a=4,p=2,h=2", "--timeout", "0.0001")
    return out, doc


def report_text(capsys, path, *extra) -> str:
    assert main(["report", str(path), *extra]) == 0
    return capsys.readouterr().out


def section(text: str, title: str) -> list:
    """The data rows of the text table under the line starting with title."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    assert set(lines[start + 2].replace(" ", "")) == {"-"}, lines[start : start + 3]
    rows = []
    for line in lines[start + 3 :]:
        if not line.strip():
            break
        rows.append(line)
    return rows


def header_of(text: str, title: str) -> str:
    lines = text.splitlines()
    return lines[next(i for i, line in enumerate(lines) if line.startswith(title)) + 1]


def stall_cell(row: str, component: str, port: int, peer: str, tier: str) -> str:
    """The stall % cell of a stalled-ports row (the first number after the tier)."""
    m = re.match(
        rf"{re.escape(component)}\s+{port}\s+{re.escape(peer)}\s+{re.escape(tier)}\s+(\S+)\s",
        row,
    )
    assert m, (row, component, port, peer, tier)
    return m.group(1)


def test_text_report_most_stalled_ports(fattree, capsys):
    path, doc = fattree
    counters = doc["environment"]["simulation"]["counters"]
    top = counters["top_stalled"]
    assert top and top[0]["stall_fraction"] > 0  # a congested run stalls somewhere
    out = report_text(capsys, path)
    # after the existing tables, before the notes
    assert out.index("Congestors:") < out.index(STALLED) < out.index("99% = the value")
    rows = section(out, STALLED)
    assert len(rows) == min(len(top), SIM_TOP_PORTS)
    header = header_of(out, STALLED)
    for text in ("Stalled (% of time)", "Busy (% of time)", "Data sent (", "Mean queue ("):
        assert text in header
    # top row: the file's most stalled port, its stall fraction in percent
    first = top[0]
    assert stall_cell(
        rows[0], first["component"], first["port"], first["peer"], first["tier"]
    ) == fmt.format_number(100 * first["stall_fraction"])
    # every row in file order, most stalled first
    stalls = []
    for row, port in zip(rows, top):
        cell = stall_cell(row, port["component"], port["port"], port["peer"], port["tier"])
        assert cell == fmt.format_number(100 * port["stall_fraction"])
        stalls.append(float(cell))
    assert stalls == sorted(stalls, reverse=True)
    assert [p["stall_fraction"] for p in top] == sorted(
        (p["stall_fraction"] for p in top), reverse=True
    )


def test_text_report_fabric_line(fattree, capsys):
    path, doc = fattree
    sim = doc["environment"]["simulation"]
    out = report_text(capsys, path)
    line = next(x for x in out.splitlines() if x.startswith("Simulated fabric: fattree"))
    assert sim["topology"] in line
    assert f"routing {sim['routing']}" in line
    assert f"{sim['vcs']} VC" in line
    assert f"congestion control {sim['cc']}" in line
    preset = sim["network_preset"]
    assert (f"network preset {preset}" if preset else "no network preset") in line
    ms = fmt.format_number(sim["counters"]["sim_time_us"] / 1e3)
    assert f"{ms} ms simulated" in line


@pytest.mark.parametrize("which", ["fattree", "dragonfly"])
def test_text_report_per_tier(which, request, capsys):
    path, doc = request.getfixturevalue(which)
    by_tier = doc["environment"]["simulation"]["counters"]["by_tier"]
    out = report_text(capsys, path)
    rows = section(out, PER_TIER)
    assert len(rows) == len(by_tier)
    listed = {}
    for t in by_tier:
        match = [r for r in rows if r.startswith(t["tier"] + " ")]
        assert len(match) == 1, (t["tier"], rows)
        cells = match[0][len(t["tier"]) :].split()
        assert cells[:4] == [
            str(t["ports"]),
            fmt.format_number(100 * t["stall_fraction_mean"]),
            fmt.format_number(100 * t["stall_fraction_max"]),
            fmt.format_number(100 * t["busy_fraction_mean"]),
        ]
        listed[t["tier"]] = rows.index(match[0])
    # in the order a packet crosses them: injection first, ejection last
    order = sorted(listed, key=listed.get)
    assert order[0].startswith("injection") and order[-1].startswith("ejection")
    header = header_of(out, PER_TIER)
    assert "Stalled mean (% of time)" in header and "Stalled max (% of time)" in header
    # most stalled port overall = the largest per-tier max
    top = doc["environment"]["simulation"]["counters"]["top_stalled"]
    assert max(t["stall_fraction_max"] for t in by_tier) == pytest.approx(top[0]["stall_fraction"])


def test_markdown_report_has_the_section(fattree, capsys):
    path, doc = fattree
    out = report_text(capsys, path, "--format", "markdown")
    top = doc["environment"]["simulation"]["counters"]["top_stalled"][0]
    assert STALLED in out and PER_TIER in out
    assert f"| {top['component']} | {top['port']} | {top['peer']} |" in out


def test_html_has_tables_and_tier_figure(fattree, tmp_path):
    path, doc = fattree
    out = tmp_path / "r.html"
    assert main(["html", str(path), "-o", str(out)]) == 0
    html = out.read_text()
    counters = doc["environment"]["simulation"]["counters"]
    assert STALLED in html and PER_TIER in html
    assert "<th>Stalled (% of time)</th>" in html
    top = counters["top_stalled"][0]
    assert f'<td class="s">{top["component"]}</td>' in html
    assert f'<td class="n">{fmt.format_number(100 * top["stall_fraction"])}</td>' in html
    for t in counters["by_tier"]:
        assert f'<td class="s">{t["tier"].replace(">", "&gt;")}</td>' in html
    images = DATA_IMG.findall(html)
    tier_figs = [data for data, alt in images if alt.startswith("stall time per tier")]
    assert len(tier_figs) == 1
    assert len(images) == 2  # the histograms and the tier figure
    img = mpimg.imread(io.BytesIO(base64.b64decode(tier_figs[0])), format="png")
    assert float(img[..., :3].std()) > 0.05


def test_results_without_simulation_have_no_section(tmp_path, capsys):
    for path in (LOAD, NETWORK):
        for form in ("text", "markdown"):
            out = report_text(capsys, path, "--format", form)
            assert "Simulated fabric" not in out
    out = tmp_path / "r.html"
    assert main(["html", str(LOAD), "-o", str(out)]) == 0
    html = out.read_text()
    assert "Simulated fabric" not in html and "stall time per tier" not in html


def test_simulation_without_counters_has_no_section(fattree, tmp_path, capsys):
    """A simulated run's file without the counter summary: the other sections only."""
    doc = copy.deepcopy(fattree[1])
    del doc["environment"]["simulation"]["counters"]
    path = tmp_path / "nocounters.json"
    path.write_text(json.dumps(doc))
    out = report_text(capsys, path)
    assert "Canaries" in out and "Simulated fabric" not in out
