"""The view of the reproduction report of ``bench/fidelity`` (schema
``contend-fidelity``): per claim the paper's figure, ours as median and range
over the seeds, the seeds, the verdict and its rule, as a table (text,
markdown, CSV, JSON) and as an HTML section per paper with the verdicts
coloured, each claim's settings changed from the paper's and its commands.
Reading: :mod:`contend.fidelity.document`."""

from __future__ import annotations

import json
from html import escape

import pandas as pd

from ... import formatting as fmt
from ...fidelity.claim import FAILS, HOLDS, NOT_MEASURED, QUALITATIVE
from ...fidelity.document import SCHEMA_NAME, load_fidelity
from .. import html
from ..view import View, schema_is

VIEW_COLUMNS = [
    fmt.Column("paper_title", "Paper", "str"),
    fmt.Column("id", "Claim", "str"),
    fmt.Column("paper_shown", "Paper's value", "str"),
    fmt.Column("ours", "Ours: median [range]", "str"),
    fmt.Column("seeds_shown", "Seeds", "str"),
    fmt.Column("verdict", "Verdict", "str"),
    fmt.Column("rule", "Rule", "str"),
]
MACHINE_KEYS = ["paper", "id", "unit", "paper_value", "median", "min", "max", "seeds_measured",
                "seeds_run", "verdict", "verdict_reason", "rule"]  # fmt: skip
COLOURS = {HOLDS: "#c8e6c9", QUALITATIVE: "#fff3bf", FAILS: "#ffcdd2", NOT_MEASURED: "#e0e0e0"}
NOTES = (
    "Ours: the median and [min, max] of the claim's value over the seeds that gave one (unit "
    "in the claim's 'unit'); Seeds: seeds with a value / seeds run.  Verdicts: holds, holds "
    "qualitatively, does not hold (the rule, applied by bench/fidelity), not measured (with the "
    "commands that would measure it).  docs/fidelity.md explains each claim and the model "
    "differences."
)


def _ours(c: dict) -> str:
    if c["median"] is None:
        return "n/a"
    n = fmt.format_number
    return f"{n(c['median'])} [{n(c['min'])}, {n(c['max'])}]"


def _seeds(c: dict) -> str:
    """Seeds with a value / seeds run ('-': none run)."""
    return f"{c['seeds_measured']}/{len(c['seeds'])}" if c["seeds"] else "-"


def claim_frame(doc: dict) -> pd.DataFrame:
    """One row per claim: the document's fields and the shown cells."""
    rows = [
        {
            **{k: c[k] for k in MACHINE_KEYS if k != "seeds_run"},
            "paper_title": c["paper_title"],
            "seeds_run": len(c["seeds"]),
            "paper_shown": fmt.format_number(c["paper_value"]),
            "ours": _ours(c),
            "seeds_shown": _seeds(c),
        }
        for c in doc["claims"]
    ]
    keys = MACHINE_KEYS + ["paper_title", "paper_shown", "ours", "seeds_shown"]
    return pd.DataFrame(rows, columns=keys)


def summary_line(doc: dict) -> str:
    cfg = doc["config"]
    counts = {}
    for c in doc["claims"]:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    verdicts = ", ".join(f"{counts[v]} {v}" for v in COLOURS if v in counts)
    quick = (
        "; a QUICK run (small counts: a smoke test, not the reproduction)" if cfg["quick"] else ""
    )
    return (
        f"{len(doc['claims'])} claims at seeds {cfg['seeds'][0]}-{cfg['seeds'][-1]}: {verdicts}"
        f"{quick}; written {doc['created_utc']}"
    )


def builds_text(c: dict) -> str:
    """Which builds made the claim's values: 'X (seeds 1, 2); Y (seed 3)';
    '' when no seed recorded one (older outputs)."""
    by = {}
    for s in c["seeds"]:
        for b in s.get("builds") or ():
            by.setdefault(b, []).append(s["seed"])
    return "; ".join(
        f"{b} (seed{'s' if len(v) > 1 else ''} {', '.join(map(str, v))})" for b, v in by.items()
    )


def _reason_line(c: dict) -> str:
    builds = builds_text(c)
    return f"{c['id']}: {c['verdict_reason']}" + (f"; builds {builds}" if builds else "")


def _unmeasured_notes(doc: dict) -> list:
    return [
        f"{c['id']}: not measured ({c['verdict_reason']}); measure with: {c['commands'][0]}"
        + (f" (and {len(c['commands']) - 1} more)" if len(c["commands"]) > 1 else "")
        for c in doc["claims"]
        if c["verdict"] == NOT_MEASURED and c["commands"]
    ]


def render_fidelity(doc: dict, form: str = "text", source=None) -> str:
    frame = claim_frame(doc)
    if form == "csv":
        return fmt.csv_table(frame, MACHINE_KEYS)
    if form == "json":
        body = {"source": None if source is None else str(source), "summary": summary_line(doc),
                "claims": fmt.records(frame, MACHINE_KEYS)}  # fmt: skip
        return json.dumps(body, indent=1, allow_nan=False)
    title = "Reproduction report" + (f": {source}" if source else "")
    reasons = [_reason_line(c) for c in doc["claims"] if c["verdict"] != NOT_MEASURED]
    sections = [("Claims", frame, VIEW_COLUMNS)]
    return fmt.text_report(
        title, [summary_line(doc)], sections, [*reasons, *_unmeasured_notes(doc), NOTES], form
    )


def _verdict_cell(verdict: str) -> str:
    return (
        f'<td class="s" style="background:{COLOURS.get(verdict, "#fff")};font-weight:600">'
        f"{escape(verdict)}</td>"
    )


def _paper_table(claims: list) -> str:
    head = "".join(
        f"<th>{escape(h)}</th>"
        for h in (
            "Claim",
            "Paper's figure",
            "Paper's value",
            "Ours: median [range]",
            "Seeds",
            "Verdict",
            "Rule",
        )
    )
    rows = []
    for c in claims:
        cells = [
            f'<td class="s">{escape(c["id"])}</td>',
            (
                f'<td class="s" style="white-space:normal;min-width:16em">{escape(c["paper_figure"])} '
                f"({escape(c['paper_where'])})</td>"
            ),
            f'<td class="n">{escape(fmt.format_number(c["paper_value"]))}</td>',
            f'<td class="n">{escape(_ours(c))}</td>',
            f'<td class="n">{_seeds(c)}</td>',
            _verdict_cell(c["verdict"]),
            f'<td class="s" style="white-space:normal;min-width:16em">{escape(c["rule"])}</td>',
        ]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="data"><tr>{head}</tr>{"".join(rows)}</table>'


def _claim_details(c: dict) -> str:
    """The claim's line under its paper's table: the verdict's reason and the
    settings changed (visible), then per seed, --quick and the commands (folded)."""
    values = ", ".join(
        f"{s['seed']}: {fmt.format_number(s['value'])}" if s["error"] is None
        else f"{s['seed']}: {s['error']}"
        for s in c["seeds"]
    )  # fmt: skip
    shown = [
        f"<b>{escape(c['id'])}</b> ({escape(c['verdict'])}): {escape(c['verdict_reason'])}",
        "settings changed from the paper's: " + escape("; ".join(c["settings_changed"]) or "none"),
    ]
    folded = [f"ours: {escape(c['quantity'])} [{escape(c['unit'])}]"]
    if values:
        folded.append(f"per seed: {escape(values)}")
    builds = builds_text(c)
    if builds:
        folded.append("builds (git commit): " + escape(builds))
    if c["quick_changes"]:
        folded.append("--quick: " + escape("; ".join(c["quick_changes"])))
    cmds = "\n".join(c["commands"])
    return (
        "<li>" + "<br>".join(shown) + "<details><summary>ours per seed and the commands "
        f"({len(c['commands'])}; {escape(c['runtime'])})</summary>" + "<br>".join(folded)
        + f"<pre>{escape(cmds)}</pre></details></li>"
    )  # fmt: skip


def html_section(doc: dict, source: str) -> str:
    parts = [f"<h2>Reproduction report: {escape(source)}</h2>", html.note(summary_line(doc))]
    papers = []
    for c in doc["claims"]:
        if c["paper_title"] not in papers:
            papers.append(c["paper_title"])
    for title in papers:
        claims = [c for c in doc["claims"] if c["paper_title"] == title]
        parts += [f"<h3>{escape(title)}</h3>", _paper_table(claims)]
        parts.append('<ul class="note">' + "".join(_claim_details(c) for c in claims) + "</ul>")
    parts.append(html.note(NOTES))
    return "\n".join(parts)


VIEW = View(
    "fidelity",
    recognises=schema_is(SCHEMA_NAME),
    load=lambda paths: [load_fidelity(p) for p in paths],
    report=lambda path, args: render_fidelity(load_fidelity(path), args.format, source=path),
    html=lambda items, page: [html_section(doc, str(path)) for path, doc in items],
    file_noun="reproduction report",
)
