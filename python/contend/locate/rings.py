"""Ring measurements of a ``contend network``/``load`` results file (schema
``contend-results``) recorded with ``--record-rings``, as locate's measurements.

A ring test's round gives every rank a value (its mean over the round's timed
iterations).  In a random ring every rank exchanges with both neighbours at
once and waits for all four transfers, so a slow link on any of them slows
the rank: a rank at position k of the ring is one measurement that waits on
the flows k -> k+1, k+1 -> k, k -> k-1 and k-1 -> k (its ring hops, as node
pairs), and its row of the model is the element-wise maximum of those flows'
path weights (a link on any of them counts once).  Values are made relative
per test (its best rank's), so tests of different sizes can be fitted
together.  :func:`load_rings` returns them as :class:`.measurements.Pairs`
whose ``src``/``dst`` are the distinct flows and ``rows`` maps measurements
to flows; :func:`ring_weights` turns the flows' path weights into the
measurements' rows.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..results import ResultsError, check_schema
from .measurements import LocateError, Pairs, node_names_of

SCHEMA_FILE = "contend-results.schema.json"
HINT = "a results file of `contend network` or `contend load` run with --record-rings -o FILE"
METRIC_KEY = {"bw": "bw_mib_s", "lat": "lat_us"}
PHASES = ("isolated", "congested")
NO_MEASUREMENTS = (
    "holds neither pairs nor recorded rings: run `contend pairs`, or `contend load`/`contend "
    "network` with --record-rings (a ring test such as rr_bw among the canaries)"
)


def _recorded(t, key) -> bool:
    r = t.get("rings")
    return isinstance(r, dict) and "orders" in r and key in r


def load_rings(doc, source: str, metric: str, phase: str, tests) -> Pairs:
    """The ring measurements of results ``doc`` (already read): the tests named in
    ``tests`` (None: every ring test with recorded values of ``metric``) in ``phase``."""
    found = doc.get("tests")
    found = [t for t in found if isinstance(t, dict)] if isinstance(found, list) else []
    if not any(_recorded(t, k) for t in found for k in METRIC_KEY.values()):
        raise LocateError(f"{source}: {NO_MEASUREMENTS}")
    try:
        check_schema(doc, source, SCHEMA_FILE, HINT)
    except ResultsError as exc:
        raise LocateError(str(exc)) from None
    key = METRIC_KEY[metric]
    recorded = [t for t in doc["tests"] if any(_recorded(t, k) for k in METRIC_KEY.values())]
    chosen = [
        t
        for t in recorded
        if _recorded(t, key) and t["phase"] == phase and (not tests or t["name"] in tests)
    ]
    if not chosen:
        have = ", ".join(f"{t['name']} {t['phase']} ({t['metric']})" for t in recorded)
        want = f"--metric {metric}, --phase {phase}" + (
            f", --test {','.join(tests)}" if tests else ""
        )
        raise LocateError(f"{source}: no recorded ring test matches {want}; recorded: {have}")
    flow_of: dict = {}
    rows, cols, values = [], [], []
    same_node = 0
    for t in chosen:
        r = t["rings"]
        nodes = r["nodes"]
        vals = [v for meas in r[key] for v in meas]
        orders = [o for meas in r["orders"] for o in meas]
        if len(vals) != len(orders) or any(len(v) != len(o) for v, o in zip(vals, orders)):
            raise LocateError(f"{source}: test {t['name']} ({t['phase']}): rings.{key} does not "
                              f"match rings.orders round for round ({HINT})")  # fmt: skip
        got = [x for v in vals for x in v if x is not None and x > 0]
        if not got:
            continue
        best = max(got) if metric == "bw" else min(got)
        for order, v in zip(orders, vals):
            n = len(order)
            if any(k < 0 or k >= len(nodes) for k in order):
                raise LocateError(f"{source}: test {t['name']}: a ring names a rank outside "
                                  f"rings.nodes ({HINT})")  # fmt: skip
            for k in range(n):
                if v[k] is None or v[k] <= 0:
                    continue
                me, left, right = nodes[order[k]], nodes[order[k - 1]], nodes[order[(k + 1) % n]]
                flows = {(me, right), (right, me), (me, left), (left, me)}
                flows = {f for f in flows if f[0] != f[1]}
                if not flows:
                    same_node += 1
                    continue
                m = len(values)
                for f in sorted(flows):
                    rows.append(m)
                    cols.append(flow_of.setdefault(f, len(flow_of)))
                values.append(v[k] / best)  # relative to the test's best rank
    if not values:
        raise LocateError(f"{source}: the recorded rings hold no measured value between nodes")
    flows = np.array(list(flow_of), dtype=np.int64).reshape(-1, 2)
    vals = np.asarray(values, dtype=float)
    sim = doc.get("environment", {}).get("simulation") or {}
    nodes_all = set(flows[:, 0].tolist()) | set(flows[:, 1].tolist())
    return Pairs(
        source=source,
        src=flows[:, 0],
        dst=flows[:, 1],
        bw_mib_s=vals if metric == "bw" else np.full(len(vals), np.nan),
        lat_us=vals if metric == "lat" else np.full(len(vals), np.nan),
        ranks=int(doc["environment"]["ranks"]),
        nodes=len(nodes_all),
        max_node=int(flows.max()),
        same_node=same_node,
        topology=sim.get("topology"),
        routing=sim.get("routing"),
        degraded=list(sim.get("degraded") or []),
        node_names=node_names_of(doc),
        rows=sparse.csr_matrix(
            (np.ones(len(rows)), (np.asarray(rows), np.asarray(cols))),
            shape=(len(values), len(flow_of)),
        ),
        measured="rings: " + ", ".join(f"{t['name']} {t['phase']}" for t in chosen),
    )


def ring_weights(rows: sparse.csr_matrix, flow_weights: sparse.csr_matrix) -> sparse.csr_matrix:
    """Per measurement (row of ``rows``), the element-wise maximum of the path
    weights (rows of ``flow_weights``) of the flows it waits on."""
    coo = rows.tocoo()
    fw = flow_weights.tocsr()
    counts = np.diff(fw.indptr)[coo.col]
    meas = np.repeat(coo.row, counts)
    starts = np.repeat(fw.indptr[coo.col], counts)
    offset = np.arange(len(meas)) - np.repeat(np.cumsum(counts) - counts, counts)
    link = fw.indices[starts + offset]
    w = fw.data[starts + offset]
    if len(meas) == 0:
        return sparse.csr_matrix((rows.shape[0], fw.shape[1]))
    order = np.lexsort((link, meas))
    meas, link, w = meas[order], link[order], w[order]
    first = np.r_[True, (meas[1:] != meas[:-1]) | (link[1:] != link[:-1])]
    at = np.flatnonzero(first)
    return sparse.csr_matrix(
        (np.maximum.reduceat(w, at), (meas[at], link[at])), shape=(rows.shape[0], fw.shape[1])
    )
