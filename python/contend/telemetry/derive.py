"""Derived views of counter samples: deltas, per-link PTs, per-node injection stall.

* :func:`counter_deltas`: per counter and sampling interval, the increase of a
  cumulative counter, with fixed-width wrap corrected, resets (the value
  dropped) and saturated 32-bit InfiniBand counters flagged instead of turned
  into bogus deltas.
* :func:`stall_intervals`: per link (component, port) and interval, Netscope's
  percent time stalled PTs = 100 * Ts / Tm (eq. 6) from the link's stall
  counter (stallrules says which counter and how it becomes ns).
* :func:`injection_stall`: per node and interval, the PTs of the node's
  injection link(s) (Netscope's nic2hsn); a node with several takes the largest.

Intervals of a link are between its consecutive samples, except for the
simulator (counter xmit_wait_ns), which writes a port's rows only at samples
where it changed: there the sample times of the whole file form the grid, a
port without a row kept its value, counters are 0 at ``start_s`` (0, the run's
start), and a grid of regular period with samples where nothing changed (no
rows at all) is filled in.  With ``dense`` every link gets every interval of
that grid (0 where it did not stall).

Everything is vectorised (numpy/pandas); no Python loop runs per row.
Intervals whose delta is unknown (reset, saturated, repeated time) are left
out and reported in ``events`` (a list the caller passes) as dicts with keys
time_s, component, port, counter, event, detail.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import stallrules as rules
from .errors import TelemetryError
from .samples import TEXT_COLUMNS, check_frame, sort_frame

OK, WRAP, RESET, SATURATED, FIRST, REPEATED = 0, 1, 2, 3, 4, 5
STATUS = {OK: "ok", WRAP: "wrap", RESET: "reset", SATURATED: "saturated", FIRST: "first"}
STATUS[REPEATED] = "repeated_time"
INTERVAL_COLUMNS = ["t0_s", "t1_s", "component", "port", "stall_ns", "interval_ns", "pts_percent"]
INJECTION_COLUMNS = ["t0_s", "t1_s", "node", "pts_percent"]
_EVENT_DETAIL = {
    WRAP: "counter wrapped at 2^{bits}: delta corrected",
    RESET: "value dropped (counter reset): interval left out",
    SATURATED: "32-bit counter saturated at 4294967295: interval left out",
    REPEATED: "two samples at the same time: the second left out",
}


def _prepared(df) -> pd.DataFrame:
    check_frame(df)
    frame = df
    for c in TEXT_COLUMNS:
        if not isinstance(frame[c].dtype, pd.CategoricalDtype):
            frame = sort_frame(df.copy())
            break
    else:
        keys = _group_ids(frame, ("component", "port", "counter"))
        t = frame["time_s"].to_numpy(float)
        same = keys[1:] == keys[:-1]
        if np.any(keys[1:] < keys[:-1]) or np.any(same & (t[1:] < t[:-1])):
            frame = sort_frame(df.copy())
    return frame


def _group_ids(frame, cols) -> np.ndarray:
    """One int64 per row identifying its combination of the categorical ``cols``."""
    ids = np.zeros(len(frame), dtype=np.int64)
    for c in cols:
        codes = frame[c].cat.codes.to_numpy().astype(np.int64)
        ids = ids * (len(frame[c].cat.categories) + 1) + codes
    return ids


def _overflow_arrays(frame, wrap_bits):
    """Per row: wrap width in bits (0: none) and saturation value (inf: none)."""
    rules.check_wrap_bits(wrap_bits)
    cats = frame["counter"].cat.categories
    spec = [rules.overflow(str(c), wrap_bits) for c in cats]
    bits = np.array([b for b, _ in spec] + [0], dtype=np.int64)
    sat = np.array([s for _, s in spec] + [np.inf], dtype=float)
    codes = frame["counter"].cat.codes.to_numpy()
    return bits[codes], sat[codes]


def _delta_core(keys, t, v, bits, sat, grid=None, start_value=None):
    """Vectorised deltas of rows sorted by (key, time).

    Returns (t0, delta, status): with ``grid`` the interval of a row ends at its
    time and starts at the previous grid time, and the first row of a key counts
    from ``start_value`` at the grid's start.
    """
    n = len(t)
    first = np.ones(n, dtype=bool)
    if n > 1:
        first[1:] = keys[1:] != keys[:-1]
    prev_v = np.empty(n)
    prev_t = np.empty(n)
    if n:
        prev_v[1:] = v[:-1]
        prev_t[1:] = t[:-1]
        prev_v[0] = prev_t[0] = np.nan
    status = np.where(first, FIRST, OK).astype(np.int8)
    if grid is not None:
        pos = np.searchsorted(grid, t)  # t is on the grid
        t0 = np.where(pos > 0, grid[np.maximum(pos - 1, 0)], np.nan)
        if start_value is not None:
            counts_from_start = first & (pos > 0)
            prev_v = np.where(counts_from_start, start_value, prev_v)
            status[counts_from_start] = OK
    else:
        t0 = prev_t
    delta = v - prev_v
    live = status == OK
    repeated = live & ~first & (t == prev_t)
    saturated = live & ((v >= sat) | ((prev_v >= sat) & (v >= prev_v)))
    drop = live & (delta < 0) & ~saturated
    span = np.ldexp(1.0, bits)
    around = (span - prev_v) + v  # this order keeps large counters exact
    wrapped = drop & (bits > 0) & (prev_v < span) & (around >= 0) & (around < span / 2)
    delta = np.where(wrapped, around, delta)
    status[drop] = RESET
    status[wrapped] = WRAP
    status[saturated] = SATURATED
    status[repeated] = REPEATED
    return t0, delta, status


def _report(events, frame, rows, status, bits):
    """Append one event per flagged row (not ok/first) to ``events``."""
    if events is None:
        return
    flagged = np.flatnonzero((status != OK) & (status != FIRST))
    for i in flagged[:10000]:
        r = rows[i]
        code = int(status[i])
        events.append(
            {
                "time_s": float(frame["time_s"].iat[r]),
                "component": str(frame["component"].iat[r]),
                "port": str(frame["port"].iat[r]),
                "counter": str(frame["counter"].iat[r]),
                "event": STATUS[code],
                "detail": _EVENT_DETAIL[code].format(bits=int(bits[i])),
            }
        )


def counter_deltas(df, *, wrap_bits=None, events=None) -> pd.DataFrame:
    """Per counter and interval between its consecutive samples: the increase.

    Returns DataFrame[t0_s, t1_s, component, port, counter, delta, unit, status]
    with status ok | wrap (corrected) | reset | saturated | repeated_time (delta
    NaN for the last three).  Gauges (unit ending in ``_gauge``) are left out.
    """
    frame = _prepared(df)
    frame = frame[~frame["unit"].astype(str).str.endswith("_gauge").to_numpy()]
    keys = _group_ids(frame, ("component", "port", "counter"))
    bits, sat = _overflow_arrays(frame, wrap_bits)
    t = frame["time_s"].to_numpy(float)
    t0, delta, status = _delta_core(keys, t, frame["value"].to_numpy(float), bits, sat)
    _report(events, frame, np.arange(len(frame)), status, bits)
    keep = status != FIRST
    bad = (status == RESET) | (status == SATURATED) | (status == REPEATED)
    out = pd.DataFrame(
        {
            "t0_s": t0[keep],
            "t1_s": t[keep],
            "component": frame["component"].to_numpy()[keep],
            "port": frame["port"].to_numpy()[keep],
            "counter": frame["counter"].to_numpy()[keep],
            "delta": np.where(bad, np.nan, delta)[keep],
            "unit": frame["unit"].to_numpy()[keep],
            "status": np.array([STATUS[s] for s in range(6)])[status[keep]],
        }
    )
    return out.reset_index(drop=True)


def _sample_grid(times: np.ndarray, start_s) -> np.ndarray:
    """Sample times of a sparse (simulator) file: the distinct times, ``start_s``,
    and the missing points of a regular period (samples where nothing changed)."""
    t = np.unique(times)
    if start_s is not None and (not len(t) or t[0] > start_s):
        t = np.concatenate([[float(start_s)], t])
    inner = t[1:-1]  # the start and the last (closing) sample may be off-period
    if len(inner) < 2:
        return t
    steps = np.round(np.diff(inner), 12)
    steps = steps[steps > 0]
    if not len(steps):
        return t
    values, counts = np.unique(steps, return_counts=True)
    period = float(values[np.argmax(counts)])
    k = inner / period
    if not np.all(np.abs(k - np.round(k)) < 1e-6):
        return t
    full = np.arange(np.round(k[0]), np.round(k[-1]) + 1) * period
    pos = np.clip(np.searchsorted(t, full), 1, len(t) - 1)
    near = np.minimum(np.abs(t[pos] - full), np.abs(t[pos - 1] - full)) < period * 1e-6
    return np.unique(np.concatenate([t, full[~near]]))


def _pair_codes(a, b):
    """Per row an int id of the pair (a[i], b[i]) and the list of distinct pairs."""
    ca, ua = pd.factorize(np.asarray(a))
    cb, ub = pd.factorize(np.asarray(b))
    width = len(ub) + 1
    codes, upair = pd.factorize(ca.astype(np.int64) * width + cb)
    pairs = [(ua[int(p) // width], ub[int(p) % width]) for p in upair]
    return codes, pairs


def _stall_links(
    df,
    *,
    tick_ns,
    cycle_ns,
    aries_clock_hz,
    wrap_bits,
    grid,
    start_s,
    dense,
    events,
    injection_only,
):
    """Per link and interval: kind, stall_ns, interval_ns (before the PTs column)."""
    frame = _prepared(df)
    tick = rules.parse_tick(tick_ns if tick_ns is not None else rules.DEFAULT_TICK_NS)
    cycle = float(cycle_ns)
    if not cycle > 0:
        raise TelemetryError(f"cycle_ns: expected a positive length in ns, got {cycle_ns!r}")
    if aries_clock_hz is not None and not float(aries_clock_hz) > 0:
        raise TelemetryError(f"aries_clock_hz: expected a positive rate, got {aries_clock_hz!r}")
    if grid not in ("auto", "sparse", "samples"):
        raise TelemetryError(f"grid: expected auto, sparse or samples, got {grid!r}")
    all_times = frame["time_s"].to_numpy(float)
    cats = [str(c) for c in frame["counter"].cat.categories]
    kind_of = [rules.classify(c) for c in cats] + [(None, None)]
    codes = frame["counter"].cat.codes.to_numpy()
    kinds = np.array([k or "" for k, _ in kind_of], dtype=object)[codes]
    roles = np.array([r or "" for _, r in kind_of], dtype=object)[codes]
    rows = np.flatnonzero(kinds != "")
    if injection_only and len(rows):
        sub = frame.iloc[rows]
        comp_port = (
            sub["component"].cat.codes.to_numpy().astype(np.int64)
            * (len(sub["port"].cat.categories) + 1)
            + sub["port"].cat.codes.to_numpy()
        )
        codes, pairs = _pair_codes(kinds[rows], comp_port)
        ccat, pcat = sub["component"].cat.categories, sub["port"].cat.categories
        width = len(pcat) + 1
        inj = np.array(
            [
                rules.injection_node(k, str(ccat[cp // width]), str(pcat[cp % width])) is not None
                for k, cp in pairs
            ]
            + [False]
        )
        rows = rows[inj[codes]]
    sub = frame.iloc[rows]
    kinds, roles = kinds[rows], roles[rows]
    parts = []
    for kind in pd.unique(kinds):
        mask = kinds == kind
        part = sub[mask]
        if kind == rules.CLUSTER:
            parts.append(_gauge_links(part, kind))
            continue
        sparse = grid == "sparse" or (grid == "auto" and kind == rules.SIM)
        parts.append(
            _delta_links(
                part,
                rows[mask],
                frame,
                kind,
                roles[mask],
                tick,
                cycle,
                aries_clock_hz,
                wrap_bits,
                sparse,
                all_times,
                start_s,
                dense,
                events,
            )
        )
    if not parts:
        return pd.DataFrame(
            columns=["kind", "t0_s", "t1_s", "component", "port", "stall_ns", "interval_ns"]
        )
    return pd.concat(parts, ignore_index=True)


def _gauge_links(part, kind):
    """Cluster analog: PTs = 100 L/(1+L), L = mean backlog (packets) over the interval."""
    keys = _group_ids(part, ("component", "port"))
    t = part["time_s"].to_numpy(float)
    b = part["value"].to_numpy(float)
    same = np.zeros(len(t), dtype=bool)
    if len(t) > 1:
        same[1:] = (keys[1:] == keys[:-1]) & (t[1:] > t[:-1])
    i = np.flatnonzero(same)
    mean_backlog = np.clip((b[i] + b[i - 1]) / 2.0, 0.0, None)
    interval_ns = (t[i] - t[i - 1]) * 1e9
    return pd.DataFrame(
        {
            "kind": kind,
            "t0_s": t[i - 1],
            "t1_s": t[i],
            "component": part["component"].to_numpy().astype(str)[i],
            "port": part["port"].to_numpy().astype(str)[i],
            "stall_ns": mean_backlog / (1.0 + mean_backlog) * interval_ns,
            "interval_ns": interval_ns,
        }
    )


def _delta_links(
    part,
    rows,
    frame,
    kind,
    roles,
    tick,
    cycle,
    aries_clock_hz,
    wrap_bits,
    sparse,
    all_times,
    start_s,
    dense,
    events,
):
    keys = _group_ids(part, ("component", "port", "counter"))
    t = part["time_s"].to_numpy(float)
    v = part["value"].to_numpy(float)
    bits, sat = _overflow_arrays(part, wrap_bits)
    grid = None
    if sparse:
        grid = _sample_grid(all_times, 0.0 if start_s is None else start_s)
    t0, delta, status = _delta_core(
        keys, t, v, bits, sat, grid=grid, start_value=0.0 if sparse else None
    )
    _report(events, frame, rows, status, bits)
    use = status != FIRST
    valid = (status == OK) | (status == WRAP)
    comp = part["component"].to_numpy().astype(str)
    port = part["port"].to_numpy().astype(str)
    if kind in (rules.ARIES_NIC, rules.ARIES_RTR) and aries_clock_hz is None:
        factor = np.ones(len(t))
    elif kind in (rules.ARIES_NIC, rules.ARIES_RTR):
        factor = np.where(roles == rules.STALLED, 1e9 / float(aries_clock_hz), np.nan)
    else:
        factor = np.full(len(t), {rules.IB: tick, rules.CXI: cycle}.get(kind, 1.0))
    table = pd.DataFrame(
        {
            "t0_s": t0[use],
            "t1_s": t[use],
            "component": comp[use],
            "port": port[use],
            "amount": (delta * factor)[use],
            "stalled": (roles == rules.STALLED)[use] | (roles == rules.TIME)[use],
            "valid": valid[use],
        }
    )
    if kind in (rules.ARIES_NIC, rules.ARIES_RTR) and aries_clock_hz is None:
        table["flits"] = np.where(table["stalled"], 0.0, table["amount"])
        table["amount"] = np.where(table["stalled"], table["amount"], 0.0)
        g = table.groupby(["component", "port", "t0_s", "t1_s"], sort=False)
        agg = g.agg(s=("amount", "sum"), f=("flits", "sum"), valid=("valid", "all"))
        agg = agg.reset_index()
        total = agg["s"] + agg["f"]
        frac = np.where(total > 0, agg["s"] / total.where(total > 0, 1.0), 0.0)
        agg["stall_ns"] = frac * (agg["t1_s"] - agg["t0_s"]) * 1e9
    else:
        table = table[table["stalled"].to_numpy()]
        g = table.groupby(["component", "port", "t0_s", "t1_s"], sort=False)
        agg = g.agg(stall_ns=("amount", "max"), valid=("valid", "all")).reset_index()
    agg = agg[agg["valid"].to_numpy()]
    out = pd.DataFrame(
        {
            "kind": kind,
            "t0_s": agg["t0_s"].to_numpy(float),
            "t1_s": agg["t1_s"].to_numpy(float),
            "component": agg["component"].to_numpy(),
            "port": agg["port"].to_numpy(),
            "stall_ns": agg["stall_ns"].to_numpy(float),
        }
    )
    if sparse and dense:
        out = _densify(out, table, grid, kind)
    out["interval_ns"] = (out["t1_s"] - out["t0_s"]) * 1e9
    return out


def _densify(out, table, grid, kind):
    """Every link of ``table`` over every interval of ``grid``: 0 where it had no row,
    left out where its interval was invalid."""
    if not len(table) or len(grid) < 2:
        return out
    n_int = len(grid) - 1
    keys = (
        pd.Series(table["component"].to_numpy(), dtype=object)
        + "\x1f"
        + pd.Series(table["port"].to_numpy(), dtype=object)
    )
    li, links = pd.factorize(keys)
    ii = np.searchsorted(grid, table["t1_s"].to_numpy(float)) - 1
    ok = np.ones((len(links), n_int), dtype=bool)
    ok[li, ii] = table["valid"].to_numpy()
    stall = np.zeros((len(links), n_int))
    out_keys = (
        pd.Series(out["component"].to_numpy(), dtype=object)
        + "\x1f"
        + pd.Series(out["port"].to_numpy(), dtype=object)
    )
    oi = pd.Index(links).get_indexer(out_keys)
    oj = np.searchsorted(grid, out["t1_s"].to_numpy(float)) - 1
    stall[oi, oj] = out["stall_ns"].to_numpy(float)
    flat = ok.ravel()
    link_of = np.repeat(np.arange(len(links)), n_int)[flat]
    int_of = np.tile(np.arange(n_int), len(links))[flat]
    split = pd.Series(np.asarray(links, dtype=object)).str.split("\x1f", n=1, expand=True)
    comps, ports = split[0].to_numpy(), split[1].to_numpy()
    return pd.DataFrame(
        {
            "kind": kind,
            "t0_s": grid[int_of],
            "t1_s": grid[int_of + 1],
            "component": comps[link_of],
            "port": ports[link_of],
            "stall_ns": stall.ravel()[flat],
        }
    )


def stall_intervals(
    df,
    *,
    tick_ns=None,
    cycle_ns: float = rules.CASSINI_CYCLE_NS,
    aries_clock_hz=None,
    wrap_bits=None,
    grid: str = "auto",
    start_s=None,
    dense: bool = True,
    events: list | None = None,
) -> pd.DataFrame:
    """Per link (component, port) and interval: PTs = 100 * Ts / Tm (Netscope eq. 6).

    Returns DataFrame[t0_s, t1_s, component, port, stall_ns, interval_ns,
    pts_percent] sorted by link then time.  ``tick_ns``: length of an
    InfiniBand port_xmit_wait tick (ns, or ``DEVICE@GBPS[xLANES]``, see
    stallrules.parse_tick; default 4 ns); ``cycle_ns``: cxi pause counter cycle
    (1 ns); ``aries_clock_hz``: read Aries stall counters as cycles of this
    clock instead of the stalled/(stalled+flits) ratio; ``wrap_bits``: counter
    widths overriding the defaults; ``grid``: auto (sparse for the simulator),
    sparse or samples; ``start_s``: where sparse counters are 0 (default 0);
    ``dense``: every link over every interval of a sparse grid; ``events``: a
    list to which wraps, resets and saturations are appended.
    """
    links = _stall_links(
        df,
        tick_ns=tick_ns,
        cycle_ns=cycle_ns,
        aries_clock_hz=aries_clock_hz,
        wrap_bits=wrap_bits,
        grid=grid,
        start_s=start_s,
        dense=dense,
        events=events,
        injection_only=False,
    )
    return _finish(links)


def _merge_node(table: pd.DataFrame) -> pd.DataFrame:
    """One node's injection links merged: per piece of time between any of their
    interval edges, the largest PTs of the links whose valid interval covers it."""
    t0 = table["t0_s"].to_numpy(float)
    t1 = table["t1_s"].to_numpy(float)
    pts = table["pts_percent"].to_numpy(float)
    tol = 1e-3 * float(np.median(t1 - t0))
    raw = np.unique(np.concatenate([t0, t1]))
    group = np.concatenate([[0], np.cumsum(np.diff(raw) > tol)])
    edges = raw[np.concatenate([[0], np.flatnonzero(np.diff(group)) + 1])]
    snap = edges[group]  # raw edge -> the first edge of its cluster
    i0 = np.searchsorted(edges, snap[np.searchsorted(raw, t0)])
    i1 = np.searchsorted(edges, snap[np.searchsorted(raw, t1)])
    span = i1 - i0
    seg = np.repeat(i0, span) + (np.arange(span.sum()) - np.repeat(np.cumsum(span) - span, span))
    best = np.full(max(len(edges) - 1, 0), -np.inf)
    np.maximum.at(best, seg, np.repeat(pts, span))
    covered = np.flatnonzero(np.isfinite(best))
    return pd.DataFrame(
        {
            "t0_s": edges[covered],
            "t1_s": edges[covered + 1],
            "node": [table["node"].iloc[0]] * len(covered),
            "pts_percent": best[covered],
        }
    )


def _finish(links: pd.DataFrame) -> pd.DataFrame:
    out = links.drop(columns=["kind"]).copy()
    interval = out["interval_ns"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["pts_percent"] = np.where(interval > 0, 100.0 * out["stall_ns"] / interval, np.nan)
    out = out[interval > 0]
    out = out.sort_values(["component", "port", "t0_s"], kind="stable").reset_index(drop=True)
    return out[INTERVAL_COLUMNS]


def injection_stall(
    df,
    *,
    tick_ns=None,
    cycle_ns: float = rules.CASSINI_CYCLE_NS,
    aries_clock_hz=None,
    wrap_bits=None,
    grid: str = "auto",
    start_s=None,
    dense: bool = True,
    events: list | None = None,
) -> pd.DataFrame:
    """Per node and interval: PTs of the node's injection link (Netscope's nic2hsn).

    Returns DataFrame[t0_s, t1_s, node, pts_percent].  Injection links: the
    simulator's ``nicN`` port 0 (node N), the emulated cluster's ``nIII-egress``
    (node III), every port of an InfiniBand or cxi host adapter ``<host>:<dev>``
    (node host), an Aries node's NIC (ORB request counters; node = producer).
    A node with several injection links gets, per interval, the largest PTs of
    them over each piece of time its links' intervals cut out (interval edges
    closer than 1/1000 of the median interval taken as one).  Parameters as
    :func:`stall_intervals`.
    """
    links = _stall_links(
        df,
        tick_ns=tick_ns,
        cycle_ns=cycle_ns,
        aries_clock_hz=aries_clock_hz,
        wrap_bits=wrap_bits,
        grid=grid,
        start_s=start_s,
        dense=dense,
        events=events,
        injection_only=True,
    )
    if links.empty:
        return pd.DataFrame({c: [] for c in INJECTION_COLUMNS})
    codes, pairs = _pair_codes(links["kind"].to_numpy(), links["component"].to_numpy())
    links = links.assign(link=codes)
    table = links.drop(columns=["kind"])
    ports = table["port"].to_numpy()
    # the node of a link depends on (kind, component, port): evaluate per distinct triple
    triple_codes, triples = _pair_codes(codes, ports)
    nodes = [rules.injection_node(pairs[int(c)][0], pairs[int(c)][1], p) for c, p in triples]
    table["node"] = np.array(nodes + [None], dtype=object)[triple_codes]
    interval = table["interval_ns"].to_numpy(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        table["pts_percent"] = np.where(interval > 0, 100.0 * table["stall_ns"] / interval, np.nan)
    table = table[interval > 0]
    key = table["node"].astype(str).to_numpy()
    node_codes, _ = pd.factorize(key)
    links_per_node = (
        pd.DataFrame(
            {"n": node_codes, "l": table["link"].to_numpy(), "p": table["port"].to_numpy()}
        )
        .drop_duplicates()
        .groupby("n")
        .size()
        .to_numpy()
    )
    single = links_per_node[node_codes] == 1
    parts = [table.loc[single, ["t0_s", "t1_s", "node", "pts_percent"]]]
    for code in np.flatnonzero(links_per_node > 1):
        parts.append(_merge_node(table[node_codes == code]))
    agg = pd.concat(parts, ignore_index=True)
    numeric = all(isinstance(n, (int, np.integer)) for n in nodes)
    agg["node_key"] = agg["node"].astype(np.int64 if numeric else str)
    agg = agg.sort_values(["node_key", "t0_s"], kind="stable").reset_index(drop=True)
    if numeric:
        agg["node"] = agg["node_key"]
    return agg[INJECTION_COLUMNS]
