"""The error type of the Netscope models: bad input meant for the user.

:class:`ModelError` is a ValueError whose message names the file (and where
known the field or line) and says what is valid; command lines print it as one
line on stderr and exit with status 2.
"""

from __future__ import annotations


class ModelError(ValueError):
    """Input the models cannot use (malformed file, bad option, degenerate data)."""
