"""The ping-pong training file (schema contend-pingpong-train) as fit inputs.

``contend pingpong-train -o train.json`` writes per run the RTT samples
(src, dst, t_start_s, t_end_s, rtt_us) and the name of the run's counter CSV;
file names are relative to the training file's directory.  This module checks
the file, reads each run's counters with :func:`contend.telemetry.read_counters`
and turns them into PTs intervals with :func:`contend.telemetry.stall_intervals`
(format A), giving what :func:`contend.models.latency.fit_latency` takes.

Runs on a launcher (``--engine mpi``) record no counter file: the site's own
collection is given with ``counters`` (one CSV for those runs, or for all runs
when ``counters_override_all``), on the same (Unix) clock as the windows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .errors import ModelError
from .paths import check_header, file_sha256, read_json

SCHEMA_NAME = "contend-pingpong-train"
HINT = "a training file written by `contend pingpong-train -o FILE` (schema 'contend-pingpong-train' 1.x)"


@dataclass
class TrainingSet:
    """Samples and per-run PTs intervals of a training file."""

    file: Path
    samples: pd.DataFrame  # run, src, dst, t_start_s, t_end_s, rtt_us
    intervals: dict  # run -> stall_intervals frame
    paths_file: Path | None
    provenance: dict = field(default_factory=dict)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parse_training(doc, source: str) -> tuple:
    """(samples frame, runs list) of a parsed training document; ModelError naming fields."""
    check_header(doc, SCHEMA_NAME, 1, source, HINT)
    runs = doc.get("runs")
    if not isinstance(runs, list) or not runs:
        raise ModelError(f"{source}: field 'runs' missing or empty ({HINT})")
    rows, seen = [], set()
    for i, run in enumerate(runs):
        where = f"{source}: runs[{i}]"
        if not isinstance(run, dict):
            raise ModelError(f"{where}: not an object")
        key = run.get("run", i)
        if key in seen:
            raise ModelError(f"{where}: run {key!r} appears twice")
        seen.add(key)
        samples = run.get("samples")
        if not isinstance(samples, list):
            raise ModelError(f"{where}: field 'samples' missing")
        for j, smp in enumerate(samples):
            ok = (
                isinstance(smp, dict)
                and all(isinstance(smp.get(k), int) and smp[k] >= 0 for k in ("src", "dst"))
                and all(_number(smp.get(k)) for k in ("t_start_s", "t_end_s", "rtt_us"))
            )
            if not ok or smp["rtt_us"] <= 0 or smp["t_end_s"] <= smp["t_start_s"]:
                raise ModelError(
                    f"{where}.samples[{j}]: needs node indices src, dst and numbers t_start_s "
                    "< t_end_s, rtt_us > 0"
                )
            rows.append(
                (key, smp["src"], smp["dst"], smp["t_start_s"], smp["t_end_s"], smp["rtt_us"])
            )
    if not rows:
        raise ModelError(f"{source}: no RTT sample in any run")
    frame = pd.DataFrame(rows, columns=["run", "src", "dst", "t_start_s", "t_end_s", "rtt_us"])
    return frame, runs


def read_intervals(csv: Path, source: str) -> pd.DataFrame:
    """PTs intervals of one counter CSV through contend.telemetry (format A)."""
    try:
        from ..telemetry import read_counters, stall_intervals
    except ImportError as exc:  # pragma: no cover - the package ships it
        raise ModelError(f"contend.telemetry is not available: {exc}") from None
    try:
        from ..telemetry.reader import detect_source

        src = source if source and source != "auto" else detect_source(csv)
        # the simulator's per-VC rows (port "P/vcV") too: paths with VCs use them
        params = {"keep_vcs": True} if src == "sim" else {}
        counters = read_counters(csv, source=src, **params)
        return stall_intervals(counters)
    except (ValueError, OSError, KeyError) as exc:
        text = str(exc) if isinstance(exc, ValueError) else f"{exc}"
        raise ModelError(text if str(csv) in text else f"{csv}: {text}") from None


def load_training(
    path,
    paths_override=None,
    counters=None,
    counters_source=None,
    counters_override_all: bool = False,
) -> TrainingSet:
    """Read a training file and every counter CSV it names (ModelError on bad input)."""
    path = Path(path)
    source = str(path)
    doc = read_json(path, HINT)
    samples, runs = parse_training(doc, source)
    base = path.resolve().parent
    if paths_override:
        paths_file = Path(paths_override)
    elif isinstance(doc.get("paths"), str) and doc["paths"]:
        paths_file = base / doc["paths"]
    else:
        raise ModelError(
            f"{source}: field 'paths' is empty (runs on a launcher): give the routing's paths "
            "with --paths P.json (`contend topology paths`)"
        )
    plan = []  # (run key, csv, source) checked before any is read
    for i, run in enumerate(runs):
        key = run.get("run", i)
        own = run.get("counters")
        if counters and (counters_override_all or not own):
            csv, src = Path(counters), counters_source or "auto"
        elif isinstance(own, str) and own:
            csv = base / own
            src = counters_source or run.get("counters_source") or "auto"
        else:
            raise ModelError(
                f"{source}: runs[{i}] names no counter file (runs on a launcher): give the "
                "counters collected meanwhile with --counters CSV"
            )
        if not csv.is_file():
            raise ModelError(f"{source}: runs[{i}]: counter file {csv} not found")
        plan.append((key, csv, src))
    cache, intervals, refs = {}, {}, []
    for key, csv, src in plan:
        if (csv, src) not in cache:
            cache[(csv, src)] = read_intervals(csv, src)
        intervals[key] = cache[(csv, src)]
        refs.append({"run": key, "file": str(csv), "sha256": file_sha256(csv), "source": src})
    provenance = {
        "file": str(path),
        "sha256": file_sha256(path),
        "runs": len(runs),
        "samples": len(samples),
        "counters": refs,
    }
    return TrainingSet(path, samples, intervals, paths_file, provenance)
