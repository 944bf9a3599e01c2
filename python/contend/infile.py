"""Input files read within limits: the one helper behind every Python reader.

Every JSON file the Python commands read (results of `contend network`,
`load`, `jobs`, `sim`, mitigate/study/model/training files, sweep manifests,
paths files, a run's own output) and every study file (TOML) goes through
here, so that each is read the same way and never raises a traceback:

* the file is opened once; a missing file, a directory, a symbolic link
  loop, a permission problem each give one message naming the path;
* at most :data:`~contend.limits.MAX_INPUT_BYTES` are read, after gzip
  decompression when the file starts with the gzip magic (decompression is
  streamed and stops at the limit: a small file that inflates to gigabytes
  is refused after reading the limit, never inflated whole);
* nesting deeper than :data:`~contend.limits.MAX_NESTING` is refused (the
  parsers' RecursionError is caught; what parses is measured without
  recursion), as is text that is not UTF-8, JSON that does not parse and,
  on request, NaN or Infinity.

Errors are raised as the caller's ValueError subclass (``error``), whose
message names the file and, for a limit, the limit.  Counter CSV files are
read by pandas in :mod:`contend.telemetry`; they use :func:`check_size` and
:func:`stat_input` from here.
"""

from __future__ import annotations

import errno
import gzip
import io
import json
import os
import stat
import zlib
from pathlib import Path

from . import limits
from .jsonfinite import check_finite
from .limits import MAX_CSV_BYTES, MAX_NESTING, clip, clip_path, human_bytes

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
    import tomli as tomllib

GZIP_MAGIC = b"\x1f\x8b"


class InputError(ValueError):
    """An input file that cannot be read; the message names it."""


def _expected(hint: str | None) -> str:
    return f" (expected {hint})" if hint else ""


def stat_or_none(path, error, not_dir: str, cannot: str):
    """os.stat(path) following links; None when nothing is there.  A link loop,
    a path through a non-directory (``not_dir``) or another failure
    (``cannot``: the verb phrase before the reason) raise ``error`` naming it."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(
                f"{clip_path(path)}: symbolic link loop (too many levels of links)"
            ) from None
        if exc.errno == errno.ENOTDIR:
            raise error(f"{clip_path(path)}: {not_dir}") from None
        raise error(f"{clip_path(path)}: {cannot}: {exc.strerror}") from None


def stat_input(path, hint: str | None = None, error=InputError, directory_ok: bool = False):
    """os.stat of an input, following links; ``error`` naming the path when it
    is missing, a link loop, a directory (unless ``directory_ok``) or unusable."""
    path = Path(path)
    st = stat_or_none(
        path, error, "no such file (a part of the path is not a directory)", "cannot read"
    )
    if st is None:
        raise error(f"{clip_path(path)}: no such file{_expected(hint)}")
    if stat.S_ISDIR(st.st_mode) and not directory_ok:
        raise error(f"{clip_path(path)}: is a directory{_expected(hint)}")
    return st


def check_size(path, limit: int = MAX_CSV_BYTES, hint: str | None = None, error=InputError):
    """``error`` unless ``path`` is a readable file of at most ``limit`` bytes."""
    st = stat_input(path, hint, error)
    if stat.S_ISREG(st.st_mode) and st.st_size > limit:
        raise error(
            f"{clip_path(path)}: {human_bytes(st.st_size)}, larger than the {human_bytes(limit)} "
            "limit of an input file"
        )
    return st


def _too_big(path, limit: int, inflated: bool, error):
    what = "decompresses to more than" if inflated else "is larger than"
    return error(
        f"{clip_path(path)}: {what} the {human_bytes(limit)} limit of an input file "
        "(not a contend file, or corrupt)"
    )


def read_bytes(path, hint: str | None = None, error=InputError, limit: int | None = None):
    """The bytes of ``path`` (gunzipped when gzip), at most ``limit`` of them
    (default: limits.MAX_INPUT_BYTES, looked up at each call)."""
    limit = limits.MAX_INPUT_BYTES if limit is None else limit
    path = Path(path)
    st = stat_input(path, hint, error)
    if stat.S_ISREG(st.st_mode) and st.st_size > limit:
        raise _too_big(path, limit, False, error)
    try:
        with open(path, "rb") as fh:
            data = fh.read() if stat.S_ISREG(st.st_mode) else fh.read(limit + 1)
    except OSError as exc:
        raise error(f"{clip_path(path)}: cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise _too_big(path, limit, False, error)
    if data[:2] != GZIP_MAGIC:
        return data
    return _gunzip(data, path, limit, error)


def _gunzip(data: bytes, path, limit: int, error) -> bytes:
    """Decompress every gzip member of ``data``, streamed and stopped after ``limit`` bytes."""
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as gz:
            out = gz.read(limit + 1)  # GzipFile inflates in bounded steps
    except (OSError, EOFError, zlib.error) as exc:
        raise error(f"{clip_path(path)}: corrupt or truncated gzip data ({exc})") from None
    if len(out) > limit:
        raise _too_big(path, limit, True, error)
    return out


def read_text(path, hint: str | None = None, error=InputError, limit: int | None = None):
    """The UTF-8 text of ``path`` (gunzipped when gzip), at most ``limit`` bytes."""
    raw = read_bytes(path, hint, error, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise error(f"{clip_path(path)}: not UTF-8 text{_expected(hint)}") from None


def nesting_depth(doc, stop: int = MAX_NESTING + 1) -> int:
    """Levels of lists/dicts inside each other in ``doc`` (0 for a scalar),
    counted without recursion and no further than ``stop``."""
    deepest, stack = 0, [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            items = value.values()
        elif isinstance(value, list):
            items = value
        else:
            continue
        deepest = max(deepest, depth)
        if deepest >= stop:
            return deepest
        stack.extend((v, depth + 1) for v in items if isinstance(v, (dict, list)))
    return deepest


def _too_deep(source, error, kind: str):
    return error(
        f"{clip_path(source)}: {kind} nested more than {MAX_NESTING} levels deep (the limit): "
        "not a contend file"
    )


def parse_json(text: str, source, error=InputError, hint: str | None = None, finite=False):
    """The JSON document of ``text``; ``error`` naming ``source`` when empty,
    not JSON, nested too deep or (with ``finite``) holding NaN or Infinity."""
    if not text.strip():
        raise error(f"{clip_path(source)}: empty file{_expected(hint)}")
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(
            f"{clip_path(source)}: not valid JSON (truncated or corrupt?): {exc.msg} at line "
            f"{exc.lineno} column {exc.colno}{_expected(hint)}"
        ) from None
    except RecursionError:
        raise _too_deep(source, error, "JSON") from None
    if nesting_depth(doc) > MAX_NESTING:
        raise _too_deep(source, error, "JSON")
    if finite:
        check_finite(doc, clip_path(source), error)
    return doc


def load_json(path, hint: str | None = None, error=InputError, finite=False, limit=None):
    """The JSON document of the file ``path`` (plain or gzip), read within the limits."""
    return parse_json(read_text(path, hint, error, limit), str(path), error, hint, finite)


def parse_toml(text: str, source, error=InputError, what: str = "TOML") -> dict:
    """The TOML document of ``text``; ``error`` naming ``source`` when it does not
    parse or is nested too deep."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{clip_path(source)}: not a {what} file: {clip(exc, 200)}") from None
    except RecursionError:
        raise _too_deep(source, error, "TOML") from None
    if nesting_depth(doc) > MAX_NESTING:
        raise _too_deep(source, error, "TOML")
    return doc
