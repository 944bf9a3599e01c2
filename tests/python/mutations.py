"""Mutations of valid input files for the property-based reader tests
(test_readers_fuzz.py, test_studyfile_fuzz.py): paths into a parsed
document, a node deleted, replaced or emptied, a node nested far too deep,
text truncated, spliced or missing a line, and text gzipped with padding
that inflates it beyond a limit."""

from __future__ import annotations

import copy
import gzip
import json

from hypothesis import strategies as st


def paths_of(doc, prefix=(), limit=4000):
    """Every path (tuple of keys/indices) into doc; long arrays contribute
    their first three items only, so that every part of a document is
    reachable without samples arrays dominating the draws."""
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += paths_of(v, prefix + (k,), limit)
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            out += paths_of(v, prefix + (i,), limit)
    return out[:limit]


def mutate(doc, path, op, value):
    """A copy of doc with the node at path deleted (op 0), replaced by
    value (op 1) or, for a container, emptied (op 2)."""
    doc = copy.deepcopy(doc)
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if op == 0:
        del parent[last]
    elif op == 1:
        parent[last] = value
    elif isinstance(parent[last], (dict, list)):
        parent[last].clear()
    return doc


def mutated_text(text: str):
    """Truncations, splices of arbitrary text, and line deletions of text."""
    n = len(text)
    lines = text.splitlines(keepends=True)
    return st.one_of(
        st.integers(0, n).map(lambda k: text[:k]),
        st.tuples(st.integers(0, n), st.integers(0, n), st.text(max_size=40)).map(
            lambda t: text[: min(t[0], t[1])] + t[2] + text[max(t[0], t[1]) :]
        ),
        st.integers(0, max(len(lines) - 1, 0)).map(lambda i: "".join(lines[:i] + lines[i + 1 :])),
        st.text(max_size=200),
    )


_HOLE = "\x00nested-here\x00"


def nested_text(doc, path, depth: int) -> str:
    """The JSON text of doc with the node at path replaced by ``depth`` arrays
    inside each other (written as text: json.dumps would recurse)."""
    text = json.dumps(mutate(doc, path, 1, _HOLE))
    return text.replace(json.dumps(_HOLE), "[" * depth + "]" * depth, 1)


def deeply_nested(doc):
    """Texts of doc with one node nested 1 to 3000 levels deep."""
    paths = paths_of(doc)
    return st.builds(
        lambda i, depth: nested_text(doc, paths[i], depth),
        st.integers(0, len(paths) - 1),
        st.integers(1, 3000),
    )


def inflating(text: str, pad_max: int):
    """gzip of ``text`` followed by up to ``pad_max`` spaces (valid JSON around
    a document), so that the decompressed size may exceed a reader's limit."""
    return st.integers(0, pad_max).map(lambda n: gzip.compress((text + " " * n).encode()))
