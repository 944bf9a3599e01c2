"""A simulated run replays from its results file: run with the seed from
the clock (`--seed time`), rerun with the seed it recorded, and the JSON is
byte-identical apart from the wall-clock fields and the seed's own marks.

The simulated fabric's random routing choices (UGAL's valiant candidate,
random up ports) follow the run's seed too, not a constant of their own;
`contend sim` records the seed it used and replays from it."""

import json
import re

import pytest
from conftest import BUILD, ROOT, run_bounded
from simkit import WALL_CLOCK

BIN = BUILD / "bin" / "contend"

# What may differ between a run and its replay: simkit.WALL_CLOCK, and
SEED_MARKS = ("seed_source",)  # "time" in the first run, "user" in the replay
# and argv, where the replay has the seed's number in place of "time"

VALUE = r'-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|null'


def masked(text, keys):
    """The JSON text with the values of keys (at any depth) and the argv
    array blanked; everything else byte for byte."""
    for key in keys:
        text = re.sub(rf'("{key}": )(?:{VALUE})', r"\1-", text)
    return re.sub(r'("argv": )\[[^\]]*\]', r"\1-", text)


def run(tmp_path, name, args):
    """Runs contend args in tmp_path/name (-o out.json there, so that the
    recorded output path is the same in both runs); returns the JSON text."""
    where = tmp_path / name
    where.mkdir()
    r = run_bounded([BIN, *args, "-o", "out.json"], timeout=240, cwd=where)
    assert r.returncode == 0, r.stderr
    return (where / "out.json").read_text()


def replay_matches(tmp_path, args, seed_key):
    first = run(tmp_path, "first", [*args, "--seed", "time"])
    seed = json.loads(first)[seed_key]
    replay = run(tmp_path, "replay", [*args, "--seed", str(seed)])
    a, b = json.loads(first), json.loads(replay)
    if "argv" in a:
        assert b["argv"] == [str(seed) if x == "time" else x for x in a["argv"]]
        assert (a["seed_source"], b["seed_source"]) == ("time", "user")
    assert b[seed_key] == seed
    keys = (*sorted(WALL_CLOCK), *SEED_MARKS)
    assert masked(first, keys) == masked(replay, keys)
    return a


@pytest.mark.parametrize(
    "fabric",
    [
        # UGAL: a random valiant candidate per packet
        ["--topology", "dragonfly:a=4,p=2,h=2", "--routing", "ugal", "--nodes", "12"],
        # a uniformly random up port per hop
        ["--topology", "fattree:leaves=4,nodes=3,uplinks=2", "--routing", "random"],
    ],
    ids=["dragonfly-ugal", "fattree-random"],
)
def test_load_on_the_simulator_replays_from_its_recorded_seed(tmp_path, fabric):
    args = ["load", "--engine", "sim", *fabric, "--timeout", "0.0003", "--measurements", "2", "-q"]
    doc = replay_matches(tmp_path, args, "seed")
    assert doc["engine"] == "sim" and doc["environment"]["simulation"]["packet_hops"] > 0


def test_jobs_on_the_simulator_replay_from_their_recorded_seed(tmp_path):
    job = ROOT / "examples" / "jobs" / "io_interference.job"
    fabric = ["--topology", "fattree:leaves=4,nodes=4,uplinks=2", "--routing", "random"]
    doc = replay_matches(tmp_path, ["jobs", job, "--engine", "sim", *fabric, "-q"], "seed")
    assert doc["environment"]["simulation"]["packet_hops"] > 0


@pytest.mark.parametrize(
    "fabric",
    [
        ["--topology", "dragonfly:a=4,p=2,h=2", "--routing", "ugal"],
        ["--topology", "fattree:leaves=4,nodes=4,uplinks=2", "--routing", "adaptive"],
    ],
    ids=["dragonfly-ugal", "fattree-adaptive"],
)
def test_contend_sim_records_the_seed_it_used_and_replays(tmp_path, fabric):
    args = ["sim", *fabric, "--load", "0.6", "--warmup_us", "1", "--measure_us", "3", "-q"]
    doc = replay_matches(tmp_path, args, "seed")
    assert doc["config"]["seed"] == doc["seed"] and doc["packet_hops"] > 0


def test_the_mask_blanks_only_the_named_values():
    text = '{"wall_s": 1.5e-3, "seed": 7, "argv": ["a", "b"], "note": "wall_s"}'
    assert masked(text, ("wall_s",)) == '{"wall_s": -, "seed": 7, "argv": -, "note": "wall_s"}'
