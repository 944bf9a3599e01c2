"""`contend html RESULTS.json... -o report.html`: one self-contained offline page.

Configuration, tables and figures of every run (``contend jobs`` results: job
and motif tables and box plots); with several runs also the comparison table
and the Congestion Impact bars; figures are embedded as
base64 PNG data URIs and the style sheet is inline, so the file needs nothing
else (no network, no other files).
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
from html import escape

from .. import __version__
from .. import formatting as fmt
from . import plots
from .tables import compare_table, congestor_table, impact_table
from .views.results import NOTES, SIM_NOTES, run_summary, sim_tables, stalled_title, timed_out

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


def _img(fig, alt: str) -> str:
    data = base64.b64encode(plots.figure_png_bytes(fig)).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}">'


def _figure(fig, alt: str, caption: str) -> str:
    return f"<figure>{_img(fig, alt)}<figcaption>{escape(caption)}</figcaption></figure>"


def _kv_table(pairs) -> str:
    rows = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape(fmt.clean_text(v))}</td></tr>" for k, v in pairs
    )
    return f'<table class="kv">{rows}</table>'


def _configuration(results) -> str:
    doc, env = results.doc, results.environment
    groups = "; ".join(
        f"{g['role']} {g['name']}: nodes {','.join(map(str, g['nodes']))}"
        for g in doc["placement"]["groups"]
    )
    options = doc["config"].get("load") or doc["config"].get("network") or {}
    pairs = results.run_pairs() + [
        (
            "node discovery",
            env["node_discovery"]
            + (f" ({env['virtual_nodes']} ranks per virtual node)" if env["virtual_nodes"] else ""),
        ),
        ("placement", groups or "n/a"),
        ("options", json.dumps(options, sort_keys=True)),
    ]
    return _kv_table(pairs)


def _run_section(results, log_y: bool) -> str:
    table = impact_table(results)
    cong = congestor_table(results)
    parts = [
        f"<h2>{escape(results.label)}</h2>",
        f'<p class="note">{escape(str(results.path))}: {escape(run_summary(results))}</p>',
        "<h3>Configuration</h3>",
        _configuration(results),
    ]
    if not table.empty:
        parts += [
            "<h3>Canaries: isolated vs. congested, Congestion Impact</h3>",
            fmt.html_table(table, fmt.IMPACT_VIEW),
        ]
    if not cong.empty:
        parts += ["<h3>Congestors</h3>", fmt.html_table(cong, fmt.CONGESTOR_VIEW)]
    late = timed_out(results)
    if late:
        parts.append(f'<p class="note">Timeout ended: {escape(" ".join(late))}</p>')
    if results.canaries():
        fig = plots.histogram_figure(results, log_y=log_y)
        parts.append(
            _figure(
                fig,
                f"histograms of {results.label}",
                "Histograms of each canary's samples, isolated (top) and congested "
                "(bottom), log x axis; red line: mean, green dashed: 99% value.",
            )
        )
    parts += _sim_section(results)
    return "\n".join(parts)


def _sim_section(results) -> list:
    """--engine sim: the fabric, stall per tier (figure and table), most stalled ports."""
    sim = sim_tables(results)
    if sim is None:
        return []
    parts = [
        "<h3>Simulated fabric</h3>",
        f'<p class="note">{escape(sim["fabric"])}</p>',
    ]
    if not sim["tiers"].empty:
        env_sim = results.environment["simulation"]
        parts.append(
            _figure(
                plots.tier_stall_figure(
                    sim["tiers"],
                    f"{results.label}: stall time per tier, {env_sim['topology']}",
                ),
                f"stall time per tier of {results.label}",
                "Time a packet waited for credit, as % of the simulated time, per tier "
                "of the fabric (in the order a packet crosses them): mean over the "
                "tier's ports (solid) and its most stalled port (hatched).",
            )
        )
    parts += [
        "<h3>Simulated fabric: per tier</h3>",
        fmt.html_table(sim["tiers"], sim["tiers_view"]),
        f"<h3>{escape(stalled_title(sim))}</h3>",
        (
            fmt.html_table(sim["ports"], sim["ports_view"])
            if not sim["ports"].empty
            else '<p class="note">No port stalled.</p>'
        ),
        f'<p class="note">{escape(SIM_NOTES)}</p>',
    ]
    return parts


def _single_congestor_runs(runs) -> list:
    single = [
        r
        for r in runs
        if r.command == "load"
        and r.canaries()
        and len([g for g in r.doc["placement"]["groups"] if g["role"] == "congestor"]) == 1
        and (r.tests["phase"] == "congested").any()
    ]
    return single if len(single) >= 2 else []


def render_html(
    runs: list,
    title: str = "contend report",
    published: bool = False,
    log_y: bool = True,
    models=(),
    jobs=(),
    mitigate=(),
    studies=(),
) -> str:
    """The page as a string; ``models``: (path, document) of Netscope model files;
    ``jobs``: loaded results of ``contend jobs`` (:mod:`contend.jobsresults`);
    ``mitigate``: (path, document) of ``contend mitigate`` results; ``studies``: (path,
    document) of ``contend study`` results."""
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    files = f"{len(runs) + len(jobs) + len(mitigate) + len(studies)} results file(s)" + (
        f", {len(models)} model file(s)" if models else ""
    )
    body = [
        f"<h1>{escape(title)}</h1>",
        (
            f'<p class="note">Generated {now} by contend {__version__} from '
            f"{files}. {escape(NOTES) if runs else ''}</p>"
        ),
    ]
    published_rows = None
    if published:
        from .published import figure11_rows, published_impact_table

        published_rows = published_impact_table()
    if len(runs) > 1 or published:
        frame = compare_table(runs)
        bars = _concat(frame, figure11_rows()) if published else frame
        body.append("<h2>Comparison</h2>")
        if bars[["ci_mean", "ci_tail_99"]].notna().any().any():
            body.append(
                _figure(
                    plots.impact_bars_figure(bars),
                    "Congestion Impact bars",
                    "Congestion Impact at the mean (solid) and 99% (hatched) per "
                    "run and canary; log y axis; 1 = no impact."
                    + (
                        " Published systems: GPCNeT SC'19 Figure 11 runs (Table 2, 16-24 PPort)."
                        if published
                        else ""
                    ),
                )
            )
        body.append(fmt.html_table(frame, fmt.COMPARE_VIEW))
        single = _single_congestor_runs(runs)
        if single:
            body.append(
                _figure(
                    plots.congestor_panels_figure(single, log_y=log_y),
                    "per-congestor histograms",
                    "Isolated (top) and with one congestor at a time (rows below).",
                )
            )
    for results in runs:
        body.append(_run_section(results, log_y))
    if jobs:
        from .views.jobs import html_section as jobs_section

        body += [jobs_section(j) for j in jobs]
    if mitigate:
        from .views.mitigate import html_section as mitigate_section

        body += [mitigate_section(doc, str(path)) for path, doc in mitigate]
    if studies:
        from .views.study import html_section as study_section

        body += [study_section(doc, str(path)) for path, doc in studies]
    if models:
        from ..models.views import html_section

        body += [html_section(doc, str(path)) for path, doc in models]
    if published_rows is not None:
        body += [
            "<h2>Published baselines: GPCNeT SC'19 Table 2</h2>",
            (
                '<p class="note">Values as printed in the paper (Osprey: MVAPICH); CI computed '
                "from them exactly as for the runs above.</p>"
            ),
            fmt.html_table(published_rows, fmt.COMPARE_VIEW),
        ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _concat(a, b):
    import pandas as pd

    return pd.concat([a, b[a.columns.intersection(b.columns)]], ignore_index=True)
