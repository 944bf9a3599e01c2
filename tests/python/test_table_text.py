"""Strings in tables stay on one line: MPICH's library string (tabs, newlines) in compare."""

import csv
import gzip
import io
import json
import re
from pathlib import Path

import pandas as pd
from contend import formatting as fmt
from contend.cli import main

RESULTS = Path(__file__).resolve().parents[1] / "fixtures" / "results"
LOAD = RESULTS / "load_vn1_n10.json.gz"
# What MPI_Get_library_version gives under MPICH 4.0.2 (first lines), tabs and newlines.
MPICH = "MPICH Version:\t4.0.2\nMPICH Release date:\tThu Apr  7 12:34:45 CDT 2022\n"
SHOWN = "MPICH Version: 4.0.2 MPICH Release date: Thu Apr 7 12:34:45 CDT 2022"


def mpich_file(tmp_path) -> Path:
    doc = json.loads(gzip.decompress(LOAD.read_bytes()))
    doc["environment"]["mpi_library"] = MPICH
    path = tmp_path / "mpich.json"
    path.write_text(json.dumps(doc))
    return path


def test_compare_text_table_keeps_its_rows(tmp_path, capsys):
    path = mpich_file(tmp_path)
    assert main(["compare", str(LOAD), str(path)]) == 0
    text = capsys.readouterr().out.rstrip("\n")
    lines = text.splitlines()
    canaries = len(json.loads(gzip.decompress(LOAD.read_bytes()))["impact"])
    assert len(lines) == 2 + 2 * canaries  # header, rule, one line per run and canary
    assert "\t" not in text
    mpich_rows = [ln for ln in lines if "MPICH" in ln]
    assert len(mpich_rows) == canaries and all(SHOWN in ln for ln in mpich_rows)
    # columns line up: the Canary column starts at the same offset on every line
    header = lines[0]
    start = header.index("Canary")
    rule_cols = [m.start() for m in re.finditer(r"-+", lines[1])]
    assert start in rule_cols
    for ln in lines[2:]:
        assert ln[start - 2 : start] == "  " and ln[start] != " ", ln


def test_markdown_and_html_cells_are_one_line(tmp_path, capsys):
    path = mpich_file(tmp_path)
    assert main(["compare", str(path), "-f", "markdown"]) == 0
    md = capsys.readouterr().out.strip().splitlines()
    assert all(ln.startswith("|") and ln.endswith("|") for ln in md)
    assert sum(SHOWN in ln for ln in md) == len(md) - 2
    out = tmp_path / "r.html"
    assert main(["html", str(path), str(LOAD), "-o", str(out)]) == 0
    html = out.read_text()
    assert f'<td class="s">{SHOWN}</td>' in html and "MPICH Version:\t" not in html


def test_report_summary_is_one_line(tmp_path, capsys):
    assert main(["report", str(mpich_file(tmp_path))]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("  contend load") and SHOWN in lines[1]
    assert lines[2] == ""


def test_csv_and_json_keep_the_string(tmp_path, capsys):
    path = mpich_file(tmp_path)
    assert main(["compare", str(path), "-f", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert rows and all(r["mpi_library"] == MPICH for r in rows)
    assert main(["compare", str(path), "-f", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["mpi_library"] == MPICH


def test_clean_text_on_controls():
    assert fmt.clean_text("a\tb\r\nc\x00d\x1b[0m \u2028e  ") == "a b c d [0m e"
    frame = pd.DataFrame({"s": ["x\ty", None], "n": [1.5, float("nan")]})
    cols = [fmt.Column("s", "S\tcol", "str"), fmt.Column("n", "N")]
    lines = fmt.text_table(frame, cols).splitlines()
    assert lines[0] == "S col      N" and lines[2] == "x y    1.500"
    assert len(lines) == 4
