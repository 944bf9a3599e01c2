"""Published baselines: GPCNeT (SC '19) Table 2, shipped as data/gpcnet_sc19_table2.csv.

The paper's three kernels map onto contend's canaries: P2P Lat -> rr_lat,
P2P BW+Sync -> rr_bw_sync, Allreduce -> allreduce.  Congestion Impact is
computed exactly as for a user's run (:func:`contend.analysis.congestion_impact`),
from the printed values.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ..analysis import congestion_impact
from .tables import IMPACT_COLUMNS, RUN_COLUMNS

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "gpcnet_sc19_table2.csv"
SOURCE = "GPCNeT SC'19 Table 2"

# paper column suffix -> (canary name, label, metric, units, higher_is_better)
KERNELS = {
    "lat": ("rr_lat", "RR Two-sided Lat (8 B)", "lat_us", "usec", False),
    "bw": ("rr_bw_sync", "RR Two-sided BW+Sync (131072 B)", "bw_mib_s", "MiB/s/rank", True),
    "allreduce": ("allreduce", "Multiple Allreduce (8 B)", "lat_us", "usec", False),
}


def load_table2(path=DATA_FILE) -> pd.DataFrame:
    """The paper's Table 2 as printed: one row per (system, nodes, PPort)."""
    frame = pd.read_csv(path, comment="#")
    expected = {"system", "nodes", "pport"} | {
        f"{phase}_{stat}_{k}"
        for phase in ("iso", "loaded")
        for stat in ("avg", "99")
        for k in KERNELS
    }
    missing = expected - set(frame.columns)
    if missing:
        raise ValueError(f"{path}: missing columns {sorted(missing)}")
    return frame


def published_impact_table(path=DATA_FILE) -> pd.DataFrame:
    """Table 2 in the layout of :func:`contend.reports.tables.compare_table` (one row per kernel)."""
    rows = []
    for _, rec in load_table2(path).iterrows():
        for key, (name, label, metric, units, hib) in KERNELS.items():
            iso_mean, con_mean = rec[f"iso_avg_{key}"], rec[f"loaded_avg_{key}"]
            iso_tail, con_tail = rec[f"iso_99_{key}"], rec[f"loaded_99_{key}"]
            rows.append(
                {
                    "run": f"{rec['system']} {rec['nodes']}n x{rec['pport']}",
                    "source": SOURCE,
                    "mpi_library": "",
                    "nodes": int(rec["nodes"]),
                    "ranks_per_node": str(rec["pport"]),
                    "ranks": int(rec["nodes"]) * int(rec["pport"]),
                    "system": rec["system"],
                    "name": name,
                    "label": label,
                    "metric": metric,
                    "units": units,
                    "higher_is_better": hib,
                    "isolated_count": pd.NA,
                    "congested_count": pd.NA,
                    "isolated_mean": float(iso_mean),
                    "congested_mean": float(con_mean),
                    "isolated_tail_99": float(iso_tail),
                    "congested_tail_99": float(con_tail),
                    "ci_mean": congestion_impact(iso_mean, con_mean, hib),
                    "ci_tail_99": congestion_impact(iso_tail, con_tail, hib),
                }
            )
    frame = pd.DataFrame(rows, columns=RUN_COLUMNS + ["system"] + IMPACT_COLUMNS)
    for col in ("isolated_count", "congested_count"):
        frame[col] = frame[col].astype("Int64")
    return frame


def figure11_rows(path=DATA_FILE) -> pd.DataFrame:
    """The runs of the paper's Figure 11: per system, the highest PPort in 16-24
    ("processes per network port ranging from 16 to 24"), else its highest PPort."""
    frame = published_impact_table(path)
    pport = frame["ranks_per_node"].astype(int)
    in_range = pport.where((pport >= 16) & (pport <= 24))
    best = in_range.groupby(frame["system"]).transform("max")
    best = best.fillna(pport.groupby(frame["system"]).transform("max"))
    return frame[pport == best].reset_index(drop=True)


def beside(frame: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (a :func:`contend.reports.tables.compare_table`) with published
    ``rows`` below it, in its columns."""
    return pd.concat([frame, rows[frame.columns]], ignore_index=True)
