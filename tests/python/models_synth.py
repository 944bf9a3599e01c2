"""Synthetic inputs for the Netscope model tests: a 6-node, 3-router fabric.

Routers A, B, C hold nodes 0-1, 2-3, 4-5.  A and B are joined by two parallel
local links each way (so A<->B and A<->C pairs have two equally likely paths),
B and C by one global link each way.  Link classes: injection, ejection,
local, global.  Ground truth is computed here by plain loops, independently of
contend.models.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

ROUTER_OF = {0: "A", 1: "A", 2: "B", 3: "B", 4: "C", 5: "C"}
NODES = 6


def links():
    out = [{"component": f"nic{n}", "port": "0", "class": "injection"} for n in range(NODES)]
    out += [{"component": ROUTER_OF[n], "port": str(n), "class": "ejection"} for n in range(NODES)]
    out += [
        {"component": "A", "port": "10", "class": "local"},
        {"component": "A", "port": "11", "class": "local"},
        {"component": "B", "port": "10", "class": "local"},
        {"component": "B", "port": "11", "class": "local"},
        {"component": "B", "port": "20", "class": "global"},
        {"component": "C", "port": "20", "class": "global"},
    ]
    return out


def _lid(component, port):
    for i, link in enumerate(links()):
        if link["component"] == component and link["port"] == str(port):
            return i
    raise KeyError((component, port))


def routes(src, dst):
    """Every path (list of link ids) from src to dst."""
    inj, ej = _lid(f"nic{src}", 0), _lid(ROUTER_OF[dst], dst)
    a, b = ROUTER_OF[src], ROUTER_OF[dst]
    ab = [[_lid("A", 10)], [_lid("A", 11)]]
    ba = [[_lid("B", 10)], [_lid("B", 11)]]
    middle = {
        ("A", "A"): [[]],
        ("B", "B"): [[]],
        ("C", "C"): [[]],
        ("A", "B"): ab,
        ("B", "A"): ba,
        ("B", "C"): [[_lid("B", 20)]],
        ("C", "B"): [[_lid("C", 20)]],
        ("A", "C"): [m + [_lid("B", 20)] for m in ab],
        ("C", "A"): [[_lid("C", 20)] + m for m in ba],
    }[(a, b)]
    return [[inj] + m + [ej] for m in middle]


def paths_doc():
    pairs = [
        {"src": s, "dst": d, "paths": routes(s, d), "paths_total": len(routes(s, d))}
        for s in range(NODES)
        for d in range(NODES)
        if s != d
    ]
    return {
        "schema": "contend-paths",
        "schema_version": "1.0",
        "topology": "synthetic:3routers",
        "routing": "minimal",
        "nodes": NODES,
        "links": links(),
        "pairs": pairs,
    }


def write_paths(path):
    path.write_text(json.dumps(paths_doc()))
    return path


def intervals(rng, level, t_end=0.02, step=0.001, skip=0.2, clamp_some=False):
    """PTs intervals of one run: every link and interval a random PTs around ``level`` %.

    A share ``skip`` of (link, interval) rows is left out (PTs 0 there).
    """
    rows = []
    edges = np.arange(0.0, t_end + step / 2, step)
    for t0, t1 in zip(edges[:-1], edges[1:]):
        for link in links():
            if rng.random() < skip:
                continue
            pts = float(np.clip(rng.gamma(2.0, level / 2.0), 0, 98.0))
            if clamp_some and rng.random() < 0.01:
                pts = 99.7
            rows.append((t0, t1, link["component"], link["port"], pts))
    return pd.DataFrame(rows, columns=["t0_s", "t1_s", "component", "port", "pts_percent"])


class RunTruth:
    """Ground truth of one run's PTs intervals, by plain loops over a lookup table."""

    def __init__(self, frame, clamp=99.0):
        self.grid = sorted(set(zip(frame["t0_s"], frame["t1_s"])))
        self.pts = {
            (t0, t1, c, p): v
            for t0, t1, c, p, v in zip(
                frame["t0_s"],
                frame["t1_s"],
                frame["component"],
                frame["port"],
                frame["pts_percent"],
            )
        }
        self.clamp = clamp

    def mean_q(self, component, port, t_start, t_end):
        """Time-weighted mean of Q = 100/(100-PTs) of one link over a window."""
        num = den = 0.0
        for t0, t1 in self.grid:
            w = max(0.0, min(t1, t_end) - max(t0, t_start))
            if w <= 0:
                continue
            pts = min(self.pts.get((t0, t1, component, port), 0.0), self.clamp)
            num += w * 100.0 / (100.0 - pts)
            den += w
        return num / den

    def one_way_ns(self, k_class, k_const, src, dst, t_start, t_end):
        """Eq. 12 with k_s = 1/|S*|."""
        all_links = links()
        plist = routes(src, dst)
        total = 0.0
        for path in plist:
            for lid in path:
                link = all_links[lid]
                q = self.mean_q(link["component"], link["port"], t_start, t_end)
                total += k_class[link["class"]] * q / len(plist)
        return total + k_const
