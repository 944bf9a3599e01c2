"""Load ``contend jobs`` results files (schema ``contend-jobs``) for report, html and plot.

A file is checked (finite numbers only, ``schemas/contend-jobs.schema.json``,
a real run rather than a dry run) and turned into pandas frames:

* ``JobsResults.entries``: one row per job and per motif (``position`` 0 for a
  job, the motif's place in the chain from 1) with its identity: job, motif
  name and label, message bytes, ranks, repeats;
* ``JobsResults.summary``: one row per entry and pass with the file's own
  statistics of ``time_s`` (count, mean, stddev, min, max over ranks and
  repeats), ``slowest_rank_mean_s`` and the file's Congestion Impact;
* ``JobsResults.repeats``: long form, one row per entry, pass and repeat with
  ``time_s`` = the slowest rank's time in that repeat (``slowest_rank_s``,
  schema 1.2; empty for older files; NaN where the file has null).

Problems raise :class:`contend.results.ResultsError` naming the file and field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .jsonfinite import check_finite
from .limits import clip_repr
from .results import (
    ResultsError,
    RunFacts,
    _read_text,
    check_schema,
    default_label,
    parse_document,
)

SCHEMA_NAME = "contend-jobs"
SCHEMA_FILE = "contend-jobs.schema.json"
SUPPORTED_MAJOR = 1
PASSES = ("isolated", "concurrent")
VALID_HINT = (
    "a results file written by `contend jobs FILE -o OUT.json` "
    f"(schema '{SCHEMA_NAME}' version {SUPPORTED_MAJOR}.x)"
)
ENTRY_COLUMNS = [
    "entry",
    "job",
    "position",
    "motif",
    "motif_label",
    "message_bytes",
    "ranks",
    "repeats",
]
SUMMARY_COLUMNS = [
    "entry",
    "pass",
    "count",
    "mean_s",
    "stddev_s",
    "min_s",
    "max_s",
    "slowest_rank_mean_s",
    "ci_mean",
    "ci_slowest_rank",
]
REPEAT_COLUMNS = ["entry", "pass", "repeat", "time_s"]
# A measured time outside [0, MAX_TIME_S] is no run's: a corrupt or forged file.
MAX_TIME_S = 1e9


def _check_times(doc: dict, source: str) -> None:
    """ResultsError naming the first time of a job or motif pass (time_s
    statistics, slowest_rank_mean_s, slowest_rank_s) that is negative or
    beyond MAX_TIME_S: the schema takes any number there."""

    def check(where, value):
        if isinstance(value, (int, float)) and not 0 <= value <= MAX_TIME_S:
            raise ResultsError(
                f"{source}: {where} is {value:.6g} s: a measured time is from 0 to "
                f"{MAX_TIME_S:g} s; the file is corrupt or was not written by contend"
            )

    for i, job in enumerate(doc["jobs"]):
        blocks = [(f"jobs[{i}]", job)]
        blocks += [(f"jobs[{i}].motifs[{k}]", m) for k, m in enumerate(job["motifs"])]
        for where, block in blocks:
            for name, res in (block.get("results") or {}).items():
                if not isinstance(res, dict):
                    continue
                at = f"{where}.results.{name}"
                for key in ("mean", "min", "max", "stddev"):
                    check(f"{at}.time_s.{key}", (res.get("time_s") or {}).get(key))
                check(f"{at}.slowest_rank_mean_s", res.get("slowest_rank_mean_s"))
                for r, value in enumerate(res.get("slowest_rank_s") or []):
                    check(f"{at}.slowest_rank_s[{r}]", value)


def validate_jobs_document(doc, source: str) -> None:
    """Raise ResultsError unless ``doc`` is the results of a real `contend jobs` run."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_NAME:
        name = doc.get("schema") if isinstance(doc, dict) else None
        raise ResultsError(f"{source}: field 'schema' is {clip_repr(name)}, expected {VALID_HINT}")
    version = doc.get("schema_version")
    if not isinstance(version, str) or version.split(".", 1)[0] != str(SUPPORTED_MAJOR):
        raise ResultsError(
            f"{source}: field 'schema_version' is {clip_repr(version)}; this reader supports "
            f"major version {SUPPORTED_MAJOR} ('{SUPPORTED_MAJOR}.N'): upgrade contend's "
            "Python package to read newer files"
        )
    check_finite(doc, source, ResultsError)
    check_schema(doc, source, SCHEMA_FILE, VALID_HINT)
    if doc["dry_run"] or not doc["passes"]:
        raise ResultsError(
            f"{source}: a dry run (`contend jobs --dry-run`) holds traffic, no timings; "
            "give the results of a run under mpirun or --engine sim"
        )
    _check_times(doc, source)


def _ci(block, key):
    return None if not isinstance(block, dict) else block.get(key)


def _frames(doc: dict) -> tuple:
    entries, summary, repeats = [], [], []

    def add(entry_id, job, motif, results, ci):
        entries.append(
            {
                "entry": entry_id,
                "job": job["name"],
                "position": 0 if motif is None else motif["position"],
                "motif": None if motif is None else motif["name"],
                "motif_label": None if motif is None else motif["label"],
                "message_bytes": None if motif is None else motif["message_bytes"],
                "ranks": job["ranks"],
                "repeats": job["repeat"],
            }
        )
        for name in PASSES:
            res = results.get(name)
            if res is None:
                continue
            stat = res["time_s"]
            summary.append(
                {
                    "entry": entry_id,
                    "pass": name,
                    "count": stat["count"],
                    "mean_s": stat["mean"],
                    "stddev_s": stat["stddev"],
                    "min_s": stat["min"],
                    "max_s": stat["max"],
                    "slowest_rank_mean_s": res["slowest_rank_mean_s"],
                    "ci_mean": _ci(ci, "mean"),
                    "ci_slowest_rank": _ci(ci, "slowest_rank"),
                }
            )
            for rep, value in enumerate(res.get("slowest_rank_s") or []):
                repeats.append({"entry": entry_id, "pass": name, "repeat": rep, "time_s": value})

    for job in doc["jobs"]:
        add(len(entries), job, None, job["results"], job["ci"])
        for motif in job["motifs"]:
            add(len(entries), job, motif, motif["results"], motif["ci"])
    ent = pd.DataFrame(entries, columns=ENTRY_COLUMNS).set_index("entry")
    summ = pd.DataFrame(summary, columns=SUMMARY_COLUMNS)
    num = SUMMARY_COLUMNS[3:]
    summ[num] = summ[num].astype(float)
    reps = pd.DataFrame(repeats, columns=REPEAT_COLUMNS)
    reps["time_s"] = reps["time_s"].astype(float)
    return ent, summ, reps


@dataclass
class JobsResults(RunFacts):
    """A loaded, validated ``contend jobs`` results file."""

    path: Path
    doc: dict
    label: str
    entries: pd.DataFrame = field(repr=False)
    summary: pd.DataFrame = field(repr=False)
    repeats: pd.DataFrame = field(repr=False)

    @property
    def passes(self) -> list:
        return list(self.doc["passes"])

    @property
    def engine(self) -> str:
        return str(self.doc.get("engine") or self.doc["config"]["options"].get("engine") or "mpi")

    @property
    def has_repeats(self) -> bool:
        """Whether the file records per-repetition times (schema 1.2 on)."""
        return not self.repeats.empty

    def jobs(self) -> list:
        return list(dict.fromkeys(self.entries["job"]))


def parse_jobs(text: str, source: str = "<string>") -> dict:
    return parse_document(text, source, validate_jobs_document, VALID_HINT)


def load_jobs(path, label: str | None = None) -> JobsResults:
    """Read, validate and tabulate one ``contend jobs`` results file (.json or .json.gz)."""
    path = Path(path)
    doc = parse_jobs(_read_text(path), str(path))
    entries, summary, repeats = _frames(doc)
    return JobsResults(
        path=path,
        doc=doc,
        label=label or default_label(path),
        entries=entries,
        summary=summary,
        repeats=repeats,
    )
