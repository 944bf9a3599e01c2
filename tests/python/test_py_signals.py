"""SIGTERM reaches the children of the harnesses (contend.runs.children): a study,
a sweep and a mitigation run, each in the middle of a long `contend jobs`
run on the simulator, are sent SIGTERM; their child is gone within 2 s
(forwarded, not left to finish) and the harness exits 128+15 saying so."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from refusal import contend_bin

LONG_MOTIF = "[MOTIF] pingpong msg_bytes=8 iters=50000000"  # about a minute of simulation
TOPO = "fattree:leaves=2,nodes=2,uplinks=1"


def children_of(pid: int) -> dict:
    """{child pid: its command line} of the live children of pid."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out[int(entry.name)] = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
    return out


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def wait_for_run(proc, timeout=60) -> int:
    """PID of the harness's `contend jobs` run (not a dry run) once it runs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the harness ended early: {proc.communicate()[1][-2000:]}")
        for pid, argv in children_of(proc.pid).items():
            if b"jobs" in argv and b"--dry-run" not in argv:
                return pid
        time.sleep(0.05)
    pytest.fail("the harness started no run")


def terminate_and_check(proc, child: int) -> str:
    time.sleep(0.5)  # the run is under way
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    while alive(child) and time.monotonic() - t0 < 10:
        time.sleep(0.02)
    gone_after = time.monotonic() - t0
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("the harness did not exit after SIGTERM")
    finally:
        if alive(child):
            os.killpg(child, signal.SIGKILL)
    assert gone_after < 2.0, f"child {child} still there {gone_after:.1f} s after SIGTERM"
    assert proc.returncode == 128 + signal.SIGTERM, err[-2000:]
    assert "interrupted" in err and "Traceback" not in err, err[-2000:]
    return err


def start(argv, cwd):
    return subprocess.Popen(
        [str(contend_bin()), *map(str, argv)],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_study_forwards_sigterm_to_its_run(tmp_path):
    (tmp_path / "s.toml").write_text(
        f"""name = "long"
repetitions = 1
[sim]
topology = "{TOPO}"
[[app]]
name = "pp"
job = '''
{LONG_MOTIF}
'''
[control]
placement = {{ pp = "linear nodes=2" }}
"""
    )
    proc = start(["study", "s.toml", "--dir", "d", "-q"], tmp_path)
    child = wait_for_run(proc)
    terminate_and_check(proc, child)
    assert not (tmp_path / "d" / "study.json").exists()


def test_sweep_forwards_sigterm_to_its_scenarios(tmp_path):
    (tmp_path / "long.job").write_text(f"[JOB_NAME] pp\n[PLACEMENT] linear nodes=2\n{LONG_MOTIF}\n")
    (tmp_path / "s.txt").write_text(f"jobs long.job --engine sim --topology {TOPO} -q\n")
    proc = start(["sweep", "run", "s.txt", "-o", "out", "-j", "1"], tmp_path)
    child = wait_for_run(proc)
    terminate_and_check(proc, child)


def test_mitigate_forwards_sigterm_to_its_run(tmp_path):
    (tmp_path / "mix.job").write_text(f"[JOB_NAME] pp\n[PLACEMENT] linear nodes=2\n{LONG_MOTIF}\n")
    proc = start(["mitigate", "mix.job", "--topology", TOPO, "--repeat", "1", "-q"], tmp_path)
    child = wait_for_run(proc)
    terminate_and_check(proc, child)
