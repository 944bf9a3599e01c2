"""The files of a plan: the output rule and atomic writes, as the run
layer's UsageError (contend.outfile does the work)."""

from __future__ import annotations

import json
from pathlib import Path

from .. import outfile
from .errors import UsageError


def check_output(path: Path) -> None:
    """A file the harness will write: its directory exists, it is no directory."""
    outfile.check_output(path, error=UsageError)


def check_files(inputs, outputs) -> None:
    """The output rule (contend.outfile.check_distinct): no output is an
    input or another output."""
    outfile.check_distinct(inputs, outputs, UsageError)


def write_json_atomic(path: Path, doc: dict) -> None:
    """Whole or not at all: a unique temporary beside path, renamed into place."""
    outfile.write_text(path, json.dumps(doc, indent=1) + "\n", error=UsageError)
