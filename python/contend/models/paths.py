"""The routing's paths between node pairs (paths JSON, schema ``contend-paths``).

Written by ``contend topology paths``.  A path is the ordered list of link ids
(indices into ``links``) a packet crosses; a pair lists every path the routing
can give it (``paths``, possibly a sample of ``paths_total``).  This module
loads and checks such a file and turns node pairs into *link weights*: for
pair (a, b) the weight of link l is ``k_s`` times the number of the pair's
paths that cross l, with ``k_s = 1 / |S*|`` (every listed path equally
likely), so that ``sum_l weight_l * x_l`` is the path-averaged sum of any
per-link quantity x (Netscope eq. 12 without its constants).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from .. import infile
from .errors import ModelError

SCHEMA_NAME = "contend-paths"
SUPPORTED_MAJOR = 1
HINT = "a paths JSON written by `contend topology paths` (schema 'contend-paths' 1.x)"


def file_sha256(path) -> str:
    """Hex SHA-256 of a file's bytes (provenance of model inputs)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path, hint: str):
    """Parse a JSON file (contend.infile: size and nesting limits, finite numbers);
    ModelError naming the file on failure."""
    return infile.load_json(path, hint, ModelError, finite=True)


def check_header(doc, name: str, major: int, source, hint: str) -> None:
    """The common ``schema`` / ``schema_version`` check of contend JSON files."""
    if not isinstance(doc, dict):
        raise ModelError(f"{source}: top level is not a JSON object; expected {hint}")
    if doc.get("schema") != name:
        raise ModelError(
            f"{source}: field 'schema' is {doc.get('schema')!r}, expected '{name}' ({hint})"
        )
    version = doc.get("schema_version")
    if not isinstance(version, str) or version.split(".", 1)[0] != str(major):
        raise ModelError(
            f"{source}: field 'schema_version' is {version!r}; this reader supports "
            f"'{major}.N' ({hint})"
        )


@dataclass
class PathSet:
    """A loaded paths file: links (id -> component, port, class) and per-pair paths."""

    source: str
    topology: str
    routing: str
    nodes: int
    links: pd.DataFrame  # index = link id; columns component, port, link_class[, peer]
    pairs: dict  # (src, dst) -> list of paths (lists of link ids)
    sha256: str = ""
    _index: dict = field(default=None, repr=False)

    @property
    def classes(self) -> list:
        """Link classes in the order they first appear in ``links``."""
        return list(dict.fromkeys(self.links["link_class"]))

    def link_index(self) -> dict:
        """(component, port) -> link id, ports as text."""
        if self._index is None:
            self._index = {
                (c, p): i
                for i, (c, p) in enumerate(zip(self.links["component"], self.links["port"]))
            }
        return self._index

    def has_pair(self, src: int, dst: int) -> bool:
        return (int(src), int(dst)) in self.pairs

    def missing_pairs(self, pairs) -> list:
        return [(int(s), int(d)) for s, d in pairs if (int(s), int(d)) not in self.pairs]

    def require_pairs(self, pairs, what: str) -> None:
        """ModelError naming the first ordered pairs the file lacks."""
        missing = self.missing_pairs(pairs)
        if missing:
            shown = ", ".join(f"{s}->{d}" for s, d in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ModelError(
                f"{self.source}: no paths for {what} pair(s) {shown}{more}: write a paths file "
                "holding them, e.g. `contend topology paths --topology "
                f"{self.topology} --routing {self.routing} --nodes LIST -o P.json`"
            )

    def pair_weights(self, pairs) -> sparse.csr_matrix:
        """Sparse (len(pairs) x links) matrix: row i = link weights of ordered pair i.

        Weight of link l = (number of the pair's listed paths crossing l) / (number of
        listed paths): k_s = 1/|S*|, every listed path equally likely.
        """
        self.require_pairs(pairs, "the requested")
        rows, cols, vals = [], [], []
        for i, (s, d) in enumerate(pairs):
            plist = self.pairs[(int(s), int(d))]
            share = 1.0 / len(plist)
            for path in plist:
                rows.extend([i] * len(path))
                cols.extend(path)
                vals.extend([share] * len(path))
        return sparse.csr_matrix(
            (np.asarray(vals, float), (np.asarray(rows, int), np.asarray(cols, int))),
            shape=(len(pairs), len(self.links)),
        )  # duplicate (row, col) entries are summed: a link crossed twice counts twice


def _bad(source, where: str, what: str):
    return ModelError(f"{source}: {where}: {what} ({HINT})")


def _per_vc_links(comps, ports, classes, pairs, pair_vcs):
    """Links split by VC: (component, "P/vcV") -- the name the simulator's
    per-VC counter rows get (contend.telemetry keep_vcs).  A port's stall
    counter is the union over its VCs, and a port stalled on one VC passes
    packets on another, so a path's delay follows the stalls of its own VCs."""
    ids: dict = {}
    c2, p2, k2, out = [], [], [], {}
    for key, plist in pairs.items():
        vl = pair_vcs.get(key)
        new = []
        for j, path in enumerate(plist):
            row = []
            for x, link in enumerate(path):
                vc = vl[j][x] if vl else 0
                name = (comps[link], f"{ports[link]}/vc{vc}")
                if name not in ids:
                    ids[name] = len(c2)
                    c2.append(name[0])
                    p2.append(name[1])
                    k2.append(classes[link])
                row.append(ids[name])
            new.append(row)
        out[key] = new
    return c2, p2, k2, out


def parse_paths(doc, source="<paths>") -> PathSet:
    """Check a parsed paths document and index it."""
    check_header(doc, SCHEMA_NAME, SUPPORTED_MAJOR, source, HINT)
    for key, kind in (("topology", str), ("routing", str), ("nodes", int)):
        if not isinstance(doc.get(key), kind):
            raise _bad(source, f"field '{key}'", f"missing or not a {kind.__name__}")
    links = doc.get("links")
    if not isinstance(links, list) or not links:
        raise _bad(source, "field 'links'", "missing or empty")
    comps, ports, classes, peers = [], [], [], []
    for i, link in enumerate(links):
        if not isinstance(link, dict) or not all(
            isinstance(link.get(k), str) for k in ("component", "port", "class")
        ):
            raise _bad(source, f"links[{i}]", "needs text fields component, port and class")
        comps.append(link["component"])
        ports.append(link["port"])
        classes.append(link["class"])
        peers.append(link.get("peer", "") if isinstance(link.get("peer", ""), str) else "")
    n_links = len(links)
    pairs, pair_vcs = {}, {}
    raw_pairs = doc.get("pairs")
    if not isinstance(raw_pairs, list) or not raw_pairs:
        raise _bad(source, "field 'pairs'", "missing or empty")
    for i, pair in enumerate(raw_pairs):
        if not isinstance(pair, dict):
            raise _bad(source, f"pairs[{i}]", "not an object")
        src, dst, plist = pair.get("src"), pair.get("dst"), pair.get("paths")
        if not isinstance(src, int) or not isinstance(dst, int):
            raise _bad(source, f"pairs[{i}]", "src and dst must be node indices")
        if not isinstance(plist, list) or not plist:
            raise _bad(source, f"pairs[{i}] ({src}->{dst})", "field 'paths' missing or empty")
        for j, path in enumerate(plist):
            if (
                not isinstance(path, list)
                or not path
                or not all(isinstance(x, int) and 0 <= x < n_links for x in path)
            ):
                raise _bad(
                    source,
                    f"pairs[{i}].paths[{j}] ({src}->{dst})",
                    f"a path is a non-empty list of link ids 0..{n_links - 1}",
                )
        pairs[(src, dst)] = plist
        vcs = pair.get("vcs")
        if vcs is not None:
            if not isinstance(vcs, list) or [
                len(v) if isinstance(v, list) else -1 for v in vcs
            ] != [len(x) for x in plist]:
                raise _bad(source, f"pairs[{i}].vcs ({src}->{dst})", "must match paths in shape")
            pair_vcs[(src, dst)] = vcs
    if pair_vcs and any(v > 0 for vl in pair_vcs.values() for path in vl for v in path):
        comps, ports, classes, pairs = _per_vc_links(comps, ports, classes, pairs, pair_vcs)
    frame = pd.DataFrame({"component": comps, "port": ports, "link_class": classes})
    if len(peers) == len(comps):  # 1.1: the other direction of each link (not split by VC)
        frame["peer"] = peers
    return PathSet(
        source=str(source),
        topology=doc["topology"],
        routing=doc["routing"],
        nodes=doc["nodes"],
        links=frame,
        pairs=pairs,
    )


def load_paths(path) -> PathSet:
    """Read and check a paths JSON file."""
    path = Path(path)
    paths = parse_paths(read_json(path, HINT), path)
    paths.sha256 = file_sha256(path)
    return paths
