"""`contend jobs` under MPI (Open MPI, oversubscribed, virtual nodes): every
motif's peers and byte counts equal the trace engine's prediction, payloads
verify, file I/O round-trips on every back end and layout, concurrent jobs
overlap in time, CI comes from the recorded times, and the compute motif's
durations follow the requested distributions."""

import json
import os
import re
import signal
import subprocess
import time

import jsonschema
import pytest
from conftest import BUILD, ROOT, SCHEMAS, mpi_env, mpirun_path, run_bounded
from scipy import stats

ENV = {"PATH": "/usr/bin:/bin"}


@pytest.fixture(scope="session")
def jobs_schema():
    return json.loads((SCHEMAS / "contend-jobs.schema.json").read_text())


@pytest.fixture(scope="session")
def hdf5():
    r = run_bounded([BUILD / "bin" / "contend", "jobs", "--list"], timeout=30, env=ENV)
    return "hdf5" in r.stdout.splitlines()[2]


def dry_run(tmp_path, job, nodes, ppn, *args):
    out = tmp_path / "dry.json"
    r = run_bounded(
        [BUILD / "bin" / "contend", "jobs", job, "--dry-run", "--nodes", nodes]
        + ["--ranks-per-node", ppn, "-o", out, *args],
        timeout=60,
        env=ENV,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


def real_run(mpirun, tmp_path, job, n, vn, *args, status=0, timeout=150):
    out = tmp_path / "run.json"
    r = mpirun(
        n,
        "jobs",
        job,
        "--virtual-nodes",
        vn,
        "-q",
        "-o",
        out,
        *args,
        timeout=timeout,
        cwd=tmp_path,
    )
    assert r.returncode == status, r.stdout + r.stderr
    return (json.loads(out.read_text()) if out.exists() else None), r


def assert_same_traffic(dry, real):
    """Peers, bytes and messages per node pair, collective calls and I/O
    volume of every motif: MPI engine counts == trace engine prediction."""
    assert [j["nodes"] for j in dry["jobs"]] == [j["nodes"] for j in real["jobs"]]
    for jd, jr in zip(dry["jobs"], real["jobs"]):
        for md, mr in zip(jd["motifs"], jr["motifs"]):
            where = (jd["name"], md["position"], md["name"])
            assert md["traffic"]["pairs"] == mr["traffic"]["pairs"], where
            assert md["traffic"]["collectives"] == mr["traffic"]["collectives"], where
            assert md["traffic"]["compute_s"] == pytest.approx(mr["traffic"]["compute_s"])
            assert md["io"] == mr["io"], where
            assert md["iterations_per_invocation"] == mr["iterations_per_invocation"], where


MOTIFS = """\
[JOB_NAME] net
[NID_LIST] 0-1
[REPEAT] 2
[MOTIF] wl_allreduce op=min count=3 iters=2
[MOTIF] compute dist=exponential mean=200us iters=2
[MOTIF] barrier iters=2
[MOTIF] halo2d nx=40 ny=24 depth=2 fields=2 iters=2
[MOTIF] halo3d nx=12 ny=10 nz=8 periodic=1 iters=2
[MOTIF] halo3d_unstructured msg_bytes=1000 density=0.8 iters=2
[MOTIF] sweep3d nx=12 ny=12 nz=25 kblock=10 angles=2 iters=1
[MOTIF] fft nx=8 ny=8 nz=8 iters=1
[MOTIF] incast msg_bytes=3000 root=3 iters=2
[MOTIF] pingpong msg_bytes=100 iters=20 pairs=all
[MOTIF] pingpong_sweep max_bytes=32KiB reps=4 reps_large=2 skip=1
[MOTIF] alltoall msg_bytes=512 iters=2 warmup=0
[MOTIF] rr_lat rings=2 iters=4 warmup=1
[MOTIF] rr_get_lat rings=2 iters=4 warmup=1
[MOTIF] nat_bw rings=1 iters=2 warmup=0
[MOTIF] rma_put_incast iters=2 warmup=0
[MOTIF] rma_get_bcast iters=2 warmup=0
[MOTIF] pairwise_a2a iters=2 warmup=0
[MOTIF] p2p_incast iters=2 warmup=0
[JOB_NAME] other
[PLACEMENT] random nodes=2
[MOTIF] halo2d nx=30 ny=30 iters=3
[MOTIF] sweep3d nx=8 ny=8 nz=10 kblock=3 iters=1
"""


def test_motifs_match_the_trace_engine_and_verify(mpirun, tmp_path, jobs_schema):
    """8 ranks as 4 nodes of 2 ranks: jobs of 4 ranks each, so intra- and
    inter-node pairs both occur."""
    job = tmp_path / "motifs.job"
    job.write_text(MOTIFS)
    dry = dry_run(tmp_path, job, 4, 2, "--seed", "17")
    real, r = real_run(mpirun, tmp_path, job, 8, 2, "--seed", "17", "--verify")
    jsonschema.validate(real, jobs_schema)
    jsonschema.validate(dry, jobs_schema)
    assert_same_traffic(dry, real)
    net = real["jobs"][0]
    pairs = {(s, d) for m in net["motifs"] for s, d, _, _ in m["traffic"]["pairs"]}
    assert (0, 0) in pairs and (0, 1) in pairs and (1, 0) in pairs  # intra- and inter-node
    checked = {m["name"]: m["results"]["concurrent"]["verify"] for m in net["motifs"]}
    for name, v in checked.items():
        assert v["errors"] == 0, name
        if name not in ("compute", "barrier"):
            assert v["checked"] > 0, name
    assert real["verify"]["errors"] == 0 and real["verify"]["checked"] > 0
    # the sweep reports one latency per message size, 0 B .. 32 KiB
    sweep = next(m for m in net["motifs"] if m["name"] == "pingpong_sweep")
    assert sweep["series_values"] == [0] + [2**k for k in range(16)]
    lat = [s["latency_us"] for s in sweep["results"]["concurrent"]["series"]]
    assert len(lat) == 17 and all(v > 0 for v in lat)
    assert "Latency per size" in r.stdout and "Min (ms)" in r.stdout


def test_halo_and_sweep_peers(tmp_path):
    """Neighbour sets from the decomposition: a 4 x 2 halo2d grid and a
    2 x 2 KBA sweep (8 octants x blocks)."""
    job = tmp_path / "peers.job"
    job.write_text(
        "[JOB_NAME] h\n[NID_LIST] 0-7\n[MOTIF] halo2d nx=80 ny=20 px=4 py=2 depth=1 fields=1\n"
        "[JOB_NAME] s\n[NID_LIST] 8-11\n[MOTIF] sweep3d nx=10 ny=10 nz=20 kblock=5 angles=1\n"
    )
    doc = dry_run(tmp_path, job, 12, 1)
    halo = doc["jobs"][0]["motifs"][0]["traffic"]["pairs"]
    grid = {r: (r % 4, r // 4) for r in range(8)}
    want = set()
    for r, (x, y) in grid.items():
        for q, (u, v) in grid.items():
            if abs(x - u) + abs(y - v) == 1:
                want.add((r, q))
    assert {(s, d) for s, d, _, _ in halo} == want
    for s, d, nbytes, msgs in halo:
        assert msgs == 1 and nbytes == (10 * 8 if grid[s][1] == grid[d][1] else 20 * 8)
    sweep = doc["jobs"][1]["motifs"][0]["traffic"]
    # each ordered neighbour pair: the 4 octants sweeping that way x 4 z blocks,
    # faces of 5 cells x 5 planes x 1 angle x 8 B
    assert all(m == 4 * 4 for _, _, _, m in sweep["pairs"]) and len(sweep["pairs"]) == 8
    assert sweep["bytes"] == 8 * 4 * 4 * (5 * 5 * 8)


def test_verify_detects_corruption(mpirun, tmp_path):
    job = tmp_path / "v.job"
    job.write_text("[JOB_NAME] v\n[NID_LIST] 0-3\n[MOTIF] halo2d nx=16 ny=16 iters=6\n")
    doc, r = real_run(mpirun, tmp_path, job, 4, 1, "--verify", "--verify-inject", "5", status=1)
    assert "corrupted" in r.stderr
    assert doc["verify"]["errors"] > 0  # the results still say what was found


IO_COMBOS = [
    ("posix", "shared", 0),
    ("posix", "per_rank", 0),
    ("mpiio", "shared", 0),
    ("mpiio", "shared", 1),
    ("mpiio", "per_rank", 0),
    ("mpiio", "per_rank", 1),
    ("hdf5", "shared", 0),
    ("hdf5", "shared", 1),
    ("hdf5", "per_rank", 0),
]


def io_job(tmp_path, combos, block=64 * 1024, xfer=16 * 1024, iters=2):
    lines = ["[JOB_NAME] io", "[NID_LIST] 0-3"]
    for api, layout, coll in combos:
        tag = f"{api}-{layout}-{coll}"
        suffix = "-{rank}" if layout == "per_rank" else ""
        for kind in ("io_write", "io_read"):
            shift = " read_shift=1" if kind == "io_read" else ""
            lines.append(
                f"[MOTIF] {kind} api={api} layout={layout} collective={coll} iters={iters}"
                f" block_bytes={block} transfer_bytes={xfer}{shift}"
                f" path={tmp_path}/{kind}-{tag}-{{job}}{suffix}.dat"
            )
    return "\n".join(lines) + "\n"


def test_io_round_trips(mpirun, tmp_path, hdf5, jobs_schema):
    combos = [c for c in IO_COMBOS if hdf5 or c[0] != "hdf5"]
    job = tmp_path / "io.job"
    job.write_text(io_job(tmp_path, combos))
    dry = dry_run(tmp_path, job, 4, 1)
    real, _ = real_run(mpirun, tmp_path, job, 4, 1, "--verify")
    jsonschema.validate(real, jobs_schema)
    assert_same_traffic(dry, real)
    per_motif = 2 * 4 * 64 * 1024  # iters x ranks x block
    for m in real["jobs"][0]["motifs"]:
        res = m["results"]["concurrent"]
        key = "bytes_written" if m["name"] == "io_write" else "bytes_read"
        assert m["io"][key] == per_motif, m["params"]
        assert res["verify"]["errors"] == 0 and res["verify"]["checked"] >= 2 * 4 * 4
        assert res["io_bw_mib_s"] > 0
    assert not list(tmp_path.glob("*.dat"))  # removed in the cleanup phase


def test_io_files_removed_after_an_error(mpirun, tmp_path):
    job = tmp_path / "err.job"
    job.write_text(
        "[JOB_NAME] io\n[NID_LIST] 0-1\n"
        f"[MOTIF] io_write layout=per_rank path={tmp_path}/ok-{{rank}}.dat\n"
        f"[MOTIF] io_write api=posix path={tmp_path}/missing/dir/{{job}}.dat\n"
    )
    _, r = real_run(mpirun, tmp_path, job, 2, 1, status=2)
    assert r.stderr.count("error:") == 1, r.stderr
    assert f"{job}:4: motif 'io_write' of job 'io'" in r.stderr
    assert "cannot write" in r.stderr and "does not exist" in r.stderr  # before the run
    assert not list(tmp_path.glob("*.dat")) and not (tmp_path / "run.json").exists()


def test_io_files_removed_when_the_ranks_are_terminated(tmp_path):
    """A batch system's time limit (srun sends every task SIGTERM) ends the
    ranks while their I/O motif's files exist: each rank removes its own
    before it ends, and no -o file or temporary is left."""
    job = tmp_path / "term.job"
    job.write_text(
        "[JOB_NAME] io\n[NID_LIST] 0-1\n"
        f"[MOTIF] io_write layout=per_rank iters=2 path={tmp_path}/w-{{rank}}.dat\n"
        "[MOTIF] compute mean=60\n"
    )
    cmd = [mpirun_path(), "-n", "2", "--oversubscribe", str(BUILD / "bin" / "contend"), "jobs",
           str(job), "--virtual-nodes", "1", "-q", "-o", str(tmp_path / "run.json")]  # fmt: skip
    p = subprocess.Popen(cmd, cwd=tmp_path, env=mpi_env(), stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("w-*.dat"))) < 2:
            assert p.poll() is None, p.stderr.read()
            assert time.monotonic() < deadline, "no I/O files after 60 s"
            time.sleep(0.05)
        # the ranks are mpirun's children (one node): signal them, not mpirun,
        # whose own kill sequence may SIGKILL one rank before its handler runs
        ranks = set()
        for task in os.listdir(f"/proc/{p.pid}/task"):
            with open(f"/proc/{p.pid}/task/{task}/children", encoding="ascii") as fh:
                ranks.update(int(x) for x in fh.read().split())
        assert len(ranks) == 2, ranks
        for pid in ranks:
            os.kill(pid, signal.SIGTERM)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    assert p.returncode != 0
    assert sorted(x.name for x in tmp_path.iterdir()) == ["term.job"]


def test_placement_error_at_run_time(mpirun, tmp_path):
    job = tmp_path / "big.job"
    job.write_text(
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] barrier\n[JOB_NAME] b\n"
        "[PLACEMENT] linear nodes=3\n[MOTIF] barrier\n"
    )
    _, r = real_run(mpirun, tmp_path, job, 4, 1, status=2)
    assert r.stderr.count("error:") == 1, r.stderr
    assert f"{job}:5: job 'b' needs 3 nodes but only 2" in r.stderr


CONCURRENT = """\
[JOB_NAME] left
[NID_LIST] 0-1
[MOTIF] compute mean=250ms
[MOTIF] halo2d nx=32 ny=32
[JOB_NAME] right
[NID_LIST] 2-3
[MOTIF] pingpong iters=50
[MOTIF] compute mean=250ms
"""


def test_concurrent_jobs_overlap_and_ci(mpirun, tmp_path):
    job = tmp_path / "conc.job"
    job.write_text(CONCURRENT)
    real, r = real_run(mpirun, tmp_path, job, 4, 1, "--mode", "both", "--seed", "4")
    assert real["passes"] == ["isolated", "concurrent"]
    left, right = real["jobs"]
    li, ri = left["results"]["isolated"], right["results"]["isolated"]
    lc, rc = left["results"]["concurrent"], right["results"]["concurrent"]
    # alone: one after the other
    assert li["perform_end_s"] <= ri["perform_start_s"]
    # together: the perform phases overlap
    assert (
        lc["perform_start_s"] < rc["perform_end_s"] and rc["perform_start_s"] < lc["perform_end_s"]
    )
    overlap = min(lc["perform_end_s"], rc["perform_end_s"]) - max(
        lc["perform_start_s"], rc["perform_start_s"]
    )
    assert overlap > 0.2
    for j in (left, right):
        iso, con = j["results"]["isolated"], j["results"]["concurrent"]
        assert iso["time_s"]["mean"] >= 0.25
        assert j["ci"]["mean"] == pytest.approx(con["time_s"]["mean"] / iso["time_s"]["mean"])
        for m in j["motifs"]:
            t = m["results"]
            assert m["ci"]["mean"] == pytest.approx(
                t["concurrent"]["time_s"]["mean"] / t["isolated"]["time_s"]["mean"]
            )
    assert re.search(r"\| left +\| isolated", r.stdout) and "CI" in r.stdout


def test_compute_durations_follow_the_distribution(mpirun, tmp_path):
    """Busy times (2 ranks, one per core) against the draws they execute.

    The draws come from the seed, so the simulated fabric (where a compute
    step lasts exactly its draw) gives each sample's requested duration,
    sample by sample; those follow the requested distributions
    (Kolmogorov-Smirnov, fixed seed).  The real run must execute those
    very draws: never shorter than asked, and in the draws' order (Kendall's
    tau between measured and requested).  A loaded host only lengthens some
    busy waits, which neither check minds, so the test never skips."""
    job = tmp_path / "compute.job"
    job.write_text(
        "[JOB_NAME] c\n[NID_LIST] 0-1\n"
        "[MOTIF] compute dist=gaussian mean=4ms stddev=1ms iters=150\n"
        "[MOTIF] compute dist=uniform low=1ms high=5ms iters=150\n"
        "[MOTIF] compute dist=exponential mean=2ms iters=150\n"
    )
    common = ("--seed", "2024", "--samples", "150")
    sim = tmp_path / "sim.json"
    r = run_bounded(
        [BUILD / "bin" / "contend", "jobs", job, "--engine", "sim", "--nodes", "2"]
        + ["--topology", "switch:nodes=2", "-q", "-o", sim, *common],
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    real, _ = real_run(mpirun, tmp_path, job, 2, 1, *common)

    def samples(doc):
        return [m["results"]["concurrent"]["samples_s"] for m in doc["jobs"][0]["motifs"]]

    asked, measured = samples(json.loads(sim.read_text())), samples(real)
    assert [len(s) for s in asked] == [len(s) for s in measured] == [300, 300, 300]
    gauss, unif, expo = asked
    assert stats.kstest(gauss, "norm", args=(4e-3, 1e-3)).pvalue > 1e-3
    assert stats.kstest(unif, "uniform", args=(1e-3, 4e-3)).pvalue > 1e-3
    assert stats.kstest(expo, "expon", args=(0, 2e-3)).pvalue > 1e-3
    # and the test has power: a gaussian is not uniform
    assert stats.kstest(gauss, "uniform", args=(1e-3, 6e-3)).pvalue < 1e-3
    for want, got in zip(asked, measured):
        assert all(g >= w - 1e-6 for w, g in zip(want, got))  # never shorter than asked
        # the draws themselves, in their order: unrelated samples give tau 0
        # +- 0.04; at 6 busy processes per core the worst seen was 0.48
        tau = stats.kendalltau(want, got).statistic
        assert tau > 0.25, tau


def test_blocked_pingpong_counts_match_the_trace_engine(mpirun, tmp_path):
    """Without --verify the ping-pong motifs hand whole timed blocks to the
    engine (one repeat call per block, counted once for the block): the
    messages and bytes per node pair must still be exactly those of the
    trace engine, which counts message by message."""
    job = tmp_path / "pp.job"
    job.write_text(
        "[JOB_NAME] pp\n[NID_LIST] 0-1\n[REPEAT] 3\n"
        "[MOTIF] pingpong msg_bytes=100 iters=37 warmup=3 pairs=all\n"
        "[MOTIF] pingpong_sweep max_bytes=16KiB reps=5 reps_large=2 large_bytes=1KiB skip=2\n"
    )
    dry = dry_run(tmp_path, job, 2, 2, "--seed", "5")
    real, _ = real_run(mpirun, tmp_path, job, 4, 2, "--seed", "5")
    assert_same_traffic(dry, real)
    pp, sweep = real["jobs"][0]["motifs"]
    # 2 pairs, 3 repeats x (3 + 37) round trips, both directions, all inter-node
    msgs = sum(p[3] for p in pp["traffic"]["pairs"])
    assert msgs == 2 * 3 * 40 * 2
    lat = [s["latency_us"] for s in sweep["results"]["concurrent"]["series"]]
    assert len(lat) == 16 and all(v > 0 for v in lat)  # 0 B, 1 B .. 16 KiB


def test_pingpong_sweep_bench_reports_ratios():
    """The bench runs (2 ranks) and prints, per size, both latencies and the
    median ratio of adjacent blocks, then PASS/FAIL; the 5 % target itself
    is checked by running bench/pingpong_sweep (a loaded machine can put
    either side many times off)."""
    r = run_bounded(
        [ROOT / "bench" / "pingpong_sweep", "--pairs", "5", "--pairs-large", "3"]
        + ["--max-bytes", "4096", "--limit-bytes", "1024", "--reps", "50", "--reps-large", "5"]
        + ["--skip", "5", "--sweeps", "1"],
        timeout=120,
        env={**ENV, "CONTEND_BUILD": str(BUILD)},
    )
    num = r"([\d.]+|nan)"
    rows = re.findall(
        rf"^\s+(\d+)\s+(\d+)\s+(\d+)\s+{num}\s+{num}\s+{num}\s+{num}\s+(ok|FAIL|-)$",
        r.stdout,
        re.MULTILINE,
    )
    assert [int(x[0]) for x in rows] == [0] + [2**k for k in range(13)], r.stdout + r.stderr
    assert [(int(x[1]), int(x[2])) for x in rows] == [(5, 50)] * 12 + [(3, 5)] * 2
    for size, _, _, hand, motif, sweep, ratio, check in rows:
        assert 0 < float(hand) and 0 < float(motif) and 0 < float(sweep), r.stdout
        assert 0.0 < float(ratio) < 100, r.stdout
        # checked sizes are those <= --limit-bytes; the verdict follows the ratio
        assert check == ("-" if int(size) > 1024 else "ok" if float(ratio) <= 1.05 else "FAIL")
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith(("PASS:", "FAIL:")) and r.returncode == (last.startswith("FAIL:"))
    assert last.startswith("FAIL:") == any(x[7] == "FAIL" for x in rows)
    bad = run_bounded(
        [ROOT / "bench" / "pingpong_sweep", "--pairs", "0"],
        timeout=60,
        env={**ENV, "CONTEND_BUILD": str(BUILD)},
    )
    assert bad.returncode == 2 and "--pairs" in bad.stderr
