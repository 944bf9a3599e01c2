"""Parsing and formatting of rates and sizes, with ``tc`` conventions.

Rates are bits per second: ``bit``, ``kbit``, ``mbit``, ``gbit``, ``tbit`` are
powers of 1000 (as in ``tc``), ``kibit``, ``mibit``, ``gibit`` powers of 1024;
``bps``, ``kbps``, ``mbps``, ``gbps`` are *bytes* per second (again as in ``tc``).
A bare number is bits per second.

Sizes are bytes: ``b``; ``k``/``kb``/``kib`` = 1024, ``m``/``mb``/``mib`` = 1024**2,
``g``/``gb``/``gib`` = 1024**3 (``tc`` uses ``kb`` for 1024 bytes). A bare number
is bytes.
"""

from __future__ import annotations

import re

from .errors import UsageError

_NUM = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)"

_RATE_UNITS = {
    "": 1,
    "bit": 1,
    "kbit": 10**3,
    "mbit": 10**6,
    "gbit": 10**9,
    "tbit": 10**12,
    "kibit": 2**10,
    "mibit": 2**20,
    "gibit": 2**30,
    "tibit": 2**40,
    "bps": 8,
    "kbps": 8 * 10**3,
    "mbps": 8 * 10**6,
    "gbps": 8 * 10**9,
    "tbps": 8 * 10**12,
}

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kb": 2**10,
    "kib": 2**10,
    "m": 2**20,
    "mb": 2**20,
    "mib": 2**20,
    "g": 2**30,
    "gb": 2**30,
    "gib": 2**30,
}


def parse_rate(text: str, what: str = "rate") -> int:
    """Return the rate ``text`` (e.g. ``"100mbit"``) in bits per second.

    Raises ``UsageError`` naming ``what`` when the text is malformed or not positive.
    """
    m = re.fullmatch(_NUM + r"\s*([a-z]*)", str(text).strip().lower())
    if not m or m.group(2) not in _RATE_UNITS:
        raise UsageError(
            f"malformed {what} {text!r}: expected a number with a unit such as "
            "100mbit, 1gbit, 500kbit (bits/s) or 10mbps (bytes/s)"
        )
    value = float(m.group(1)) * _RATE_UNITS[m.group(2)]
    if value < 1000:
        raise UsageError(f"{what} {text!r} is too small (minimum 1kbit)")
    return round(value)


def parse_size(text: str, what: str = "size") -> int:
    """Return the size ``text`` (e.g. ``"256kb"``) in bytes; ``UsageError`` if malformed."""
    m = re.fullmatch(_NUM + r"\s*([a-z]*)", str(text).strip().lower())
    if not m or m.group(2) not in _SIZE_UNITS:
        raise UsageError(
            f"malformed {what} {text!r}: expected bytes with an optional unit "
            "such as 256kb, 1mb, 65536 (kb = 1024 bytes, as in tc)"
        )
    value = float(m.group(1)) * _SIZE_UNITS[m.group(2)]
    if value < 1:
        raise UsageError(f"{what} {text!r} must be positive")
    return round(value)


def parse_taper(text: str) -> float:
    """Return the taper ``"A:B"`` (e.g. ``"2:1"``) as the factor A/B (>= 1 means tapered)."""
    m = re.fullmatch(_NUM + r"\s*:\s*" + _NUM, str(text).strip())
    if not m:
        raise UsageError(f"malformed taper {text!r}: expected A:B such as 2:1 or 1:1")
    a, b = float(m.group(1)), float(m.group(2))
    if a <= 0 or b <= 0:
        raise UsageError(f"taper {text!r}: both sides must be positive")
    return a / b


def format_rate(bps: float) -> str:
    """Format bits/s compactly with a tc-compatible unit (``"100mbit"``, ``"1.5gbit"``)."""
    for unit, scale in (("tbit", 10**12), ("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bps >= scale:
            return f"{bps / scale:.6g}{unit}"
    return f"{bps:.6g}bit"


def format_bytes(n: float) -> str:
    """Format a byte count with binary units (``"256 KiB"``)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{n:.0f} B"
