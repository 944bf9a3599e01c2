"""Bad input caught before measuring (issue 10): an -o path that cannot
take the results file (a directory, a missing or non-directory parent),
allreduce sizes that are not whole doubles, a directory given as the job
file and an HDF5 file in a missing directory.  Each exits 2 at once with one
message naming the path or the parameter and the reason, starts no
measurement (no progress line, no table) and leaves no file behind.

Also the small ones: measurements_done of the incast congestors equals what
their histograms hold, the MPI library string is one clean line, and the
jobs tables size their name column to the labels (not cut) and spell
"Concurrent"."""

import json
import time

import jsonschema
import pytest
from conftest import BUILD, run_bounded

CONTEND = BUILD / "bin" / "contend"
QUICK_S = 30  # a measured run of the same command takes minutes (10 s timeout per test)


def listing(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def assert_refused(r, elapsed, *needles):
    """Exit 2, one message holding every needle, nothing measured."""
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stderr.count("error:") == 1, r.stderr  # once, not once per rank
    line = next(ln for ln in r.stderr.splitlines() if "error:" in ln)
    for n in needles:
        assert n in line, (n, line)
    assert "[contend]" not in r.stderr  # no progress line: nothing started
    assert r.stdout.strip() == "", r.stdout  # no table, no plan
    assert "Traceback" not in r.stderr and "Segmentation" not in r.stderr
    assert elapsed < QUICK_S, elapsed


def timed(fn, *args, **kw):
    t0 = time.monotonic()
    r = fn(*args, **kw)
    return r, time.monotonic() - t0


JOB = "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] rr_lat rings=2 iters=4\n"

# command (launcher ranks or 0 for no mpirun) -> arguments before -o
COMMANDS = {
    "network": (2, ["network", "--virtual-nodes", "1"]),
    "load": (
        4,
        ["load", "--virtual-nodes", "1", "--canaries", "rr_lat", "--congestors", "p2p_incast"]
        + ["--canary-fraction", "0.5"],
    ),
    "jobs": (2, ["jobs", "JOB", "--virtual-nodes", "1"]),
    "network_dry": (0, ["network", "--dry-run", "--nodes", "4"]),
    "load_dry": (0, ["load", "--dry-run", "--nodes", "12"]),
    "jobs_dry": (0, ["jobs", "JOB", "--dry-run", "--nodes", "2"]),
    "sim": (0, ["sim", "--topology", "switch:nodes=4", "--load", "0.3"]),
    "topology": (0, ["topology", "paths", "--topology", "switch:nodes=4"]),
}

# what -o names -> the reason the message gives
TARGETS = {
    "directory": (lambda d: d / "existing", "it is a directory"),
    "missing_parent": (lambda d: d / "nope" / "r.json", "directory '{parent}' does not exist"),
    "file_as_parent": (lambda d: d / "afile" / "r.json", "'{parent}' is not a directory"),
    "trailing_slash": (lambda d: str(d / "new") + "/", "names a directory"),
}


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_output_path_refused_before_measuring(mpirun, tmp_path, command, target):
    (tmp_path / "existing").mkdir()
    (tmp_path / "afile").write_text("x")
    job = tmp_path / "a.job"
    job.write_text(JOB)
    ranks, args = COMMANDS[command]
    args = [str(job) if a == "JOB" else a for a in args]
    make, reason = TARGETS[target]
    out = make(tmp_path)
    reason = reason.format(parent=out.parent if hasattr(out, "parent") else "")
    before = listing(tmp_path)
    if ranks:
        r, el = timed(mpirun, ranks, *args, "-o", out, timeout=120, cwd=tmp_path)
    else:
        r, el = timed(run_bounded, [CONTEND, *args, "-o", out], timeout=60, cwd=tmp_path)
    assert_refused(r, el, f"cannot write '{out}'", reason)
    assert listing(tmp_path) == before  # no results file, no temporary


# option or job-file line -> what the message names
ALLREDUCE = {
    "canary": (["network", "--canaries", "allreduce", "--allreduce.msg_bytes", "12"], "allreduce"),
    # checked like a range: for every test of the command, selected or not
    "canary_not_selected": (
        ["network", "--canaries", "rr_lat", "--allreduce.msg_bytes", "20"],
        "allreduce",
    ),
    "congestor": (
        ["load", "--congestors", "dl_allreduce", "--dl_allreduce.msg_bytes", "1001"],
        "dl_allreduce",
    ),
}


@pytest.mark.parametrize("case", sorted(ALLREDUCE))
def test_allreduce_size_not_whole_doubles_under_mpirun(mpirun, tmp_path, case):
    args, test = ALLREDUCE[case]
    size = args[-1]
    r, el = timed(mpirun, 4, *args, "--virtual-nodes", "1", "-o", tmp_path / "r.json", timeout=120)
    assert_refused(r, el, f"test '{test}'", f"msg_bytes={size} is not a multiple of 8")
    assert listing(tmp_path) == []


def test_allreduce_size_refused_in_dry_runs_and_named_with_its_neighbours(tmp_path):
    args = ["network", "--dry-run", "--nodes", "2", "--allreduce.msg_bytes", "12"]
    r, el = timed(run_bounded, [CONTEND, *args, "-o", tmp_path / "p.json"], timeout=60)
    assert_refused(r, el, "msg_bytes=12 is not a multiple of 8", "use 8 or 16")
    assert listing(tmp_path) == []


def test_allreduce_whole_doubles_run_the_size_recorded(tmp_path):
    out = tmp_path / "p.json"
    args = ["network", "--dry-run", "--nodes", "2", "--canaries", "allreduce"]
    r = run_bounded([CONTEND, *args, "--allreduce.msg_bytes", "24", "-o", out], timeout=60)
    assert r.returncode == 0, r.stderr
    (test,) = json.loads(out.read_text())["tests"]
    assert test["message_bytes"] == 24
    assert sorted(p[2] for p in test["pairs"]) == [24, 24]  # the bytes that move


@pytest.mark.parametrize(
    "motif,line", [("allreduce", "msg_bytes=12"), ("dl_allreduce", "msg_bytes=4097 iters=1")]
)
def test_allreduce_size_in_a_job_file_names_file_and_line(mpirun, tmp_path, motif, line):
    job = tmp_path / "a.job"
    job.write_text(f"[JOB_NAME] a\n[NID_LIST] 0-1\n# sizes in bytes\n[MOTIF] {motif} {line}\n")
    before = listing(tmp_path)
    r, el = timed(mpirun, 2, "jobs", job, "--virtual-nodes", "1", "-o", tmp_path / "r.json")
    size = line.split()[0]
    assert_refused(r, el, f"{job}:4: motif '{motif}'", f"{size} is not a multiple of 8")
    assert listing(tmp_path) == before
    r, el = timed(run_bounded, [CONTEND, "jobs", job, "--dry-run", "--nodes", "2"], timeout=60)
    assert_refused(r, el, f"{job}:4:", f"{size} is not a multiple of 8")


@pytest.mark.parametrize("ranks", [0, 2])
def test_directory_as_job_file(mpirun, tmp_path, ranks):
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    args = ["jobs", jobs, "--virtual-nodes", "1", "-o", tmp_path / "r.json"]
    if ranks:
        r, el = timed(mpirun, ranks, *args, timeout=120)
    else:
        r, el = timed(run_bounded, [CONTEND, *args], timeout=60)
    assert_refused(r, el, f"{jobs}: is a directory, expected a job file")
    assert listing(tmp_path) == ["jobs"]


@pytest.fixture(scope="session")
def hdf5():
    r = run_bounded([CONTEND, "jobs", "--list"], timeout=30)
    if "hdf5" not in r.stdout.splitlines()[2]:
        pytest.skip("built without parallel HDF5")


@pytest.mark.parametrize("layout", ["shared", "per_rank"])
def test_hdf5_file_in_a_missing_directory(mpirun, tmp_path, hdf5, layout):
    path = tmp_path / "missing" / ("x-{rank}.h5" if layout == "per_rank" else "x.h5")
    job = tmp_path / "h5.job"
    job.write_text(
        "[JOB_NAME] w\n[NID_LIST] 0-1\n"
        f"[MOTIF] io_write api=hdf5 layout={layout} block_bytes=4096 transfer_bytes=4096 "
        f"path={path}\n"
    )
    before = listing(tmp_path)
    r = mpirun(2, "jobs", job, "--virtual-nodes", "1", "-o", tmp_path / "r.json", timeout=120)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("error:") == 1, r.stderr
    assert f"{job}:3: motif 'io_write'" in r.stderr
    assert f"directory '{tmp_path / 'missing'}' does not exist" in r.stderr
    # a literal path is checked before the run, a {rank} template when opened
    assert ("cannot write" if layout == "shared" else "cannot create") in r.stderr
    assert "HDF5-DIAG" not in r.stderr and "Bad file descriptor" not in r.stderr
    # the file is opened in the decompose phase, before anything is timed
    assert "perform" not in r.stderr
    assert r.stdout.strip() == ""
    assert listing(tmp_path) == before


def test_incast_measurements_done_match_their_histograms(mpirun, tmp_path, results_schema):
    """One sub-communicator per congestor (one rank per node), so every
    sampling rank of a congestor row ran measurements_done measurements of
    one round each: bulk samples = ranks_sampled x measurements_done and
    fine samples = bulk samples x iters.  Before the fix the incast rows
    counted measurements on ranks that took no samples, or sampled from a
    later one than a rank that saw the canaries' release sooner (short
    measurements, --iters 2, make that race likely: it failed 6 runs of 6)."""
    out = tmp_path / "load.json"
    iters = 2
    r = mpirun(
        8,
        "load",
        "--virtual-nodes",
        "1",
        "--canaries",
        "all",
        "--congestors",
        "p2p_incast,rma_put_incast",
        "--timeout",
        "0.3",
        "--measurements",
        "5",
        "--iters",
        iters,
        "-q",
        "-o",
        out,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, results_schema)
    rows = [t for t in doc["tests"] if t["role"] == "congestor"]
    assert {t["phase"] for t in rows} == {"congestor_alone", "congestor_loading"}
    expect_sampled = {"p2p_incast": 1, "rma_put_incast": 2}  # the root; the senders (3 nodes)
    for t in rows:
        where = (t["name"], t["phase"], t["during"])
        metric = t["metric"]
        assert t["ranks_sampled"] == expect_sampled[t["name"]], where
        bulk, fine = t[f"bulk_{metric}"]["count"], t[metric]["count"]
        assert bulk == t["ranks_sampled"] * t["measurements_done"], where
        assert fine == bulk * iters, where
        assert sum(t["histogram"]["count"]) == fine, where
    # the library string is one clean line (MPICH's carries tabs and newlines)
    lib = doc["environment"]["mpi_library"]
    assert lib and lib == lib.strip() and "  " not in lib
    assert not any(c in lib for c in "\t\n\r"), repr(lib)


def test_jobs_tables_fit_long_labels(mpirun, tmp_path):
    name = "a_job_name_longer_than_the_old_thirty_character_column"
    job = tmp_path / "long.job"
    job.write_text(
        f"[JOB_NAME] {name}\n[NID_LIST] 0-1\n"
        "[MOTIF] pingpong_sweep max_bytes=16 reps=2 reps_large=2\n"
        "[MOTIF] halo3d_unstructured msg_bytes=1048576 density=1 iters=1\n"
    )
    r = mpirun(2, "jobs", job, "--virtual-nodes", "1", "--mode", "both", "-q", timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any(ln.startswith(f"| {name} |") for ln in lines), r.stdout
    assert "Concurrent us" in r.stdout and "Concurrnt" not in r.stdout
    # every table is a rectangle: rules and rows of one table have one width
    tables, cur = [], []
    for ln in lines + [""]:
        if ln.startswith(("+", "|")):
            cur.append(ln)
        elif cur:
            tables.append(cur)
            cur = []
    assert len(tables) == 3  # times, latency per size, traffic
    for t in tables:
        assert len({len(ln) for ln in t}) == 1, "\n".join(t)
