"""Mutations of valid input files for the property-based reader tests
(test_readers_fuzz.py, test_studyfile_fuzz.py): paths into a parsed
document, a node deleted, replaced or emptied, and text truncated, spliced
or missing a line."""

from __future__ import annotations

import copy

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
