"""Limits on every size a user controls in the Python commands, declared once.

Each limit is named in the error that refuses it and in the ``--help`` of the
option it bounds (docs/report.md, "Limits", lists them all).  Input files are
read within ``MAX_INPUT_BYTES`` (after gzip decompression, which is streamed
and stopped there), JSON and TOML within ``MAX_NESTING`` levels; counts that
set how much work or memory a command takes have one maximum each.  Text
taken from the user and echoed in a message is cut by :func:`clip`.
"""

from __future__ import annotations

MIB = 1 << 20

# ---- input files
MAX_INPUT_BYTES = 128 * MIB  # a JSON or TOML file, plain or after decompression
MAX_CSV_BYTES = 2048 * MIB  # a counter CSV (read in typed columns, not as text)
MAX_NESTING = 64  # JSON arrays/objects, TOML tables/arrays inside each other

# ---- counts given as options (each: its option, the help text shows it)
MAX_REPEAT = 10000  # mitigate --repeat
MAX_RESAMPLES = 100000  # significance --resamples
MAX_BOOTSTRAP = 100000  # report --bootstrap
MAX_RUNS = 10000  # pingpong-train / sensitivity-train --runs
MAX_PAIRS = 100000  # pingpong-train --pairs
MAX_EXCHANGES = 10**8  # pingpong-train --exchanges
MAX_MSG_BYTES = 1 << 30  # pingpong-train --msg-bytes
MAX_CONGESTOR_REPEAT = 100000  # training --congestor-repeat (the calibration's own cap)
MAX_NODES = 10**6  # --nodes of the launcher engines
MAX_PARALLEL = 1024  # mitigate / study --parallel, sweep -j
MAX_CHUNK = 100000  # sweep --chunk
MAX_TOP = 100000  # counters pts --top
MAX_SAMPLES = 10**8  # counters sample --count

# ---- output paths: PATH_MAX 4096 and NAME_MAX 255 less room for the
# temporary written beside an output (the C commands' limits, include/contend/files.h)
MAX_PATH_CHARS = 4071
MAX_NAME_CHARS = 231

# ---- messages
MAX_ECHO = 80  # characters of a user's string quoted in a message
MAX_ECHO_PATH = 1024  # characters of a path named in a message (PATH_MAX is 4096)


def clip(text, limit: int = MAX_ECHO) -> str:
    """``text`` (made a str) cut to ``limit`` characters, with "..." and its length when cut."""
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...({len(text)} characters)"


def clip_path(path) -> str:
    """A path for a message: whole up to MAX_ECHO_PATH characters, else cut."""
    return clip(path, MAX_ECHO_PATH)


def clip_repr(value, limit: int = MAX_ECHO) -> str:
    """repr(value) for a message, cut as :func:`clip` does."""
    return clip(repr(value), limit)


def human_bytes(n: int) -> str:
    """1048576 -> '1 MiB', 1536 -> '1.5 KiB', 100 -> '100 B'."""
    for unit, size in (("GiB", 1 << 30), ("MiB", MIB), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:g} {unit}"
    return f"{n} B"
