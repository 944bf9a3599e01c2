"""`contend html FILE... -o report.html`: one self-contained offline page, and
the building blocks the views make their sections of.

The page: a title, a header line (when, from how many files), then every
registered view's sections in the registry's order (results of ``contend
network`` / ``load`` with their comparison, ``contend jobs``, ``mitigate``,
``study``, the model files), then with ``--published`` the GPCNeT paper's
Table 2.  Figures are embedded as base64 PNG data URIs and the style sheet is
inline, so the file needs nothing else (no network, no other files).
"""

from __future__ import annotations

import base64
import datetime as _dt
from dataclasses import dataclass
from html import escape

from .. import __version__
from .. import formatting as fmt
from .published import published_impact_table
from .tables import COMPARE_VIEW

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em}
table.data,table.kv{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.data th,table.data td,table.kv th,table.kv td{border:1px solid #ddd;padding:.25em .6em}
table.data th{background:#f2f2f2}td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
td.s{text-align:left}table.kv td{white-space:normal;word-break:break-word}table.kv th{text-align:left;background:#f8f8f8;font-weight:600}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}.note{font-size:.85em;color:#555}
code{background:#f4f4f4;padding:0 .2em}
"""


@dataclass(frozen=True)
class Page:
    """The options of one page (``contend html``)."""

    title: str = "contend report"
    published: bool = False
    log_y: bool = True  # histograms: log y axis


def figure(fig, alt: str, caption: str) -> str:
    """A matplotlib figure as an embedded PNG with its caption; closes the figure."""
    from .plots import figure_png_bytes  # matplotlib: only when a page has figures

    data = base64.b64encode(figure_png_bytes(fig)).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{escape(alt)}">'
        f"<figcaption>{escape(caption)}</figcaption></figure>"
    )


def kv_table(pairs) -> str:
    """A two-column table of (name, value) pairs, each value on one line."""
    rows = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape(fmt.clean_text(v))}</td></tr>" for k, v in pairs
    )
    return f'<table class="kv">{rows}</table>'


def note(text: str) -> str:
    return f'<p class="note">{escape(text)}</p>'


def document_section(heading: str, intro: list, sections: list, notes: list) -> str:
    """One document's section: its heading, ``intro`` (HTML), each of
    ``sections`` ((title, frame, columns)) as a titled table, then ``notes``."""
    parts = [f"<h2>{escape(heading)}</h2>", *intro]
    for title, frame, columns in sections:
        parts += [f"<h3>{escape(title, quote=False)}</h3>", fmt.html_table(frame, columns)]
    parts += [note(text) for text in notes]
    return "\n".join(parts)


def _files(groups) -> str:
    """'N results file(s)' and, when there are any, the counts of the other nouns."""
    counts = {}
    for view, items in groups:
        counts[view.file_noun] = counts.get(view.file_noun, 0) + len(items)
    return ", ".join(
        f"{n} {noun} file(s)" for k, (noun, n) in enumerate(counts.items()) if n or not k
    )


def render_page(groups, page: Page) -> str:
    """The page as a string.  ``groups``: (view, [(path, document)...]) of every
    registered view, in the registry's order (:func:`contend.reports.registry.html_page`)."""
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    notes = " ".join(escape(view.page_note) for view, items in groups if items and view.page_note)
    body = [
        f"<h1>{escape(page.title)}</h1>",
        (
            f'<p class="note">Generated {now} by contend {__version__} from '
            f"{_files(groups)}. {notes}</p>"
        ),
    ]
    published_rows = published_impact_table() if page.published else None
    for view, items in groups:
        body += view.html(items, page)
    if published_rows is not None:
        body += [
            "<h2>Published baselines: GPCNeT SC'19 Table 2</h2>",
            (
                '<p class="note">Values as printed in the paper (Osprey: MVAPICH); CI computed '
                "from them exactly as for the runs above.</p>"
            ),
            fmt.html_table(published_rows, COMPARE_VIEW),
        ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(page.title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
