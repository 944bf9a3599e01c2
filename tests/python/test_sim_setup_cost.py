"""What the simulator reports of its own cost beside its results: the set-up
before the first point (topology, routing, deadlock check), and peak memory
per node and per router port; in the summary `contend sim` prints and in
the JSON, and (set-up) in `--engine sim` results.  Wall-clock values, so
only their relations are checked, never their size."""

import json
import re
import subprocess

from conftest import BUILD

BIN = BUILD / "bin" / "contend"
TREE = "xgft:h=3,down=4,8,8,up=4,8,8"  # 1,024 nodes: a deadlock check that takes measurable time

MEMORY = re.compile(
    r"peak memory (\d+\.\d) MiB: (\d+\.\d) KiB per node, (\d+) B per router port \((\d+) ports\)"
)
SETUP = re.compile(r"set-up (\d+\.\d\d) s before the first point \(topology, routing, "
                   r"deadlock check (\d+\.\d\d) s\)")  # fmt: skip


def test_contend_sim_prints_and_records_its_setup_and_memory(tmp_path):
    out = tmp_path / "s.json"
    cmd = [BIN, "sim", "--topology", TREE, "--warmup-us", "0.5", "--measure-us", "1", "-o", out]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    setup, check = doc["setup_wall_s"], doc["deadlock_check_wall_s"]
    assert 0 < check <= setup
    m, s = MEMORY.search(r.stdout), SETUP.search(r.stdout)
    assert m and s, r.stdout
    assert (float(s[1]), float(s[2])) == (round(setup, 2), round(check, 2))
    rss, ports = doc["peak_rss_mib"], int(m[4])
    assert float(m[1]) == round(rss, 1) and ports > doc["nodes"]  # every node has a port
    assert abs(float(m[2]) - rss * 1024 / doc["nodes"]) <= 0.05
    assert abs(int(m[3]) - rss * 1048576 / ports) <= 0.5
    assert abs(doc["peak_rss_kib_per_node"] - rss * 1024 / doc["nodes"]) < 1e-6


def test_engine_sim_records_its_setup(tmp_path):
    out = tmp_path / "l.json"
    cmd = [BIN, "load", "--engine", "sim", "--topology", "dragonfly:a=4,p=2,h=2", "--nodes",
           "10", "--timeout", "0.0002", "--measurements", "2", "-q", "-o", out]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert r.returncode == 0, r.stderr
    sim = json.loads(out.read_text())["environment"]["simulation"]
    assert 0 < sim["deadlock_check_wall_s"] <= sim["setup_wall_s"]
