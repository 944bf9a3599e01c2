"""contend.launcher: the `contend` console script of the Python layer
(`pip install .`).  It runs the contend binary, which is C, found by the run
layer's one lookup (:mod:`contend.runs.binary`: $CONTEND_BIN, $CONTEND,
else the first `contend` that is not a script next to this script, in
$CONTEND_BUILD/bin or the source tree's build/bin, or on PATH; never this
script itself).  `cmake --install` puts the binary into PREFIX/bin/contend;
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
from .runs.binary import BinaryNotFound, find_binary
from .runs.errors import EXIT_USAGE


@guarded("contend")
def main() -> int:
    try:
        binary = find_binary(exclude=sys.argv[0])
    except BinaryNotFound as exc:
        if exc.named:
            print(f"contend: cannot run {exc.named}: not an executable file", file=sys.stderr)
            return EXIT_USAGE
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
