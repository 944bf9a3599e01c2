"""Link shaping (HTB rate + bounded FIFO) and reading its counters from ``tc``.

Each shaped direction is the egress of one interface with::

    qdisc htb 1: root, default class 1:1
    class htb 1:1 rate R ceil R            # the link's serialisation rate
    qdisc bfifo 10: parent 1:1 limit Q     # the link's buffer, tail drop

HTB counts ``skb->len`` (IP packet + 14-byte Ethernet header; no preamble, gap
or FCS), so a rate R carries R x 1448/1514 of TCP payload with full-size
segments and timestamps.
"""

from __future__ import annotations

import json
import re
import subprocess

COUNTERS = ("bytes", "packets", "drops", "overlimits", "backlog_bytes", "backlog_packets")

# HTB burst: enough for a few packets so that a late timer in a busy (virtual)
# machine does not lose tokens, small enough not to distort small messages.
_MIN_BURST = 2 * 1514


def burst_bytes(rate_bps: int) -> int:
    """HTB burst for ``rate_bps``: about 100 us of the rate, at least 2 full frames."""
    return max(_MIN_BURST, rate_bps // 8 // 10000)


def shape_commands(dev: str, rate_bps: int, queue_bytes: int) -> list[str]:
    """``tc`` batch lines that shape the egress of ``dev`` to ``rate_bps`` with a bfifo."""
    burst = burst_bytes(rate_bps)
    return [
        f"qdisc replace dev {dev} root handle 1: htb default 1",
        (
            f"class replace dev {dev} parent 1: classid 1:1 htb rate {rate_bps}bit "
            f"ceil {rate_bps}bit burst {burst} cburst {burst} quantum 60000"
        ),
        f"qdisc replace dev {dev} parent 1:1 handle 10: bfifo limit {queue_bytes}",
    ]


def _from_json_entry(entry: dict) -> dict:
    return {
        "bytes": int(entry.get("bytes", 0)),
        "packets": int(entry.get("packets", 0)),
        "drops": int(entry.get("drops", 0)),
        "overlimits": int(entry.get("overlimits", 0)),
        "backlog_bytes": int(entry.get("backlog", 0)),
        "backlog_packets": int(entry.get("qlen", 0)),
    }


def parse_qdisc_json(text: str) -> dict:
    """Map device -> counters of its root HTB qdisc from ``tc -s -j qdisc show`` output."""
    out = {}
    for entry in json.loads(text or "[]"):
        if entry.get("kind") == "htb" and entry.get("root") and "dev" in entry:
            out[entry["dev"]] = _from_json_entry(entry)
    return out


_TEXT_HEAD = re.compile(r"^qdisc\s+(\S+)\s+\S+\s+dev\s+(\S+)\s+root\b")
_TEXT_SENT = re.compile(
    r"Sent\s+(\d+)\s+bytes\s+(\d+)\s+pkt\s+\(dropped\s+(\d+),\s+overlimits\s+(\d+)"
)
_TEXT_BACKLOG = re.compile(r"backlog\s+(\d+)([KMG]?)b\s+(\d+)p")
_SCALE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}


def parse_qdisc_text(text: str) -> dict:
    """Like ``parse_qdisc_json`` for the plain ``tc -s qdisc show`` output (old tc)."""
    out: dict = {}
    current: dict | None = None
    for line in text.splitlines():
        if line.startswith("qdisc"):
            m = _TEXT_HEAD.match(line)
            current = None
            if m and m.group(1) == "htb":
                current = dict.fromkeys(COUNTERS, 0)
                out[m.group(2)] = current
            continue
        if current is None:
            continue
        m = _TEXT_SENT.search(line)
        if m:
            for key, val in zip(("bytes", "packets", "drops", "overlimits"), m.groups()):
                current[key] = int(val)
        m = _TEXT_BACKLOG.search(line)
        if m:
            current["backlog_bytes"] = int(m.group(1)) * _SCALE[m.group(2)]
            current["backlog_packets"] = int(m.group(3))
    return out


class QdiscReader:
    """Reads root-HTB counters of every device in one namespace, cheaply and repeatedly.

    Keeps one ``tc -s -j -n NS -batch -`` process per namespace and asks it
    ``qdisc show`` per sample (one JSON line back), so sampling does not spawn
    processes. Falls back to one ``tc -s qdisc show`` call per sample (text) if
    JSON output is unavailable.
    """

    def __init__(self, namespace: str):
        self.namespace = namespace
        self._proc: subprocess.Popen | None = None
        self._json = True
        try:
            self._proc = subprocess.Popen(
                ["tc", "-s", "-j", "-n", namespace, "-batch", "-"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                bufsize=1,
            )
        except OSError:
            self._proc = None

    def request(self) -> None:
        """Ask for one sample (answer read by ``read``), so namespaces work in parallel."""
        if self._proc is not None and self._json:
            try:
                self._proc.stdin.write("qdisc show\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError):
                self._stop()

    def read(self) -> dict:
        """Return device -> counters for the request made by ``request``."""
        if self._proc is not None and self._json:
            line = self._proc.stdout.readline()
            if line.strip().startswith("["):
                try:
                    return parse_qdisc_json(line)
                except (ValueError, TypeError):
                    pass
            self._json = False
            self._stop()
        proc = subprocess.run(
            ["tc", "-s", "-n", self.namespace, "qdisc", "show"],
            check=False,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return parse_qdisc_text(proc.stdout)

    def _stop(self) -> None:
        if self._proc is None:
            return
        try:
            self._proc.stdin.close()
        except OSError:
            pass
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def close(self) -> None:
        self._stop()
