"""The in-process control plane over processes (contend/inproc.h,
contend_inproc_launch_procs), the part of `network|load|jobs --engine sim`
over processes that carries the run's collectives, splits and signals.

build/bin/test_inproc_procs spreads 12 nodes x 2 ranks over the processes
of an mpirun on a fake windowed clock; every rank logs when each call
returned and what it got, and rank 0 (in process 1 at P > 1) prints the
logs.  At P = 2 and 3 the logs are those of one process, to the tick: a
completion that took the time of the swap rather than of the last arrival,
or a record that came a window late, moves them.  A deadlock (every rank
parked, nothing to run anywhere) ends every process with exit status 3 and
its parked ranks named, rather than a hang."""

import re

import pytest
from conftest import BUILD, mpirun_path, run_bounded

PROG = BUILD / "bin" / "test_inproc_procs"


@pytest.fixture(scope="module")
def one_process():
    r = run_bounded([PROG], timeout=60)
    assert r.returncode == 0, r.stderr
    assert "0 failures in all" in r.stderr
    return r.stdout


def test_one_process_log_covers_every_call(one_process):
    lines = one_process.splitlines()
    assert len(lines) == 25 and lines[-1].startswith("rank 0 ends at ")
    # ranks 3 mod 4 are left out of the split; the others run every call
    for r, line in enumerate(lines[:24]):
        assert line.startswith(f"rank {r}:")
        calls = re.findall(r" (\w+)@(\d+)=", line)
        names = [c[0] for c in calls]
        if r % 4 == 3:
            assert names == ["barrier", "allreduce", "split"]
        else:
            assert names[:6] == ["barrier", "allreduce", "split", "gather", "allgather",
                                 "bcast_reduce"]  # fmt: skip
            assert names[-1] == "subsplit" and len(names) == 9
        times = [int(c[1]) for c in calls]
        assert times == sorted(times) and times[0] > 0
    # every rank leaves a collective at the same time (the last arrival + the latency)
    assert len({re.search(r"barrier@(\d+)", x).group(1) for x in lines[:24]}) == 1


@pytest.mark.parametrize("p", [2, 3])
def test_any_process_count_gives_the_logs_of_one(one_process, p):
    r = run_bounded([mpirun_path(), "-n", str(p), "--oversubscribe", PROG], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{p} processes" in r.stderr and "0 failures in all" in r.stderr
    assert r.stdout == one_process


@pytest.mark.parametrize("p", [1, 2, 3])
def test_a_deadlock_over_processes_ends_every_process(p):
    """Every rank parked and nothing left to run anywhere: each process
    names its parked ranks and the run ends with exit status 3, not a hang
    (mpirun ends the others once one has)."""
    cmd = [PROG, "--deadlock"] if p == 1 else [mpirun_path(), "-n", str(p), "--oversubscribe", PROG,
                                               "--deadlock"]  # fmt: skip
    r = run_bounded(cmd, timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    parked = [int(n) for n in re.findall(r"contend: deadlock: (\d+) ranks parked", r.stderr)]
    # each process names its own ranks (the map gives each 24 / p), rank 5 among them once
    assert parked and all(n == 24 // p for n in parked)
    assert r.stderr.count("rank 5 (signal #0 on a group of 24)") <= 1
