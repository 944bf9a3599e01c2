"""The ``contend-fidelity`` document (schemas/contend-fidelity.schema.json):
written by ``bench/fidelity``, read by the report view.  One claim's entry
is made from its record and its per-seed values here, so the document, the
table and the page show one set of fields."""

from __future__ import annotations

import datetime as _dt

from .. import __version__
from ..jsonfinite import check_finite
from ..results import ResultsError, check_versioned, load_document
from .claim import PAPERS, Claim, spread

SCHEMA_NAME = "contend-fidelity"
SCHEMA_FILE = "contend-fidelity.schema.json"
SCHEMA_VERSION = "1.0"
VALID_HINT = f"a reproduction report written by `bench/fidelity -o FILE` (schema '{SCHEMA_NAME}')"


def validate_document(doc, source: str) -> None:
    """ResultsError naming the first bad field unless ``doc`` is a fidelity document."""
    check_finite(doc, source, ResultsError)
    check_versioned(doc, source, SCHEMA_NAME, SCHEMA_FILE, VALID_HINT)
    ids = [c["id"] for c in doc["claims"]]
    dup = next((i for i in ids if ids.count(i) > 1), None)
    if dup is not None:
        raise ResultsError(f"{source}: claim {dup!r} appears twice")


def load_fidelity(path) -> dict:
    return load_document(path, validate_document, VALID_HINT)


def claim_entry(claim: Claim, values: list, errors: dict, verdict: str, reason: str,
                commands: list, quick: bool, builds: dict | None = None) -> dict:  # fmt: skip
    """The document's entry of ``claim``: ``values`` (SeedValue) measured,
    ``errors`` {seed: why no value}, ``builds`` {seed: git commits of the
    builds whose results it read}."""
    builds = builds or {}
    seeds = [
        {"seed": v.seed, "value": v.value, "detail": dict(v.detail), "error": None,
         "builds": list(builds.get(v.seed, []))}
        for v in values
    ] + [
        {"seed": s, "value": None, "detail": {}, "error": e} for s, e in sorted(errors.items())
    ]  # fmt: skip
    seeds.sort(key=lambda s: s["seed"])
    return {
        "id": claim.id,
        "paper": claim.paper,
        "paper_title": PAPERS[claim.paper],
        "paper_figure": claim.figure,
        "paper_where": claim.where,
        "paper_value": claim.paper_value,
        "paper_text": claim.paper_text,
        "quantity": claim.quantity,
        "unit": claim.unit,
        "rule": claim.rule,
        "verdict": verdict,
        "verdict_reason": reason,
        "seeds": seeds,
        "seeds_measured": sum(v.value is not None for v in values),
        **spread(v.value for v in values),
        "commands": commands,
        "settings_changed": list(claim.settings),
        "quick_changes": list(claim.quick or ()) if quick else [],
        "runtime": claim.runtime,
    }


def document(argv: list, seeds: list, quick: bool, only: list, workdir, claims: list) -> dict:
    return {
        "schema": SCHEMA_NAME,
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "bench/fidelity", "version": __version__},
        "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "argv": list(argv),
        "config": {
            "seeds": list(seeds),
            "quick": quick,
            "only": list(only),
            "workdir": None if workdir is None else str(workdir),
        },
        "claims": claims,
    }
