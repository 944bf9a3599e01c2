"""Memory per simulated rank: `contend network --engine sim` holds every
rank as a fiber of one process, so what each rank keeps (its stack's
touched pages, its results, its simulated-MPI state) times the rank count
is what 65,536 ranks cost.  The slope between two rank counts on one
fabric leaves the fabric's fixed cost out."""

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conftest import BUILD

# 4,160 nodes; both runs play a prefix of them (--nodes)
TOPOLOGY = "dragonfly:a=16,p=4,h=4"
# About 9 KiB per rank here (one 4 KiB stack page, results, simulated-MPI
# state, the reduction's batches); 16 KiB before the stacks kept to one page,
# the results to what they hold and the reduction to batches.  The bound
# leaves room for other allocators.
SLOPE_KIB_MAX = 12.0


def check_histograms(doc):
    """Every test's histogram holds its samples, its first and last buckets
    bracket its min and max (the buckets reduced over the ranks in batches
    when they are many: 4,096 ranks here, one batch at 1,024)."""
    for t in doc["tests"]:
        lat, h = t[t["metric"]], t["histogram"]
        assert sum(h["count"]) == lat["count"] == t["ranks_sampled"], t["name"]
        assert h["lower"][0] <= lat["min"] <= h["upper"][0], t["name"]
        assert h["lower"][-1] <= lat["max"] <= h["upper"][-1], t["name"]


def peak_rss_mib(nodes, tmp_path):
    out = tmp_path / f"n{nodes}.json"
    cmd = [str(BUILD / "bin" / "contend"), "network", "--engine", "sim", "--topology", TOPOLOGY,
           "--nodes", str(nodes), "--measurements", "1", "--rings", "1", "--iters", "1",
           "--warmup", "0", "--canaries", "rr_lat,rr_get_lat,allreduce", "--timeout", "0.000001",
           "--seed", "1", "-q", "-o", str(out)]  # fmt: skip
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(out.read_text())
    check_histograms(doc)
    env = doc["environment"]
    assert env["ranks"] == nodes
    return env["peak_rss_mib_max"]


def test_memory_per_simulated_rank(tmp_path):
    small, large = 1024, 4096
    slope = (peak_rss_mib(large, tmp_path) - peak_rss_mib(small, tmp_path)) * 1024 / (large - small)
    assert 0 < slope <= SLOPE_KIB_MAX, f"{slope:.1f} KiB per simulated rank"


def test_peak_rss_is_the_programs_own(tmp_path):
    """A launcher's memory is not reported as the run's: getrusage's peak
    survives exec, so a run started from a 300 MB Python process (as pytest
    grows to be) reported 300 MB, and both runs above the same figure."""
    out = tmp_path / "r.json"
    cmd = [str(BUILD / "bin" / "contend"), "network", "--engine", "sim", "--topology",
           "dragonfly:a=4,p=2,h=2", "--measurements", "1", "--rings", "1", "--iters", "1",
           "--warmup", "0", "--canaries", "rr_lat", "--timeout", "0.000001", "-q", "-o", str(out)]  # fmt: skip
    launcher = "import os, sys; ballast = b'x' * (300 << 20); os.execv(sys.argv[1], sys.argv[1:])"
    r = subprocess.run([sys.executable, "-c", launcher, *cmd], check=False, capture_output=True,
                       text=True, timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(out.read_text())["environment"]["peak_rss_mib_max"] < 200
