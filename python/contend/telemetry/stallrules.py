"""Per source: which counter is a link's stall time, its unit in ns, how counters
overflow, and which links are a node's injection links (Netscope's nic2hsn).

Counter names are the sources' own (format A keeps them), so a name tells its
source:

=================  ===============================  ===========================
source             stall counter (unit)             to ns
=================  ===============================  ===========================
InfiniBand         port_xmit_wait (ticks)           x tick_ns (see TICK_BYTES)
simulator          xmit_wait_ns (ns)                x 1
HPE cxi (Cassini)  hni_tx_paused_<class> (cycles)   x cycle_ns (1 GHz clock: 1 ns);
                                                    a link's stall is the largest
                                                    of its pause classes
Aries NIC          AR_NIC_NETMON_ORB_EVENT_CNTR_    ratio STALLED/(STALLED+FLITS)
                   REQ_STALLED, .._REQ_FLITS        of the interval, or cycles of
Aries router tile  AR_RTR_r_c_INQ_PRF_ROWBUS_       ``aries_clock_hz`` when given
                   STALL_CNT, .._INCOMING_FLIT_VC*
emulated cluster   backlog_packets (gauge)          analog: L/(1+L) of the
                                                    interval, L = mean backlog
=================  ===============================  ===========================

Sources: the InfiniBand sysfs ABI (Documentation/ABI/stable/sysfs-class-
infiniband in the Linux kernel: port_xmit_wait counts "ticks during which the
port had data to transmit but no data was sent during the entire tick");
NVIDIA's ibdiagnet manual, "Congestion Assessment on InfiniBand Links"
(https://docs.nvidia.com/networking/display/ibdiagnetusermanualv213/
congestion+assessment+on+infiniband+links): a tick is a multiple of the
symbol time (one byte on one lane, 4 ns at SDR);
Quantum/Quantum-2/Quantum-3 switches count one tick per 8 bytes of port time,
SwitchX/Switch-IB/Switch-IB 2 one per 32 bytes per lane; no table is given for
host adapters (ConnectX), whose port_xmit_wait sysfs shows.  HPE's cxi_stat
(https://github.com/HewlettPackard/shs-libcxi/blob/main/utils/cxi_stat.c)
turns hni_tx_paused_* into a pause percentage as delta / seconds / 1e9 (the
Cassini clock, 1 GHz) and treats counters as 56 bits wide.  The Aries ratio
follows LDMS's derived stall/flit metrics (store_function_csv configurations)
and Zhang et al., "Quantifying the impact of network congestion on application
performance and network metrics" (CLUSTER 2020).  docs/telemetry.md has the
details.
"""

from __future__ import annotations

import re

import numpy as np

from .errors import TelemetryError

SAT32 = float(2**32 - 1)
# The IBA symbol time at SDR with tick multiplier 1 (PortSamplesControl.Tick 0x00):
# the stated default when the device's tick is not given.
DEFAULT_TICK_NS = 4.0
CASSINI_CYCLE_NS = 1.0
# bytes of link time per port_xmit_wait tick, per lane or per port (ibdiagnet manual)
TICK_BYTES = {
    "quantum": (8, "port"),  # Quantum, Quantum-2, Quantum-3
    "switch-ib": (32, "lane"),  # SwitchX, Switch-IB, Switch-IB 2
    "symbol": (1, "lane"),  # the IBA base tick: one symbol time
}

# kinds of stall counters
IB, SIM, CXI, ARIES_NIC, ARIES_RTR, CLUSTER = (
    "ib",
    "sim",
    "cxi",
    "aries-nic",
    "aries-rtr",
    "cluster",
)
TIME, STALLED, FLITS, GAUGE = "time", "stalled", "flits", "gauge"

_RULES = (
    (re.compile(r"port_xmit_wait"), IB, TIME),
    (re.compile(r"xmit_wait_ns"), SIM, TIME),
    (re.compile(r"hni_tx_paused_\d+"), CXI, TIME),
    (re.compile(r"AR_NIC_NETMON_ORB_EVENT_CNTR_REQ_STALLED"), ARIES_NIC, STALLED),
    (re.compile(r"AR_NIC_NETMON_ORB_EVENT_CNTR_REQ_FLITS"), ARIES_NIC, FLITS),
    (re.compile(r"AR_RTR_\d+_\d+_INQ_PRF_ROWBUS_STALL_CNT"), ARIES_RTR, STALLED),
    (re.compile(r"AR_RTR_\d+_\d+_INQ_PRF_INCOMING_FLIT_VC\d+"), ARIES_RTR, FLITS),
    (re.compile(r"backlog_packets"), CLUSTER, GAUGE),
)

# Fixed-width counters that wrap (bits), by name: the cxi counters (56 bits, cxi_stat)
# and the emulated cluster's tc counters held in 32 bits (struct gnet_stats_queue;
# packets on kernels without 64-bit packet counts).
_WRAP_BITS = (
    (re.compile(r"(hni|pct|lpe|atu|parbs|oxe|ixe|cq|ee|rmu|mb|pi|tou)_\w+"), 56),
    (re.compile(r"packets|drops|overlimits"), 32),
)
# InfiniBand PortCounters saturate at all ones instead of wrapping (IBA); the
# 32-bit ones (port_xmit_wait, legacy data/packet counters) stop at 2**32-1.
_IB_NAMES = re.compile(
    r"(port_(xmit|rcv)_(data|packets|wait|discards|errors|constraint_errors|"
    r"remote_physical_errors|switch_relay_errors)|(unicast|multicast)_(xmit|rcv)_packets|"
    r"port_(unicast|multicast)_(xmit|rcv)_packets|symbol_error|link_error_recovery|"
    r"link_downed|local_link_integrity_errors|excessive_buffer_overrun_errors|VL15_dropped)"
)


def classify(counter: str):
    """(kind, role) of a stall-relevant counter name, or (None, None)."""
    for pattern, kind, role in _RULES:
        if pattern.fullmatch(counter):
            return kind, role
    return None, None


def overflow(counter: str, wrap_bits=None):
    """(bits it wraps at or 0, value it saturates at or inf) for a counter name.

    ``wrap_bits`` (int for every counter, or {name: bits}) overrides the defaults.
    """
    if isinstance(wrap_bits, dict) and counter in wrap_bits:
        return int(wrap_bits[counter]), np.inf
    if isinstance(wrap_bits, int) and not isinstance(wrap_bits, bool):
        return int(wrap_bits), np.inf
    if _IB_NAMES.fullmatch(counter):
        return 0, SAT32
    for pattern, bits in _WRAP_BITS:
        if pattern.fullmatch(counter):
            return bits, np.inf
    return 0, np.inf


def check_wrap_bits(wrap_bits):
    """TelemetryError unless wrap_bits is None, an int in 8..64 or {name: int in 8..64}."""
    if wrap_bits is None:
        return
    values = wrap_bits.values() if isinstance(wrap_bits, dict) else [wrap_bits]
    for bits in values:
        if isinstance(bits, bool) or not isinstance(bits, int) or not 8 <= bits <= 64:
            raise TelemetryError(f"wrap_bits: expected counter widths 8..64 bits, got {bits!r}")


def tick_ns_for(asic: str, rate_gbps: float, lanes: int = 4) -> float:
    """Length of one port_xmit_wait tick in ns for ``asic`` at link rate ``rate_gbps``.

    ``quantum``: 8 bytes of port time; ``switch-ib``: 32 bytes on one lane;
    ``symbol``: 1 byte on one lane (the IBA base tick).  ``rate_gbps`` is the
    port's data rate, ``lanes`` its width (4X: 4).
    """
    if asic not in TICK_BYTES:
        raise TelemetryError(f"tick: unknown device {asic!r} (known: {', '.join(TICK_BYTES)})")
    if not rate_gbps > 0 or lanes < 1:
        raise TelemetryError("tick: the link rate (Gb/s) and lanes must be positive")
    nbytes, per = TICK_BYTES[asic]
    gbps = rate_gbps / lanes if per == "lane" else rate_gbps
    return nbytes * 8.0 / gbps


def parse_tick(text) -> float:
    """Tick length in ns from a number or ``DEVICE@RATE[xLANES]`` (e.g. quantum@200,
    switch-ib@100x4, symbol@10x4)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        text = str(text).strip()
        m = re.fullmatch(r"([a-z-]+)@([0-9.]+)(?:x([0-9]+))?", text)
        if m:
            return tick_ns_for(m.group(1), float(m.group(2)), int(m.group(3) or 4))
        try:
            value = float(text)
        except ValueError:
            raise TelemetryError(
                f"tick {text!r}: give ns (e.g. 4) or DEVICE@GBPS[xLANES] with DEVICE one of "
                f"{', '.join(TICK_BYTES)} (e.g. quantum@200)"
            ) from None
    if not (value > 0 and np.isfinite(value)):
        raise TelemetryError(f"tick: expected a positive length in ns, got {text!r}")
    return value


_NIC_RE = re.compile(r"nic(\d+)")
_CLUSTER_RE = re.compile(r"n(\d+)-egress")


def injection_node(kind: str, component: str, port: str):
    """The node whose injection link (component, port) is, or None for other links."""
    if kind == SIM:
        m = _NIC_RE.fullmatch(component)
        return int(m.group(1)) if m and port in ("0", "") else None
    if kind == CLUSTER:
        m = _CLUSTER_RE.fullmatch(component)
        return int(m.group(1)) if m else None
    if kind in (IB, CXI):  # host adapters: every port of <host>:<device> injects
        return component.split(":", 1)[0]
    if kind == ARIES_NIC:
        return component
    return None
