"""The errors of the run layer and the exit statuses they map to.

Every harness (``contend mitigate``, ``study``, the training commands,
``sweep``) ends with one of these statuses: 0 done; 2 bad input, refused
before any run (:class:`UsageError`, one line); 3 a run failed after the
work started (:class:`RunError`); 128 + N when signal N stopped it
(:func:`contend.runs.children.interrupt_status`).  ``contend sweep run``
alone ends with 1 when some scenarios failed: it runs the others on.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1  # sweep: some scenarios failed, the others ran
EXIT_USAGE = 2
EXIT_FAIL = 3


class UsageError(ValueError):
    """Bad input: one message, exit status 2, nothing run."""


class RunError(RuntimeError):
    """A run failed after it started: exit status 3."""
