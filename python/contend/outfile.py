"""Output files written whole or not at all: the one helper behind every output.

:func:`check_output` is called before any work: the path must name a regular
file (or none yet) in a directory where a file can be created; otherwise one
error naming the path given, raised as ``error`` (each command passes its own
ValueError subclass, so its usual exit-2 handling applies).  A symbolic link
is followed: its target is written, the link stays.  :func:`check_output_dir`
does the same for a directory a command creates (--keep-runs, --dir).

:func:`check_distinct` is the one output rule's other half: no output is the
same file as an input or as another output (by device and inode for files
that exist, after following links; by resolved path for those not yet
created).  Every command calls it with all its inputs and outputs (secondary
ones too: logs, run files, figures) before any work.

:func:`open_atomic` (and :func:`write_with`, :func:`write_text`,
:func:`write_bytes` on top of it) writes through a unique temporary in the target's own
directory (``tempfile.mkstemp(dir=..., prefix='.NAME.', suffix='.tmp')``),
renamed onto the target when the body finishes (with the permissions a plain
``open()`` would give, not mkstemp's 0600); on any failure (an exception,
Ctrl-C, a full disk) the temporary is removed, and a failed write is reported
with the target's path, never the temporary's.
"""

from __future__ import annotations

import os
import stat
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .infile import stat_or_none
from .limits import MAX_NAME_CHARS, MAX_PATH_CHARS, clip, clip_path


class OutputError(ValueError):
    """An output path that cannot be written; the message names it."""


def _parent(path: Path) -> Path:
    return path.parent if str(path.parent) else Path(".")


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it; set straight back
    os.umask(mask)
    return mask


def _stat(path: Path, what: str, error):
    """os.stat(path) following links; None when nothing is there yet."""
    return stat_or_none(
        path,
        error,
        f"a part of the {what}'s path is not a directory",
        f"cannot use as the {what}",
    )


def target(path) -> Path:
    """Where writing ``path`` lands: the final target of a symbolic link, else path."""
    path = Path(path)
    return Path(os.path.realpath(path)) if path.is_symlink() else path


PSEUDO_FILE_SYSTEMS = frozenset(
    [
        "proc",
        "sysfs",
        "devtmpfs",
        "devpts",
        "cgroup",
        "cgroup2",
        "debugfs",
        "tracefs",
        "securityfs",
        "configfs",
        "bpf",
    ]
)


def file_system_type(directory) -> str | None:
    """The type of the file system holding ``directory`` (the longest mount
    point of /proc/self/mountinfo that contains it), None when unknown."""
    real = os.path.realpath(directory)
    best, kind = "", None
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields, _, rest = line.partition(" - ")
                parts = fields.split()
                if len(parts) < 5 or not rest:
                    continue
                mount = parts[4].replace("\\040", " ")
                inside = real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best, kind = mount, rest.split()[0]
    except OSError:
        return None
    return kind


def _probe(directory: Path, make_dir: bool = False) -> str | None:
    """Why no file (or, with make_dir, no directory) can be created in
    ``directory``, else None: os.access does not see read-only or pseudo file
    systems (/proc, named as such).  What the probe creates is removed at once."""
    try:
        if make_dir:
            os.rmdir(tempfile.mkdtemp(prefix=".probe-", dir=directory))
        else:
            fd, tmp = tempfile.mkstemp(prefix=".probe-", dir=directory)
            os.close(fd)
            os.unlink(tmp)
    except OSError as exc:
        kind = file_system_type(directory)
        if kind in PSEUDO_FILE_SYSTEMS:
            return f"it is on the {kind} pseudo file system, which holds no files of yours"
        return exc.strerror or str(exc)
    return None


def _check_length(path: Path, what: str, error) -> None:
    """``error`` naming the limit when ``path`` or its last component is too long
    for a file and the temporary written beside it (the C commands' limits)."""
    text, name = str(path), path.name
    if len(text) > MAX_PATH_CHARS:
        raise error(
            f"{clip(text)}: the {what}'s path has {len(text)} characters, more than the limit "
            f"of {MAX_PATH_CHARS}"
        )
    if len(name) > MAX_NAME_CHARS:
        raise error(
            f"{clip(text)}: the {what}'s file name has {len(name)} characters, more than the "
            f"limit of {MAX_NAME_CHARS}"
        )


def check_output(path, what: str = "output", error=OutputError) -> Path:
    """``path`` as a Path when a file can be written there, else ``error(message)``."""
    path = Path(path)
    _check_length(path, what, error)
    st = _stat(path, what, error)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise error(f"{clip_path(path)}: is a directory; give a file name for the {what}")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise error(
            f"{clip_path(path)}: is not a regular file (a device, pipe or socket); give a file "
            f"name for the {what}"
        )
    real = target(path)
    parent = _parent(real)
    pst = _stat(parent, what, error)
    if pst is None or not stat.S_ISDIR(pst.st_mode):
        what_dir = "is not a directory" if pst is not None else "does not exist"
        raise error(f"{clip_path(path)}: {what} directory {clip_path(parent)} {what_dir}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise error(f"{clip_path(path)}: {what} directory {clip_path(parent)} is not writable")
    why = _probe(parent)
    if why:
        raise error(f"{clip_path(path)}: cannot create the {what} in {clip_path(parent)}: {why}")
    return path


def check_output_dir(path, what: str = "output directory", error=OutputError) -> Path:
    """``path`` as a Path when it is a directory files can be created in, or one
    that can be created (nothing is created here), else ``error(message)``."""
    path = Path(path)
    _check_length(path, what, error)
    try:
        st = _stat(path, what, error)
    except error:
        if not _not_a_directory(path):
            raise
        raise error(
            f"cannot create directory {clip_path(path)} (the {what}): a part of its path is a file"
        ) from None
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise error(f"{clip_path(path)}: exists and is not a directory (the {what})")
        why = _probe(path)
        if why:
            raise error(f"{clip_path(path)}: cannot create files in the {what}: {why}")
        return path
    base = Path(os.path.abspath(path))
    while True:  # the nearest existing ancestor must be a directory we may create in
        base = base.parent
        bst = _stat(base, what, error)
        if bst is not None:
            break
    if not stat.S_ISDIR(bst.st_mode):
        raise error(
            f"cannot create directory {clip_path(path)} (the {what}): {base} is not a directory"
        )
    why = _probe(base, make_dir=True)
    if why:
        raise error(f"cannot create directory {clip_path(path)} (the {what}): {why}")
    return path


def _not_a_directory(path: Path) -> bool:
    try:
        os.stat(path)
    except NotADirectoryError:
        return True
    except OSError:
        pass
    return False


def _identity(path: Path, what: str, error):
    st = _stat(path, what, error)
    if st is not None:
        return ("inode", st.st_dev, st.st_ino)
    return ("path", os.path.realpath(path))


def check_distinct(inputs, outputs, error=OutputError) -> None:
    """``error`` naming both options and the path when an output is an input or
    another output.  ``inputs`` and ``outputs`` are iterables of (option, path),
    the option as the user gave it (``-o``, ``--keep-runs DIR: run file``, ``MIX``);
    entries whose path is None or '-' (stdout) are skipped."""

    def keyed(items, what):
        out = []
        for option, path in items:
            if path is None or str(path) == "-":
                continue
            out.append((_identity(Path(path), what, error), option, Path(path)))
        return out

    ins = keyed(inputs, "input")
    outs = keyed(outputs, "output")
    seen = {}
    for key, option, path in outs:
        for ikey, ioption, ipath in ins:
            if key == ikey:
                raise error(
                    f"{option} {clip_path(path)} is the input {ioption} {clip_path(ipath)}: an output "
                    "never replaces an input; give another output name"
                )
        if key in seen:
            other, opath = seen[key]
            raise error(
                f"{other} {clip_path(opath)} and {option} {clip_path(path)} are the same file: give "
                "each output its own name"
            )
        seen[key] = (option, path)


def make_dir(path, what: str = "output directory", error=OutputError) -> Path:
    """Create ``path`` (and its parents) or raise ``error`` naming it."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise error(f"{clip_path(path)}: cannot create the {what}: {exc.strerror}") from None
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
    real = target(path)
    if mode == "w":
        open_kw.setdefault("encoding", "utf-8")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{real.name}.", suffix=".tmp", dir=_parent(real))
    except OSError as exc:
        raise error(f"{clip_path(path)}: cannot write: {exc.strerror}") from None

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
        os.replace(tmp, real)
    except BaseException as exc:
        discard(fh)
        if isinstance(exc, OSError):
            raise error(f"{clip_path(path)}: cannot write: {exc.strerror or exc}") from None
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
        raise error(f"{clip_path(path)}: cannot write: {exc.strerror or exc}") from None
    return Path(path)
