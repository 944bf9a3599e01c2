"""A run on the simulated fabric whose ranks wait for something that never
comes (a replayed trace whose receive has no send) ends at once with exit
status 3, the deadlock named on stderr with the parked ranks and what
each waits for, and nothing written; in one process and over two, where
the process without ranks says that those of the others are parked.

Before, only the fabric's passive timers were left (the watchdog, the
counters' samples): the run went on to the watchdog's hour of simulated
time and reported a watchdog, and with --counters sampling every 10 us it
sampled all the way (hours of wall time)."""

import time

import pytest
from conftest import BUILD, run_bounded

FORGE = BUILD / "bin" / "otf2_forge"
TOPO = ["--topology", "dragonfly:a=4,p=4,h=2", "--nodes", "48"]


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    if not FORGE.exists():
        pytest.skip("built without OTF2")
    d = tmp_path_factory.mktemp("forged")
    for kind in ("no-send", "ok"):
        r = run_bounded([FORGE, d / f"{kind}.trace", kind], timeout=60)
        assert r.returncode == 0, r.stderr
    return d


def job(work, archive):
    f = work / "replay.job"
    f.write_text(f"[JOB_NAME] app\n[NID_LIST] 0,1\n[MOTIF] replay trace={archive}\n")
    return f


def launch(mpirun, contend_bin, p, argv, cwd):
    if p == 1:
        return run_bounded([contend_bin, *argv], timeout=120, cwd=cwd)
    return mpirun(p, *argv, cwd=cwd, timeout=120)


@pytest.mark.parametrize("p", [1, 2])
def test_a_deadlocked_replay_ends_at_once_and_names_its_ranks(
    archives, tmp_path, contend_bin, mpirun, p
):
    work = tmp_path / "w"
    work.mkdir()
    argv = ["jobs", str(job(work, archives / "no-send.trace")), "--engine", "sim", *TOPO,
            "-o", "out.json"]  # fmt: skip
    if p == 1:  # samples every 10 us (not over processes: refused there)
        argv += ["--counters", "c.csv", "--counter-interval-us", "10"]
    t0 = time.monotonic()
    r = launch(mpirun, contend_bin, p, argv, work)
    took = time.monotonic() - t0
    assert r.returncode == 3, r.stdout + r.stderr
    assert "watchdog" not in r.stderr, r.stderr
    assert "contend: deadlock: 48 ranks parked and none runnable" in r.stderr, r.stderr
    # the rank whose receive has no send, and what it waits in
    assert "rank 1 (waitall (simulated MPI))" in r.stderr, r.stderr
    if p == 2:  # the part without ranks ends too, saying why
        assert "the ranks of other processes are parked and nothing can wake them" in r.stderr
    assert sorted(x.name for x in work.iterdir()) == ["replay.job"]  # nothing written, no temp
    assert took < 100  # not the hang it was (the bound of run_bounded is 120 s)


def test_the_same_run_without_the_deadlock_completes_and_samples(archives, tmp_path, contend_bin):
    """The control: the archive that sends runs to its end on the same
    options (the check does not stop a run that passive timers outlive)."""
    work = tmp_path / "w"
    work.mkdir()
    argv = ["jobs", str(job(work, archives / "ok.trace")), "--engine", "sim", *TOPO, "-o",
            "out.json", "--counters", "c.csv", "--counter-interval-us", "10", "-q"]  # fmt: skip
    r = run_bounded([contend_bin, *argv], timeout=120, cwd=work)
    assert r.returncode == 0, r.stderr
    assert (work / "out.json").exists()
    rows = (work / "c.csv").read_text().splitlines()
    assert rows[0] == "time_s,component,port,vc,counter,value" and len(rows) > 1
