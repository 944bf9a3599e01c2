"""Exceptions of the emulated cluster, each mapped to an exit status by the CLI."""

from __future__ import annotations


class UsageError(ValueError):
    """Bad input, missing privilege or a conflicting cluster: exit status 2."""

    exit_status = 2


class ClusterError(RuntimeError):
    """A system operation failed (an ``ip``/``tc`` command, a launch): exit status 1."""

    exit_status = 1
