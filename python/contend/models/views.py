"""Readable views of the model files: text / markdown tables and HTML sections.

Used by ``contend model show FILE``, ``contend report FILE`` and
``contend html FILE`` for files of schema contend-latency-model and
contend-sensitivity (every header carries its unit).
"""

from __future__ import annotations

import json
from html import escape

import pandas as pd

from .. import formatting as fmt
from ..formatting import Column
from ..reports.html import figure, note
from .modelfile import LATENCY_SCHEMA, SENSITIVITY_SCHEMA

VIEW_FORMATS = fmt.FORMATS

CONSTANTS_VIEW = [
    Column("constant", "Constant", "str"),
    Column("link_class", "Link class", "str"),
    Column("value", "Value"),
    Column("unit", "Unit", "str"),
]
ACCURACY_VIEW = [
    Column("set", "Samples of", "str"),
    Column("samples", "Samples", "int"),
    Column("pearson_r", "Pearson r"),
    Column("rmse_us", "RMSE (us)"),
    Column("mean_error_percent", "Mean error (%)"),
    Column("p25", "Abs. error p25 (%)"),
    Column("p50", "Abs. error p50 (%)"),
    Column("p75", "Abs. error p75 (%)"),
    Column("p90", "Abs. error p90 (%)"),
    Column("within_30_percent", "Within 30 % (% of samples)"),
]
APPS_VIEW = [
    Column("application", "Application", "str"),
    Column("estimate", "Aggregation", "str"),
    Column("pass", "Pass", "str"),
    Column("runs", "Runs", "int"),
    Column("c_a_s_per_us", "c_a (s per us)", "p"),
    Column("k_a_s", "k_a (s)"),
    Column("r", "Pearson r"),
    Column("m_ref_us", "M_ref (us)"),
    Column("delay_sensitivity", "Delay sensitivity (1)"),
    Column("c_a_settled_after_runs", "c_a within 10 % after (runs)", "int"),
]
RUNS_VIEW = [
    Column("order", "#", "int"),
    Column("file", "Results file", "str"),
    Column("seed", "Seed", "int"),
    Column("t_a_s", "T_a (s)", "p"),
    Column("m_a_us", "M_a (us)"),
    Column("m_a_weighted_us", "M_a weighted (us)"),
    Column("coverage_percent", "Window sampled (%)"),
    Column("intervals", "Intervals", "int"),
]
CONVERGENCE_VIEW = [
    Column("runs", "Runs", "int"),
    Column("c_a_s_per_us", "c_a (s per us)", "p"),
    Column("c_a_error_percent", "c_a error (%)"),
    Column("delay_sensitivity", "Delay sensitivity (1)"),
    Column("delay_sensitivity_error_percent", "Delay sensitivity error (%)"),
]


# ------------------------------------------------------------------ latency


def constants_frame(doc: dict) -> pd.DataFrame:
    rows = [
        {
            "constant": "k_1 (per link crossed, per unit Q)",
            "link_class": cls,
            "value": value,
            "unit": "ns",
        }
        for cls, value in doc["k_link_ns_per_q"].items()
    ]
    rows.append(
        {
            "constant": "k_2 (per one-way path)",
            "link_class": "-",
            "value": doc["k_const_ns"],
            "unit": "ns",
        }
    )
    return pd.DataFrame(rows)


def accuracy_frame(doc: dict) -> pd.DataFrame:
    rows = []
    for name in ("train", "holdout", "all"):
        acc = doc["accuracy"][name]
        share = acc["within_30_percent_share"]
        rows.append(
            {
                "set": {"train": "training", "holdout": "held out", "all": "all"}[name],
                "samples": acc["samples"],
                "pearson_r": acc["pearson_r"],
                "rmse_us": acc["rmse_us"],
                "mean_error_percent": acc["mean_error_percent"],
                **acc["abs_error_percent"],
                "within_30_percent": None if share is None else 100.0 * share,
            }
        )
    return pd.DataFrame(rows)


def latency_summary(doc: dict, source: str) -> list:
    paths, train, split = doc["paths"], doc["training"], doc["split"]
    lines = [
        f"Latency model (Netscope eq. 6-12): {source}",
        (
            f"  fabric {paths['topology']}, routing {paths['routing']}; paths {paths['file']} "
            f"({paths['links']} links); link classes: {doc['link_classes']}"
        ),
        (
            f"  trained on {train['file'] or 'samples given from Python'}: {train['runs']} run(s), "
            f"{train['samples_used']} of {train['samples']} samples used; "
            f"{100 * split['holdout_fraction']:g} % held out ({split['holdout_samples']} samples, "
            f"seed {split['seed']})"
        ),
        (
            f"  PTs clamped to {doc['pts_clamp_percent']:g} % in {train['pts_clamped_intervals']} of "
            f"{train['pts_intervals']} (link, interval) rows; fit: {doc['fit']['parameters']} "
            f"constants, design rank {doc['fit']['design_rank']}"
        ),
    ]
    und = doc["fit"]["undetermined_classes"]
    if und:
        lines.append(f"  undetermined (no training path crosses them): {', '.join(und)}")
    folded = doc["fit"].get("folded_classes") or []
    if folded:
        lines.append(
            f"  folded into k_2 (never stalled in training, as many on every path): "
            f"{', '.join(folded)}"
        )
    return lines


LATENCY_NOTE = (
    "D(n1,n2) = sum over the routing's paths S_i of (1/|S*|) sum over links l of S_i of "
    "k_1[class(l)] Q_l + k_2, Q_l = 100/(100 - PTs_l); fitted on RTT = D(a,b) + D(b,a). "
    "Error = (predicted - measured) / measured."
)


def render_latency(doc: dict, source: str, form: str = "text") -> str:
    consts, acc = constants_frame(doc), accuracy_frame(doc)
    if form == "csv":
        return fmt.render(consts, CONSTANTS_VIEW, "csv")
    if form == "json":
        return json.dumps(
            {
                "source": source,
                "constants": fmt.records(consts, [c.key for c in CONSTANTS_VIEW]),
                "accuracy": fmt.records(acc, [c.key for c in ACCURACY_VIEW]),
            },
            indent=1,
            allow_nan=False,
        )
    lines = latency_summary(doc, source)
    if form == "markdown":
        lines = [f"## {lines[0]}", ""] + [ln.strip() + "  " for ln in lines[1:]]
    parts = lines + fmt.titled("Constants (eq. 12)", fmt.render(consts, CONSTANTS_VIEW, form), form)
    parts += fmt.titled("Accuracy of predicted RTT", fmt.render(acc, ACCURACY_VIEW, form), form)
    parts += ["", fmt.note(LATENCY_NOTE, form)]
    return "\n".join(parts)


# -------------------------------------------------------------- sensitivity


def applications_frame(doc: dict) -> pd.DataFrame:
    rows = []
    for name, app in doc["applications"].items():
        for key in ("uniform", "traffic_weighted"):
            est = app["estimates"].get(key)
            if est is None:
                continue
            rows.append(
                {
                    "application": name,
                    "estimate": "uniform (eq. 4)" if key == "uniform" else "traffic-weighted",
                    "pass": app["pass"],
                    "runs": app["runs"],
                    "c_a_s_per_us": est["c_a_s_per_us"],
                    "k_a_s": est["k_a_s"],
                    "r": est["r"],
                    "m_ref_us": est["m_ref_us"],
                    "delay_sensitivity": est["delay_sensitivity"],
                    "c_a_settled_after_runs": est["convergence"]["c_a_settled_after_runs"],
                }
            )
    return pd.DataFrame(rows, columns=[c.key for c in APPS_VIEW])


def runs_frame(app: dict) -> pd.DataFrame:
    rows = []
    for i, run in enumerate(app["run_table"], start=1):
        rows.append(
            {
                "order": i,
                "file": run["file"],
                "seed": run["seed"],
                "t_a_s": run["t_a_s"],
                "m_a_us": run["m_a_us"],
                "m_a_weighted_us": run["m_a_weighted_us"],
                "coverage_percent": 100.0 * run["coverage"],
                "intervals": run["intervals"],
            }
        )
    return pd.DataFrame(rows, columns=[c.key for c in RUNS_VIEW])


def convergence_frame(est: dict) -> pd.DataFrame:
    return pd.DataFrame(est["convergence"]["rows"], columns=[c.key for c in CONVERGENCE_VIEW])


def sensitivity_summary(doc: dict, source: str) -> list:
    prov = doc["provenance"]
    order = prov["order"] + (f" (seed {prov['order_seed']})" if prov["order"] == "shuffled" else "")
    return [
        f"Delay sensitivity (Netscope eq. 2-5): {source}",
        (
            f"  latency model {prov['latency_model']['file']}; paths {prov['paths']['file']}; "
            f"runs added in {order} order"
        ),
    ]


SENSITIVITY_NOTE = (
    "T_a = c_a M_a + k_a over the runs; M_a = time-weighted mean over the perform window of "
    "M = o_src + D + size/bw + o_dst averaged over the job's node pairs (uniform: eq. 4; "
    "traffic-weighted: by bytes). Delay sensitivity = c_a D_ref / T_ref at the run of smallest M_a "
    "(D_ref: its M_a less o + size/bw + o; T_ref: its runtime): 1 for a pure ping-pong, 0 when runtime ignores congestion."
)


def _delivery_line(app: dict) -> str:
    d = app["delivery"]
    size = (
        f"{d['msg_bytes']:g} B (--msg-bytes)"
        if d["msg_bytes_source"] == "option"
        else "the job's mean message size per run"
    )
    nic = (
        f"{d['nic_gbps']:g} Gbit/s (--nic-gbps)"
        if d["nic_gbps_source"] == "option"
        else "the simulator's node_gbps per run"
    )
    return f"o = {d['overhead_us']:g} us, message size {size}, NIC bandwidth {nic}"


def render_sensitivity(doc: dict, source: str, form: str = "text") -> str:
    apps = applications_frame(doc)
    if form == "csv":
        return fmt.render(apps, APPS_VIEW, "csv")
    if form == "json":
        return json.dumps(
            {"source": source, "applications": fmt.records(apps, [c.key for c in APPS_VIEW])},
            indent=1,
            allow_nan=False,
        )
    lines = sensitivity_summary(doc, source)
    if form == "markdown":
        lines = [f"## {lines[0]}", ""] + [ln.strip() for ln in lines[1:]]
    parts = lines + fmt.titled(
        "Runtime fit per application", fmt.render(apps, APPS_VIEW, form), form
    )
    for name, app in doc["applications"].items():
        runs = fmt.render(runs_frame(app), RUNS_VIEW, form)
        parts += fmt.titled(f"{name}: runs ({_delivery_line(app)})", runs, form)
        for key, est in app["estimates"].items():
            if isinstance(est, dict):
                table = fmt.render(convergence_frame(est), CONVERGENCE_VIEW, form)
                parts += fmt.titled(f"{name}: convergence, {key.replace('_', '-')}", table, form)
        weighted = app["estimates"].get("traffic_weighted_note")
        if weighted:
            parts += ["", f"  traffic-weighted: {weighted}"]
    parts += ["", fmt.note(SENSITIVITY_NOTE, form)]
    return "\n".join(parts)


def render_model(doc: dict, source: str, form: str = "text") -> str:
    """The view of either model file in one of formatting.FORMATS."""
    if doc["schema"] == LATENCY_SCHEMA:
        return render_latency(doc, source, form)
    if doc["schema"] == SENSITIVITY_SCHEMA:
        return render_sensitivity(doc, source, form)
    raise ValueError(f"{source}: not a model file (schema {doc.get('schema')!r})")


# --------------------------------------------------------------------- html


def _notes(lines) -> str:
    return "".join(note(ln.strip()) for ln in lines)


def html_section(doc: dict, source: str) -> str:
    """One HTML section (tables and embedded figures) of a model file."""
    from .figures import latency_figure, sensitivity_figure

    if doc["schema"] == LATENCY_SCHEMA:
        summary = latency_summary(doc, source)
        return "\n".join(
            [
                f"<h2>{escape(summary[0])}</h2>",
                _notes(summary[1:]),
                "<h3>Constants (eq. 12)</h3>",
                fmt.html_table(constants_frame(doc), CONSTANTS_VIEW),
                "<h3>Accuracy of predicted RTT</h3>",
                fmt.html_table(accuracy_frame(doc), ACCURACY_VIEW),
                figure(
                    latency_figure(doc),
                    "predicted vs measured RTT",
                    "Left: predicted vs measured round-trip time, y = x line; held-out "
                    "samples (red triangles) were not used by the fit. Right: percent error "
                    "of each prediction, the +-30 % band of Netscope Fig. 4a shaded.",
                ),
                note(LATENCY_NOTE),
            ]
        )
    summary = sensitivity_summary(doc, source)
    parts = [
        f"<h2>{escape(summary[0])}</h2>",
        _notes(summary[1:]),
        "<h3>Runtime fit per application</h3>",
        fmt.html_table(applications_frame(doc), APPS_VIEW),
    ]
    for name, app in doc["applications"].items():
        parts += [
            f"<h3>{escape(name)}</h3>",
            note(_delivery_line(app)),
            figure(
                sensitivity_figure(name, app),
                f"runtime vs delivery time of {name}",
                "Left: runtime T_a of each run against its expected message delivery time "
                "M_a, with the fitted lines T_a = c_a M_a + k_a. Right: error of c_a "
                "estimated from the first n runs against the final estimate (+-10 % band).",
            ),
            fmt.html_table(runs_frame(app), RUNS_VIEW),
        ]
        for key, est in app["estimates"].items():
            if isinstance(est, dict):
                parts += [
                    f"<h3>{escape(name)}: convergence, {escape(key.replace('_', '-'))}</h3>",
                    fmt.html_table(convergence_frame(est), CONVERGENCE_VIEW),
                ]
    parts.append(note(SENSITIVITY_NOTE))
    return "\n".join(parts)
