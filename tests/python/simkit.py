"""Running `contend sim` from the simulator's tests: one run's JSON, the
same without its wall-clock fields (to compare two runs), and a refused
run (exit 2, nothing written); the keys of those fields, for the tests
that compare other commands' results."""

import json
import subprocess

from conftest import BUILD

BIN = BUILD / "bin" / "contend"

# Keys (at any depth) whose values differ between two runs of one seed:
WALL_CLOCK = frozenset({
    "wall_s",  # wall seconds: a run, a `contend sim` point
    "setup_wall_s",  # the simulated fabric's set-up (topology, routing, check)
    "deadlock_check_wall_s",  # of which the deadlock check
    "peak_rss_mib",  # memory of the process, as the OS reports it
    "peak_rss_mib_max",
    "peak_rss_mib_mean",
    "peak_rss_kib_per_node",  # contend sim: the same over the fabric's size
    "peak_rss_bytes_per_router_port",
    "started_utc",  # UTC start and finish
    "finished_utc",
    "perform_t0_unix_s",  # jobs: the wall time a pass started
})  # fmt: skip


def without(x, keys):
    """x (parsed JSON) without the given keys at any depth."""
    if isinstance(x, dict):
        return {k: without(v, keys) for k, v in x.items() if k not in keys}
    if isinstance(x, list):
        return [without(v, keys) for v in x]
    return x


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
    return json.dumps(without(doc, WALL_CLOCK), sort_keys=True)


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
