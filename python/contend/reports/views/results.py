"""`contend report RESULTS.json`: the impact table of one run in text, markdown, CSV or JSON.

Run as ``contend report``, ``contend-report`` or ``python -m contend.report``.
"""

from __future__ import annotations

import json
import sys

import pandas as pd

from ... import formatting as fmt
from ...results import Results
from ..tables import (
    add_bootstrap,
    congestor_table,
    impact_mismatches,
    impact_table,
    sim_counters,
    stalled_ports_table,
    tier_table,
)

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
    """One line: the simulated fabric (topology, routing, VCs, cc, preset, simulated time)."""
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
    return (
        f"Simulated fabric: {sim['topology']}{f' ({size})' if size else ''}, "
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
    head = "### " if form == "markdown" else ""
    parts = ["", sim["fabric"], "", head + stalled_title(sim)]
    if form == "markdown":
        parts.append("")
    if sim["ports"].empty:
        parts.append("No port stalled.")
    else:
        parts.append(fmt.render(sim["ports"], sim["ports_view"], form))
    parts += ["", head + "Simulated fabric: per tier"]
    if form == "markdown":
        parts.append("")
    parts.append(fmt.render(sim["tiers"], sim["tiers_view"], form))
    parts += ["", ("  " if form == "text" else "") + SIM_NOTES]
    return parts


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
    boot_cols = fmt.BOOTSTRAP_VIEW if bootstrap else []
    if form == "json":
        keys = [c.key for c in fmt.IMPACT_MACHINE + boot_cols]
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
        return fmt.render(table, fmt.IMPACT_MACHINE + boot_cols, "csv")
    view = fmt.IMPACT_VIEW + boot_cols
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
            parts += ["", fmt.render(cong, fmt.CONGESTOR_VIEW, "markdown")]
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
        parts += [
            "",
            "Congestors: throughput alone and while loading each canary",
            fmt.render(cong, fmt.CONGESTOR_VIEW, "text"),
        ]
    parts += _sim_parts(results, "text")
    late = timed_out(results)
    parts += ["", "  " + NOTES]
    if late:
        parts.append("  Timeout ended: " + " ".join(late))
    return "\n".join(parts)


def check_impact(results: Results, stream=sys.stderr) -> None:
    """Warn when the recomputed CIs differ from the file's own impact section."""
    for problem in impact_mismatches(results):
        print(f"contend report: warning: {results.path}: {problem}", file=stream)
