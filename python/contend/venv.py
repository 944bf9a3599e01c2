"""The repository's own interpreter for the bench commands.

`make build` and `make test` install the Python layer's dependencies
(pandas, numpy, jsonschema, ...) into the checkout's `.venv`, not into the
system's Python.  A bench command started as `bench/X` runs under
`/usr/bin/env python3`; `use_repo_venv` re-executes it under `.venv`'s
interpreter when the one running it lacks the scientific stack, so the
commands the docs print work as typed.  Imports nothing heavy itself.
"""

import importlib.util
import os
import sys
from pathlib import Path

NEEDED = ("pandas", "numpy", "jsonschema")


def use_repo_venv(script: str) -> None:
    """Re-executes `script` (the caller's __file__) with the same arguments
    under <repo>/.venv/bin/python when this interpreter lacks a module of
    NEEDED and that interpreter exists and is not this one; otherwise
    returns (an ImportError later names what is missing)."""
    if all(importlib.util.find_spec(m) is not None for m in NEEDED):
        return
    root = Path(script).resolve().parent.parent
    venv = root / ".venv"
    python = venv / "bin" / "python"
    if python.exists() and Path(sys.prefix).resolve() != venv.resolve():
        os.execv(str(python), [str(python), str(script), *sys.argv[1:]])
