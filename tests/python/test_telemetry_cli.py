"""``contend counters`` (sample, replay, pts): outputs, help, and the exit-2 paths.

Bad input must give one line on stderr naming the problem (file:line for
files) and exit status 2 before anything is read or written; sampling ends
cleanly on --count, --until-pid and SIGTERM with the file renamed into place.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import ROOT, as_nobody, run_bounded
from contend.telemetry import read_counters, stall_intervals
from contend.telemetry.cli import main, parse_seconds

FIX = ROOT / "tests" / "fixtures" / "telemetry"


def run_main(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def exits_2(capsys, *argv):
    with pytest.raises(SystemExit) as info:
        main([str(a) for a in argv])
    _, err = capsys.readouterr()
    assert info.value.code == 2
    return err


def assert_one_line_error(code, err, *needles):
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_help_explains_each_command(contend_bin):
    top = run_bounded([contend_bin, "counters", "--help"], timeout=60)
    assert top.returncode == 0
    assert "PTs = 100 * Ts / Tm" in top.stdout and "Examples:" in top.stdout
    for cmd, needle in (("sample", "--until-pid"), ("replay", "--source"), ("pts", "--tick-ns")):
        proc = run_bounded([contend_bin, "counters", cmd, "--help"], timeout=60)
        assert proc.returncode == 0
        assert "Examples:" in proc.stdout and needle in proc.stdout
        assert "unit" in proc.stdout or cmd == "replay"


def test_parse_seconds_units():
    assert parse_seconds("1s") == 1.0
    assert parse_seconds("200ms") == pytest.approx(0.2)
    assert parse_seconds("0.5") == 0.5
    assert parse_seconds("100us") == pytest.approx(1e-4)
    for bad in ("0", "1 parsec", "-1s", "fast"):
        with pytest.raises(Exception):  # noqa: B017 - argparse.ArgumentTypeError
            parse_seconds(bad)


def test_replay_converts_and_keeps_values(tmp_path, capsys):
    out = tmp_path / "sim.common.csv"
    code, _, err = run_main(capsys, "replay", FIX / "sim" / "counters.csv", "-o", out)
    assert code == 0, err
    assert out.read_text().startswith("time_s,component,port,counter,value,unit\n")
    replayed = read_counters(out)
    original = read_counters(FIX / "sim" / "counters.csv")
    pd.testing.assert_frame_equal(replayed, original)
    # the replayed file is still read with the simulator's sparse semantics
    pd.testing.assert_frame_equal(stall_intervals(replayed), stall_intervals(original))
    assert "rows (sim)" in err
    code, _, err = run_main(capsys, "replay", FIX / "sim" / "counters.csv", "--keep-vcs", "-o", out)
    assert code == 0 and "0/vc1" in set(read_counters(out)["port"].astype(str))


def test_pts_writes_link_and_injection_csv(tmp_path, capsys):
    out, inj = tmp_path / "pts.csv", tmp_path / "nic2hsn.csv"
    code, stdout, err = run_main(
        capsys,
        "pts",
        FIX / "ib" / "snapshot.txt",
        "--tick-ns",
        "4",
        "-o",
        out,
        "--injection-csv",
        inj,
    )
    assert code == 0, err
    links = pd.read_csv(out, dtype={"port": str})
    assert list(links.columns) == [
        "t0_s",
        "t1_s",
        "component",
        "port",
        "stall_ns",
        "interval_ns",
        "pts_percent",
    ]
    p1 = links[links["port"] == "1"]
    assert p1["pts_percent"].tolist() == pytest.approx([25.0, 50.0])
    nodes = pd.read_csv(inj)
    assert list(nodes.columns) == ["t0_s", "t1_s", "node", "pts_percent"]
    assert nodes["pts_percent"].tolist() == pytest.approx([25.0, 10.0, 50.0])
    assert "saturated of port_xmit_wait" in err and "reset of port_xmit_wait" in err
    assert stdout == ""
    # the default tick is used, and said so
    code, _, err = run_main(capsys, "pts", FIX / "ib" / "snapshot.txt", "-o", out)
    assert code == 0 and "ticks taken as 4 ns" in err
    # a preset tick: switch-ib at 100 Gb/s over 4 lanes = 10.24 ns per tick
    code, _, err = run_main(
        capsys, "pts", FIX / "ib" / "snapshot.txt", "--tick-ns", "switch-ib@100", "-o", out
    )
    assert code == 0
    assert pd.read_csv(out)["pts_percent"].iloc[0] == pytest.approx(25.0 * 10.24 / 4)
    assert "above 100 %" in err  # 128 % for the 50 % interval: the tick is questioned


def test_pts_prints_most_stalled_links_and_nodes(capsys):
    code, stdout, err = run_main(capsys, "pts", FIX / "cluster" / "stats.csv", "--top", "2")
    assert code == 0, err
    lines = stdout.splitlines()
    assert "mean PTs (%)" in lines[1] and "stalled (ms)" in lines[1]
    first, second = lines[3].split(), lines[4].split()
    assert first[0] == "n001-egress" and float(first[2]) == pytest.approx(57.273, abs=1e-3)
    assert second[0] == "n000-egress" and float(second[2]) == pytest.approx(42.222, abs=1e-3)
    assert len([ln for ln in lines if ln.startswith(("n0", "leaf"))]) == 2
    assert "Injection stall per node" in stdout


def test_sample_count_from_fixture_tree_via_the_binary(tmp_path, contend_bin):
    out = tmp_path / "ib.csv"
    proc = run_bounded(
        [
            contend_bin,
            "counters",
            "sample",
            "--source",
            "ib",
            "--root",
            FIX / "ib" / "sysfs",
            "--host",
            "n7",
            "--device",
            "mlx5_0",
            "--interval",
            "20ms",
            "--count",
            "4",
            "-o",
            out,
        ],
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    frame = read_counters(out)
    assert frame["time_s"].nunique() == 4
    assert set(frame["component"].astype(str)) == {"n7:mlx5_0"}
    assert len(frame) == 4 * 12
    assert os.listdir(tmp_path) == ["ib.csv"]


def _wait_for(predicate, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.02)
    return False


def test_sample_ends_cleanly_on_sigterm(tmp_path):
    out = tmp_path / "cxi.csv"
    cmd = [
        sys.executable,
        "-m",
        "contend.telemetry.cli",
        "sample",
        "--source",
        "cxi",
        "--root",
        str(FIX / "cxi" / "sysfs"),
        "--host",
        "n2",
        "--interval",
        "30ms",
        "-o",
        str(out),
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    try:

        def two_rounds():
            tmps = list(tmp_path.glob(".cxi.csv.*.tmp"))
            return tmps and tmps[0].read_text().count("\n") >= 1 + 2 * 6

        assert _wait_for(two_rounds), "sampling did not start"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == 0, err
    frame = read_counters(out)
    # default counter set: the hni pause and per-class packet counters (6 files)
    assert frame["time_s"].nunique() >= 2
    assert set(frame["counter"].astype(str)) == {
        "hni_tx_paused_0",
        "hni_tx_paused_1",
        "hni_rx_paused_0",
        "hni_pkts_sent_by_tc_0",
        "hni_pkts_recv_by_tc_0",
    }
    assert os.listdir(tmp_path) == ["cxi.csv"]


def test_sample_until_pid_takes_a_last_sample_after_the_process_ends(tmp_path, capsys):
    child = subprocess.Popen(["sleep", "0.3"])
    try:
        out = tmp_path / "ib.csv"
        code, _, err = run_main(
            capsys,
            "sample",
            "--source",
            "ib",
            "--root",
            FIX / "ib" / "sysfs",
            "--host",
            "h",
            "--interval",
            "50ms",
            "--until-pid",
            child.pid,
            "-o",
            out,
        )
    finally:
        child.wait(timeout=20)
    assert code == 0, err
    assert read_counters(out)["time_s"].nunique() >= 2


MALFORMED = [
    ("ib/snapshot-malformed.txt", 6),
    ("cxi/snapshot-malformed.txt", 3),
    ("ldms/ibmad-malformed.csv", 4),
    ("cluster/stats-malformed.csv", 4),
    ("sim/counters-malformed.csv", 4),
    ("csv/common-malformed.csv", 3),
]


@pytest.mark.parametrize("name,line", MALFORMED)
@pytest.mark.parametrize("command", ["replay", "pts"])
def test_malformed_files_exit_2_with_file_and_line(tmp_path, capsys, name, line, command):
    out = tmp_path / "out.csv"
    path = FIX / name
    code, stdout, err = run_main(capsys, command, path, "-o", out)
    assert_one_line_error(code, err, f"{path}:{line}: ")
    assert not out.exists() and os.listdir(tmp_path) == []
    assert stdout == ""


def test_bad_options_and_paths_exit_2_before_reading(tmp_path, capsys):
    good = FIX / "sim" / "counters.csv"
    bad = FIX / "sim" / "counters-malformed.csv"
    err = exits_2(capsys, "replay", good, "--source", "lmds", "-o", tmp_path / "x.csv")
    assert "invalid choice: 'lmds'" in err and len(err.strip().splitlines()) == 1
    err = exits_2(capsys, "sample", "--source", "myrinet", "-o", tmp_path / "x.csv")
    assert "invalid choice" in err
    err = exits_2(capsys, "sample", "--source", "ib", "--interval", "1 parsec", "-o", "x")
    assert "expected a duration" in err
    err = exits_2(capsys, "pts", good, "--tick-ns", "warp@9")
    assert "unknown device 'warp'" in err
    err = exits_2(capsys, "sample", "--source", "ib", "--count", "2", "--duration", "1", "-o", "x")
    assert "not allowed with argument" in err
    # output problems are reported before the (malformed) input is read
    code, _, err = run_main(capsys, "replay", bad, "-o", tmp_path / "no" / "x.csv")
    assert_one_line_error(code, err, "directory", "does not exist")
    code, _, err = run_main(capsys, "pts", bad, "-o", tmp_path)
    assert_one_line_error(code, err, "is a directory")
    code, _, err = run_main(capsys, "pts", good, "--injection-csv", tmp_path / "no" / "i.csv")
    assert_one_line_error(code, err, "injection directory")
    code, _, err = run_main(capsys, "replay", tmp_path / "missing.csv", "-o", tmp_path / "x.csv")
    assert_one_line_error(code, err, "missing.csv: no such file")
    code, _, err = run_main(capsys, "replay", FIX / "ib", "--source", "sim", "-o", tmp_path / "x")
    assert_one_line_error(code, err, "is a directory")


def test_unreadable_input_exits_2():
    """A file without read permission: one line, exit 2 (as root, the
    command runs as user nobody, for whom the permission holds; in a
    directory of the system's temporary directory, which nobody can reach,
    unlike pytest's per-user one)."""
    prefix = as_nobody()
    if prefix is None:
        pytest.skip("root, and cannot run Python as user nobody (setpriv) to drop the privilege")
    with tempfile.TemporaryDirectory() as tmp:
        unreadable_input_exits_2(prefix, Path(tmp))


def unreadable_input_exits_2(prefix, work):
    work.chmod(0o777)
    unreadable = work / "secret.csv"
    unreadable.write_text("time_s,component,counter,value\n")
    unreadable.chmod(0)
    cmd = [sys.executable, "-m", "contend.telemetry.cli", "replay", unreadable]
    r = run_bounded([*prefix, *cmd, "-o", work / "x.csv"], timeout=60)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and "cannot read" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
    assert sorted(p.name for p in work.iterdir()) == ["secret.csv"]


def test_sample_refusals_exit_2(tmp_path, capsys):
    out = tmp_path / "x.csv"
    code, _, err = run_main(
        capsys, "sample", "--source", "ib", "--root", FIX / "ib" / "sysfs-missing", "-o", out
    )
    assert_one_line_error(code, err, "ports/2/counters: no such directory")
    code, _, err = run_main(
        capsys, "sample", "--source", "ib", "--root", tmp_path / "none", "-o", out
    )
    assert_one_line_error(code, err, "no such directory")
    code, _, err = run_main(
        capsys,
        "sample",
        "--source",
        "cxi",
        "--root",
        FIX / "cxi" / "sysfs",
        "--device",
        "cxi0,cxi5",
        "-o",
        out,
    )
    assert_one_line_error(code, err, "no device cxi5")
    dead = subprocess.Popen(["true"])
    dead.wait()
    code, _, err = run_main(
        capsys,
        "sample",
        "--source",
        "ib",
        "--root",
        FIX / "ib" / "sysfs",
        "--until-pid",
        dead.pid,
        "-o",
        out,
    )
    assert_one_line_error(code, err, f"--until-pid {dead.pid}: no such process")
    code, _, err = run_main(capsys, "sample", "--source", "cluster", "--prefix", "zz9", "-o", out)
    assert code == 2 and "zz9" in err and "Traceback" not in err
    assert os.listdir(tmp_path) == []
