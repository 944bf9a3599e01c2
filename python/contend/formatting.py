"""Render tables as fixed-width text, markdown, CSV, JSON or HTML, and the
lines of a text or markdown report around them (:func:`text_report`).

Text, markdown and HTML round numbers for reading (see :func:`format_number`)
and show every string on one line (:func:`clean_text`);
CSV and JSON carry the unrounded values (Python's shortest round-trip repr),
so they equal the results file's numbers exactly.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

import pandas as pd

FORMATS = ("text", "markdown", "csv", "json")


@dataclass(frozen=True)
class Column:
    key: str
    header: str
    kind: str = "num"  # num | int | str | p


def format_duration(seconds: float) -> str:
    """Seconds as a person reads them in progress lines: 42 s, 3 min 05 s, 1 h 02 min."""
    seconds = max(0, round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def format_number(value) -> str:
    """Readable rounding: 1 decimal from 100 up, 2 from 10, 3 below, 4 significant
    digits with an exponent from 1e9 up; 'n/a' when missing."""
    if value is None or value is pd.NA:
        return "n/a"
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    mag = abs(value)
    if mag >= 1e9:  # no 300-digit cells: 1.235e+12
        return f"{value:.4g}"
    if mag >= 100:
        return f"{value:.1f}"
    if mag >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _format_p(value) -> str:
    if value is None or value is pd.NA or math.isnan(float(value)):
        return "n/a"
    return f"{float(value):.3g}" if value >= 1e-4 else f"{float(value):.1e}"


# Runs of whitespace and control characters (tabs, newlines, C0/C1 controls):
# one space in a table cell, so a value cannot break a row or shift columns
# (MPICH's library string holds tabs and newlines).
_BREAKING = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")


def clean_text(value) -> str:
    """``value`` as one line: whitespace and control runs become one space, ends stripped."""
    return _BREAKING.sub(" ", str(value)).strip()


def _cell(value, kind: str) -> str:
    if kind == "num":
        return format_number(value)
    if kind == "p":
        return _format_p(value)
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return "n/a" if kind == "int" else ""
    if kind == "int":
        return str(int(value))
    return clean_text(value)


def text_table(frame: pd.DataFrame, columns: list) -> str:
    """Fixed-width table: strings left-aligned, numbers right-aligned."""
    cells = [[_cell(row[c.key], c.kind) for c in columns] for _, row in frame.iterrows()]
    headers = [clean_text(c.header) for c in columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]

    def line(values):
        out = []
        for val, col, width in zip(values, columns, widths):
            out.append(val.ljust(width) if col.kind == "str" else val.rjust(width))
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule] + [line(r) for r in cells])


def markdown_table(frame: pd.DataFrame, columns: list) -> str:
    head = "| " + " | ".join(c.header for c in columns) + " |"
    align = "|" + "|".join(":---" if c.kind == "str" else "---:" for c in columns) + "|"
    body = [
        "| " + " | ".join(_cell(row[c.key], c.kind).replace("|", "\\|") for c in columns) + " |"
        for _, row in frame.iterrows()
    ]
    return "\n".join([head, align] + body)


def _plain(value):
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        value = value.item()
    return value


def records(frame: pd.DataFrame, keys: list) -> list:
    """Rows as plain dicts (NaN -> None, numpy scalars -> Python)."""
    return [{k: _plain(row[k]) for k in keys} for _, row in frame.iterrows()]


def json_table(frame: pd.DataFrame, keys: list) -> str:
    return json.dumps(records(frame, keys), indent=1, allow_nan=False)


def csv_table(frame: pd.DataFrame, keys: list) -> str:
    out = frame[keys].copy()
    for key in keys:
        if out[key].dtype == object:
            out[key] = out[key].map(_plain)
    return out.to_csv(index=False, lineterminator="\n").rstrip("\n")


def render(frame: pd.DataFrame, columns: list, fmt: str) -> str:
    """One table in one of FORMATS; CSV/JSON use the machine keys, all columns given."""
    if fmt == "text":
        return text_table(frame, columns)
    if fmt == "markdown":
        return markdown_table(frame, columns)
    keys = [c.key for c in columns]
    if fmt == "csv":
        return csv_table(frame, keys)
    if fmt == "json":
        return json_table(frame, keys)
    raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


# ------------------------------------------------- reports in text and markdown


def heading(text: str, form: str) -> str:
    """A report's first line: a level-2 heading in markdown, plain in text."""
    return ("## " if form == "markdown" else "") + text


def note(text: str, form: str) -> str:
    """A line below a report's heading or tables: indented two spaces in text."""
    return ("  " if form == "text" else "") + text


def titled(title: str, body: str, form: str) -> list:
    """The lines of a table (or a line) under its title, a blank line first; in
    markdown the title is a level-3 heading with a blank line below."""
    if form == "markdown":
        return ["", "### " + title, "", body]
    return ["", title, body]


def text_report(title: str, lines: list, sections: list, notes: list, form: str) -> str:
    """A whole report in text or markdown: the title, a blank line, the summary
    ``lines``, each of ``sections`` ((title, frame, columns)) titled, then each
    of ``notes`` after a blank line."""
    parts = [heading(title, form), ""] + [note(line, form) for line in lines]
    for section, frame, columns in sections:
        parts += titled(section, render(frame, columns, form), form)
    for text in notes:
        parts += ["", note(text, form)]
    return "\n".join(parts)


def welch_columns(marker: str) -> list:
    """The columns of a Welch t-test: t, df, p and the marker (* / **) in ``marker``."""
    return [
        Column("t", "t"),
        Column("df", "df"),
        Column("p", "p", "p"),
        Column(marker, "Sig", "str"),
    ]


def columns_for(view: list, machine: list, fmt: str) -> list:
    """Human view for text/markdown, full machine columns for CSV/JSON."""
    return view if fmt in ("text", "markdown") else machine


def html_table(frame: pd.DataFrame, columns: list, css_class: str = "data") -> str:
    """An HTML table of the human view (escaped; numbers right-aligned via CSS class)."""
    from html import escape

    head = "".join(f"<th>{escape(c.header)}</th>" for c in columns)
    body = []
    for _, row in frame.iterrows():
        cells = "".join(
            f'<td class="{"s" if c.kind == "str" else "n"}">{escape(_cell(row[c.key], c.kind))}'
            "</td>"
            for c in columns
        )
        body.append(f"<tr>{cells}</tr>")
    return (
        f'<table class="{css_class}"><thead><tr>{head}</tr></thead><tbody>'
        + "".join(body)
        + "</tbody></table>"
    )
