"""Running `contend sim` from the simulator's tests: one run's JSON, the
same without its wall-clock fields (to compare two runs), and a refused
run (exit 2, nothing written)."""

import json
import subprocess

from conftest import BUILD

BIN = BUILD / "bin" / "contend"


def sim(tmp_path, *args, name="sim.json", seed=7):
    """`contend sim --seed SEED -q -o tmp_path/NAME ARGS`: its JSON (asserts exit 0)."""
    out = tmp_path / name
    cmd = [str(BIN), "sim", "--seed", str(seed), "-q", "-o", str(out), *map(str, args)]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(out.read_text())


def strip_wall_clock(doc):
    """The JSON text of a run without what differs between two identical runs."""
    doc["config"].pop("output")
    doc.pop("wall_s")
    for k in ("peak_rss_mib", "peak_rss_kib_per_node", "peak_rss_bytes_per_router_port"):
        doc.pop(k)
    for p in doc["points"]:
        p.pop("wall_s")
    return json.dumps(doc, sort_keys=True)


def refused(tmp_path, args):
    """`contend sim ARGS` that must be refused: exit 2, no output file; its stderr."""
    out = tmp_path / "never.json"
    r = subprocess.run(
        [str(BIN), "sim", "-o", str(out), *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert not out.exists()
    return r.stderr
