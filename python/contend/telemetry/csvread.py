"""Reading comma-separated counter files fast (pandas) with ``file:line`` errors.

Files reach millions of rows, so parsing is vectorised: the table is read once
with typed columns; only when that fails is the offending line located (a
second, slower read of the failing column as text).  Line numbers are physical
lines of the file (1-based, blank lines counted); fully blank lines are
skipped.  Fields are not expected to hold quoted line breaks.
"""

from __future__ import annotations

import csv
import re

import numpy as np
import pandas as pd

from .errors import at

# Text that reads as "no number" in a numeric column (reported as malformed later).
NA_TEXT = ["", "nan", "NaN", "NA", "N/A", "null", "NULL", "None", "-nan", "-NaN"]
_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _fields_of_line(path, number: int) -> int | None:
    """Number of CSV fields on physical line ``number`` of ``path`` (None if absent)."""
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        for i, text in enumerate(fh, 1):
            if i == number:
                return len(next(csv.reader([text]), []))
    return None


class Table:
    """A parsed table and the file line of each row (``line[i]`` for row label i)."""

    def __init__(self, path, frame: pd.DataFrame, first_line: int, names=()):
        self.path = path
        self.frame = frame
        self.first_line = first_line
        self.names = list(names)

    def line(self, label) -> int:
        return int(label) + self.first_line

    def fail(self, mask, what: str):
        """Raise ``file:line: what`` at the first row where ``mask`` holds (if any);
        a line with too few fields is reported as such (pandas fills them empty)."""
        mask = np.asarray(mask, dtype=bool)
        if mask.any():
            label = self.frame.index[int(np.argmax(mask))]
            line = self.line(label)
            fields = _fields_of_line(self.path, line) if self.names else None
            if fields is not None and fields < len(self.names):
                what = f"{fields} fields, expected {len(self.names)} ({','.join(self.names)})"
            raise at(self.path, line, what)


def read_table(path, names, text_cols, num_cols, first_line: int, comment=None) -> Table:
    """Read data lines ``first_line``.. of ``path`` as columns ``names``.

    ``text_cols`` become categories ('' for an empty field), ``num_cols``
    float64; lines starting with ``comment`` (if given) are skipped; a
    non-numeric or non-finite number, or a line with more fields than
    ``names``, raises TelemetryError at its line.  Lines with fewer fields read
    as '' / NaN in the missing columns (callers say what is missing).
    """
    # text is read as str and made categorical afterwards: dtype="category" would
    # infer numeric categories (port "01" -> 1.0)
    dtype = {c: str for c in text_cols}
    dtype.update({c: "float64" for c in num_cols})
    kwargs = {
        "header": None,
        "names": list(names),
        "skiprows": first_line - 1,
        "keep_default_na": False,
        "na_values": {c: NA_TEXT for c in num_cols},
        "skip_blank_lines": False,
        "engine": "c",
        "comment": comment,
    }
    try:
        frame = pd.read_csv(path, dtype=dtype, **kwargs)
    except pd.errors.ParserError as exc:
        m = _FIELDS_RE.search(str(exc))
        if m:
            want, line, saw = m.groups()
            raise at(
                path, int(line), f"{saw} fields, expected {want} ({','.join(names)})"
            ) from None
        raise at(path, None, f"cannot parse: {exc}") from None
    except (ValueError, TypeError):
        _locate_bad_number(path, kwargs, text_cols, num_cols, first_line)
        raise  # pragma: no cover - _locate_bad_number always raises
    except UnicodeDecodeError as exc:  # pragma: no cover - binary input
        raise at(path, None, f"not a text file ({exc.reason})") from None
    for c in text_cols:
        frame[c] = frame[c].astype("category")
    table = Table(path, frame, first_line, names)
    if len(frame):
        blank = np.ones(len(frame), dtype=bool)
        for c in text_cols:
            blank &= frame[c].astype(object).to_numpy() == ""
        for c in num_cols:
            blank &= frame[c].isna().to_numpy()
        if blank.any():
            table.frame = frame.loc[~blank]
        for c in num_cols:
            table.fail(
                ~np.isfinite(table.frame[c].to_numpy()), f"field '{c}' is not a finite number"
            )
    return table


def _locate_bad_number(path, kwargs, text_cols, num_cols, first_line):
    """Re-read the numeric columns as text and raise at the first non-number."""
    kwargs = dict(kwargs)
    kwargs["na_values"] = {}
    raw = pd.read_csv(path, dtype=str, usecols=list(num_cols), **kwargs)
    for c in num_cols:
        text = raw[c].fillna("").astype(str)
        bad = (
            pd.to_numeric(text, errors="coerce").isna().to_numpy() & ~text.isin(NA_TEXT).to_numpy()
        )
        if bad.any():
            i = int(np.argmax(bad))
            raise at(path, i + first_line, f"field '{c}' is not a number: {text.iloc[i]!r}")
    raise at(path, None, "cannot read the numeric columns")
