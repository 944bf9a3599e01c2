"""Statistics of a ``contend mitigate`` results file (schema ``contend-mitigate``).

Everything here is recomputed from the file's runs (``runs[].runtime_s``) and
isolated runtimes (``isolated[].runtime_s``), so the harness, ``contend
report`` and the figures share one definition (seeds/netscope-ics21.md 6.2):

* runtime increase of a job in a run = its runtime in the concurrent pass
  (perform_end_s - perform_start_s) / its isolated runtime at the same
  placement (the isolated run of the same seed; with ``isolated_once`` the
  isolated run of the first seed);
* node-seconds of the mix in a run = sum over jobs of nodes x runtime;
  node-seconds increase = that / sum over jobs of nodes x isolated runtime;
* percentiles: :data:`PERCENTILE_METHOD`;
* headline ratio of a mode: (p99 increase - 1) of the mode / (p99 increase - 1)
  of netscope (the paper's 16.3x = 1.8 / 0.11);
* Welch's t-test (:func:`contend.analysis.welch.welch_t_test`) of netscope vs.
  each other mode on the proxy's runtime increase.

Also the paper's published numbers (:data:`PAPER_TABLE5`,
:data:`PAPER_VOLTRINO_P99`) as reference data.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..analysis.welch import significance_marker, welch_t_test
from ..results import ResultsError, check_versioned, load_document

SCHEMA_NAME = "contend-mitigate"
SCHEMA_FILE = "contend-mitigate.schema.json"
SCHEMA_VERSION = "1.0"
PERCENTILES = (50, 90, 99)
PERCENTILE_METHOD = (
    "numpy.percentile, method 'linear' (Hyndman-Fan type 7: linear interpolation "
    "between the two nearest order statistics at rank (n-1)q)"
)
NETSCOPE = "netscope"
VALID_HINT = (
    f"a results file written by `contend mitigate MIX -o OUT.json` (schema '{SCHEMA_NAME}')"
)

PAPER_SOURCE = "Netscope, ICS '21 (seeds/netscope-ics21.md)"
# Table 5 (Cori, 108 nodes per application): mean runtime increase per mechanism.
PAPER_TABLE5 = pd.DataFrame(
    [
        ("MILC", 1.3, 1.2, 1.02),
        ("AMG", 1.3, 1.1, 1.03),
        ("LAMMPS", 1.7, 1.3, 1.10),
    ],
    columns=["application", "cray_static", "dcqcn", "netscope"],
)
# Section 6.2 text (Voltrino, Fig. 5-6): p99 runtime increase of MILC and its
# p99 node-seconds increase per mechanism.
PAPER_VOLTRINO_P99 = pd.DataFrame(
    [
        ("MILC p99 runtime increase", 2.8, 2.3, 1.11),
        ("MILC p99 node-seconds increase", 1.32, 1.24, 1.02),
    ],
    columns=["application", "cray_static", "dcqcn", "netscope"],
)


def validate_document(doc, source: str) -> None:
    """ResultsError naming the first bad field unless ``doc`` is a mitigate file."""
    check_versioned(doc, source, SCHEMA_NAME, SCHEMA_FILE, VALID_HINT)


def load_mitigate(path) -> dict:
    """The validated document of a mitigate results file."""
    return load_document(path, validate_document, VALID_HINT)


# ---------------------------------------------------------------- per run


def _isolated_by_seed(doc: dict) -> dict:
    return {iso["seed"]: iso for iso in doc["isolated"]}


def isolated_for(doc: dict, seed: int) -> dict:
    """The isolated run whose runtimes divide those of the run with ``seed``."""
    if doc["config"]["isolated_once"]:
        return doc["isolated"][0]
    by_seed = _isolated_by_seed(doc)
    if seed not in by_seed:
        raise ResultsError(f"no isolated run with seed {seed} in the file")
    return by_seed[seed]


def run_frames(doc: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per job and run, per run): runtime and node-seconds increases.

    Job rows: condition, seed, job, nodes, runtime_s, isolated_runtime_s,
    runtime_increase.  Run rows: condition, seed, node_seconds,
    isolated_node_seconds, node_seconds_increase.
    """
    nodes = {j["name"]: j["nodes"] for j in doc["jobs"]}
    job_rows, run_rows = [], []
    for run in doc["runs"]:
        iso = isolated_for(doc, run["seed"])["runtime_s"]
        ns = iso_ns = 0.0
        for job, t in run["runtime_s"].items():
            job_rows.append(
                {
                    "condition": run["condition"],
                    "seed": run["seed"],
                    "job": job,
                    "nodes": nodes[job],
                    "runtime_s": t,
                    "isolated_runtime_s": iso[job],
                    "runtime_increase": t / iso[job] if iso[job] > 0 else math.nan,
                }
            )
            ns += nodes[job] * t
            iso_ns += nodes[job] * iso[job]
        run_rows.append(
            {
                "condition": run["condition"],
                "seed": run["seed"],
                "node_seconds": ns,
                "isolated_node_seconds": iso_ns,
                "node_seconds_increase": ns / iso_ns if iso_ns > 0 else math.nan,
            }
        )
    return pd.DataFrame(job_rows), pd.DataFrame(run_rows)


def percentile(values, q: float) -> float:
    """One percentile by :data:`PERCENTILE_METHOD`; NaN for no values."""
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    return float(np.percentile(values, q)) if values.size else math.nan


def _stats(values) -> dict:
    out = {"runs": len(values), "mean": float(np.mean(values)) if len(values) else math.nan}
    for q in PERCENTILES:
        out[f"p{q}"] = percentile(values, q)
    return out


def headline_ratio(p99: float, netscope_p99: float) -> float:
    """(p99 - 1) / (netscope's p99 - 1): how many times netscope's tail excess
    the mode's is; NaN when netscope's p99 is not above 1 (no excess to divide by)."""
    if not (math.isfinite(p99) and math.isfinite(netscope_p99)) or netscope_p99 <= 1:
        return math.nan
    return (p99 - 1) / (netscope_p99 - 1)


def conditions(doc: dict) -> list:
    return [c["label"] for c in doc["config"]["conditions"]]


def summarize(doc: dict) -> dict:
    """Frames: ``runtime`` (per condition and job), ``node_seconds`` (per
    condition), ``welch`` (proxy: netscope vs. each other condition),
    ``ca_error`` (proxy p99 vs. c_a error, empty without --ca-error)."""
    jobs_f, runs_f = run_frames(doc)
    labels = conditions(doc)
    jobs = [j["name"] for j in doc["jobs"]]
    proxy = doc["config"]["proxy"]
    rt_rows, ns_rows = [], []
    for cond in labels:
        sel = jobs_f[jobs_f["condition"] == cond] if not jobs_f.empty else jobs_f
        for job in jobs:
            vals = sel.loc[sel["job"] == job, "runtime_increase"].to_numpy(float)
            rt_rows.append({"condition": cond, "job": job, **_stats(vals)})
        vals = (
            runs_f.loc[runs_f["condition"] == cond, "node_seconds_increase"].to_numpy(float)
            if not runs_f.empty
            else np.array([])
        )
        ns_rows.append({"condition": cond, **_stats(vals)})
    runtime = pd.DataFrame(rt_rows)
    node_seconds = pd.DataFrame(ns_rows)
    has_ns = NETSCOPE in labels
    for frame, keys in ((runtime, ["job"]), (node_seconds, [])):
        ref = {}
        if has_ns:
            for _, r in frame[frame["condition"] == NETSCOPE].iterrows():
                ref[tuple(r[k] for k in keys)] = r["p99"]
        frame["p99_excess_vs_netscope"] = [
            headline_ratio(r["p99"], ref.get(tuple(r[k] for k in keys), math.nan))
            for _, r in frame.iterrows()
        ]
    welch_rows = []
    if has_ns and not jobs_f.empty:
        proxy_f = jobs_f[jobs_f["job"] == proxy]
        ns_vals = proxy_f.loc[proxy_f["condition"] == NETSCOPE, "runtime_increase"].to_numpy(float)
        for cond in labels:
            if cond == NETSCOPE:
                continue
            vals = proxy_f.loc[proxy_f["condition"] == cond, "runtime_increase"].to_numpy(float)
            res = welch_t_test(vals, ns_vals)
            welch_rows.append(
                {
                    "condition": cond,
                    "job": proxy,
                    "mean": float(np.mean(vals)) if len(vals) else math.nan,
                    "netscope_mean": float(np.mean(ns_vals)) if len(ns_vals) else math.nan,
                    "t": res.t,
                    "df": res.df,
                    "p": res.p,
                    "sig": significance_marker(res.p),
                }
            )
    welch = pd.DataFrame(
        welch_rows, columns=["condition", "job", "mean", "netscope_mean", "t", "df", "p", "sig"]
    )
    return {
        "runtime": runtime,
        "node_seconds": node_seconds,
        "welch": welch,
        "ca_error": ca_error_frame(doc, runtime),
        "proxy": proxy,
    }


def ca_error_frame(doc: dict, runtime: pd.DataFrame) -> pd.DataFrame:
    """Proxy p50/p99 runtime increase per c_a error (netscope's own runs at 0 %),
    with dcqcn's p99 beside (NaN without dcqcn); empty without --ca-error."""
    cols = ["ca_error_percent", "condition", "c_a", "runs", "p50", "p99", "dcqcn_p99"]
    errors = doc["config"]["ca_error_percent"]
    if not errors:
        return pd.DataFrame(columns=cols)
    proxy = doc["config"]["proxy"]
    by_label = {c["label"]: c for c in doc["config"]["conditions"]}
    prox = runtime[runtime["job"] == proxy].set_index("condition")
    dcqcn = prox["p99"].get("dcqcn", math.nan)
    rows = []
    for e in errors:
        label = ca_error_label(e) if ca_error_label(e) in by_label else NETSCOPE
        if label not in prox.index:
            continue
        r = prox.loc[label]
        rows.append(
            {
                "ca_error_percent": float(e),
                "condition": label,
                "c_a": by_label[label]["proxy_c_a"],
                "runs": int(r["runs"]),
                "p50": r["p50"],
                "p99": r["p99"],
                "dcqcn_p99": dcqcn,
            }
        )
    return pd.DataFrame(rows, columns=cols)


def ca_error_label(error_percent: float) -> str:
    """Condition label of netscope with the proxy's c_a off by error_percent."""
    return f"{NETSCOPE} c_a{error_percent:+g}%"


def summary_block(doc: dict) -> dict:
    """The ``summary`` object written into the file (plain JSON, NaN -> null)."""
    from ..formatting import records

    s = summarize(doc)
    return {
        "percentile_method": PERCENTILE_METHOD,
        "proxy": s["proxy"],
        "runtime_increase": records(s["runtime"], list(s["runtime"].columns)),
        "node_seconds_increase": records(s["node_seconds"], list(s["node_seconds"].columns)),
        "welch_proxy_vs_netscope": records(s["welch"], list(s["welch"].columns)),
        "ca_error": records(s["ca_error"], list(s["ca_error"].columns)),
    }
