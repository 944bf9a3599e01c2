"""The view registry: `contend report`, `html` and `plot` find a file's view by
its document kind, and a new kind needs nothing but its view (registered here
by adding it to the registry's list)."""

import json
from pathlib import Path

import matplotlib.image as mpimg
import pytest
from contend import cli
from contend.reports import registry
from contend.reports.view import Plot, View, schema_is

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "results"


def write(path: Path, doc) -> Path:
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "schema, kind",
    [
        ("contend-results", "results"),
        ("contend-jobs", "jobs"),
        ("contend-mitigate", "mitigate"),
        ("contend-study", "study"),
        ("contend-pairs", "pairs"),
        ("contend-latency-model", "model"),
        ("contend-sensitivity", "model"),
        ("contend-unknown", "results"),  # the fallback: its reader names the problem
        (None, "results"),
    ],
)
def test_a_file_goes_to_the_view_of_its_schema(tmp_path, schema, kind):
    path = write(tmp_path / "f.json", {"schema": schema} if schema else {"tests": []})
    assert registry.view_for(path).kind == kind


def test_unreadable_files_go_to_the_fallback(tmp_path):
    assert registry.view_for(write(tmp_path / "bad.json", "{not json")).kind == "results"
    assert registry.view_for(tmp_path / "missing.json").kind == "results"
    assert registry.view_for(FIXTURES / "jobs_both_vn1_n4.json.gz").kind == "jobs"  # gzip


def test_plot_kinds_and_compare_come_from_the_views():
    assert registry.plot_kinds() == (
        "hist", "congestors", "impact", "jobs", "mitigate", "study", "pairs",
    )  # fmt: skip
    assert registry.comparable().kind == "results"


def _toy_figure(args):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, len(args.results)])
    return fig


def _load(paths):
    return [json.loads(Path(p).read_text()) for p in paths]


TOY = View(
    "toy",
    recognises=schema_is("contend-toy"),
    load=_load,
    report=lambda path, args: f"toy {_load([path])[0]['value']} as {args.format}",
    html=lambda items, page: [f"<h2>toy {doc['value']}: {path}</h2>" for path, doc in items],
    figures={"toy": Plot(_toy_figure, "a line per toy file")},
    file_noun="toy",
)


def test_a_new_kind_needs_only_its_view(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(registry, "VIEWS", registry.VIEWS + (TOY,))
    toy = write(tmp_path / "toy.json", {"schema": "contend-toy", "value": 42})

    assert cli.main(["report", str(toy), "--format", "markdown"]) == 0
    assert capsys.readouterr().out == "toy 42 as markdown\n"

    page = tmp_path / "page.html"
    assert cli.main(["html", str(toy), "-o", str(page)]) == 0
    text = page.read_text()
    assert "from 0 results file(s), 1 toy file(s). </p>" in text
    assert f"<h2>toy 42: {toy}</h2>" in text

    png = tmp_path / "toy.png"
    assert cli.main(["plot", "toy", str(toy), "-o", str(png)]) == 0
    assert mpimg.imread(png).shape[2] in (3, 4)
    with pytest.raises(SystemExit):
        cli.main(["plot", "--help"])
    assert "toy: a line per toy file." in " ".join(capsys.readouterr().out.split())
