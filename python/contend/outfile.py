"""Output files written whole or not at all: the one helper behind every ``-o``.

:func:`check_output` is called before any work: the path must name a file
(not a directory) in a directory that exists and is writable; otherwise one
error naming the path given, raised as ``error`` (each command passes its own
ValueError subclass, so its usual exit-2 handling applies).

:func:`open_atomic` (and :func:`write_with`, :func:`write_text`,
:func:`write_bytes` on top of it) writes through a unique temporary in the target's own
directory (``tempfile.mkstemp(dir=..., prefix='.NAME.', suffix='.tmp')``),
renamed onto the target when the body finishes (with the permissions a plain
``open()`` would give, not mkstemp's 0600); on any failure (an exception,
Ctrl-C) the temporary is removed, and a failed write is reported with the
target's path, never the temporary's.
"""

from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


class OutputError(ValueError):
    """An output path that cannot be written; the message names it."""


def _parent(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it; set straight back
    os.umask(mask)
    return mask


def check_output(path, what: str = "output", error=OutputError) -> Path:
    """``path`` as a Path when a file can be written there, else ``error(message)``."""
    path = Path(path)
    parent = _parent(path)
    if path.is_dir():
        raise error(f"{path}: is a directory; give a file name for the {what}")
    if not parent.is_dir():
        what_dir = "is not a directory" if parent.exists() else "does not exist"
        raise error(f"{path}: {what} directory {parent} {what_dir}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise error(f"{path}: {what} directory {parent} is not writable")
    return path


@contextmanager
def open_atomic(path, mode: str = "w", what: str = "output", error=OutputError, **open_kw):
    """``with open_atomic(path) as fh:`` writes ``path`` through a unique temporary.

    ``mode`` is "w" (text, UTF-8 unless ``encoding`` is given) or "wb"; extra
    keywords go to :func:`os.fdopen` (e.g. ``newline=""``).  An exception in the
    body propagates as it is (after the temporary is removed); failing to
    create, close or rename the temporary raises ``error`` naming ``path``.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"open_atomic: mode must be 'w' or 'wb', got {mode!r}")
    path = check_output(path, what, error)
    if mode == "w":
        open_kw.setdefault("encoding", "utf-8")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=_parent(path))
    except OSError as exc:
        raise error(f"{path}: cannot write: {exc.strerror}") from None

    def discard(fh=None):
        if fh is None:
            os.close(fd)
        else:
            try:
                fh.close()
            except OSError:
                pass
        Path(tmp).unlink(missing_ok=True)

    try:
        fh = os.fdopen(fd, mode, **open_kw)
    except BaseException:
        discard()
        raise
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 -> what open() would give
        yield fh
    except BaseException:  # the body's own failure, passed on as it is
        discard(fh)
        raise
    try:
        fh.close()
        os.replace(tmp, path)
    except BaseException as exc:
        discard(fh)
        if isinstance(exc, OSError):
            raise error(f"{path}: cannot write: {exc.strerror or exc}") from None
        raise


def write_text(path, text: str, what: str = "output", error=OutputError) -> Path:
    """Write ``text`` to ``path`` (through a temporary); returns the path."""
    return write_with(path, lambda fh: fh.write(text), "w", what, error)


def write_bytes(path, data: bytes, what: str = "output", error=OutputError) -> Path:
    """Write ``data`` to ``path`` (through a temporary); returns the path."""
    return write_with(path, lambda fh: fh.write(data), "wb", what, error)


def write_with(path, write, mode: str = "w", what: str = "output", error=OutputError, **kw):
    """Call ``write(fh)`` on the temporary of ``path`` (see :func:`open_atomic`); an
    OSError while writing (disk full) is raised as ``error`` naming ``path``."""
    try:
        with open_atomic(path, mode, what, error, **kw) as fh:
            write(fh)
    except OSError as exc:
        raise error(f"{path}: cannot write: {exc.strerror or exc}") from None
    return Path(path)
