"""Load contend results files (``contend network`` / ``contend load`` JSON).

A results file is validated against ``schemas/contend-results.schema.json``
and turned into pandas frames:

* ``Results.tests``: one row per test and phase, with the statistics of the
  test's metric (``lat_us`` or ``bw_mib_s``) as columns;
* ``Results.histograms``: one row per non-empty histogram bucket (long form,
  keyed by the test's row number);
* ``Results.impact``: the Congestion Impact rows the benchmark wrote.

Every problem with a file is raised as :class:`ResultsError` (a ValueError)
whose message names the file and the offending field and says what is valid.
Files may be gzip-compressed (``.json.gz``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import pandas as pd

from . import infile
from .jsonfinite import check_finite, key_path
from .limits import clip, clip_repr

SCHEMA_NAME = "contend-results"
SCHEMA_FILE = "contend-results.schema.json"
SUPPORTED_MAJOR = 1

STAT_KEYS = (
    "count",
    "mean",
    "stddev",
    "min",
    "max",
    "p0_1",
    "p1",
    "p50",
    "p99",
    "p99_9",
    "tail_99",
    "tail_99_9",
)
TEST_KEYS = (
    "name",
    "label",
    "role",
    "phase",
    "during",
    "metric",
    "units",
    "higher_is_better",
    "message_bytes",
    "ranks_sampled",
    "measurements_done",
    "timed_out",
    "elapsed_s",
)

VALID_HINT = (
    "a results file written by `contend network` or `contend load -o FILE` "
    f"(schema '{SCHEMA_NAME}' version {SUPPORTED_MAJOR}.x)"
)


class ResultsError(ValueError):
    """A results file that cannot be read; the message is meant for the user."""


def find_schema_dir() -> Path:
    """Directory holding the JSON schemas.

    Search order: ``$CONTEND_SCHEMA_DIR``; ``contend/schemas`` inside the
    package (a symlink to the repository's ``schemas/`` in a source checkout
    or editable install, a copy in a wheel); ``schemas/`` or
    ``share/contend/schemas/`` in a parent directory of the package.
    """
    candidates = []
    env = os.environ.get("CONTEND_SCHEMA_DIR")
    if env:
        candidates.append(Path(env))
    here = Path(__file__).resolve().parent
    candidates.append(here / "schemas")
    for parent in here.parents:  # a source tree; an install prefix (cmake --install)
        candidates += [parent / "schemas", parent / "share" / "contend" / "schemas"]
    for cand in candidates:
        if (cand / SCHEMA_FILE).is_file():
            return cand
    raise ResultsError(
        f"cannot find {SCHEMA_FILE}: set CONTEND_SCHEMA_DIR to the repository's schemas/ directory"
    )


@lru_cache(maxsize=1)
def results_schema() -> dict:
    """The parsed results schema."""
    with open(find_schema_dir() / SCHEMA_FILE, encoding="utf-8") as fh:
        return json.load(fh)


@cache
def _schema_validator(schema_file: str):
    import jsonschema

    with open(find_schema_dir() / schema_file, encoding="utf-8") as fh:
        schema = json.load(fh)
    return jsonschema.validators.validator_for(schema)(schema)


def check_schema(doc: Any, source: str, schema_file: str, valid_hint: str) -> None:
    """ResultsError naming the first field of ``doc`` that breaks schemas/``schema_file``
    (the best match of jsonschema's errors), with what valid input is."""
    errors = sorted(
        _schema_validator(schema_file).iter_errors(doc),
        key=lambda e: (len(e.path), list(e.path)),
    )
    if errors:
        import jsonschema

        err = jsonschema.exceptions.best_match(errors)
        raise ResultsError(
            f"{source}: invalid field {clip(key_path(err.absolute_path))}: "
            f"{clip(err.message, 200)} (valid input: {valid_hint}; see "
            f"schemas/{schema_file})"
        )


def _read_text(path: Path, hint: str = VALID_HINT) -> str:
    """The text of a contend JSON file (plain or gzip), within contend.limits."""
    return infile.read_text(path, hint, ResultsError)


def parse_document(text: str, source: str, validate, hint: str = VALID_HINT) -> dict:
    """Parse the JSON text of a contend file (contend.infile: nesting limit) and
    check it with validate(doc, source) (which raises ResultsError); return the document."""
    doc = infile.parse_json(text, source, ResultsError, hint)
    validate(doc, source)
    return doc


def check_versioned(doc: Any, source: str, name: str, schema_file: str, hint: str) -> None:
    """ResultsError naming the first bad field unless ``doc`` is a document of
    schema ``name``, major version 1, valid against ``schema_file`` (the files
    of `contend mitigate` and `contend study`)."""
    if not isinstance(doc, dict) or doc.get("schema") != name:
        found = doc.get("schema") if isinstance(doc, dict) else None
        raise ResultsError(f"{source}: field 'schema' is {clip_repr(found)}, expected {hint}")
    version = doc.get("schema_version")
    if not isinstance(version, str) or version.split(".", 1)[0] != "1":
        raise ResultsError(
            f"{source}: field 'schema_version' is {clip_repr(version)}; this reader supports 1.x"
        )
    check_schema(doc, source, schema_file, hint)


def load_document(path, validate, hint: str) -> dict:
    """The document of the JSON file at path (plain or gzip), checked with
    validate(doc, source); ResultsError naming the file otherwise."""
    return parse_document(_read_text(Path(path), hint), str(path), validate, hint)


def _validate_results(doc: Any, source: str) -> None:
    check_finite(doc, source, ResultsError)
    validate_document(doc, source)


def parse_results(text: str, source: str = "<string>") -> dict:
    """Parse and validate the text of a results file; return the document."""
    return parse_document(text, source, _validate_results)


def _check_header(doc: Any, source: str) -> None:
    if not isinstance(doc, dict):
        raise ResultsError(
            f"{source}: top level is a JSON {type(doc).__name__}, expected an object: {VALID_HINT}"
        )
    name = doc.get("schema")
    if name == "contend-jobs":
        raise ResultsError(
            f"{source}: a results file of `contend jobs`; this command reads results of "
            "`contend network` / `contend load` (contend report, html and plot jobs read "
            "jobs results)"
        )
    if name != SCHEMA_NAME:
        raise ResultsError(
            f"{source}: field 'schema' is {clip_repr(name)}, expected '{SCHEMA_NAME}' ({VALID_HINT})"
        )
    version = doc.get("schema_version")
    major = str(version).split(".", 1)[0] if isinstance(version, str) else None
    if major != str(SUPPORTED_MAJOR):
        raise ResultsError(
            f"{source}: field 'schema_version' is {clip_repr(version)}; this reader supports "
            f"major version {SUPPORTED_MAJOR} ('{SUPPORTED_MAJOR}.N'): "
            "upgrade contend's Python package to read newer files"
        )


def _check_samples(doc: dict, source: str) -> None:
    """Canary tests need samples; congestors may have none (e.g. a congestor that got
    no measurement in before a short canary finished)."""
    if not doc["tests"]:
        raise ResultsError(
            f"{source}: field 'tests' is empty: a results file needs at least one test with samples"
        )
    total = 0
    for i, test in enumerate(doc["tests"]):
        where = f"tests[{i}] ({clip(test['name'])}, {clip(test['phase'])})"
        metric = test["metric"]
        count = test[metric]["count"]
        hist = test["histogram"]
        hist_total = sum(hist["count"])
        total += count
        if test["role"] == "canary" and (count == 0 or hist_total == 0):
            raise ResultsError(
                f"{source}: {where}: empty samples ({metric}.count is {count}, "
                f"histogram holds {hist_total}): every canary test needs at least "
                "one sample; rerun with a longer --timeout"
            )
        if hist_total != count:
            raise ResultsError(
                f"{source}: {where}: histogram counts sum to {hist_total} but "
                f"{metric}.count is {count}; they must be equal"
            )
        if not len(hist["lower"]) == len(hist["upper"]) == len(hist["count"]):
            raise ResultsError(
                f"{source}: {where}: histogram arrays lower/upper/count differ in "
                "length; they must be equal"
            )
    if total == 0:
        raise ResultsError(
            f"{source}: empty samples: no test holds any sample; rerun with a longer --timeout"
        )


def validate_document(doc: Any, source: str = "<string>") -> None:
    """Raise ResultsError unless ``doc`` is a valid results document."""
    _check_header(doc, source)
    check_schema(doc, source, SCHEMA_FILE, VALID_HINT)
    _check_samples(doc, source)


def tests_frame(doc: dict) -> pd.DataFrame:
    """One row per test entry: identity columns and its metric's statistics."""
    rows = []
    for i, test in enumerate(doc["tests"]):
        row = {"test_index": i}
        row.update({key: test[key] for key in TEST_KEYS})
        summary = test[test["metric"]]
        row.update({key: summary[key] for key in STAT_KEYS})
        bulk = test.get("bulk_" + test["metric"]) or {}
        row.update({"bulk_" + key: bulk.get(key) for key in ("count", "mean", "tail_99")})
        row["relative_error"] = test["histogram"]["relative_error"]
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("test_index")
    float_cols = [k for k in STAT_KEYS if k != "count"]
    frame[float_cols] = frame[float_cols].astype(float)
    return frame


def histograms_frame(doc: dict) -> pd.DataFrame:
    """Long frame of every test's histogram: test_index, lower, upper, count."""
    parts = []
    for i, test in enumerate(doc["tests"]):
        hist = test["histogram"]
        n = len(hist["count"])
        upper = pd.array([float("nan") if u is None else u for u in hist["upper"]], dtype=float)
        parts.append(
            pd.DataFrame(
                {
                    "test_index": [i] * n,
                    "lower": hist["lower"],
                    "upper": upper,
                    "count": hist["count"],
                }
            )
        )
    frame = pd.concat([p for p in parts if len(p)], ignore_index=True)
    frame["lower"] = frame["lower"].astype(float)
    frame["count"] = frame["count"].astype("int64")
    return frame


def impact_frame(doc: dict) -> pd.DataFrame:
    """The Congestion Impact entries written by the benchmark."""
    cols = ["name", "metric", "ci_mean", "ci_p50", "ci_tail_99", "ci_tail_99_9"]
    frame = pd.DataFrame(doc["impact"], columns=cols)
    frame[cols[2:]] = frame[cols[2:]].astype(float)
    return frame


class RunFacts:
    """What every contend results document says about its run (the
    environment object), for Results and JobsResults (which hold ``doc``)."""

    doc: dict

    @property
    def environment(self) -> dict:
        return self.doc["environment"]

    @property
    def nodes(self) -> int:
        return int(self.environment["nodes"])

    @property
    def ranks_per_node(self) -> str:
        """Ranks per node (PPort) as text: '2', or '1-2' when nodes differ."""
        lo = self.environment["ranks_per_node_min"]
        hi = self.environment["ranks_per_node_max"]
        return str(lo) if lo == hi else f"{lo}-{hi}"

    @property
    def mpi_library(self) -> str:
        return self.environment["mpi_library"]

    def run_pairs(self) -> list:
        """(label, text) rows describing the run, for configuration tables."""
        doc, env = self.doc, self.environment
        pairs = [
            ("command", "contend " + " ".join(doc["argv"])),
            ("tool", f"{doc['tool']['name']} {doc['tool']['version']}"),
            ("seed", f"{doc['seed']} ({doc['seed_source']})"),
            ("started / finished (UTC)", f"{doc['started_utc']} / {doc['finished_utc']}"),
            ("wall time", f"{doc['wall_s']:.2f} s"),
            ("MPI", f"{env['mpi_library']} (MPI {env['mpi_standard']})"),
        ]
        rma = env.get("rma")
        if rma:
            pairs.append(
                (
                    "RMA",
                    (
                        f"{rma['window']} ({rma['window_choice']}); {rma['flush']} "
                        f"({rma['flush_choice']})"
                    ),
                )
            )
        pairs.append(
            (
                "ranks / nodes / ranks per node",
                f"{env['ranks']} / {env['nodes']} / {self.ranks_per_node}",
            )
        )
        return pairs


@dataclass
class Results(RunFacts):
    """A loaded, validated results file."""

    path: Path
    doc: dict
    label: str
    tests: pd.DataFrame = field(repr=False)
    histograms: pd.DataFrame = field(repr=False)
    impact: pd.DataFrame = field(repr=False)

    @property
    def command(self) -> str:
        return self.doc["command"]

    def histogram(self, test_index: int) -> pd.DataFrame:
        """Buckets (lower, upper, count) of one test, in ascending order."""
        hist = self.histograms
        return hist[hist["test_index"] == test_index].reset_index(drop=True)

    def canaries(self) -> list:
        """Canary names in the order they appear."""
        rows = self.tests[self.tests["role"] == "canary"]
        return list(dict.fromkeys(rows["name"]))


def default_label(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".json"):
        name = name.removesuffix(suffix)
    return name


def load_results(path, label: str | None = None) -> Results:
    """Read, validate and tabulate one results file (``.json`` or ``.json.gz``)."""
    path = Path(path)
    doc = parse_results(_read_text(path), str(path))
    return Results(
        path=path,
        doc=doc,
        label=label or default_label(path),
        tests=tests_frame(doc),
        histograms=histograms_frame(doc),
        impact=impact_frame(doc),
    )


def load_many(paths, labels=None) -> list:
    """Load several files; labels default to the file names, made unique."""
    paths = [Path(p) for p in paths]
    if labels is None:
        labels = [default_label(p) for p in paths]
        if len(set(labels)) < len(labels):
            labels = [f"{p.parent.name}/{lab}" for p, lab in zip(paths, labels)]
    return [load_results(p, lab) for p, lab in zip(paths, labels)]
