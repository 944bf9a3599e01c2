"""Presets of the simulated fabric (`--network aries-like|ib-like|slingshot-like`):
each runs the router model its switch family is built as (docs/simulator.md,
Presets), records it in the results, and gives way to every option the user
sets.  The switch families: Aries and Rosetta are tiled crossbars with
buffering at the outputs (`voq`), InfiniBand switches are shared-buffer
output-queued (`oq`)."""

import json
import subprocess

import pytest
from conftest import BUILD

BIN = BUILD / "bin" / "contend"

# preset -> (router model, the router parameters it sets)
HARDWARE = {
    "aries-like": ("voq", {"speedup": 2, "output_buffer_bytes": 480, "ugal_threshold_bytes": 0}),
    "ib-like": ("oq", {"shared_buffer_bytes": 16777216, "dt_alpha": 1.0}),
    "slingshot-like": (
        "voq",
        {"speedup": 2, "output_buffer_bytes": 16640, "ugal_threshold_bytes": 0},
    ),
}


def contend(tmp_path, *args, name="out.json"):
    out = tmp_path / name
    cmd = [str(BIN), *map(str, args), "--seed", "7", "-q", "-o", str(out)]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr + r.stdout
    return json.loads(out.read_text())


def sim(tmp_path, *args, name="sim.json"):
    return contend(tmp_path, "sim", *args, name=name)


@pytest.mark.parametrize("preset", sorted(HARDWARE))
def test_preset_runs_its_switch_familys_router_model(tmp_path, preset):
    # on the preset's own topology (up to 8,448 nodes), a short light run
    doc = sim(
        tmp_path, "--network", preset, "--traffic", "uniform", "--load", "0.2",
        "--warmup-us", "1", "--measure-us", "2",
    )  # fmt: skip
    router, params = HARDWARE[preset]
    assert doc["router"] == router
    assert doc["config"]["network"] == preset
    for key, value in params.items():
        assert doc["config"][key] == value, key


def test_preset_router_is_recorded_in_run_results(tmp_path):
    doc = contend(
        tmp_path, "network", "--engine", "sim", "--network", "ib-like", "--nodes", "4",
        "--timeout", "0.0002",
    )  # fmt: skip
    s = doc["environment"]["simulation"]
    assert s["network_preset"] == "ib-like"
    assert s["router"] == "oq"


def test_options_given_win_over_the_preset(tmp_path):
    doc = sim(
        tmp_path, "--network", "ib-like", "--topology", "switch:nodes=8", "--routing",
        "minimal", "--router", "voq", "--speedup", "3", "--output-buffer-bytes", "8320",
        "--load", "0.2", "--warmup-us", "1", "--measure-us", "2",
    )  # fmt: skip
    assert doc["router"] == "voq"
    c = doc["config"]
    assert (c["speedup"], c["output_buffer_bytes"]) == (3, 8320)
    assert c["topology"] == "switch:nodes=8" and c["routing"] == "minimal"
    # what the user did not set still comes from the preset
    assert (c["mtu"], c["header_bytes"], c["shared_buffer_bytes"]) == (4096, 64, 16777216)

    doc = sim(
        tmp_path, "--network", "aries-like", "--topology", "dragonfly:a=4,p=2,h=2",
        "--router", "oq", "--shared-buffer-bytes", "1048576", "--dt-alpha", "0.5",
        "--load", "0.2", "--warmup-us", "1", "--measure-us", "2", name="aries.json",
    )  # fmt: skip
    assert doc["router"] == "oq"
    c = doc["config"]
    assert (c["shared_buffer_bytes"], c["dt_alpha"]) == (1048576, 0.5)
    assert c["speedup"] == 2 and c["mtu"] == 64


@pytest.mark.parametrize("preset", sorted(HARDWARE))
def test_preset_switch_is_not_head_of_line_limited(tmp_path, preset):
    # One 32-port switch with the preset's packets, buffers and router model,
    # uniform traffic at offered load 1, no congestion control (perflow
    # throttles the sources of every busy endpoint, a separate matter).  An
    # output-queued switch saturates at 1.0 under uniform traffic (Karol,
    # Hluchyj, Morgan 1987), and a combined input/output-queued crossbar with
    # speedup 2 can match it (Chuang, Goel, McKeown, Prabhakar 1999); the
    # input-queued FIFO switch stops near 0.59.  0.95 leaves room for the
    # finite buffers and iSLIP's imperfect matchings.
    doc = sim(
        tmp_path, "--network", preset, "--topology", "switch:nodes=32", "--routing", "minimal",
        "--cc", "none", "--traffic", "uniform:self=1", "--load", "1", "--warmup-us", "200",
        "--measure-us", "400",
    )  # fmt: skip
    assert doc["points"][0]["accepted_load"] >= 0.95
