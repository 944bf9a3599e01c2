"""The one output rule of the Python commands (contend.outfile): an output that
is an input or another output, a device or pipe, a file in /proc, or a
directory that cannot be created is refused (exit 2, one line, before any
work); a symbolic link is written through; a full disk names the file and
leaves nothing behind (a real 64 KiB tmpfs, and a simulated ENOSPC for the
logs of `contend sweep run`)."""

from __future__ import annotations

import errno
import gzip
import io
import os
import shutil
import stat
import subprocess

import pytest
from conftest import ROOT, fill_fs, mount_small_tmpfs
from contend import outfile
from contend.studies import sweep
from refusal import listing, refused, run_limited

RESULTS = ROOT / "tests" / "fixtures" / "results"
LOAD = RESULTS / "load_vn1_n10.json.gz"
COUNTERS = ROOT / "tests" / "fixtures" / "telemetry" / "csv" / "common.csv"
STUDY = ROOT / "examples" / "study" / "fattree-bully.toml"
MIX = ROOT / "examples" / "mitigate" / "small.job"
SAME = "an output never replaces an input"


@pytest.fixture
def work(tmp_path):
    """A working directory with a results file (in.json), a counter CSV (c.csv),
    a study file (s.toml), a job file (mix.job) and a scenario file."""
    (tmp_path / "in.json").write_bytes(gzip.decompress(LOAD.read_bytes()))
    shutil.copy(COUNTERS, tmp_path / "c.csv")
    shutil.copy(STUDY, tmp_path / "s.toml")
    shutil.copy(MIX, tmp_path / "mix.job")
    (tmp_path / "scen.txt").write_text("sim --topology fattree:leaves=2,nodes=2,uplinks=1\n")
    return tmp_path


# (argv, what the line names): -o is an input, spelled as given or otherwise
SAME_AS_INPUT = {
    "report": (["report", "in.json", "-o", "in.json"], "-o in.json is the input RESULTS"),
    "report-dotted": (["report", "in.json", "-o", "./in.json"], "-o in.json is the input"),
    "compare": (["compare", "in.json", "-o", "in.json"], "is the input RESULTS in.json"),
    "significance": (
        ["significance", "a=in.json", "b=c.csv", "-o", "c.csv"],
        "is the input group b c.csv",
    ),
    "html": (["html", "in.json", "-o", "in.json"], "is the input RESULTS"),
    "plot": (["plot", "hist", "r.png", "-o", "r.png"], "-o r.png is the input RESULTS r.png"),
    "model-fit": (["model", "fit-latency", "in.json", "-o", "in.json"], "input TRAINING"),
    "model-sensitivity": (
        ["model", "sensitivity", "in.json", "c.csv", "--latency", "s.toml", "-o", "s.toml"],
        "input --latency s.toml",
    ),
    "counters-pts": (["counters", "pts", "c.csv", "-o", "c.csv"], "input FILE c.csv"),
    "counters-injection": (
        ["counters", "pts", "c.csv", "--injection-csv", "c.csv"],
        "--injection-csv c.csv is the input FILE",
    ),
    "counters-replay": (["counters", "replay", "c.csv", "-o", "c.csv"], "input FILE c.csv"),
    "sensitivity-train": (
        ["sensitivity-train", "mix.job", "--job", "milc", "-o", "mix.job"],
        "input JOB_FILE mix.job",
    ),
    "mitigate": (["mitigate", "mix.job", "-o", "mix.job"], "input MIX mix.job"),
    "study": (["study", "s.toml", "-o", "s.toml"], "-o s.toml is the input STUDY"),
    "sweep-run": (["sweep", "run", "0000.log", "-o", "."], "-o DIR's log 0000.log is the input"),
}


@pytest.mark.parametrize("case", sorted(SAME_AS_INPUT))
def test_output_that_is_an_input_is_refused(work, case):
    argv, needle = SAME_AS_INPUT[case]
    if case == "sweep-run":  # the scenario file is the log of its scenario 0
        (work / "0000.log").write_text((work / "scen.txt").read_text())
    if case == "plot":  # a results file named like a figure
        shutil.copy(work / "in.json", work / "r.png")
    assert SAME in refused(argv, work, needle)


def test_hard_and_symbolic_links_to_an_input_are_the_input(work):
    os.link(work / "in.json", work / "hard.json")
    os.symlink("in.json", work / "soft.json")
    refused(["report", "in.json", "-o", "hard.json"], work, "-o hard.json is the input RESULTS")
    refused(["report", "in.json", "-o", "soft.json"], work, "-o soft.json is the input RESULTS")


def test_two_outputs_naming_one_file_are_refused(work):
    refused(
        ["counters", "pts", "c.csv", "-o", "t.csv", "--injection-csv", "./t.csv"],
        work,
        "-o t.csv and --injection-csv t.csv are the same file",
    )
    refused(
        ["model", "fit-latency", "in.json", "-o", "f.png", "--plot", "f.png"],
        work,
        "-o f.png and --plot f.png are the same file",
    )


def test_sweep_collect_keeps_its_manifest_and_results(work):
    out = work / "sw"
    r = run_limited(["sweep", "run", "scen.txt", "-o", out], work, timeout=60)
    assert r.returncode == 0, r.stderr
    for target in ("sweep.json", "0000.json"):
        refused(
            ["sweep", "collect", out, "-o", out / target],
            work,
            f"-o {out / target} is the input DIR's",
        )
    assert (out / "sweep.json").read_text().startswith('{\n "schema": "contend-sweep/1"')


def test_mitigate_keep_runs_holding_the_mix_is_refused(work):
    keep = work / "keep"
    keep.mkdir()
    shutil.copy(work / "mix.job", keep / "off-seed1.json")
    refused(
        ["mitigate", keep / "off-seed1.json", "--keep-runs", keep, "--repeat", "1"],
        work,
        "--keep-runs DIR's run file",
    )


def test_a_pipe_is_not_an_output(work):
    os.mkfifo(work / "fifo")
    refused(["report", "in.json", "-o", "fifo"], work, "fifo: is not a regular file")
    assert stat.S_ISFIFO(os.stat(work / "fifo").st_mode)


def test_output_in_proc_is_refused_with_its_reason(work):
    refused(
        ["report", "in.json", "-o", "/proc/version"],
        work,
        "cannot create the -o output in /proc: it is on the proc pseudo file system",
    )
    refused(["counters", "replay", "c.csv", "-o", "/proc/x.csv"], work, "proc pseudo file system")


@pytest.mark.parametrize(
    "argv",
    [
        ["mitigate", "mix.job", "--keep-runs", "/proc/x"],
        ["study", "s.toml", "--dir", "/proc/x"],
        ["sweep", "run", "scen.txt", "-o", "/proc/x"],
    ],
    ids=["mitigate-keep-runs", "study-dir", "sweep-run"],
)
def test_output_directory_that_cannot_be_created_is_refused(work, argv):
    refused(argv, work, "cannot create directory /proc/x")


def test_output_directory_under_a_file_is_refused(work):
    refused(
        ["mitigate", "mix.job", "--keep-runs", "in.json/runs"],
        work,
        "cannot create directory in.json/runs",
    )
    refused(["study", "s.toml", "--dir", "in.json"], work, "in.json: exists and is not a directory")


def test_symbolic_link_output_writes_its_target(work):
    (work / "real").mkdir()
    os.symlink("real/out.txt", work / "link.txt")
    r = run_limited(["report", "in.json", "-o", "link.txt"], work)
    assert r.returncode == 0, r.stderr
    assert (work / "link.txt").is_symlink()
    assert (work / "real" / "out.txt").stat().st_size > 100
    assert sorted(os.listdir(work / "real")) == ["out.txt"]


def test_symbolic_link_loop_output_is_named(work):
    os.symlink("loop2", work / "loop1")
    os.symlink("loop1", work / "loop2")
    refused(["report", "in.json", "-o", "loop1"], work, "loop1: symbolic link loop")


# ---- full disk


@pytest.fixture
def small_fs(tmp_path):
    """A 64 KiB tmpfs (unmounted afterwards); skipped where mount is not permitted."""
    mnt = tmp_path / "small"
    mount_small_tmpfs(mnt)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", str(mnt)], check=False)


def test_full_disk_names_the_output_and_leaves_nothing(work, small_fs):
    out = small_fs / "report.html"
    line = refused(
        ["html", "in.json", "-o", out], work, f"{out}: cannot write", extra_dirs=[small_fs]
    )
    assert "No space left on device" in line
    assert listing(small_fs) == {}


def test_full_disk_under_sweep_run_names_the_file(work, small_fs):
    fill_fs(small_fs)
    out = small_fs / "sweep"
    before = listing(small_fs)
    line = refused(["sweep", "run", "scen.txt", "-o", out], work, f"{out / 'sweep.json'}: cannot")
    assert "No space left on device" in line
    assert listing(small_fs) == before  # no directory, no empty file


def test_sweep_log_that_cannot_be_written_stops_the_sweep(tmp_path, monkeypatch):
    """ENOSPC on a scenario's log (simulated): the sweep stops naming the log,
    removes it, and no scenario is left running."""
    real_open = open

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def write(self, text):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name):
            return getattr(self.fh, name)

    def full_open(path, *args, **kwargs):
        return Full(real_open(path, *args, **kwargs))

    monkeypatch.setattr(sweep, "open", full_open, raising=False)
    scenarios = sweep.parse_scenarios("sim --topology fattree:leaves=2,nodes=2,uplinks=1\n" * 2)
    contend = sweep.find_contend()
    with pytest.raises(sweep.WriteFailed, match=r"0000\.log: cannot write the scenario's log: No"):
        sweep.run_scenarios(scenarios, tmp_path, contend, jobs=1, stream=io.StringIO())
    assert os.listdir(tmp_path) == []


# ---- the rule itself


def test_check_distinct_compares_files_not_spellings(tmp_path):
    (tmp_path / "d").mkdir()
    os.symlink("d", tmp_path / "alias")
    a, b = tmp_path / "d" / "new.json", tmp_path / "alias" / "new.json"
    with pytest.raises(outfile.OutputError, match="are the same file"):
        outfile.check_distinct([], [("-o", a), ("--plot", b)])  # neither exists yet
    outfile.check_distinct([("IN", tmp_path / "d")], [("-o", a), ("--x", None), ("-", "-")])
