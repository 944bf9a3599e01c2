"""What a dependent random read costs on this machine now, for the benches
whose rates follow it (bench/sim_scale, bench/sim_gpcnet): the output of
build/bin/memory_latency (bench/memory_latency.c) as one printable line.
On a shared machine the cache left to a run moves from day to day, and a
large simulated fabric's rate with it; printing this beside a table lets
two days' tables be told apart from a change of the code."""

from __future__ import annotations

import subprocess
from pathlib import Path


def memory_latency_line(bin_dir: Path, when: str) -> str:
    """One line: the read time per working-set size measured ``when`` (e.g.
    "before the runs"), or why there is none (not built, failed)."""
    probe = Path(bin_dir) / "memory_latency"
    if not probe.exists():
        return f"(memory latency {when}: {probe} not built)"
    try:
        r = subprocess.run([str(probe)], capture_output=True, text=True, timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"(memory latency {when}: {probe}: {exc})"
    if r.returncode != 0 or not r.stdout.strip():
        return f"(memory latency {when}: {probe} failed: {r.stderr.strip()})"
    sizes = ", ".join(line.replace(" MiB ", " MiB: ") for line in r.stdout.splitlines())
    return f"a dependent random read on this machine {when}: {sizes}"
