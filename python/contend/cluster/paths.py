"""The paths of the emulated cluster in the contend-paths format (the format
``contend topology paths`` writes for the simulator), so the Netscope latency
model reads both alike.

The cluster is a two-level tree with one path per node pair: the source's
``nIII-egress`` link, then, between leaves, ``leafL-uplink-up`` and
``leafM-uplink-down``, then the destination's ``nJJJ-ingress``.  Components
are the link names of ``contend cluster stats --csv``; ports are empty.
"""

from __future__ import annotations

CLASS_OF = {"egress": "injection (nic->router)", "ingress": "ejection (router->nic)"}


def path_components(desc: dict, src: int, dst: int) -> list[tuple[str, str]]:
    """The (component, class) links a packet from node src to dst crosses."""
    nodes = desc["nodes"]
    a, b = nodes[src], nodes[dst]
    out = [(f"{a['name']}-egress", CLASS_OF["egress"])]
    if a["leaf"] != b["leaf"]:
        out.append((f"leaf{a['leaf']}-uplink-up", "level 1->2 (up)"))
        out.append((f"leaf{b['leaf']}-uplink-down", "level 2->1 (down)"))
    out.append((f"{b['name']}-ingress", CLASS_OF["ingress"]))
    return out


def paths_doc(desc: dict, pairs) -> dict:
    """A contend-paths document for the ordered pairs (src, dst) given."""
    ids: dict[str, int] = {}
    links: list[dict] = []
    out_pairs = []
    nnodes = len(desc["nodes"])
    for src, dst in pairs:
        if not (0 <= src < nnodes and 0 <= dst < nnodes) or src == dst:
            raise ValueError(f"pair {src}:{dst}: nodes must differ and be in 0..{nnodes - 1}")
        path = []
        for comp, cls in path_components(desc, src, dst):
            if comp not in ids:
                ids[comp] = len(links)
                links.append({"component": comp, "port": "", "class": cls})
            path.append(ids[comp])
        out_pairs.append({"src": src, "dst": dst, "paths": [path], "paths_total": 1})
    return {
        "schema": "contend-paths",
        "schema_version": "1.0",
        "topology": f"cluster:{desc['prefix']},nodes={nnodes},leaves={len(desc['leaves'])}",
        "routing": "tree",
        "nodes": nnodes,
        "links": links,
        "pairs": out_pairs,
    }


def node_index(desc: dict, hostname: str) -> int:
    """The cluster node index of an MPI node name (its hostname)."""
    for n in desc["nodes"]:
        if n["hostname"] == hostname:
            return n["index"]
    raise ValueError(f"node {hostname!r} is not a node of cluster {desc['prefix']!r}")
