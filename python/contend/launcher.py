"""contend.launcher: the `contend` console script of the Python layer
(`pip install .`).  It runs the contend binary, which is C: $CONTEND_BIN,
else the first `contend` next to this script or on PATH that is not a
script itself.  `cmake --install` puts the binary into PREFIX/bin/contend;
when pip and CMake install into one prefix, the binary replaces this script
there (install the Python layer first, or give CONTEND_BIN).

The binary runs contend-COMMAND from its own directory or from PATH: this
script's directory goes first on PATH, so the Python commands installed
with it (contend-report, ...) are found wherever the binary is."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .guard import guarded

EXIT_USAGE = 2


def _is_binary(path: Path) -> bool:
    """An executable file that is not a script (no #! line): the C binary."""
    try:
        with open(path, "rb") as fh:
            return os.access(path, os.X_OK) and fh.read(2) != b"#!"
    except OSError:
        return False


def find_binary() -> str | None:
    """The contend binary to run, or None."""
    env = os.environ.get("CONTEND_BIN")
    if env:
        return env
    here = Path(sys.argv[0]).absolute().parent
    dirs = [here, *(Path(p) for p in os.environ.get("PATH", "").split(os.pathsep) if p)]
    for d in dirs:
        cand = d / "contend"
        if _is_binary(cand):
            return str(cand)
    return None


@guarded("contend")
def main() -> int:
    binary = find_binary()
    if binary is None:
        print(
            "contend: the contend binary (C) was not found: not next to this script, not on "
            "PATH;\ninstall it (cmake --install BUILD --prefix PREFIX) or set CONTEND_BIN to it",
            file=sys.stderr,
        )
        return EXIT_USAGE
    here = str(Path(sys.argv[0]).absolute().parent)
    os.environ["PATH"] = os.pathsep.join([here, os.environ.get("PATH", "")])
    try:
        os.execv(binary, [binary, *sys.argv[1:]])
    except OSError as e:
        print(f"contend: cannot run {binary}: {e.strerror}", file=sys.stderr)
        return EXIT_USAGE
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
