"""Measurements of a results file: all pairs of a ``contend pairs`` file (schema
``contend-pairs``) here, recorded rings of ``network``/``load`` in :mod:`.rings`.

A file holds one row per measured shift k and one column per source rank s:
the pair s -> (s + k) mod P.  :func:`load_pairs` checks the file against the
schema and returns the measurements as node pairs (``rank_node``) with their
bandwidth and latency; ranks on one node (no network between them) are left
out.  :func:`read_results` reads a file once and says which of the two it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import sparse

from .. import infile
from ..results import ResultsError, check_schema

SCHEMA_NAME = "contend-pairs"
SCHEMA_FILE = "contend-pairs.schema.json"
SUPPORTED_MAJOR = 1
HINT = "a results file of `contend pairs -o FILE` (schema 'contend-pairs' 1.x)"
RINGS_SCHEMA = "contend-results"  # network/load: rings recorded with --record-rings


class LocateError(ValueError):
    """Bad input of ``contend locate``: the message is meant for the user."""


@dataclass
class Pairs:
    """Measured node pairs: arrays of equal length, one entry per measurement; or,
    with ``rows`` (rings), src/dst the flows and bw_mib_s/lat_us per measurement."""

    source: str
    src: np.ndarray  # source node
    dst: np.ndarray  # destination node
    bw_mib_s: np.ndarray
    lat_us: np.ndarray
    ranks: int
    nodes: int  # distinct nodes of the run
    max_node: int
    same_node: int  # measurements between ranks of one node, left out
    topology: str | None  # environment.simulation.topology (--engine sim), else None
    routing: str | None
    degraded: list  # environment.simulation.degraded (ground truth), else []
    node_names: list = field(default_factory=list)  # environment.node_names: node i's host
    rows: sparse.csr_matrix | None = None  # measurements x flows (rings), None: one pair each
    measured: str = "pairs"  # what the measurements are, for the output


def read_results(path, rings: bool = True):
    """(document, its schema) of a pairs results file or, with ``rings``, of a
    network/load results file too."""
    doc = infile.load_json(path, HINT, LocateError, finite=True)
    found = doc.get("schema") if isinstance(doc, dict) else None
    if found == SCHEMA_NAME or (rings and found == RINGS_SCHEMA):
        return doc, found
    if not rings:
        raise LocateError(f"{path}: schema is {found!r}, not '{SCHEMA_NAME}' ({HINT})")
    raise LocateError(
        f"{path}: schema is {found!r}, not '{SCHEMA_NAME}' or '{RINGS_SCHEMA}' ({HINT}, or "
        "of `contend network`/`load` with --record-rings)"
    )


def node_names_of(doc) -> list:
    """environment.node_names (node i's host name), or [] when the results hold none."""
    names = doc.get("environment", {}).get("node_names")
    return names if isinstance(names, list) and all(isinstance(n, str) for n in names) else []


def load_pairs(path) -> Pairs:
    """Read and check a ``contend pairs`` results file; LocateError naming the problem."""
    return pairs_of(read_results(path, rings=False)[0], str(path))


def pairs_of(doc, source: str) -> Pairs:
    """The measurements of a ``contend pairs`` document read by :func:`read_results`."""
    version = doc.get("schema_version")
    if not isinstance(version, str) or version.split(".", 1)[0] != str(SUPPORTED_MAJOR):
        raise LocateError(f"{source}: schema_version {version!r}, expected 1.x ({HINT})")
    try:
        check_schema(doc, source, SCHEMA_FILE, HINT)
    except ResultsError as exc:
        raise LocateError(str(exc)) from None
    p = doc["ranks"]
    node = np.asarray(doc["rank_node"], dtype=np.int64)
    if len(node) != p:
        raise LocateError(f"{source}: rank_node has {len(node)} entries for {p} ranks ({HINT})")
    shifts = np.asarray(doc["shifts"], dtype=np.int64)
    bw = np.asarray(doc["bw_mib_s"], dtype=float)
    lat = np.asarray(doc["lat_us"], dtype=float)
    if bw.shape != (len(shifts), p) or lat.shape != bw.shape or np.any(shifts >= p):
        raise LocateError(
            f"{source}: bw_mib_s and lat_us must have one row of {p} values per shift "
            f"(shifts 1..{p - 1}) ({HINT})"
        )
    s = np.tile(np.arange(p), len(shifts))
    d = (s + np.repeat(shifts, p)) % p
    src, dst = node[s], node[d]
    keep = src != dst
    if not keep.any():
        raise LocateError(f"{source}: every measured pair is within one node: no network pairs")
    sim = doc.get("environment", {}).get("simulation") or {}
    return Pairs(
        source=source,
        src=src[keep],
        dst=dst[keep],
        bw_mib_s=bw.reshape(-1)[keep],
        lat_us=lat.reshape(-1)[keep],
        ranks=p,
        nodes=len(set(node.tolist())),
        max_node=int(node.max()),
        same_node=int((~keep).sum()),
        topology=sim.get("topology"),
        routing=sim.get("routing"),
        degraded=list(sim.get("degraded") or []),
        node_names=node_names_of(doc),
    )
