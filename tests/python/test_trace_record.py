"""OTF2 record and replay (docs/trace.md), issue acceptance 1 and 2 (parity):
tests/pmpi/trace_program.c, whose traffic is known, recorded on 4 ranks with
`contend record`; otf2-print reads the archive; the replay's dry run gives
exactly the bytes and messages per rank pair and the collectives the
program made (expected values from the program's pattern, below); the
replay on the simulator and on MPI moves the same bytes per node pair."""

import json
import os
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import BUILD, mpirun_path, otf2_built, run_bounded

PROGRAM = BUILD / "bin" / "trace_program"
BUSY_S = 0.02  # trace_program's compute between phases
PHASES = 7  # busy() calls per rank: each is one recorded gap between MPI calls


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, contend_bin, mpirun):
    """The program recorded on 4 ranks: (archive directory, scratch dir)."""
    if not otf2_built() or not PROGRAM.exists():
        pytest.skip("built without OTF2")
    d = tmp_path_factory.mktemp("trace")
    r = mpirun(4, "record", "-o", d / "app.trace", "--", PROGRAM, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "warning" not in r.stderr, r.stderr[-2000:]  # everything it does is recorded
    return d / "app.trace", d


def expected_pairs() -> dict:
    """(src, dst) -> [bytes, messages] of trace_program as replayed: its
    point-to-point and one-sided transfers, and its collectives on the
    2-rank sub-communicators {0, 2} and {1, 3}, which a replay plays as
    messages between the two members (docs/trace.md)."""
    pairs = {}

    def add(src, dst, nbytes):
        p = pairs.setdefault((src, dst), [0, 0])
        p[0] += nbytes
        p[1] += 1

    add(0, 1, 1000)  # MPI_Send / MPI_Recv
    for r in range(4):
        add(r, (r + 1) % 4, 2048)  # the Isend/Irecv ring (Waitany)
        add(r, (r + 3) % 4, 1024)  # the reverse ring (Waitall)
        add(r, r ^ 1, 64)  # partners, completed by polling Testall
        add(r, r ^ 1, 32)  # MPI_Sendrecv with the partner
    for _ in range(3):
        add(2, 3, 512)  # persistent request, started 3 times
    for r in range(4):
        partner = (r + 2) % 4
        add(r, partner, 16 * 8)  # MPI_Allreduce of 16 doubles on the sub-communicator
        add(r, partner, 100 * (r + 1))  # MPI_Alltoallv: the block for the partner
    for r in (1, 2, 3):
        add(r, 0, 10 * (r + 1))  # MPI_Gatherv to rank 0 (played as messages to the root)
    add(3, 0, 256)  # MPI_Issend
    for r in range(4):
        add(r, (r + 1) % 4, 256)  # MPI_Put into rank r + 1
        add((r + 3) % 4, r, 128)  # MPI_Get from rank r - 1: data flows from it
    return pairs


def job_file(d: Path, archive: Path, name: str, extra: str = "") -> Path:
    job = d / name
    job.write_text(f"[JOB_NAME] app\n[NID_LIST] 0-3\n[MOTIF] replay trace={archive} {extra}\n")
    return job


def traffic(results: Path) -> dict:
    return json.loads(results.read_text())["jobs"][0]["traffic"]


def pairs_of(t: dict) -> dict:
    return {(s, d): [b, m] for s, d, b, m in t["pairs"]}


def dry_run(contend_bin, job: Path, out: Path) -> dict:
    r = run_bounded([contend_bin, "jobs", job, "--dry-run", "--nodes", "4", "-o", out], timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    return traffic(out)


def test_otf2_print_reads_the_archive(recorded):
    archive, _ = recorded
    tool = shutil.which("otf2-print")
    if not tool:
        pytest.skip("otf2-print not installed (Debian: otf2-tools)")
    r = run_bounded([tool, archive / "traces.otf2"], timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stderr.strip() == "", r.stderr[-2000:]  # no out-of-order definitions
    events = Counter(line.split()[0] for line in r.stdout.splitlines() if line[:1].isupper())
    assert events["MPI_SEND"] == 1 and events["MPI_RECV"] == 2
    # 4 per exchange (rings, Testall, Sendrecv), the persistent send started
    # 3 times, the Issend
    assert events["MPI_ISEND"] == 4 * 4 + 3 + 1
    assert events["MPI_IRECV"] == 4 * 4 + 3
    assert events["MPI_ISEND_COMPLETE"] == 4 * 4 + 3 + 1
    assert events["MPI_COLLECTIVE_END"] == 4 * 5  # per rank: 2 sub-communicator, 3 world
    assert events["RMA_PUT"] == 4 and events["RMA_GET"] == 4
    g = run_bounded([tool, "-G", archive / "traces.otf2"], timeout=60)
    comms = [line for line in g.stdout.splitlines() if line.startswith("COMM ")]
    assert len(comms) == 4, comms  # world, self, the two halves of the split


def test_a_program_without_windows_is_readable(tmp_path, mpirun):
    """A program that creates no window (nor communicator): the recorder
    writes no empty mapping table, which OTF2's readers refuse (found
    recording LAMMPS)."""
    tool = shutil.which("otf2-print")
    if not otf2_built() or not tool:
        pytest.skip("built without OTF2 or otf2-print not installed")
    archive = tmp_path / "sender.trace"
    sender = BUILD / "bin" / "throttle_sender"
    r = mpirun(2, "record", "-o", archive, "--", sender, "1000", "0.05", timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    r = run_bounded([tool, archive / "traces.otf2"], timeout=60)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr[-2000:]
    assert "MPI_SEND" in r.stdout


def test_dry_run_gives_the_program_traffic(recorded, contend_bin):
    archive, d = recorded
    t = dry_run(contend_bin, job_file(d, archive, "dry.job"), d / "dry.json")
    assert pairs_of(t) == expected_pairs()
    # the world collectives: MPI_Allreduce of 8 doubles and MPI_Barrier on every rank
    assert t["collectives"]["allreduce"] == {"calls": 4, "bytes": 4 * 8 * 8}
    assert t["collectives"]["barrier"] == {"calls": 4, "bytes": 0}
    assert t["collectives"]["alltoall"]["calls"] == 0
    # the compute between calls: at least the program's busy time
    assert 4 * PHASES * BUSY_S * 0.99 <= t["compute_s"] < 4 * PHASES * BUSY_S + 20


def test_compute_scale_scales_the_gaps(recorded, contend_bin):
    archive, d = recorded
    one = dry_run(contend_bin, job_file(d, archive, "s1.job"), d / "s1.json")
    half = dry_run(contend_bin, job_file(d, archive, "s2.job", "compute_scale=0.5"), d / "s2.json")
    assert half["compute_s"] == pytest.approx(one["compute_s"] / 2, rel=1e-9)
    assert pairs_of(half) == pairs_of(one)


def test_record_compute_scale_zero_records_no_gaps(tmp_path, contend_bin, mpirun):
    if not otf2_built():
        pytest.skip("built without OTF2")
    archive = tmp_path / "fast.trace"
    r = mpirun(4, "record", "-o", archive, "--compute-scale", "0", "--", PROGRAM, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    t = dry_run(contend_bin, job_file(tmp_path, archive, "z.job"), tmp_path / "z.json")
    assert t["compute_s"] == 0
    assert pairs_of(t) == expected_pairs()


@pytest.mark.parametrize("cpu", [False, True])
def test_record_compute_cpu_leaves_out_time_without_cpu(tmp_path, contend_bin, mpirun, cpu):
    """trace_program `sleep` sleeps between its phases: the wall time
    between calls holds the sleeps, --compute-cpu (the thread's CPU time)
    almost nothing; the traffic is the same."""
    if not otf2_built():
        pytest.skip("built without OTF2")
    archive = tmp_path / "sleep.trace"
    opts = ["--compute-cpu"] if cpu else []
    r = mpirun(4, "record", "-o", archive, *opts, "--", PROGRAM, "sleep", timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    t = dry_run(contend_bin, job_file(tmp_path, archive, "s.job"), tmp_path / "s.json")
    assert pairs_of(t) == expected_pairs()
    slept = 4 * PHASES * BUSY_S
    if cpu:
        assert t["compute_s"] < 0.1 * slept
    else:
        assert t["compute_s"] >= 0.99 * slept


def archive_properties(archive: Path) -> dict:
    """The anchor file's properties (otf2-print -I)."""
    tool = shutil.which("otf2-print")
    if not tool:
        pytest.skip("otf2-print not installed (Debian: otf2-tools)")
    r = run_bounded([tool, "-I", archive / "traces.otf2"], timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    return {
        a.split(None, 2)[2]: b.split(None, 2)[2]
        for a, b in zip(lines, lines[1:])
        if a.startswith("Property name") and b.startswith("Property value")
    }


@pytest.mark.parametrize("cpu", [False, True])
def test_archive_names_its_compute_clock_and_runtime(recorded, tmp_path, mpirun, cpu):
    """The archive says how its gaps were measured (the replay plays CPU-time
    gaps as CPU time) and the program's real runtime, which the shifted
    timestamps of a --compute-cpu archive no longer give: at least the
    program's busy phases on the slowest rank."""
    if cpu:
        archive = tmp_path / "cpu.trace"
        r = mpirun(4, "record", "-o", archive, "--compute-cpu", "--", PROGRAM, timeout=180)
        assert r.returncode == 0, r.stderr[-2000:]
    else:
        archive = recorded[0]
    p = archive_properties(archive)
    assert p["CONTEND::COMPUTE_CLOCK"] == ("cpu" if cpu else "wall")
    runtime = int(p["CONTEND::RUNTIME_NS"]) / 1e9
    assert PHASES * BUSY_S <= runtime
    if not cpu:  # the timestamps' span: the same interval, over all ranks
        assert runtime <= recorded_span(archive) + 1e-6


def test_replay_of_cpu_gaps_runs_them_on_a_core(tmp_path, contend_bin):
    """A --compute-cpu archive's gaps are the CPU time the program ran
    between its calls; the replay on MPI runs each until its thread has had
    that much CPU time, so that sharing a core lengthens it as it lengthened
    the program.  The 4 replaying ranks share one core here and the replay
    is itself recorded with --compute-cpu: the CPU time it spent between
    its MPI calls is at least the archive's gaps.  A wall-clock busy wait
    of the same length would get a quarter of the core (about 1/4 of the
    gaps; found: the recorded wall-time gaps of LAMMPS, replayed on a host
    whose cores others shared, added the replay's preemption to the
    recording's, docs/trace.md)."""
    taskset = shutil.which("taskset")
    if not otf2_built() or not PROGRAM.exists() or not taskset:
        pytest.skip("built without OTF2, or no taskset")
    core = str(min(os.sched_getaffinity(0)))  # one core this process may use
    launcher = [taskset, "-c", core, mpirun_path(), "-n", "4", "--oversubscribe"]
    launcher += ["--bind-to", "none"]
    archive = tmp_path / "cpu.trace"
    r = run_bounded(
        [mpirun_path(), "-n", "4", "--oversubscribe", contend_bin, "record", "-o", archive]
        + ["--compute-cpu", "--", PROGRAM],
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    asked = dry_run(contend_bin, job_file(tmp_path, archive, "c.job"), tmp_path / "c.json")
    replayed = tmp_path / "replay.trace"
    cmd = [contend_bin, "record", "-o", replayed, "--compute-cpu", "--"]
    cmd += [contend_bin, "jobs", tmp_path / "c.job", "--virtual-nodes", "1", "-q"]
    r = run_bounded([*launcher, *cmd, "-o", tmp_path / "r.json"], timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    # the replay's own calls: its gaps, as CPU time (contend's setup adds some)
    got = dry_run(contend_bin, job_file(tmp_path, replayed, "r.job"), tmp_path / "rr.json")
    assert got["compute_s"] >= 0.95 * asked["compute_s"], (got["compute_s"], asked["compute_s"])


def test_what_is_not_recorded_is_listed(tmp_path, contend_bin, mpirun):
    """An MPI_Accumulate and a Sendrecv on a Cartesian communicator (not
    representable): one warning per rank naming them, the rest recorded as
    usual."""
    if not otf2_built():
        pytest.skip("built without OTF2")
    archive = tmp_path / "acc.trace"
    r = mpirun(4, "record", "-o", archive, "--", PROGRAM, "unrecorded", timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    warnings = sorted(line for line in r.stderr.splitlines() if "contend-record" in line)
    assert warnings == [
        f"contend-record: warning: rank {q}: not recorded: MPI_Accumulate x1, "
        "calls on communicators not recorded x1"
        for q in range(4)
    ], r.stderr[-2000:]
    t = dry_run(contend_bin, job_file(tmp_path, archive, "acc.job"), tmp_path / "acc.json")
    assert pairs_of(t) == expected_pairs()


def test_replay_on_sim_and_mpi_moves_the_dry_run_bytes(recorded, contend_bin, mpirun):
    archive, d = recorded
    job = job_file(d, archive, "parity.job")
    dry = pairs_of(dry_run(contend_bin, job, d / "p-dry.json"))
    r = run_bounded(
        [contend_bin, "jobs", job, "--engine", "sim", "--nodes", "4", "-o", d / "p-sim.json"],
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert pairs_of(traffic(d / "p-sim.json")) == dry
    r = mpirun(4, "jobs", job, "--virtual-nodes", "1", "-o", d / "p-mpi.json", timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert pairs_of(traffic(d / "p-mpi.json")) == dry


def recorded_span(archive: Path) -> float:
    """From the first rank's end of MPI_Init to the last rank's start of
    MPI_Finalize in the archive (seconds), read with otf2-print."""
    tool = shutil.which("otf2-print")
    if not tool:
        pytest.skip("otf2-print not installed (Debian: otf2-tools)")
    r = run_bounded([tool, archive / "traces.otf2"], timeout=60)
    start, end = {}, {}
    for line in r.stdout.splitlines():
        f = line.split()
        if len(f) > 3 and f[0] == "LEAVE" and '"MPI_Init"' in line:
            start[f[1]] = int(f[2])
        elif len(f) > 3 and f[0] == "ENTER" and '"MPI_Finalize"' in line:
            end[f[1]] = int(f[2])
    assert len(start) == 4 and start.keys() == end.keys()
    return (max(end.values()) - min(start.values())) / 1e9


def test_replay_on_sim_is_no_slower_than_the_program(recorded, contend_bin):
    """Replay fidelity without the host's noise: on the simulator (transfers
    of microseconds) the replay's time is its compute gaps along the
    program's dependencies, which the program itself had to wait for, so it
    cannot exceed the recorded runtime; a replay that waited earlier than
    the program or serialised ranks would (docs/trace.md: the MPI replay's
    excess on a loaded host is the host's)."""
    archive, d = recorded
    job = job_file(d, archive, "fidelity.job")
    out = d / "fidelity.json"
    r = run_bounded(
        [contend_bin, "jobs", job, "--engine", "sim", "--nodes", "4", "-o", out], timeout=300
    )
    assert r.returncode == 0, r.stderr[-2000:]
    replay = json.loads(out.read_text())["jobs"][0]["results"]["concurrent"]
    program = recorded_span(archive)
    assert PHASES * BUSY_S <= replay["slowest_rank_mean_s"] <= program * 1.02
