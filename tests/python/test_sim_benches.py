"""The simulator's benches: bench/memory_latency (the machine's dependent
random read per working-set size), bench/sim_scale and bench/sim_gpcnet,
which print it beside their figures, and what they refuse."""

import re
import subprocess
import sys

import pytest
from conftest import BUILD, ROOT

PROBE = BUILD / "bin" / "memory_latency"
LINE = re.compile(r"^(\d+) MiB (\d+\.\d) ns$")


def test_reads_cost_more_in_a_larger_working_set():
    r = subprocess.run([PROBE, "1", "64"], capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    rows = [LINE.match(line) for line in r.stdout.splitlines()]
    assert all(rows) and [int(m[1]) for m in rows] == [1, 64], r.stdout
    small, large = (float(m[2]) for m in rows)
    # a walk the compiler dropped, or one that is not dependent, reads nothing
    assert small > 0.5 and large > small, r.stdout


@pytest.mark.parametrize("args", [["0"], ["1025"], ["2x"], ["-1"], [""], ["1"] * 17])
def test_bad_sizes_are_refused(args):
    r = subprocess.run([PROBE, *args], capture_output=True, text=True, timeout=30, check=False)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("memory_latency: ") and "Traceback" not in r.stderr


def test_sim_scale_prints_the_machine_beside_its_rates():
    r = subprocess.run(
        [sys.executable, ROOT / "bench" / "sim_scale", "--only", "fattree", "--sim-us", "3",
         "--repeat", "1"],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for when in ("before the runs", "after the runs"):
        line = next(x for x in out.splitlines() if when in x)
        assert re.search(r"1 MiB: \d+\.\d ns, 4 MiB: .* 64 MiB: \d+\.\d ns$", line), line
    assert out.index("before the runs") < out.index("xgft:h=3") < out.index("after the runs")
    assert re.search(r"at 16384 nodes: \d+\.\d\d M hops/s \(target >= 5: (met|MISSED)\)", out)


@pytest.mark.parametrize("args", [["--nodes", "8"], ["--nodes", "100001"], ["--only", "nope"]])
def test_sim_gpcnet_refuses_before_running(args):
    """Bad input: one line and status 2, before the machine is probed or
    anything is simulated (a load on fewer than 10 nodes cannot be split)."""
    r = subprocess.run([sys.executable, ROOT / "bench" / "sim_gpcnet", *args],
                       capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
