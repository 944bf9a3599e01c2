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
from contend.models import parse_paths

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


# ------------------------------------------------------------ files on disk


def write_sim_counters(frame, path):
    """The PTs intervals as the simulator's counter CSV: cumulative xmit_wait_ns per port.

    A baseline sample at the first interval's start holds 0; like the simulator, a
    port is written only at the samples where its counter changed.
    """
    edges = sorted(set(frame["t0_s"]) | set(frame["t1_s"]))
    pts = {
        (t0, c, p): v
        for t0, c, p, v in zip(
            frame["t0_s"], frame["component"], frame["port"], frame["pts_percent"]
        )
    }
    lines = ["time_s,component,port,vc,counter,value"]
    wait = {(link["component"], link["port"]): 0.0 for link in links()}
    for c, p in wait:
        lines.append(f"{edges[0]:.9f},{c},{p},,xmit_wait_ns,0.000")
    for t0, t1 in zip(edges[:-1], edges[1:]):
        for (c, p), before in wait.items():
            v = pts.get((t0, c, p), 0.0)
            if v > 0:
                wait[(c, p)] = before + v / 100.0 * (t1 - t0) * 1e9
                lines.append(f"{t1:.9f},{c},{p},,xmit_wait_ns,{wait[(c, p)]:.3f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def write_training(tmp, frames, samples, paths_name="synthetic.paths.json"):
    """A contend-pingpong-train file with one counter CSV per run."""
    write_paths(tmp / paths_name)
    runs = []
    for run, frame in frames.items():
        csv = write_sim_counters(frame, tmp / f"train.run{run}.csv")
        rows = samples[samples["run"] == run]
        runs.append(
            {
                "run": run,
                "seed": run + 1,
                "congestion": "synthetic",
                "counters": csv.name,
                "counters_source": "sim",
                "samples": [
                    {
                        "src": int(r.src),
                        "dst": int(r.dst),
                        "t_start_s": float(r.t_start_s),
                        "t_end_s": float(r.t_end_s),
                        "rtt_us": float(r.rtt_us),
                    }
                    for r in rows.itertuples()
                ],
            }
        )
    doc = {
        "schema": "contend-pingpong-train",
        "schema_version": "1.0",
        "engine": "sim",
        "topology": "synthetic:3routers",
        "routing": "minimal",
        "paths": paths_name,
        "exchanges": 1000,
        "msg_bytes": 8,
        "runs": runs,
    }
    out = tmp / "train.json"
    out.write_text(json.dumps(doc, indent=1))
    return out


def write_jobs_results(
    path, counters, job, nodes, traffic_pairs, start_s, end_s, seed, t0_clock_s=0.0, node_gbps=100.0
):
    """A contend-jobs results file (the fields the models read) of one concurrent pass."""
    messages = sum(p[3] for p in traffic_pairs)
    size = sum(p[2] for p in traffic_pairs)
    doc = {
        "schema": "contend-jobs",
        "schema_version": "1.1",
        "engine": "sim",
        "dry_run": False,
        "seed": seed,
        "mode": "concurrent",
        "passes": ["concurrent"],
        "pass_clock": [
            {"pass": "concurrent", "perform_t0_clock_s": t0_clock_s, "perform_t0_unix_s": 1.7e9}
        ],
        "config": {"options": {"counters": str(counters), "node_gbps": node_gbps}},
        "jobs": [
            {
                "name": job,
                "nodes": list(nodes),
                "traffic": {"messages": messages, "bytes": size, "pairs": traffic_pairs},
                "results": {
                    "concurrent": {
                        "perform_start_s": start_s,
                        "perform_end_s": end_s,
                        "slowest_rank_mean_s": end_s - start_s,
                    }
                },
            },
            {
                "name": "noise",
                "nodes": [3],
                "traffic": {"messages": 0, "bytes": 0, "pairs": []},
                "results": {"concurrent": {"perform_start_s": 0.0, "perform_end_s": 1.0}},
            },
        ],
    }
    path.write_text(json.dumps(doc, indent=1))
    return path


def steady_intervals(rng, level, t_end=0.02, step=0.001, skip=0.2):
    """PTs intervals whose PTs per link is the same in every interval of the run."""
    per_link = {
        (link["component"], link["port"]): float(np.clip(rng.gamma(2.0, level / 2.0), 0, 98.0))
        for link in links()
        if rng.random() >= skip
    }
    edges = np.arange(0.0, t_end + step / 2, step)
    rows = [
        (t0, t1, c, p, v) for t0, t1 in zip(edges[:-1], edges[1:]) for (c, p), v in per_link.items()
    ]
    return pd.DataFrame(rows, columns=["t0_s", "t1_s", "component", "port", "pts_percent"])


# ------------------------------------------------------- frame maps (make_training)


def never_stalled(component_prefix):
    """frame_map: links of components starting with the prefix never stall (no rows)."""
    return lambda frame, rng: frame[~frame["component"].str.startswith(component_prefix)]


def tied_local_and_global(frame, rng):
    """frame_map: every router-to-router link has the same PTs in each interval."""
    net = [("A", "10"), ("A", "11"), ("B", "10"), ("B", "11"), ("B", "20"), ("C", "20")]
    keep = ~frame.set_index(["component", "port"]).index.isin(net)
    rows = [
        (t0, t1, c, p, v)
        for (t0, t1), v in (
            (w, float(rng.uniform(0, 90))) for w in sorted(set(zip(frame.t0_s, frame.t1_s)))
        )
        for c, p in net
    ]
    return pd.concat([frame[keep], pd.DataFrame(rows, columns=frame.columns)], ignore_index=True)


# ------------------------------------------------------- training samples

K_CLASS = {"injection": 300.0, "ejection": 250.0, "local": 120.0, "global": 600.0}
K_CONST = 500.0
LEVELS = (2, 10, 25, 45, 65, 85)


def make_training(
    seed=3, per_run=40, noise=0.01, k_class=K_CLASS, k_const=K_CONST, pairs=None, frame_map=None
):
    """(paths, samples, intervals by run) with RTTs from the given constants;
    ``frame_map(frame, rng)`` rewrites each run's PTs intervals first."""
    rng = np.random.default_rng(seed)
    paths = parse_paths(paths_doc(), "synthetic.paths.json")
    frames, rows = {}, []
    for run, level in enumerate(LEVELS):
        frame = intervals(rng, level, clamp_some=True)
        if frame_map:
            frame = frame_map(frame, rng)
        frames[run] = frame
        truth = RunTruth(frame)
        for _ in range(per_run):
            if pairs is None:
                s, d = (int(x) for x in rng.choice(NODES, 2, replace=False))
            else:
                s, d = pairs[rng.integers(len(pairs))]
            ts = rng.uniform(0, 0.015)
            te = ts + rng.uniform(0.0005, 0.004)
            rtt_ns = truth.one_way_ns(k_class, k_const, s, d, ts, te) + truth.one_way_ns(
                k_class, k_const, d, s, ts, te
            )
            rows.append((run, s, d, ts, te, rtt_ns / 1e3 * (1 + rng.normal(0, noise))))
    samples = pd.DataFrame(rows, columns=["run", "src", "dst", "t_start_s", "t_end_s", "rtt_us"])
    return paths, samples, frames
