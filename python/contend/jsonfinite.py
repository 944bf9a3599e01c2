"""Finite numbers only: find a NaN or Infinity in a parsed JSON document.

Python's :mod:`json` accepts the tokens ``NaN``, ``Infinity`` and
``-Infinity`` (and turns an overflowing literal such as ``1e999`` into
infinity); contend's files write null for an undefined number, so a
non-finite value means a corrupt or foreign file.  :func:`non_finite_path`
returns where the first one is, as a key path like ``tests[3].isolated.mean``.
"""

from __future__ import annotations

import math


def key_path(parts) -> str:
    """``['tests', 3, 'lat_us']`` -> ``tests[3].lat_us``; the top level is ``(top level)``."""
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def non_finite_path(doc):
    """(key path, value) of the first NaN or infinite number in ``doc``, or None."""
    stack = [((), doc)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return key_path(parts), value
        if isinstance(value, dict):
            items = list(value.items())
        elif isinstance(value, list):
            items = list(enumerate(value))
        else:
            continue
        stack.extend((parts + (k,), v) for k, v in reversed(items))
    return None


def check_finite(doc, source: str, error=ValueError) -> None:
    """Raise ``error`` naming the key path when ``doc`` holds NaN or Infinity."""
    found = non_finite_path(doc)
    if found is not None:
        where, value = found
        token = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        raise error(
            f"{source}: {where} is {token}: a contend file holds finite numbers or null "
            "there; the file is corrupt or was not written by contend"
        )
