"""One output rule for the C commands (include/contend/files.h): an output
that is the same file as an input or as another output is refused before
any work (exit 2, one line naming both options and the path), outputs go
through temporaries, and a refused or failed run leaves nothing behind
(no header-only counters CSV, no temporary)."""

import os
import signal
import subprocess
import time

import pytest
from refusal import assert_refused, contend_bin, listing, run

JOB = """[JOB_NAME] a
[NID_LIST] 0-1
[MOTIF] wl_allreduce
"""

TOPOLOGY_CONF = """SwitchName=s0 Nodes=n[0-3]
SwitchName=s1 Nodes=n[4-7]
SwitchName=top Switches=s[0-1]
"""

SIM = ["--topology", "switch:nodes=4", "--load", "0.3", "--measure-us", "1", "--warmup-us", "1"]


@pytest.fixture()
def work(tmp_path):
    (tmp_path / "F.job").write_text(JOB)
    (tmp_path / "t.conf").write_text(TOPOLOGY_CONF)
    return tmp_path


# (arguments, the two names the message must give, the path it names)
SAME_AS_INPUT = {
    "jobs -o job file": (
        ["jobs", "F.job", "--dry-run", "--nodes", "2", "-o", "F.job"],
        "the job file",
    ),
    "jobs -o topology-conf": (
        [
            "jobs",
            "F.job",
            "--dry-run",
            "--nodes",
            "2",
            "--topology-conf",
            "t.conf",
            "-o",
            "./t.conf",
        ],
        "--topology-conf",
    ),
    "jobs sim --counters job file": (
        ["jobs", "F.job", "--engine", "sim", "--topology", "switch:nodes=2", "--counters", "F.job"],
        "the job file",
    ),
    "jobs sim --throttle-log job file": (
        ["jobs", "F.job", "--engine", "sim", "--topology", "switch:nodes=2"]
        + ["--throttle", "dcqcn", "--throttle-log", "F.job"],
        "the job file",
    ),
    "topology show -o": (["topology", "show", "t.conf", "-o", "t.conf"], "the topology file"),
    "topology show slurm: -o": (
        ["topology", "show", "slurm:t.conf", "--json", "-o", "t.conf"],
        "the topology file",
    ),
    "topology paths -o": (
        ["topology", "paths", "--topology", "slurm:t.conf", "--pairs", "0:5", "-o", "t.conf"],
        "--topology slurm:FILE",
    ),
    "sim -o topology": (
        ["sim", "--topology", "slurm:t.conf", "--measure-us", "1", "-o", "t.conf"],
        "--topology slurm:FILE",
    ),
    "network sim --counters topology": (
        ["network", "--engine", "sim", "--topology", "slurm:t.conf", "--counters", "t.conf"],
        "--topology slurm:FILE",
    ),
}


@pytest.mark.parametrize("case", sorted(SAME_AS_INPUT))
def test_output_that_is_an_input_is_refused(work, case):
    args, other = SAME_AS_INPUT[case]
    before = listing(work)
    r = run(args, cwd=work)
    line = assert_refused(r, "the same file", other, dirs=[work], before=[before])
    assert "an output never overwrites an input" in line


def test_links_to_an_input_are_the_input(work):
    """A symbolic link and a hard link to the job file are the job file."""
    os.symlink("F.job", work / "soft.json")
    os.link(work / "F.job", work / "hard.json")
    for out in ("soft.json", "hard.json", str(work / "F.job")):
        before = listing(work)
        r = run(["jobs", "F.job", "--dry-run", "--nodes", "2", "-o", out], cwd=work)
        assert_refused(r, "-o/--output", out, "the job file", dirs=[work], before=[before])


@pytest.mark.parametrize(
    "args",
    [
        ["sim", *SIM, "-o", "s.json", "--counters", "s.json"],
        ["sim", *SIM, "-o", "s.json", "--counters", "./s.json"],
        ["sim", *SIM, "-o", "sub/../s.json", "--counters", "s.json"],
        [
            "network",
            "--engine",
            "sim",
            "--topology",
            "switch:nodes=4",
            "-o",
            "x",
            "--counters",
            "x",
        ],
        ["load", "--engine", "sim", "--topology", "switch:nodes=12", "--counters", "x"]
        + ["--throttle", "dcqcn", "--throttle-log", "x"],
    ],
)
def test_two_outputs_on_one_file_are_refused(work, args):
    (work / "sub").mkdir()
    before = listing(work)
    r = run(args, cwd=work)
    assert_refused(r, "are the same file", dirs=[work], before=[before])


@pytest.mark.parametrize("command", ["network", "jobs"])
def test_counters_not_left_when_the_output_is_refused(work, command):
    """`--counters c.csv -o /nonexistent/x.json` used to leave a header-only c.csv."""
    args = [command] + (["F.job"] if command == "jobs" else [])
    args += ["--engine", "sim", "--nodes", "4", "--topology", "switch:nodes=4"]
    args += ["--counters", "c.csv", "-o", "/nonexistent/x.json"]
    before = listing(work)
    r = run(args, cwd=work)
    assert_refused(
        r, "-o/--output", "/nonexistent/x.json", "does not exist", dirs=[work], before=[before]
    )


def test_failed_sim_run_leaves_no_counters_or_log(work):
    """A run that fails after it started (the watchdog ends it) removes the
    counters and throttle-log temporaries: no partial files."""
    args = ["network", "--engine", "sim", "--topology", "switch:nodes=4", "--timeout", "0.001"]
    args += ["--counters", "c.csv", "--throttle", "dcqcn", "--throttle-log", "t.csv"]
    args += ["--watchdog", "1e-6", "-q"]
    before = listing(work)
    r = run(args, cwd=work, timeout=30)
    assert r.returncode == 3, r.stderr
    assert "watchdog" in r.stderr and "contend: contend:" not in r.stderr, r.stderr
    assert listing(work) == before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_terminated_run_leaves_no_temporary(work, sig):
    """A run ended by a signal (a batch system's time limit sends SIGTERM,
    ^C SIGINT, a closed terminal SIGHUP) removes its outputs' temporaries
    and ends as the signal would have; before, they stayed behind."""
    before = listing(work)
    args = ["sim", "--topology", "dragonfly:a=8,p=4,h=4", "--load", "0.5", "--measure-us", "500",
            "-o", "s.json", "--counters", "c.csv", "--counter-interval-us", "1", "-q"]  # fmt: skip
    # the child gets the signal at its default, as from a shell (under
    # nohup SIGHUP is ignored, an ignored signal stays ignored across exec,
    # and contend leaves it so)
    before_sig = signal.signal(sig, signal.SIG_DFL)
    try:
        p = subprocess.Popen([str(contend_bin()), *args], cwd=work, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)  # fmt: skip
    finally:
        signal.signal(sig, before_sig)
    try:
        deadline = time.monotonic() + 60
        while not any(".tmp." in x.name for x in work.iterdir()):
            assert p.poll() is None, "the run ended before its temporaries appeared"
            assert time.monotonic() < deadline, "no temporary after 60 s"
            time.sleep(0.05)
        p.send_signal(sig)
        p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == -sig
    assert listing(work) == before


def test_sim_outputs_are_written_whole(work):
    """The accepted case still writes both outputs (and no temporary)."""
    r = run(["sim", *SIM, "-o", "s.json", "--counters", "c.csv", "-q"], cwd=work, timeout=30)
    assert r.returncode == 0, r.stderr
    names = sorted(p.name for p in work.iterdir())
    assert names == ["F.job", "c.csv", "s.json", "t.conf"], names
    assert (work / "c.csv").read_text().startswith("time_s,component,port,vc,counter,value\n")


def test_proc_is_named(work):
    r = run(["sim", *SIM, "-o", "/proc/version"], cwd=work)
    assert_refused(r, "-o/--output", "'/proc'", "proc pseudo file system")
    r = run(["topology", "show", "switch:nodes=4", "-o", "/proc/contend.json"], cwd=work)
    assert_refused(r, "'/proc'", "proc pseudo file system")


def test_long_paths_are_bounded_and_never_cut(work):
    """A 6000-character -o is refused naming the limit; the message shows
    the path's head, tail and length instead of cutting it at 1 KiB."""
    long = "a" * 6000
    r = run(["sim", *SIM, "-o", long], cwd=work)
    line = assert_refused(r, "-o/--output", "limit of 4071", "6000 characters")
    assert len(line) < 600, line
    name = "b" * 240  # a last component with no room left for the temporary
    r = run(["sim", *SIM, "-o", name], cwd=work)
    assert_refused(r, "file name has 240 characters", "limit of 231")
    deep = work.joinpath(*["d"] * 900) / "x.json"  # under PATH_MAX, its directory missing
    r = run(["topology", "show", "switch:nodes=4", "-o", deep], cwd=work)
    line = assert_refused(r, "does not exist", "characters)")
    assert len(line) < 800, line


def test_symlink_loop_is_named(work):
    os.symlink("loop", work / "loop")
    before = listing(work)
    r = run(["sim", *SIM, "-o", "loop"], cwd=work)
    assert_refused(
        r, "-o/--output 'loop'", "too many levels of symbolic links", dirs=[work], before=[before]
    )
    os.symlink("l2", work / "l1")
    os.symlink("l1", work / "l2")
    r = run(["jobs", "F.job", "--dry-run", "--nodes", "2", "-o", "l1/x.json"], cwd=work)
    assert_refused(r, "too many levels of symbolic links")


def test_throttle_files_checked_before_the_program_runs(work):
    """`contend throttle`: an unwritable log names the path and the reason,
    a FIFO source and a log on the source are refused; the program never runs."""
    marker = work / "ran"
    os.mkfifo(work / "fifo")
    (work / "stall").write_text("0\n")
    cases = [
        (
            ["--throttle-log", "/nonexistent/log.csv"],
            ["--throttle-log", "/nonexistent/log.csv", "does not exist"],
        ),
        (["--throttle-log", "/proc/log.csv"], ["--throttle-log", "proc pseudo file system"]),
        (
            ["--throttle", "dcqcn", "--throttle-source", "file:fifo"],
            ["--throttle-source", "fifo", "a FIFO"],
        ),
        (
            ["--throttle", "dcqcn", "--throttle-source", "file:stall", "--throttle-log", "stall"],
            ["same file"],
        ),
    ]
    for opts, words in cases:
        r = run(["throttle", *opts, "--", "touch", marker], cwd=work)
        assert_refused(r, *words)
        assert not marker.exists()


def test_io_motif_data_files_are_outputs(work):
    """An I/O motif's literal path ({job} filled in) is a file the run
    writes: not the job file, not -o; a job may write then read one file."""
    job = work / "io.job"
    job.write_text(
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] io_write api=posix path=d.dat\n"
        "[MOTIF] io_read api=posix path=d.dat\n"
        "[JOB_NAME] b\n[NID_LIST] 2-3\n[MOTIF] io_write api=posix path={job}.json\n"
    )
    before = listing(work)
    r = run(["jobs", "io.job", "--dry-run", "--nodes", "4", "-o", "b.json"], cwd=work)
    assert_refused(
        r,
        "io.job:7: motif 'io_write' of job 'b' path= 'b.json'",
        "-o/--output",
        dirs=[work],
        before=[before],
    )
    r = run(["jobs", "io.job", "--dry-run", "--nodes", "4", "-o", "plan.json"], cwd=work)
    assert r.returncode == 0, r.stderr
    job.write_text("[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] io_write api=posix path=io.job\n")
    before = listing(work)
    r = run(["jobs", "io.job", "--dry-run", "--nodes", "2"], cwd=work)
    assert_refused(r, "the job file 'io.job'", dirs=[work], before=[before])
