"""Model files of the Netscope models: build, validate, load and write them.

Two JSON documents (schemas in schemas/, copies reached through
``contend/schemas``):

* ``contend-latency-model`` (``contend model fit-latency``): eq. 12's constants,
  the paths file they apply to, training provenance and accuracy, and every
  training sample with its prediction (for the report's figures);
* ``contend-sensitivity`` (``contend model sensitivity``): per application the
  runtime fit T_a = c_a M_a + k_a, its dimensionless delay sensitivity and
  convergence table, per run inputs, and the inputs' provenance.

Files referenced from a model file are stored relative to the model file's
directory (absolute when that is impossible) and resolved the same way.
"""

from __future__ import annotations

import json
import math
import os
from functools import lru_cache
from pathlib import Path

from ..limits import clip
from ..outfile import write_text
from ..runs.files import document_head
from .errors import ModelError
from .latency import LatencyFit, LatencyModel
from .paths import PathSet, check_header, read_json

LATENCY_SCHEMA = "contend-latency-model"
SENSITIVITY_SCHEMA = "contend-sensitivity"
SCHEMAS = (LATENCY_SCHEMA, SENSITIVITY_SCHEMA)
SCHEMA_VERSION = "1.0"
EQUATION = (
    "D_ns(n1,n2) = sum_{S_i in S*} (1/|S*|) sum_{l in S_i} k_link_ns_per_q[class(l)] * Q_l"
    " + k_const_ns; Q_l = 100 / (100 - min(PTs_l, pts_clamp_percent)); "
    "RTT = D(a,b) + D(b,a)"
)
HINTS = {
    LATENCY_SCHEMA: "a latency model written by `contend model fit-latency` "
    f"(schema '{LATENCY_SCHEMA}' 1.x)",
    SENSITIVITY_SCHEMA: "a delay sensitivity file written by `contend model sensitivity` "
    f"(schema '{SENSITIVITY_SCHEMA}' 1.x)",
}


@lru_cache(maxsize=8)
def schema(name: str) -> dict:
    """The parsed JSON schema of a model file."""
    from ..results import ResultsError, find_schema_dir

    try:
        base = find_schema_dir()
    except ResultsError as exc:
        raise ModelError(str(exc)) from None
    path = base / f"{name}.schema.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelError(f"cannot find {path}: set CONTEND_SCHEMA_DIR to schemas/") from None


def validate(doc: dict, name: str, source: str = "<model>") -> None:
    """ModelError naming the first invalid field unless ``doc`` matches its schema."""
    import jsonschema

    check_header(doc, name, 1, source, HINTS[name])
    sch = schema(name)
    validator = jsonschema.validators.validator_for(sch)(sch)
    errors = list(validator.iter_errors(doc))
    if errors:
        err = jsonschema.exceptions.best_match(errors)
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        raise ModelError(
            f"{source}: invalid field {clip(where.lstrip('.')) or '(top level)'}: "
            f"{clip(err.message, 200)} "
            f"(expected {HINTS[name]}; see schemas/{name}.schema.json)"
        )


def load_model_file(path, expect: str | None = None) -> dict:
    """Read and validate a model file of either (or the expected) schema."""
    path = Path(path)
    hint = HINTS[expect] if expect else " or ".join(HINTS.values())
    doc = read_json(path, hint)
    name = doc.get("schema") if isinstance(doc, dict) else None
    if expect and name != expect or name not in SCHEMAS:
        raise ModelError(f"{path}: field 'schema' is {name!r}; expected {hint}")
    validate(doc, name, str(path))
    return doc


def relative_to(target, base_dir) -> str:
    """``target`` relative to ``base_dir`` when possible, else absolute."""
    target = Path(target).resolve()
    try:
        return os.path.relpath(target, Path(base_dir).resolve())
    except ValueError:  # another drive
        return str(target)


def resolve(ref: str, model_path) -> Path:
    """A file reference of a model file, relative to the model file's directory."""
    ref = Path(ref)
    return ref if ref.is_absolute() else Path(model_path).resolve().parent / ref


def header(name: str, argv) -> dict:
    return document_head(name, SCHEMA_VERSION, argv)


def paths_ref(paths: PathSet, paths_file, out_dir) -> dict:
    return {
        "file": relative_to(paths_file, out_dir),
        "sha256": paths.sha256,
        "topology": paths.topology,
        "routing": paths.routing,
        "nodes": paths.nodes,
        "links": len(paths.links),
        "classes": paths.classes,
    }


def _clean(value):
    """JSON-ready: numpy scalars to Python, NaN to None."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def latency_document(
    fit: LatencyFit,
    paths: PathSet,
    paths_file,
    out_path,
    argv,
    training: dict,
) -> dict:
    """The contend-latency-model document of a fit (``training``: provenance block)."""
    out_dir = Path(out_path).resolve().parent
    model = fit.model
    samples = fit.samples
    doc = header(LATENCY_SCHEMA, argv)
    doc.update(
        {
            "equation": EQUATION,
            "link_classes": model.link_classes,
            "k_link_ns_per_q": model.k_link_ns_per_q,
            "k_const_ns": model.k_const_ns,
            "pts_clamp_percent": model.pts_clamp_percent,
            "paths": paths_ref(paths, paths_file, out_dir),
            "training": training
            | {
                "samples_used": len(samples),
                "samples_dropped": len(fit.dropped),
                "pts_intervals": fit.intervals,
                "pts_clamped_intervals": fit.pts_clamped_intervals,
                "links_with_counters": fit.links_with_counters,
            },
            "split": {
                "unit": "sample",
                "holdout_fraction": fit.holdout_fraction,
                "seed": fit.seed,
                "train_samples": int((samples["set"] == "train").sum()),
                "holdout_samples": int((samples["set"] == "holdout").sum()),
            },
            "fit": {
                "method": "non-negative least squares (scipy.optimize.nnls) on RTT"
                + (", errors relative to the measured RTT" if fit.errors == "relative" else ""),
                "parameters": fit.parameters,
                "design_rank": fit.design_rank,
                "undetermined_classes": [c for c, v in model.k_link_ns_per_q.items() if v is None],
                "folded_classes": list(fit.folded),
            },
            "accuracy": {w: fit.summary(w) for w in ("train", "holdout", "all")},
            "samples": [
                {
                    "run": r.run,
                    "src": int(r.src),
                    "dst": int(r.dst),
                    "t_start_s": r.t_start_s,
                    "t_end_s": r.t_end_s,
                    "rtt_us": r.rtt_us,
                    "rtt_pred_us": r.rtt_pred_us,
                    "set": r.set,
                }
                for r in samples.itertuples(index=False)
            ],
        }
    )
    return _clean(doc)


def latency_model_from_doc(doc: dict) -> LatencyModel:
    return LatencyModel(
        link_classes=doc["link_classes"],
        k_link_ns_per_q=dict(doc["k_link_ns_per_q"]),
        k_const_ns=float(doc["k_const_ns"]),
        pts_clamp_percent=float(doc["pts_clamp_percent"]),
    )


def load_latency_model(path) -> tuple:
    """(model, doc) of a latency model file."""
    doc = load_model_file(path, LATENCY_SCHEMA)
    return latency_model_from_doc(doc), doc


def check_paths_match(doc: dict, paths: PathSet, model_source) -> None:
    """Refuse a paths file of another fabric or routing than the model's."""
    mine = doc["paths"]
    for key in ("topology", "routing"):
        if mine[key] != getattr(paths, key):
            raise ModelError(
                f"{paths.source}: {key} {getattr(paths, key)!r} differs from the latency "
                f"model's ({mine[key]!r}, {model_source}): the constants are for that fabric"
            )


def sensitivity_document(argv, applications: dict, provenance: dict) -> dict:
    doc = header(SENSITIVITY_SCHEMA, argv)
    doc.update({"applications": applications, "provenance": provenance})
    return _clean(doc)


def write_json_atomic(doc: dict, path, name: str) -> Path:
    """Validate ``doc`` and write it to ``path`` through a temporary in the same directory."""
    validate(doc, name, str(path))
    text = json.dumps(doc, indent=1, allow_nan=False) + "\n"
    return write_text_atomic(text, path)


def write_text_atomic(text: str, path) -> Path:
    return write_text(path, text, error=ModelError)
