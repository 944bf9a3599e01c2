"""The view of the results of ``contend network`` and ``contend load``: the
report (impact table in GPCNeT's Table 2 layout, congestors, the simulated
fabric) in text, markdown, CSV or JSON; the HTML sections (with several runs
or ``--published`` a comparison first); the figures ``plot hist``,
``congestors`` and ``impact``.  ``compare`` and ``significance`` read these
files; the view is also the one of every file no other view recognises.
"""

from __future__ import annotations

import json
import sys
from html import escape

import pandas as pd

from ... import formatting as fmt
from ...results import SCHEMA_NAME, Results, load_many, load_results
from .. import html
from ..published import beside, figure11_rows
from ..tables import (
    BOOTSTRAP_VIEW,
    COMPARE_VIEW,
    CONGESTOR_VIEW,
    IMPACT_MACHINE,
    IMPACT_VIEW,
    add_bootstrap,
    compare_table,
    congestor_table,
    impact_mismatches,
    impact_table,
    pick_canaries,
    sim_counters,
    stalled_ports_table,
    tier_table,
)
from ..view import Plot, UsageError, View, schema_is

NOTES = (
    "99% = the value 99% of samples are better than (latency: p99; bandwidth: p1). "
    "CI = Congestion Impact from unrounded values: latency congested/isolated, "
    "bandwidth isolated/congested (GPCNeT eq. 1-2); > 1 is worse."
)

SIM_NOTES = (
    "Stalled = time a packet waited for credit at the port (InfiniBand port_xmit_wait; "
    "at a NIC, the injection stall), busy = time spent sending, both as % of the "
    "simulated time; data sent includes packet headers; queue = mean bytes in the downstream "
    "buffer."
)
# How many of the most stalled ports the report lists.
SIM_TOP_PORTS = 10
_BYTE_UNITS = (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def run_summary(results: Results) -> str:
    doc, env = results.doc, results.environment
    return (
        f"contend {doc['command']} ({doc['tool']['name']} {doc['tool']['version']}), "
        f"seed {doc['seed']} ({doc['seed_source']}), {env['nodes']} nodes x "
        f"{results.ranks_per_node} ranks/node ({env['ranks']} ranks, "
        f"{env['node_discovery']} nodes), {fmt.clean_text(env['mpi_library'])}; started "
        f"{doc['started_utc']}, wall {doc['wall_s']:.1f} s"
    )


def timed_out(results: Results) -> list:
    tests = results.tests
    rows = tests[tests["timed_out"]]
    out = []
    for _, r in rows.iterrows():
        during = "" if pd.isna(r["during"]) else f", during {r['during']}"
        out.append(f"{r['name']}({r['phase']}{during}, {int(r['measurements_done'])} meas.)")
    return out


def sim_fabric_line(results: Results) -> str:
    """One line: the simulated fabric (topology, router model, routing, VCs, cc, preset,
    simulated time).  Results from before router models were named have no `router`."""
    sim = results.environment["simulation"]
    counters = sim_counters(results) or {}
    sim_us = counters.get("sim_time_us", sim["sim_time_s"] * 1e6)
    size = ", ".join(
        f"{sim[k]} {word}"
        for k, word in (("topology_nodes", "nodes"), ("routers", "routers"))
        if k in sim
    )
    preset = sim.get("network_preset") or ""
    vcs = int(sim["vcs"])
    router = f"router {sim['router']}, " if sim.get("router") else ""
    return (
        f"Simulated fabric: {sim['topology']}{f' ({size})' if size else ''}, {router}"
        f"routing {sim['routing']}, {vcs} VC{'s' if vcs != 1 else ''}, "
        f"congestion control {sim['cc']}, "
        + (f"network preset {preset}" if preset else "no network preset")
        + f"; {fmt.format_number(sim_us / 1e3)} ms simulated"
    )


def _byte_unit(values) -> tuple:
    """(unit, divisor) in which the largest of values reads as 1 or more."""
    values = pd.Series(values, dtype=float).dropna()
    top = float(values.abs().max()) if not values.empty else 0.0
    for unit, div in _BYTE_UNITS:
        if top >= div:
            return unit, div
    return "B", 1


def sim_tables(results: Results, top: int = SIM_TOP_PORTS):
    """The simulated fabric's tables ready to render, or None for other engines.

    Returns a dict: ``fabric`` (one line), ``ports`` and ``ports_view`` (the
    most stalled ports), ``tiers`` and ``tiers_view`` (per tier), ``total_ports``.
    Byte columns are scaled to one unit per column (named in the header).
    """
    if sim_counters(results) is None:
        return None
    ports = stalled_ports_table(results, top)
    tiers = tier_table(results)
    data_unit, data_div = _byte_unit(ports["xmit_data_bytes"])
    occ_unit, occ_div = _byte_unit(ports["occupancy_bytes_mean"])
    ports["xmit_data"] = ports["xmit_data_bytes"].astype(float) / data_div
    ports["occupancy"] = ports["occupancy_bytes_mean"].astype(float) / occ_div
    ports_view = [
        fmt.Column("component", "Component", "str"),
        fmt.Column("port", "Port", "int"),
        fmt.Column("peer", "Peer", "str"),
        fmt.Column("tier", "Tier", "str"),
        fmt.Column("stall_pct", "Stalled (% of time)"),
        fmt.Column("busy_pct", "Busy (% of time)"),
        fmt.Column("xmit_data", f"Data sent ({data_unit})"),
        fmt.Column("occupancy", f"Mean queue ({occ_unit})"),
    ]
    tiers_view = [
        fmt.Column("tier", "Tier", "str"),
        fmt.Column("ports", "Ports", "int"),
        fmt.Column("stall_mean_pct", "Stalled mean (% of time)"),
        fmt.Column("stall_max_pct", "Stalled max (% of time)"),
        fmt.Column("busy_mean_pct", "Busy mean (% of time)"),
    ]
    if tiers["xmit_data_bytes"].notna().any():
        tier_unit, tier_div = _byte_unit(tiers["xmit_data_bytes"])
        tiers["xmit_data"] = tiers["xmit_data_bytes"] / tier_div
        tiers_view.append(fmt.Column("xmit_data", f"Data sent ({tier_unit})"))
    return {
        "fabric": sim_fabric_line(results),
        "ports": ports,
        "ports_view": ports_view,
        "tiers": tiers,
        "tiers_view": tiers_view,
        "total_ports": int(tiers["ports"].sum()) if not tiers.empty else 0,
    }


def stalled_title(sim: dict) -> str:
    shown, total = len(sim["ports"]), sim["total_ports"]
    if not shown:
        return "Simulated fabric: most stalled ports"
    of = f"{shown} of {total} ports" if total else f"{shown} ports"
    return f"Simulated fabric: most stalled ports ({of}, most stalled first)"


def _sim_parts(results: Results, form: str) -> list:
    """The simulated-fabric section (text or markdown), empty for other engines."""
    sim = sim_tables(results)
    if sim is None:
        return []
    ports = (
        fmt.render(sim["ports"], sim["ports_view"], form)
        if not sim["ports"].empty
        else "No port stalled."
    )
    tiers = fmt.render(sim["tiers"], sim["tiers_view"], form)
    return (
        ["", sim["fabric"]]
        + fmt.titled(stalled_title(sim), ports, form)
        + fmt.titled("Simulated fabric: per tier", tiers, form)
        + ["", fmt.note(SIM_NOTES, form)]
    )


def build_tables(results: Results, bootstrap: int = 0, level: float = 0.95, seed: int = 0):
    table = impact_table(results)
    if bootstrap:
        table = add_bootstrap(results, table, bootstrap, level, seed)
    return table, congestor_table(results)


def render_report(
    results: Results,
    form: str = "text",
    bootstrap: int = 0,
    level: float = 0.95,
    seed: int = 0,
    congestors: bool = True,
) -> str:
    """The whole report of one results file as a string in one of formatting.FORMATS."""
    table, cong = build_tables(results, bootstrap, level, seed)
    boot_cols = BOOTSTRAP_VIEW if bootstrap else []
    if form == "json":
        keys = [c.key for c in IMPACT_MACHINE + boot_cols]
        out = {
            "source": str(results.path),
            "label": results.label,
            "command": results.command,
            "seed": results.doc["seed"],
            "environment": results.environment,
            "canaries": fmt.records(table, keys),
            "congestors": fmt.records(cong, list(cong.columns)) if congestors else [],
            "bootstrap": (
                {"resamples": bootstrap, "level": level, "seed": seed} if bootstrap else None
            ),
        }
        return json.dumps(out, indent=1, allow_nan=False)
    if form == "csv":
        return fmt.render(table, IMPACT_MACHINE + boot_cols, "csv")
    view = IMPACT_VIEW + boot_cols
    if not table.empty and table["congested_mean"].isna().all():  # `contend network`
        view = [c for c in view if c.key.startswith(("name", "units", "isolated"))]
    parts = []
    if form == "markdown":
        parts += [
            f"## {results.label}",
            "",
            run_summary(results),
            "",
            fmt.render(table, view, "markdown"),
        ]
        if congestors and not cong.empty:
            parts += ["", fmt.render(cong, CONGESTOR_VIEW, "markdown")]
        parts += _sim_parts(results, "markdown")
        parts += ["", NOTES]
        return "\n".join(parts)
    parts += [f"contend report: {results.path}", "  " + run_summary(results), ""]
    if table.empty:
        parts.append("No canary tests in this file (a --congestor-only run).")
    else:
        title = (
            "Canaries: isolated vs. congested, Congestion Impact (GPCNeT Table 2 layout)"
            if table["congested_mean"].notna().any()
            else "Canaries (no congestors in this run: isolated only)"
        )
        parts += [title, fmt.render(table, view, "text")]
        if bootstrap:
            parts.append(
                f"  CI lo/hi: {level:.0%} bootstrap interval, {bootstrap} resamples of "
                f"the histograms, seed {seed}"
            )
    if congestors and not cong.empty:
        title = "Congestors: throughput alone and while loading each canary"
        parts += fmt.titled(title, fmt.render(cong, CONGESTOR_VIEW, "text"), "text")
    parts += _sim_parts(results, "text")
    late = timed_out(results)
    parts += ["", fmt.note(NOTES, "text")]
    if late:
        parts.append(fmt.note("Timeout ended: " + " ".join(late), "text"))
    return "\n".join(parts)


def check_impact(results: Results, stream=sys.stderr) -> None:
    """Warn when the recomputed CIs differ from the file's own impact section."""
    for problem in impact_mismatches(results):
        print(f"contend report: warning: {results.path}: {problem}", file=stream)


# ---------------------------------------------------------------------- html


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
    return html.kv_table(pairs)


def _run_section(results, log_y: bool) -> str:
    from .. import plots

    table = impact_table(results)
    cong = congestor_table(results)
    parts = [
        f"<h2>{escape(results.label)}</h2>",
        html.note(f"{results.path}: {run_summary(results)}"),
        "<h3>Configuration</h3>",
        _configuration(results),
    ]
    if not table.empty:
        parts += [
            "<h3>Canaries: isolated vs. congested, Congestion Impact</h3>",
            fmt.html_table(table, IMPACT_VIEW),
        ]
    if not cong.empty:
        parts += ["<h3>Congestors</h3>", fmt.html_table(cong, CONGESTOR_VIEW)]
    late = timed_out(results)
    if late:
        parts.append(html.note("Timeout ended: " + " ".join(late)))
    if results.canaries():
        fig = plots.histogram_figure(results, log_y=log_y)
        parts.append(
            html.figure(
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
    from .. import plots

    sim = sim_tables(results)
    if sim is None:
        return []
    parts = [
        "<h3>Simulated fabric</h3>",
        html.note(sim["fabric"]),
    ]
    if not sim["tiers"].empty:
        env_sim = results.environment["simulation"]
        parts.append(
            html.figure(
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
            else html.note("No port stalled.")
        ),
        html.note(SIM_NOTES),
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


def _comparison(runs: list, page: html.Page) -> list:
    """The comparison table, the CI bars (with the published systems of
    ``--published``) and, for two or more single-congestor runs, their histograms."""
    from .. import plots

    published = page.published
    frame = compare_table(runs)
    bars = beside(frame, figure11_rows()) if published else frame
    body = ["<h2>Comparison</h2>"]
    if bars[["ci_mean", "ci_tail_99"]].notna().any().any():
        body.append(
            html.figure(
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
    body.append(fmt.html_table(frame, COMPARE_VIEW))
    single = _single_congestor_runs(runs)
    if single:
        body.append(
            html.figure(
                plots.congestor_panels_figure(single, log_y=page.log_y),
                "per-congestor histograms",
                "Isolated (top) and with one congestor at a time (rows below).",
            )
        )
    return body


def _html(items: list, page: html.Page) -> list:
    runs = [results for _, results in items]
    body = _comparison(runs, page) if len(runs) > 1 or page.published else []
    return body + [_run_section(results, page.log_y) for results in runs]


# ------------------------------------------------------------------- figures


def _hist(args):
    from ..plots import histogram_figure

    runs = load_many(args.results)
    if len(runs) != 1:
        raise UsageError("plot hist takes one results file")
    return histogram_figure(runs[0], args.canaries, log_y=not args.linear_y)


def _congestors(args):
    from ..plots import congestor_panels_figure

    return congestor_panels_figure(load_many(args.results), args.canaries, log_y=not args.linear_y)


def _impact(args):
    from ..plots import impact_bars_figure

    frame = compare_table(load_many(args.results))
    if args.published:
        frame = beside(frame, figure11_rows())
    return impact_bars_figure(pick_canaries(frame, args.canaries))


def _report(path, args) -> str:
    results = load_results(path)
    check_impact(results)
    return render_report(
        results,
        args.format,
        args.bootstrap,
        args.level,
        args.seed,
        congestors=not args.no_congestors,
    )


VIEW = View(
    "results",
    recognises=schema_is(SCHEMA_NAME),
    load=load_many,
    report=_report,
    html=_html,
    figures={
        "hist": Plot(_hist, "isolated vs. congested histograms of one run (GPCNeT Figs 1-3)"),
        "congestors": Plot(_congestors, "one row per single-congestor run (Figs 4-5)"),
        "impact": Plot(_impact, "CI bars across runs, log y (Fig 11)"),
    },
    fallback=True,
    page_note=NOTES,
    compare=True,
)
