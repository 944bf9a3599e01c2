"""The files of a plan: the output rule and atomic writes, as the run
layer's UsageError (contend.outfile does the work), and the head of a
harness's results document."""

from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from .. import __version__, outfile
from .binary import build_commit
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


def utc_now() -> str:
    """Now, as the documents record it: 2024-05-01T12:00:00Z."""
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def document_head(schema: str, version: str, argv) -> dict:
    """The first keys of a Python tool's document: its schema, the tool
    (with the git commit of the contend build beside it, or null), when, and
    the command line (``argv``: the contend command and its args)."""
    return {
        "schema": schema,
        "schema_version": version,
        "tool": {"name": "contend", "version": __version__, "git_commit": build_commit()},
        "created_utc": utc_now(),
        "argv": [str(a) for a in argv],
    }
