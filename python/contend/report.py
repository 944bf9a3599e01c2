"""`contend report RESULTS.json`: the impact table of one run in text, markdown, CSV or JSON.

Run as ``contend report``, ``contend-report`` or ``python -m contend.report``.
"""

from __future__ import annotations

import json
import sys

import pandas as pd

from . import formatting as fmt
from .results import Results
from .tables import add_bootstrap, congestor_table, impact_mismatches, impact_table

NOTES = (
    "99% = the value 99% of samples are better than (latency: p99; bandwidth: p1). "
    "CI = Congestion Impact from unrounded values: latency congested/isolated, "
    "bandwidth isolated/congested (GPCNeT eq. 1-2); > 1 is worse."
)


def run_summary(results: Results) -> str:
    doc, env = results.doc, results.environment
    return (
        f"contend {doc['command']} ({doc['tool']['name']} {doc['tool']['version']}), "
        f"seed {doc['seed']} ({doc['seed_source']}), {env['nodes']} nodes x "
        f"{results.ranks_per_node} ranks/node ({env['ranks']} ranks, "
        f"{env['node_discovery']} nodes), {env['mpi_library']}; started "
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
    late = timed_out(results)
    parts += ["", "  " + NOTES]
    if late:
        parts.append("  Timeout ended: " + " ".join(late))
    return "\n".join(parts)


def check_impact(results: Results, stream=sys.stderr) -> None:
    """Warn when the recomputed CIs differ from the file's own impact section."""
    for problem in impact_mismatches(results):
        print(f"contend report: warning: {results.path}: {problem}", file=stream)


if __name__ == "__main__":
    from .cli import main_report

    sys.exit(main_report())
