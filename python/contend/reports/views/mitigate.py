"""The view of the results of ``contend mitigate``: tables (text, markdown,
CSV, JSON), the figure of ``plot mitigate`` (the paper's Figures 5-7) and the
HTML section.

All numbers come from :func:`contend.studies.mitigatestats.summarize`, recomputed from
the file's runs.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from ... import formatting as fmt
from ...studies.mitigatestats import (
    NETSCOPE,
    PAPER_SOURCE,
    PAPER_TABLE5,
    PAPER_VOLTRINO_P99,
    PERCENTILE_METHOD,
    SCHEMA_NAME,
    load_mitigate,
    run_frames,
    summarize,
)
from .. import html
from ..view import document_view

# the statistics of an increase (a ratio to the isolated runtime) over the runs
INCREASE_COLUMNS = [
    fmt.Column("mean", "Mean (x)"),
    fmt.Column("p50", "p50 (x)"),
    fmt.Column("p90", "p90 (x)"),
    fmt.Column("p99", "p99 (x)"),
    fmt.Column("p99_excess_vs_netscope", "p99 excess / netscope's (x)"),
]
RUNTIME_VIEW = [
    fmt.Column("job", "Job", "str"),
    fmt.Column("condition", "Mode", "str"),
    fmt.Column("runs", "Runs", "int"),
    fmt.Column("isolated_ms", "Isolated mean (ms)"),
] + INCREASE_COLUMNS
NODE_SECONDS_VIEW = [
    fmt.Column("condition", "Mode", "str"),
    fmt.Column("runs", "Runs", "int"),
    fmt.Column("node_seconds_mean_ms", "Node-seconds mean (node*ms)"),
] + INCREASE_COLUMNS
WELCH_VIEW = [
    fmt.Column("job", "Job", "str"),
    fmt.Column("condition", "Mode", "str"),
    fmt.Column("mean", "Mean (x)"),
    fmt.Column("netscope_mean", "Netscope mean (x)"),
] + fmt.welch_columns("sig")
CA_ERROR_VIEW = [
    fmt.Column("ca_error_percent", "c_a error (%)"),
    fmt.Column("c_a", "Proxy c_a"),
    fmt.Column("runs", "Runs", "int"),
    fmt.Column("p50", "p50 (x)"),
    fmt.Column("p99", "p99 (x)"),
    fmt.Column("dcqcn_p99", "dcqcn p99 (x)"),
]
PAPER_VIEW = [
    fmt.Column("application", "Application", "str"),
    fmt.Column("cray_static", "Cray static (x)"),
    fmt.Column("dcqcn", "DCQCN (x)"),
    fmt.Column("netscope", "Netscope (x)"),
]

NOTES = (
    "Runtime increase = a job's runtime beside the others (perform_end_s - perform_start_s, "
    "engine clock: simulated on --engine sim) / its isolated runtime at the same placement; node-seconds increase = "
    "sum(nodes x runtime) / sum(nodes x isolated runtime) over the mix's jobs; (x) = ratio. "
    "p99 excess / netscope's = (p99 - 1) / (netscope's p99 - 1), the paper's '16.3x'. "
    "Welch: two-sided t-test of netscope vs. the mode on the proxy's runtime increase, "
    "* p < 0.05, ** p < 0.01. Percentiles: " + PERCENTILE_METHOD + "."
)
PAPER_NOTE = (
    f"Published reference, not this run: {PAPER_SOURCE}. Table 5: mean runtime increase on "
    "Cori (108 nodes per application); Voltrino rows: section 6.2 text (Figs. 5-6)."
)


CA_ERROR_TITLE = (
    "Delay-sensitivity error (paper Fig. 7): proxy runtime increase under netscope "
    "with c_a x (1 + error/100)"
)


def paper_frame() -> pd.DataFrame:
    """The paper's numbers, one row per published figure, labelled with where they come from."""
    return pd.concat(
        [
            PAPER_TABLE5.assign(application=PAPER_TABLE5["application"] + " mean (Cori, Table 5)"),
            PAPER_VOLTRINO_P99.assign(
                application=PAPER_VOLTRINO_P99["application"] + " (Voltrino, Figs. 5-6)"
            ),
        ],
        ignore_index=True,
    )


def _frames(doc: dict) -> dict:
    s = summarize(doc)
    jobs_f, runs_f = run_frames(doc)
    iso_ms = {}
    if not jobs_f.empty:
        iso_ms = (jobs_f.groupby("job")["isolated_runtime_s"].mean() * 1e3).to_dict()
    s["runtime"]["isolated_ms"] = s["runtime"]["job"].map(iso_ms)
    ns_ms = {}
    if not runs_f.empty:
        ns_ms = (runs_f.groupby("condition")["node_seconds"].mean() * 1e3).to_dict()
    s["node_seconds"]["node_seconds_mean_ms"] = s["node_seconds"]["condition"].map(ns_ms)
    # the proxy first, then the other jobs in file order
    order = [s["proxy"]] + [j["name"] for j in doc["jobs"] if j["name"] != s["proxy"]]
    rt = s["runtime"]
    rt["_j"] = rt["job"].map({j: i for i, j in enumerate(order)})
    s["runtime"] = rt.sort_values(["_j"], kind="stable").drop(columns="_j").reset_index(drop=True)
    return s


def headline(doc: dict, s: dict) -> str:
    """The proxy's tail sentence, as the paper words it."""
    rt = s["runtime"]
    prox = rt[rt["job"] == s["proxy"]].set_index("condition")
    if NETSCOPE not in prox.index:
        return "No netscope runs: no headline ratio."
    ns = prox.loc[NETSCOPE, "p99"]
    parts = []
    for cond, r in prox.iterrows():
        if cond == NETSCOPE or doc_condition(doc, cond).get("ca_error_percent") is not None:
            continue
        ratio = r["p99_excess_vs_netscope"]
        parts.append(
            f"{cond} {fmt.format_number(r['p99'])}x"
            + (f" ({fmt.format_number(ratio)}x netscope's excess)" if np.isfinite(ratio) else "")
        )
    return (
        f"Proxy {s['proxy']}: p99 runtime increase netscope {fmt.format_number(ns)}x; "
        + "; ".join(parts)
        + "."
    )


def doc_condition(doc: dict, label: str) -> dict:
    return next((c for c in doc["config"]["conditions"] if c["label"] == label), {})


def summary_line(doc: dict) -> str:
    cfg = doc["config"]
    seeds = cfg["seeds"]
    span = f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])
    jobs = ", ".join(f"{j['name']} ({j['nodes']} nodes)" for j in doc["jobs"])
    cas = ", ".join(f"{j}={v:g}" for j, v in cfg["c_a"].items() if v)
    return (
        f"mix {cfg['mix_file']} on {cfg['engine']} {cfg['topology']}: {jobs}; "
        f"{cfg['repeat']} runs per mode, seeds {span}, isolated "
        + ("once (first seed)" if cfg["isolated_once"] else "per seed")
        + f"; proxy {cfg['proxy']}; c_a {cas or 'all 0'}"
        + (f"; contend jobs {' '.join(cfg['jobs_args'])}" if cfg["jobs_args"] else "")
    )


def render_mitigate(doc: dict, form: str = "text", source=None) -> str:
    s = _frames(doc)
    if form == "json":
        out = {
            "source": None if source is None else str(source),
            "config": doc["config"],
            "percentile_method": PERCENTILE_METHOD,
            "runtime_increase": fmt.records(s["runtime"], list(s["runtime"].columns)),
            "node_seconds_increase": fmt.records(
                s["node_seconds"], list(s["node_seconds"].columns)
            ),
            "welch_proxy_vs_netscope": fmt.records(s["welch"], list(s["welch"].columns)),
            "ca_error": fmt.records(s["ca_error"], list(s["ca_error"].columns)),
            "paper": {
                "source": PAPER_SOURCE,
                "table5_mean_runtime_increase": fmt.records(PAPER_TABLE5, list(PAPER_TABLE5)),
                "voltrino_p99": fmt.records(PAPER_VOLTRINO_P99, list(PAPER_VOLTRINO_P99)),
            },
        }
        return json.dumps(out, indent=1, allow_nan=False)
    if form == "csv":
        rt = s["runtime"].assign(metric="runtime_increase")
        ns = s["node_seconds"].assign(metric="node_seconds_increase", job="(mix)")
        both = pd.concat([rt, ns], ignore_index=True)
        keys = ["metric", "condition", "job", "runs", "mean", "p50", "p90", "p99"]
        return fmt.render(
            both, [fmt.Column(k, k) for k in keys + ["p99_excess_vs_netscope"]], "csv"
        )
    sections = [
        (
            "Runtime increase per job and mode (runtime / isolated runtime)",
            s["runtime"],
            RUNTIME_VIEW,
        ),
        ("Node-seconds increase of the mix", s["node_seconds"], NODE_SECONDS_VIEW),
        ("Welch t-test: proxy runtime increase, netscope vs. each mode", s["welch"], WELCH_VIEW),
        (CA_ERROR_TITLE, s["ca_error"], CA_ERROR_VIEW),
        ("The paper's numbers (published reference)", paper_frame(), PAPER_VIEW),
    ]
    return fmt.text_report(
        "contend mitigate" + (f": {source}" if source else ""),
        [summary_line(doc), headline(doc, s)],
        [section for section in sections if not section[1].empty],
        [PAPER_NOTE, NOTES],
        form,
    )


# ----------------------------------------------------------------- figures


def mitigate_figure(doc: dict, title: str = ""):
    """(a) p99 runtime increase per job and mode (Fig. 5), (b) p99 node-seconds
    increase per mode (Fig. 6), (c) with --ca-error runs: the proxy's p99 vs.
    the c_a error, dcqcn's p99 as a horizontal line (Fig. 7)."""
    import matplotlib.pyplot as plt

    from ..plots import CANARY_COLORS

    s = _frames(doc)
    base = [c["label"] for c in doc["config"]["conditions"] if c["ca_error_percent"] is None]
    colors = {c: CANARY_COLORS[i % len(CANARY_COLORS)] for i, c in enumerate(base)}
    has_err = not s["ca_error"].empty
    ncols = 3 if has_err else 2
    fig, axes = plt.subplots(
        1, ncols, figsize=(5.2 * ncols, 4.2), gridspec_kw={"width_ratios": [2, 1, 1.4][:ncols]}
    )
    rt = s["runtime"][s["runtime"]["condition"].isin(base)]
    jobs = list(dict.fromkeys(rt["job"]))
    width = 0.8 / max(1, len(base))
    ax = axes[0]
    for k, cond in enumerate(base):
        vals = [rt[(rt["job"] == j) & (rt["condition"] == cond)]["p99"].iloc[0] for j in jobs]
        xs = np.arange(len(jobs)) + (k - (len(base) - 1) / 2) * width
        ax.bar(xs, vals, width, label=cond, color=colors[cond])
    ax.axhline(1, color="black", lw=0.8, ls=":")
    ax.set_xticks(np.arange(len(jobs)))
    ax.set_xticklabels(jobs)
    ax.set_ylabel("p99 runtime increase (runtime / isolated)")
    ax.set_title("(a) runtime increase, p99 (Fig. 5)")
    ax.legend(fontsize="small")
    ax = axes[1]
    ns = s["node_seconds"][s["node_seconds"]["condition"].isin(base)]
    ax.bar(range(len(ns)), ns["p99"], color=[colors[c] for c in ns["condition"]])
    ax.axhline(1, color="black", lw=0.8, ls=":")
    ax.set_xticks(range(len(ns)))
    ax.set_xticklabels(ns["condition"], rotation=30, ha="right")
    ax.set_ylabel("p99 node-seconds increase")
    ax.set_title("(b) node-seconds of the mix, p99 (Fig. 6)")
    if has_err:
        ax = axes[2]
        ce = s["ca_error"].sort_values("ca_error_percent")
        ax.plot(
            ce["ca_error_percent"],
            ce["p99"],
            "o-",
            color=colors.get(NETSCOPE, "tab:green"),
            label=f"netscope, {s['proxy']} p99",
        )
        dq = ce["dcqcn_p99"].dropna()
        if not dq.empty:
            ax.axhline(dq.iloc[0], color=colors.get("dcqcn", "tab:red"), ls="--", label="dcqcn p99")
        ax.axhline(1, color="black", lw=0.8, ls=":")
        ax.set_xlabel("error in the proxy's c_a (%)")
        ax.set_ylabel(f"p99 runtime increase of {s['proxy']}")
        ax.set_title("(c) c_a estimation error (Fig. 7)")
        ax.legend(fontsize="small")
    runs = doc["config"]["repeat"]
    fig.suptitle(
        title or f"contend mitigate: {Path(doc['config']['mix_file']).name} ({runs} runs per mode)"
    )
    fig.tight_layout()
    return fig


FIGURE_CAPTION = (
    "(a) p99 of each job's runtime increase (runtime / isolated runtime) per throttle mode "
    "(the paper's Fig. 5); (b) p99 of the mix's node-seconds increase (Fig. 6); (c) when "
    "present, the proxy's p99 under netscope with its c_a off by the given error, dcqcn's p99 "
    "dashed (Fig. 7). Dotted line: no increase."
)


def html_section(doc: dict, source: str) -> str:
    s = _frames(doc)
    sections = [
        ("Runtime increase per job and mode", s["runtime"], RUNTIME_VIEW),
        ("Node-seconds increase of the mix", s["node_seconds"], NODE_SECONDS_VIEW),
    ]
    if not s["welch"].empty:
        sections.append(("Welch t-test (proxy, netscope vs. each mode)", s["welch"], WELCH_VIEW))
    if not s["ca_error"].empty:
        sections.append(("Delay-sensitivity error (Fig. 7)", s["ca_error"], CA_ERROR_VIEW))
    sections.append(("The paper's numbers (published reference)", paper_frame(), PAPER_VIEW))
    intro = [
        html.note(summary_line(doc)),
        f"<p>{escape(headline(doc, s))}</p>",
        html.figure(mitigate_figure(doc), "mitigation comparison", FIGURE_CAPTION),
    ]
    return html.document_section(
        f"contend mitigate: {source}", intro, sections, [PAPER_NOTE, NOTES]
    )


PLOT_ABOUT = (
    "p99 runtime increase per job and throttle mode, p99 node-seconds increase, and the "
    "proxy's p99 vs. c_a error, from one results file of `contend mitigate` (Netscope Figs 5-7)"
)

VIEW = document_view(
    "mitigate",
    SCHEMA_NAME,
    load_mitigate,
    render_mitigate,
    html_section,
    mitigate_figure,
    PLOT_ABOUT,
)
