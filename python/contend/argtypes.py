"""argparse value types shared by the Python commands: each raises
ArgumentTypeError with a message naming what was expected and what came."""

from __future__ import annotations

import argparse
import math

from .limits import clip_repr


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {clip_repr(text)}")
    return value


def count(maximum: int, minimum: int = 1):
    """argparse type of a count bounded by its declared limit (contend.limits):
    an integer from ``minimum`` to ``maximum``, else a message naming both."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not minimum <= value <= maximum:
            raise argparse.ArgumentTypeError(
                f"expected an integer from {minimum} to {maximum} (the limit), got "
                f"{clip_repr(text)}"
            )
        return value

    parse.__name__ = "count"  # argparse names the type in some messages
    return parse


def positive_float(text: str, what: str = "number") -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive {what}, got {clip_repr(text)}")
    return value


def nonneg_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {clip_repr(text)}")
    return value


def nonneg_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number, got {clip_repr(text)}")
    return value


def split_dashes(argv) -> tuple[list, list]:
    """(the command's own arguments, what follows the first --): the part after
    -- goes to other commands as is, so it is split off before argparse sees it
    (argparse gives a trailing nargs="*" positional nothing once an earlier
    positional has been matched)."""
    argv = list(argv)
    if "--" not in argv:
        return argv, []
    i = argv.index("--")
    return argv[:i], argv[i + 1 :]
