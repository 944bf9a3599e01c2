"""The one lookup of the contend binary (C) that the Python commands run.

In order: the path given on the command line (``contend sweep run
--contend PATH``), ``$CONTEND_BIN``, ``$CONTEND`` (as the batch scripts of
examples/slurm set it); each taken as named (a bare name on PATH), and
refused when it is not an executable file.  Else the first ``contend`` that
is an executable file and no script (the Python launcher of pip is one) in:
the directory of this program as started (build/bin, where contend-X links
into the virtual environment), the directory of its link target (an install
prefix), ``$CONTEND_BUILD/bin``, the source tree's ``build/bin``, then PATH.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE_TREE = Path(__file__).resolve().parents[3]  # python/contend/runs/ -> the checkout


class BinaryNotFound(ValueError):
    """No contend binary: the message names what was tried; ``named`` is the
    value of the option or variable that named a file that cannot run."""

    def __init__(self, message: str, named: str | None = None):
        super().__init__(message)
        self.named = named


def is_binary(path) -> bool:
    """An executable file that is not a script (no #! line): the C binary."""
    try:
        with open(path, "rb") as fh:
            return os.access(path, os.X_OK) and fh.read(2) != b"#!"
    except OSError:
        return False


def _runnable(given: str) -> str | None:
    """A named binary: the file itself, or a bare name found on PATH."""
    path = Path(given)
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    return shutil.which(given) if os.sep not in given else None


def _same(path, other) -> bool:
    try:
        return other is not None and os.path.samefile(path, other)
    except OSError:
        return False


def search_dirs() -> list:
    """Where an unnamed binary is looked for, in order."""
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    dirs = [here.absolute().parent, here.resolve().parent] if here else []
    if os.environ.get("CONTEND_BUILD"):
        dirs.append(Path(os.environ["CONTEND_BUILD"]) / "bin")
    dirs.append(SOURCE_TREE / "build" / "bin")
    dirs += [Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p]
    return dirs


def find_binary(explicit: str | None = None, exclude=None) -> str:
    """The contend binary (module docstring for the order); ``exclude``: a
    file never to return (the Python launcher, which would run itself).
    Raises :class:`BinaryNotFound`."""
    named = (
        ("--contend ", explicit),
        ("CONTEND_BIN=", os.environ.get("CONTEND_BIN")),
        ("CONTEND=", os.environ.get("CONTEND")),
    )
    for what, given in named:
        if not given:
            continue
        found = _runnable(given)
        if found is None:
            raise BinaryNotFound(f"{what}{given}: not an executable file", given)
        if not _same(found, exclude):
            return found
    for d in search_dirs():
        cand = d / "contend"
        if is_binary(cand) and not _same(cand, exclude):
            return str(cand)
    raise BinaryNotFound(
        "contend binary not found (looked next to this program, in $CONTEND_BUILD/bin, "
        "build/bin and PATH): run make build, or pass --contend PATH"
    )


@functools.lru_cache(maxsize=1)
def build_commit() -> str | None:
    """The git commit the contend binary was built at, as its ``contend
    version`` says; None when there is no binary, it says "unknown" (not
    built from a git checkout) or it does not answer within 30 s.  Asked
    once per process: the provenance of the Python tools' documents."""
    try:
        done = subprocess.run([find_binary(), "version"], capture_output=True, text=True,
                              timeout=30, check=False)  # fmt: skip
    except (BinaryNotFound, OSError, subprocess.SubprocessError):
        return None
    found = re.search(r"^git commit: +(\S+)", done.stdout, re.MULTILINE)
    return found[1] if found and found[1] != "unknown" else None
