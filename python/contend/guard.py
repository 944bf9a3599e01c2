"""The last line of defence of every console entry point: no traceback reaches the user.

Each command reports the errors it expects (bad input: one line, exit 2;
a failed run: exit 3) itself.  :func:`guarded` wraps a command's ``main`` so
that anything else (a reader that met input nobody foresaw, a full disk,
RecursionError, MemoryError) still ends as one line on stderr naming what
failed, and exit status 2.  It is not silent about defects: the line names
the exception's type and says to report it, and ``CONTEND_TRACEBACK=1`` lets
the traceback through.  KeyboardInterrupt and SystemExit pass unchanged.
"""

from __future__ import annotations

import functools
import os
import sys

from .limits import clip, clip_path

EXIT_USAGE = 2
TRACEBACK_ENV = "CONTEND_TRACEBACK"


def describe(exc: BaseException) -> str:
    """One line about an unexpected exception: its type and message, cut."""
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process (RecursionError)"
    if isinstance(exc, MemoryError):
        return "out of memory (MemoryError): the input is too large for this machine"
    if isinstance(exc, OSError) and exc.strerror:
        where = f"{clip_path(exc.filename)}: " if exc.filename else ""
        return f"{where}{exc.strerror}"
    text = " ".join(str(exc).split())
    return f"unexpected {type(exc).__name__}" + (f": {clip(text, 200)}" if text else "")


def report(prog: str, exc: BaseException) -> int:
    """Print the one line of :func:`describe` for ``prog``; returns exit status 2."""
    tail = ""
    if not isinstance(exc, (OSError, MemoryError, RecursionError)):
        tail = f" (a defect of contend: please report it; {TRACEBACK_ENV}=1 shows where)"
    print(f"{prog}: error: {describe(exc)}{tail}", file=sys.stderr, flush=True)
    return EXIT_USAGE


def guarded(prog: str):
    """Decorator of a console ``main``: an exception it lets escape becomes
    :func:`report`'s line and exit status 2 (BrokenPipeError: 0, output cut)."""

    def wrap(main):
        @functools.wraps(main)
        def run(*args, **kwargs):
            try:
                return main(*args, **kwargs)
            except BrokenPipeError:  # `contend report R.json | head`
                return 0
            except Exception as exc:
                if os.environ.get(TRACEBACK_ENV):
                    raise
                return report(prog, exc)

        return run

    return wrap
