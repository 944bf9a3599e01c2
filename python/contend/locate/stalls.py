"""The ports that stalled most in a simulator counters CSV (``--counters F``): the
ground truth locate's ranking is compared with when a bully, not a degraded link,
makes the hotspot (bench/locate_sim --bully, docs/locate.md).

Ports are output ports named as locate names directed links, ``component:port``
(the direction a packet leaves through), ranked by their cumulative
``xmit_wait_ns`` (the credit stall; at a NIC the injection stall) at the end of
the run.
"""

from __future__ import annotations

from ..telemetry.sources import sim


def top_stalled(path, k: int, switches_only: bool = True) -> list[str]:
    """The k ports with the largest stall, most first (ties by name); only ports
    that stalled.  switches_only leaves out the NICs' injection ports: their
    links are crossed by no measured pair when the NIC is a bully's."""
    frame = sim.read(path)
    wait = frame[frame["counter"] == "xmit_wait_ns"]
    if switches_only:
        wait = wait[~wait["component"].astype(str).str.startswith("nic")]
    last = wait.groupby(["component", "port"], observed=True)["value"].max()  # cumulative
    last = last[last > 0]
    names = [f"{c}:{p}" for c, p in last.index]
    order = sorted(range(len(names)), key=lambda i: (-float(last.iloc[i]), names[i]))
    return [names[i] for i in order[:k]]
