"""bench/report_speed: the full report of a 10-million-sample file within 3x of loading it."""

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "report_speed"


def test_report_speed_bench_passes():
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--repeat", "3", "--no-extras"],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "10,000,000 samples" in proc.stdout
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith("ratio full report / load = ") and last.endswith("PASS")
