"""The one exception of contend.telemetry: bad input, reported as ``file:line: what``.

``TelemetryError`` derives from ``ValueError`` so that callers catching
``ValueError`` (contend.models) get the message as is; the CLI maps it to exit
status 2 with the message alone on stderr.
"""

from __future__ import annotations


class TelemetryError(ValueError):
    """Bad input (file, option or parameter); the message names the file and line."""

    exit_status = 2


def at(path, line: int | None, what: str) -> TelemetryError:
    """A TelemetryError saying ``path:line: what`` (``path: what`` without a line)."""
    where = f"{path}:{line}" if line else f"{path}"
    return TelemetryError(f"{where}: {what}")
