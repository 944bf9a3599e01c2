"""Description of an emulated cluster: nodes, leaf/spine tree, links and rates.

This module is pure (no system calls): it validates the user's request and
produces the description that ``up`` realises, ``down`` removes and ``run`` /
``stats`` read back from the state directory (``cluster.json``).

Naming (everything carries the cluster prefix, default ``ct``):

- node ``i`` lives in namespace ``<prefix>-n<iii>`` with hostname ``<prefix>n<iii>``
  and interface ``eth0``, address ``198.18.<leaf>.<j+1>/15`` (RFC 2544 range);
- the switches live in namespace ``<prefix>-sw``: one bridge ``leaf<L>`` per leaf,
  one bridge ``spine``; node ``i`` is attached to its leaf by port ``n<iii>``;
  leaf ``L`` is attached to the spine by the veth pair ``leaf<L>-up`` (leaf side)
  / ``leaf<L>-dn`` (spine side).

Shaped links (HTB rate + bfifo queue on the egress of one interface each):

- ``n<iii>-egress``: node -> leaf, on ``eth0`` in the node's namespace (injection);
- ``n<iii>-ingress``: leaf -> node, on port ``n<iii>`` in the switch namespace;
- ``leaf<L>-uplink-up``: leaf -> spine, on ``leaf<L>-up``;
- ``leaf<L>-uplink-down``: spine -> leaf, on ``leaf<L>-dn``.

A *cable* is the pair of directions of one link: ``n<iii>`` (egress and
ingress) or ``leaf<L>-uplink`` (up and down). ``--degrade LINK=FRACTION``
shapes a cable or one direction to a fraction of its configured rate; the
description records it in ``degraded`` and in the link's ``rate_bps``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from .errors import UsageError
from .units import format_bytes, format_rate, parse_rate, parse_size, parse_taper

FORMAT = "contend-cluster/1"
SUBNET = ipaddress.ip_network("198.18.0.0/15")
DEFAULT_PREFIX = "ct"
MAX_NODES = 1000
MAX_NODES_PER_LEAF = 254
MAX_LEAVES = 500
MIN_QUEUE = 4096
MIN_RATE_BPS = 1000  # the slowest link (a taper or --degrade giving less is refused)
_DIRECTIONS = ("-egress", "-ingress", "-uplink-up", "-uplink-down")
PREFIX_RE = re.compile(r"[a-z][a-z0-9]{0,9}")


def validate_prefix(prefix: str) -> str:
    """Return ``prefix`` if it is a valid cluster prefix, else raise ``UsageError``."""
    if not PREFIX_RE.fullmatch(prefix or ""):
        raise UsageError(
            f"invalid prefix {prefix!r}: use 1-10 lowercase letters or digits, "
            "starting with a letter (it names namespaces and hostnames)"
        )
    return prefix


@dataclass(frozen=True)
class ClusterSpec:
    """A validated request for a cluster (what ``contend cluster up`` was asked)."""

    prefix: str
    nodes: int
    leaves: int
    node_rate_bps: int
    uplink_rate_bps: int
    queue_bytes: int
    taper: str | None
    tcp_cc: str = "reno"
    gso: bool = True
    degrade: tuple = ()  # (LINK, FRACTION) pairs as given, checked by make_spec

    @property
    def nodes_per_leaf(self) -> int:
        return self.nodes // self.leaves

    @property
    def switch_namespace(self) -> str:
        return f"{self.prefix}-sw"

    def node_namespace(self, i: int) -> str:
        return f"{self.prefix}-n{i:03d}"

    def hostname(self, i: int) -> str:
        return f"{self.prefix}n{i:03d}"

    def namespaces(self) -> list[str]:
        """All namespaces of the cluster, switch namespace first."""
        return [self.switch_namespace] + [self.node_namespace(i) for i in range(self.nodes)]


def make_spec(
    *,
    nodes: int,
    leaves: int,
    node_rate: str = "1gbit",
    uplink_rate: str | None = None,
    taper: str | None = None,
    queue: str = "256kb",
    prefix: str = DEFAULT_PREFIX,
    tcp_cc: str = "reno",
    gso: bool = True,
    degrade: list[str] | None = None,
) -> ClusterSpec:
    """Validate the user's request and return a ``ClusterSpec``.

    ``uplink_rate`` and ``taper`` are exclusive; with neither, the taper is 1:1
    (uplink rate = nodes per leaf x node rate). ``degrade`` holds ``LINK=FRACTION``
    items (``--degrade``). Raises ``UsageError`` on bad input.
    """
    validate_prefix(prefix)
    if nodes < 2:
        raise UsageError(f"--nodes must be at least 2 (got {nodes})")
    if nodes > MAX_NODES:
        raise UsageError(f"--nodes must be at most {MAX_NODES} (got {nodes})")
    if leaves < 1:
        raise UsageError(f"--leaves must be at least 1 (got {leaves})")
    if leaves > nodes:
        raise UsageError(f"--leaves ({leaves}) cannot exceed --nodes ({nodes})")
    if nodes % leaves:
        raise UsageError(
            f"--leaves ({leaves}) must divide --nodes ({nodes}) so that every leaf "
            "switch has the same number of nodes"
        )
    if leaves > MAX_LEAVES:
        raise UsageError(f"--leaves must be at most {MAX_LEAVES} (got {leaves})")
    if nodes // leaves > MAX_NODES_PER_LEAF:
        raise UsageError(f"at most {MAX_NODES_PER_LEAF} nodes per leaf (got {nodes // leaves})")
    node_bps = parse_rate(node_rate, "--node-rate")
    if uplink_rate is not None and taper is not None:
        raise UsageError("give either --uplink-rate or --taper, not both")
    if uplink_rate is not None:
        uplink_bps = parse_rate(uplink_rate, "--uplink-rate")
    else:
        factor = parse_taper(taper if taper is not None else "1:1")
        uplink_bps = round((nodes // leaves) * node_bps / factor)
        if uplink_bps < MIN_RATE_BPS:
            raise UsageError(f"--taper {taper} gives an uplink rate below 1kbit")
        if taper is None:
            taper = "1:1"
    queue_bytes = parse_size(queue, "--queue")
    if queue_bytes < MIN_QUEUE:
        raise UsageError(
            f"--queue {queue!r} is too small: at least {MIN_QUEUE} bytes (a few packets)"
        )
    if not re.fullmatch(r"[a-z0-9_]{1,16}", tcp_cc):
        raise UsageError(f"invalid --tcp-cc {tcp_cc!r}")
    spec = ClusterSpec(
        prefix=prefix,
        nodes=nodes,
        leaves=leaves,
        node_rate_bps=node_bps,
        uplink_rate_bps=uplink_bps,
        queue_bytes=queue_bytes,
        taper=taper,
        tcp_cc=tcp_cc,
        gso=gso,
        degrade=tuple(parse_degrade(degrade).items()),
    )
    describe(spec)  # checks the --degrade links and rates
    return spec


def parse_degrade(items: list[str] | None) -> dict:
    """``LINK=FRACTION`` items (``--degrade``) as {LINK: fraction}, 0 < fraction <= 1.

    Only the syntax is checked here; :func:`set_rates` checks the link names.
    """
    out: dict = {}
    for item in items or []:
        link, sep, value = item.partition("=")
        try:
            fraction = float(value) if sep else float("nan")
        except ValueError:
            fraction = float("nan")
        if not link or not 0 < fraction <= 1:  # nan fails too
            raise UsageError(
                f"--degrade {item!r}: expected LINK=FRACTION with 0 < FRACTION <= 1, "
                "e.g. leaf1-uplink=0.25"
            )
        if link in out:
            raise UsageError(f"--degrade {link!r} given twice")
        out[link] = fraction
    return out


def cable_of(component: str) -> str:
    """The cable of a shaped direction: ``n003`` of ``n003-egress``, ``leaf1-uplink`` of
    ``leaf1-uplink-up``."""
    for suffix in _DIRECTIONS:
        if component.endswith(suffix):
            return component[: -len(suffix)] + ("-uplink" if "uplink" in suffix else "")
    return component


def _link_names(desc: dict) -> str:
    """The names --degrade accepts, compactly, for messages."""
    nodes, leaves = len(desc["nodes"]), len(desc["leaves"])
    return (
        f"a cable n000..n{nodes - 1:03d} or leaf0-uplink..leaf{leaves - 1}-uplink (both "
        "directions), or one direction: nIII-egress, nIII-ingress, leafL-uplink-up, "
        "leafL-uplink-down"
    )


def set_rates(desc: dict, degrade: dict) -> None:
    """Set every link's ``rate_bps``: its configured rate (``rates``) times its fraction in
    ``degrade`` ({LINK: fraction}, LINK a cable or one direction; 1 if absent), and
    ``desc["degraded"]`` to {direction: fraction} of the degraded directions.

    Checks everything before changing ``desc``: ``UsageError`` naming the valid links
    for an unknown one, naming the limit for a rate below it.
    """
    components = [link["component"] for link in desc["links"]]
    per_direction: dict = {}
    for name, fraction in degrade.items():
        hit = [c for c in components if name in (c, cable_of(c))]
        if not hit:
            raise UsageError(
                f"--degrade {name!r}: no such link in cluster '{desc['prefix']}'; "
                f"links are {_link_names(desc)}"
            )
        for c in hit:
            if c in per_direction:
                raise UsageError(f"--degrade {name!r}: link {c} is named by another --degrade")
            per_direction[c] = fraction
    nominal = {"node": desc["rates"]["node_bps"], "uplink": desc["rates"]["uplink_bps"]}
    rates = {}
    for link in desc["links"]:
        fraction = per_direction.get(link["component"], 1.0)
        rates[link["component"]] = round(nominal[link["kind"]] * fraction)
        if rates[link["component"]] < MIN_RATE_BPS:
            raise UsageError(
                f"--degrade {link['component']}={fraction:g}: a rate below "
                f"{format_rate(MIN_RATE_BPS)} (the slowest link)"
            )
    for link in desc["links"]:
        link["rate_bps"] = rates[link["component"]]
    desc["degraded"] = per_direction


def degraded_note(desc: dict) -> str:
    """One line naming the degraded links of ``desc`` with fraction and rate, or ''."""
    degraded = desc.get("degraded") or {}
    rate = {link["component"]: link["rate_bps"] for link in desc["links"]}
    return ", ".join(f"{c} at {f:g} ({format_rate(rate[c])})" for c, f in degraded.items())


def node_address(leaf: int, j: int) -> str:
    """Address of the ``j``-th node of leaf ``leaf`` (198.18.0.0/15, host part j+1)."""
    return str(SUBNET.network_address + leaf * 256 + j + 1)


def describe(spec: ClusterSpec) -> dict:
    """Return the JSON-serialisable description of the cluster ``spec``.

    Keys: ``format``, ``prefix``, ``subnet``, ``switch_namespace``, ``nodes`` (list of
    ``name``/``namespace``/``hostname``/``address``/``leaf``/``port``), ``leaves``
    (``name``/``nodes``/``uplink_up``/``uplink_down``), ``spine``, ``rates`` (bits/s
    and text), ``queue_bytes``, ``taper``, ``links`` (one per shaped direction:
    ``component``/``namespace``/``dev``/``rate_bps``/``queue_bytes``/``kind``),
    ``tcp_congestion_control``, ``gso``, ``degraded`` ({direction: fraction}, see
    :func:`set_rates`).
    """
    npl = spec.nodes_per_leaf
    nodes = []
    links = []
    for i in range(spec.nodes):
        leaf, j = divmod(i, npl)
        name = f"n{i:03d}"
        nodes.append(
            {
                "index": i,
                "name": name,
                "namespace": spec.node_namespace(i),
                "hostname": spec.hostname(i),
                "address": node_address(leaf, j),
                "leaf": leaf,
                "port": name,
            }
        )
    for node in nodes:
        links.append(
            {
                "component": f"{node['name']}-egress",
                "kind": "node",
                "namespace": node["namespace"],
                "dev": "eth0",
                "rate_bps": spec.node_rate_bps,
                "queue_bytes": spec.queue_bytes,
            }
        )
        links.append(
            {
                "component": f"{node['name']}-ingress",
                "kind": "node",
                "namespace": spec.switch_namespace,
                "dev": node["port"],
                "rate_bps": spec.node_rate_bps,
                "queue_bytes": spec.queue_bytes,
            }
        )
    leaves = []
    for leaf in range(spec.leaves):
        members = [n["hostname"] for n in nodes if n["leaf"] == leaf]
        leaves.append(
            {
                "name": f"leaf{leaf}",
                "nodes": members,
                "uplink_up": f"leaf{leaf}-up",
                "uplink_down": f"leaf{leaf}-dn",
            }
        )
        for direction, dev in (("up", f"leaf{leaf}-up"), ("down", f"leaf{leaf}-dn")):
            links.append(
                {
                    "component": f"leaf{leaf}-uplink-{direction}",
                    "kind": "uplink",
                    "namespace": spec.switch_namespace,
                    "dev": dev,
                    "rate_bps": spec.uplink_rate_bps,
                    "queue_bytes": spec.queue_bytes,
                }
            )
    desc = {
        "format": FORMAT,
        "prefix": spec.prefix,
        "subnet": str(SUBNET),
        "switch_namespace": spec.switch_namespace,
        "spine": "spine",
        "nodes_per_leaf": npl,
        "nodes": nodes,
        "leaves": leaves,
        "rates": {
            "node_bps": spec.node_rate_bps,
            "uplink_bps": spec.uplink_rate_bps,
            "node": format_rate(spec.node_rate_bps),
            "uplink": format_rate(spec.uplink_rate_bps),
        },
        "taper": spec.taper,
        "queue_bytes": spec.queue_bytes,
        "queue": format_bytes(spec.queue_bytes),
        "tcp_congestion_control": spec.tcp_cc,
        "gso": spec.gso,
        "links": links,
    }
    set_rates(desc, dict(spec.degrade))
    return desc


def topology_conf(desc: dict) -> str:
    """Slurm ``topology.conf`` (tree plugin) text for the description ``desc``."""
    lines = [f"# Slurm topology.conf for contend emulated cluster '{desc['prefix']}'"]
    for leaf in desc["leaves"]:
        lines.append(f"SwitchName={leaf['name']} Nodes={hostlist(leaf['nodes'])}")
    names = ",".join(leaf["name"] for leaf in desc["leaves"])
    lines.append(f"SwitchName={desc['spine']} Switches={names}")
    return "\n".join(lines) + "\n"


def hostfile(desc: dict, slots: int = 1) -> str:
    """Open MPI hostfile text: one ``HOSTNAME slots=K`` line per node."""
    return "".join(f"{n['hostname']} slots={slots}\n" for n in desc["nodes"])


def hostlist(names: list[str]) -> str:
    """Compress hostnames like ``ctn000,ctn001,ctn002`` to Slurm form ``ctn[000-002]``."""
    groups: dict = {}
    order = []
    for name in names:
        m = re.fullmatch(r"(.*?)(\d+)", name)
        if not m:
            groups.setdefault((name, None), [])
            order.append((name, None))
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in groups:
            order.append(key)
        groups.setdefault(key, []).append(int(m.group(2)))
    out = []
    for key in order:
        stem, width = key
        if width is None:
            out.append(stem)
            continue
        nums = sorted(set(groups[key]))
        ranges = []
        start = prev = nums[0]
        for v in nums[1:]:
            if v == prev + 1:
                prev = v
                continue
            ranges.append((start, prev))
            start = prev = v
        ranges.append((start, prev))
        parts = [f"{a:0{width}d}" if a == b else f"{a:0{width}d}-{b:0{width}d}" for a, b in ranges]
        out.append(
            f"{stem}{parts[0]}"
            if len(parts) == 1 and "-" not in parts[0]
            else f"{stem}[{','.join(parts)}]"
        )
    return ",".join(out)


def find_node(desc: dict, ref: str) -> dict:
    """Return the node of ``desc`` named by ``ref``: index, ``n003``, hostname or namespace."""
    for node in desc["nodes"]:
        if ref in (node["name"], node["hostname"], node["namespace"]) or ref == str(node["index"]):
            return node
    raise UsageError(
        f"no node {ref!r} in cluster '{desc['prefix']}' (nodes n000..n{len(desc['nodes']) - 1:03d})"
    )
