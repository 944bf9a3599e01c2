"""Receiver-paced rendezvous on the simulated fabric (--rndv-window-bytes,
--rndv-max-active): the receiver grants a rendezvous message's data window
by window and lets a bounded number of messages in at once.  Checked on an
incast (7 senders, 1 receiver on one switch): the receiver's bandwidth
obeys the window's cost (each window needs a CTS that the receiver's host
issues, mpi_overhead_ns), payloads still arrive intact and counted once,
and bad values are refused before anything runs."""

import json
import subprocess

import pytest
from conftest import BUILD

BIN = BUILD / "bin" / "contend"
JOB = """[JOB_NAME] incast
[PLACEMENT] linear nodes=8
[MOTIF] bully_incast receivers=1 msg_bytes=1MiB window=2 iters=3
"""
BASE = ["--engine", "sim", "--topology", "switch:nodes=8", "--mpi-overhead-ns", "2000",
        "--seed", "1", "-q"]  # fmt: skip
LINE_GBPS = 100.0  # the switch's default node links


def incast(tmp_path, *extra):
    job = tmp_path / "incast.job"
    job.write_text(JOB)
    out = tmp_path / "r.json"
    r = subprocess.run(
        [str(BIN), "jobs", str(job), *BASE, *map(str, extra), "-o", str(out)],
        check=False, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    motif = json.loads(out.read_text())["jobs"][0]["motifs"][0]
    return motif["results"]["concurrent"]["bandwidth_gbps_per_rank"]["mean"], motif, r.stderr


def test_unpaced_incast_runs_at_line_rate(tmp_path):
    gbps, _, _ = incast(tmp_path)
    assert 0.95 * LINE_GBPS <= gbps <= LINE_GBPS


@pytest.mark.parametrize("window", [32768, 65536, 262144])
def test_paced_incast_pays_a_cts_per_window(tmp_path, window):
    # one message at a time, window by window: every window is its
    # serialization plus at least the receiver's 2 us of host time for its
    # CTS, at most that plus a round trip on one switch (< 2 us)
    gbps, _, _ = incast(tmp_path, "--rndv-window-bytes", window, "--rndv-max-active", 1)
    ser_us = window * 8 / (LINE_GBPS * 1e3)
    assert gbps <= LINE_GBPS * ser_us / (ser_us + 2.0)
    assert gbps >= LINE_GBPS * ser_us / (ser_us + 4.0)


def test_smaller_windows_cost_more(tmp_path):
    rates = [
        incast(tmp_path, "--rndv-window-bytes", w, "--rndv-max-active", 1)[0]
        for w in (16384, 65536, 1048576)
    ]
    assert rates[0] < rates[1] < rates[2]


def test_two_at_a_time_hides_the_cts(tmp_path):
    # with two messages let in, one's CTS overlaps the other's data
    one, _, _ = incast(tmp_path, "--rndv-window-bytes", 65536, "--rndv-max-active", 1)
    two, _, _ = incast(tmp_path, "--rndv-window-bytes", 65536, "--rndv-max-active", 2)
    assert two > one * 1.1


def test_paced_payloads_arrive_intact_and_once(tmp_path):
    _, plain, _ = incast(tmp_path)
    _, paced, _ = incast(tmp_path, "--rndv-window-bytes", 65536, "--rndv-max-active", 1, "--verify")
    assert paced["traffic"]["bytes"] == plain["traffic"]["bytes"] == 42 * 1048576
    assert paced["traffic"]["messages"] == plain["traffic"]["messages"] == 42
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verify"]["checked"] > 0 and doc["verify"]["errors"] == 0, doc["verify"]


@pytest.mark.parametrize(
    "opt,value", [("--rndv-window-bytes", "-1"), ("--rndv-max-active", "x"),
                  ("--rndv-max-active", "-2")],
)  # fmt: skip
def test_bad_pacing_values_are_refused(tmp_path, opt, value):
    job = tmp_path / "incast.job"
    job.write_text(JOB)
    out = tmp_path / "r.json"
    r = subprocess.run(
        [str(BIN), "jobs", str(job), *BASE, opt, value, "-o", str(out)],
        check=False, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert opt.lstrip("-").split("-")[0] in r.stderr
    assert not out.exists()
