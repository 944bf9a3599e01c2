"""``contend locate --cluster``: the paths of the emulated cluster that is up.

Builds from the description ``contend cluster`` keeps of a cluster
(``cluster.json`` in its state directory) the paths document that
``--paths`` reads (schema ``contend-paths``): every shaped direction is a
link named as ``contend cluster stats`` names it (``n003-egress``,
``leaf1-uplink-up``; no port), its peer the other direction of its cable.
The tree has one path per pair: the source's egress, then, between two
leaves, the source leaf's uplink up and the destination leaf's uplink down,
then the destination's ingress.

The results' nodes are matched to the cluster's by host name (the results'
``environment.node_names``, which ``contend cluster run`` makes the node's
hostname), so the placement of ranks does not matter; results of another
machine, of a simulation or with ``--virtual-nodes`` are refused.
"""

from __future__ import annotations

from ..cluster import state
from ..cluster.errors import UsageError
from ..cluster.topology import cable_of, validate_prefix
from ..models.errors import ModelError
from ..models.paths import SCHEMA_NAME, PathSet, parse_paths
from .measurements import LocateError, Pairs

ROUTING = "tree (one path)"
CLASSES = {
    "egress": "injection (node->leaf)",
    "ingress": "ejection (leaf->node)",
    "uplink-up": "leaf->spine (up)",
    "uplink-down": "spine->leaf (down)",
}


def _class(component: str) -> str:
    return next(c for suffix, c in CLASSES.items() if component.endswith("-" + suffix))


def node_map(desc: dict, pairs: Pairs) -> list:
    """Per node of the results: the index of the cluster's node of the same host name.

    LocateError naming the problem when the results are not from this cluster."""
    where = f"emulated cluster '{desc['prefix']}'"
    if pairs.topology:
        raise LocateError(
            f"{pairs.source}: results of a simulated run on {pairs.topology}, not of the {where}"
        )
    names = pairs.node_names
    if len(names) <= pairs.max_node:
        raise LocateError(
            f"{pairs.source}: the results name {len(names)} node(s) for nodes "
            f"0..{pairs.max_node} (environment.node_names): cannot match them to the {where}"
        )
    hosts = {n["hostname"]: n["index"] for n in desc["nodes"]}
    first, last = desc["nodes"][0]["hostname"], desc["nodes"][-1]["hostname"]
    out, seen = [], {}
    for i, name in enumerate(names):
        if name not in hosts:
            raise LocateError(
                f"{pairs.source}: node {i} ({name!r}) is not a node of the {where} "
                f"({first}..{last}): measure with contend cluster run --prefix "
                f"{desc['prefix']} -- contend pairs"
            )
        if name in seen:
            raise LocateError(
                f"{pairs.source}: nodes {seen[name]} and {i} of the results are both on "
                f"{name} (--virtual-nodes?): measure one node per cluster node"
            )
        seen[name] = i
        out.append(hosts[name])
    return out


def paths_document(desc: dict, node_index: list, measured) -> dict:
    """The ``contend-paths`` document of the ordered node pairs ``measured`` (results'
    node numbers; ``node_index`` maps them to the cluster's nodes)."""
    links = [link["component"] for link in desc["links"]]
    ids = {c: i for i, c in enumerate(links)}
    peer = {}
    for c in links:
        peer.setdefault(cable_of(c), []).append(c)
    nodes = desc["nodes"]
    pairs = []
    for s, d in measured:
        a, b = nodes[node_index[s]], nodes[node_index[d]]
        path = [f"{a['name']}-egress"]
        if a["leaf"] != b["leaf"]:
            path += [f"leaf{a['leaf']}-uplink-up", f"leaf{b['leaf']}-uplink-down"]
        path.append(f"{b['name']}-ingress")
        pairs.append({"src": s, "dst": d, "paths": [[ids[c] for c in path]], "paths_total": 1})
    return {
        "schema": SCHEMA_NAME,
        "schema_version": "1.1",
        "topology": f"emulated cluster '{desc['prefix']}' ({len(nodes)} nodes, "
        f"{len(desc['leaves'])} leaves)",
        "routing": ROUTING,
        "nodes": len(node_index),
        "links": [
            {
                "component": c,
                "port": "",
                "class": _class(c),
                "peer": next(p for p in peer[cable_of(c)] if p != c),
            }
            for c in links
        ],
        "pairs": pairs,
    }


def cluster_paths(prefix: str, pairs: Pairs) -> PathSet:
    """The paths of the measured pairs on cluster ``prefix`` (its state must be up)."""
    try:
        validate_prefix(prefix)
        desc = state.load(prefix)
    except UsageError as exc:
        raise LocateError(f"--cluster: {exc}") from None
    measured = sorted(set(zip(pairs.src.tolist(), pairs.dst.tolist())))
    try:
        doc = paths_document(desc, node_map(desc, pairs), measured)
        return parse_paths(doc, f"cluster {prefix}")
    except (ModelError, KeyError, StopIteration) as exc:  # a cluster.json edited by hand
        raise LocateError(f"--cluster: {state.state_dir(prefix)}: not a usable description "
                          f"({exc})") from None  # fmt: skip
