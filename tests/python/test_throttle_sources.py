"""The PMPI throttle's counter sources (src/throttle/sources.c) and its
sampler (src/throttle/pmpi.c) when a source misbehaves: a FIFO or a device
never blocks a rank, and a source that disappears mid-run leaves the log
with one row per control window and process to the end of the run."""

import csv
import io
import os

import pytest
from refusal import assert_refused, run
from test_throttle_lib import ADAPTIVE, StallWriter, run_fault, warnings

WINDOW_S = 0.1  # ADAPTIVE's CONTEND_THROTTLE_WINDOW_US
SECONDS = 1.5  # the sender's run


def rows_by_rank(log):
    text = "".join(x for x in log.read_text().splitlines(True) if not x.startswith("#"))
    rows = list(csv.DictReader(io.StringIO(text)))
    out = {}
    for x in rows:
        out.setdefault(x["rank"], []).append(x)
    return out


def assert_one_row_per_window_to_the_end(log, after_s):
    """Both processes log every window, without a gap, until the sender
    stops (SECONDS after start); after after_s the rate is the line rate
    and no signal is read."""
    ranks = rows_by_rank(log)
    assert sorted(ranks) == ["0", "1"], ranks.keys()
    for rank, rows in ranks.items():
        t = [float(x["time_s"]) for x in rows]
        assert len(rows) >= SECONDS / WINDOW_S - 2, (rank, t)
        assert max(t) >= SECONDS - 2 * WINDOW_S, (rank, t)
        # a row per window: as many rows as windows in their span (a
        # sampler woken late by a busy host shifts a row, never skips it)
        assert len(rows) >= round((t[-1] - t[0]) / WINDOW_S), (rank, t)
        gaps = [b - a for a, b in zip(t, t[1:])]
        assert max(gaps) < 2.5 * WINDOW_S, (rank, t)
        late = [x for x in rows if float(x["time_s"]) > after_s + 2 * WINDOW_S]
        assert late and all(x["signal"] == "" and float(x["rate_gbps"]) == 10 for x in late), late


def test_source_removed_mid_run_keeps_the_log_going(tmp_path):
    stall, log = tmp_path / "stall", tmp_path / "log.csv"
    env = dict(ADAPTIVE, CONTEND_THROTTLE_SOURCE=f"file:{stall}", CONTEND_THROTTLE_LOG=log)
    w = StallWriter(stall, 0.5, 0.0, 0.4, after=lambda p: p.unlink(), started=f"{log}.part0")
    r = run_fault(tmp_path, env, w, seconds=str(SECONDS))
    assert r.returncode == 0, r.stderr
    assert len(warnings(r.stderr)) == 1 and "disappeared" in r.stderr, r.stderr
    ranks = rows_by_rank(log)
    assert min(float(x["rate_gbps"]) for x in ranks["0"]) < 10  # it throttled before
    assert_one_row_per_window_to_the_end(log, 0.4)


def replace_by_fifo(path):
    path.unlink()
    os.mkfifo(path)


def test_source_replaced_by_a_fifo_mid_run_does_not_block(tmp_path):
    stall, log = tmp_path / "stall", tmp_path / "log.csv"
    env = dict(ADAPTIVE, CONTEND_THROTTLE_SOURCE=f"file:{stall}", CONTEND_THROTTLE_LOG=log)
    w = StallWriter(stall, 0.5, 0.0, 0.4, after=replace_by_fifo, started=f"{log}.part0")
    r = run_fault(tmp_path, env, w, seconds=str(SECONDS))  # bounded: 60 s
    assert r.returncode == 0, r.stderr
    w = warnings(r.stderr)
    assert len(w) == 1 and "disappeared" in w[0] and "a FIFO" in w[0], r.stderr
    assert_one_row_per_window_to_the_end(log, 0.4)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_fifo_or_device_source_turns_the_throttle_off_without_blocking(tmp_path, kind):
    """Set by hand (no `contend throttle` to refuse it): one warning, the
    program runs unthrottled and ends."""
    source = tmp_path / "fifo"
    if kind == "fifo":
        os.mkfifo(source)
    else:
        source = "/dev/zero"
    env = dict(ADAPTIVE, CONTEND_THROTTLE_SOURCE=f"file:{source}")
    r = run_fault(tmp_path, env, seconds="0.3")
    assert r.returncode == 0, r.stderr
    w = warnings(r.stderr)
    what = "a FIFO" if kind == "fifo" else "a character device"
    assert len(w) == 1 and what in w[0] and "throttling off" in w[0], r.stderr


def test_contend_throttle_refuses_a_device_source(tmp_path):
    marker = tmp_path / "ran"
    r = run(
        [
            "throttle",
            "--throttle",
            "dcqcn",
            "--throttle-source",
            "file:/dev/zero",
            "--",
            "touch",
            marker,
        ]
    )
    assert_refused(r, "--throttle-source file:PATH '/dev/zero'", "a character device")
    assert not marker.exists()


def test_unwritable_log_set_by_hand_is_named_once(tmp_path):
    """CONTEND_THROTTLE_LOG in a missing directory: rank 0 says which path
    and why at MPI_Init (no warning per rank), the program runs."""
    stall = tmp_path / "stall"
    stall.write_text("0\n")
    log = tmp_path / "missing" / "log.csv"
    env = dict(ADAPTIVE, CONTEND_THROTTLE_SOURCE=f"file:{stall}", CONTEND_THROTTLE_LOG=log)
    r = run_fault(tmp_path, env, seconds="0.3")
    assert r.returncode == 0, r.stderr
    w = warnings(r.stderr)
    assert len(w) == 1 and str(log) in w[0] and "does not exist" in w[0] and "no log" in w[0], w
    assert not log.parent.exists()
