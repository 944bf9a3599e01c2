"""Issue 27's checklist: every reproducer the issue lists, run as the user
types it (`contend ...` in a working directory holding only the files the
row names), must be refused up front: exit 2, one short line on stderr
naming the offending option, path or limit, no traceback, every file of
the directory byte-identical and nothing added, within 10 s and 1 GiB of
address space (tests/python/refusal.py).  One row per reproducer; the
other test_c_*, test_py_* files test the same fixes in depth."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOT, fill_fs, mount_small_tmpfs
from contend.cluster import netns
from refusal import assert_refused, listing, run

FIXTURES = ROOT / "tests" / "fixtures"
RESULTS = gzip.decompress((FIXTURES / "results" / "load_vn1_n10.json.gz").read_bytes())
JOBS_RESULTS = gzip.decompress((FIXTURES / "results" / "jobs_both_vn1_n4.json.gz").read_bytes())
COMMON = (FIXTURES / "telemetry" / "csv" / "common.csv").read_text()
LDMS_HEADER = (FIXTURES / "telemetry" / "ldms" / "ibmad.csv").read_text().splitlines()[0]
TOPOLOGY = (FIXTURES / "topology" / "quartz.conf").read_text()
STUDY = (ROOT / "examples" / "study" / "fattree-bully.toml").read_text()
MIX = (ROOT / "examples" / "mitigate" / "small.job").read_text()
JOB = "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] wl_allreduce\n"
DEEP_JSON = "[" * 1000 + "]" * 1000
SIM = ["sim", "--topology", "switch:nodes=4", "--measure-us", "1", "--warmup-us", "1"]
MAX_LINE = 1000  # no refusal needs more characters than this to name its problem


# ---- the files rows create (in the working directory, before the run)


def fifo(path: Path) -> None:
    os.mkfifo(path)


def symlink_to(target: str):
    def make(path: Path) -> None:
        os.symlink(target, path)

    return make


def gzip_bomb(path: Path) -> None:
    """About 1.5 MB of gzip holding 1.5 GB of JSON: members of 2 MiB of zeros."""
    member = gzip.compress(b"0," * (1 << 20), compresslevel=9)
    with open(path, "wb") as fh:
        fh.write(gzip.compress(b"["))
        fh.writelines(member for _ in range(750))
        fh.write(gzip.compress(b"0]"))


def sweep_dir(path: Path) -> None:
    """The results directory of a real one-scenario sweep (its manifest sweep.json)."""
    scenarios = path.parent / "scenarios.txt"
    scenarios.write_text("sim --topology switch:nodes=2 --measure-us 1 --warmup-us 1\n")
    r = run(["sweep", "run", scenarios, "-o", path], cwd=path.parent, timeout=60)
    assert r.returncode == 0, r.stderr
    assert (path / "sweep.json").is_file()


def full_tmpfs(path: Path) -> None:
    """A 64 KiB tmpfs without a free block (unmounted by the fixture)."""
    mount_small_tmpfs(path)
    fill_fs(path)


def no_tcp_cc_list():
    if netns.tcp_cc_choices() is None:  # then --tcp-cc is not checked: the cluster would start
        return "the kernel lists no TCP congestion control here"
    return None


def jobs_results_with(value: float) -> str:
    doc = json.loads(JOBS_RESULTS)
    doc["jobs"][0]["results"]["isolated"]["slowest_rank_s"][0] = value
    return json.dumps(doc)


def common_with_row(row: str) -> str:
    lines = COMMON.splitlines()
    return "\n".join([*lines[:3], row, *lines[3:]]) + "\n"


def common_negative() -> str:
    lines = COMMON.splitlines()
    first = lines[1].split(",")
    first[4] = "-5"
    return "\n".join([lines[0], ",".join(first), *lines[2:]]) + "\n"


def ldms_garbage() -> str:
    fields = len(LDMS_HEADER.split(","))
    row = "1700000000.0001,100,node01," + ",".join(["junk"] * (fields - 3))
    return f"{LDMS_HEADER}\n{row}\n{row}\n"


def doubling_vars() -> str:
    lines = ["[VAR] V0=xxxxxxxxxxxxxxxx"]
    lines += [f"[VAR] V{i}={{V{i - 1}}}{{V{i - 1}}}" for i in range(1, 40)]
    return "\n".join(lines) + "\n" + JOB


# ---- the checklist


@dataclass(frozen=True)
class Row:
    """files: name -> text, bytes or a function making it; argv: after `contend`,
    run in the directory of the files; words: what the one line must hold."""

    files: dict
    argv: list
    words: tuple
    max_line: int = MAX_LINE
    skip: object = None  # a function: why this host cannot run the row, else None


def row(rid, files, argv, *words, xfail=None, **kw):
    marks = [pytest.mark.xfail(strict=True, reason=xfail)] if xfail else []
    return pytest.param(Row(files, argv, words, **kw), id=rid, marks=marks)


SAME = "an output never"  # both sides say "never overwrites/replaces an input"

ROWS = [
    # -- inputs overwritten
    row("study-o-input", {"F.toml": STUDY}, ["study", "F.toml", "-o", "F.toml"],
        "-o F.toml is the input STUDY", SAME),
    row("jobs-o-input", {"F.job": JOB}, ["jobs", "F.job", "-o", "F.job"],
        "-o/--output 'F.job'", "the job file", SAME),
    row("model-fit-latency-o-input", {"T.json": RESULTS},
        ["model", "fit-latency", "T.json", "-o", "T.json"],
        "-o T.json is the input TRAINING", SAME),
    row("sensitivity-train-o-input", {"F.job": MIX},
        ["sensitivity-train", "F.job", "--job", "milc", "-o", "F.job"],
        "-o F.job is the input JOB_FILE", SAME),
    row("mitigate-o-input", {"F.job": MIX}, ["mitigate", "F.job", "-o", "F.job"],
        "-o F.job is the input MIX", SAME),
    row("counters-pts-o-input", {"C.csv": COMMON}, ["counters", "pts", "C.csv", "-o", "C.csv"],
        "-o C.csv is the input FILE", SAME),
    row("report-o-input", {"IN.json": RESULTS}, ["report", "IN.json", "-o", "IN.json"],
        "-o IN.json is the input RESULTS", SAME),
    row("html-o-input", {"IN.json": RESULTS}, ["html", "IN.json", "-o", "IN.json"],
        "-o IN.json is the input RESULTS", SAME),
    row("compare-o-input", {"IN.json": RESULTS}, ["compare", "IN.json", "-o", "IN.json"],
        "-o IN.json is the input RESULTS", SAME),
    row("topology-show-o-input", {"F": TOPOLOGY}, ["topology", "show", "slurm:F", "-o", "F"],
        "-o/--output 'F'", "the topology file", SAME),
    row("topology-paths-o-input", {"F": TOPOLOGY},
        ["topology", "paths", "--topology", "slurm:F", "--pairs", "0:5", "-o", "F"],
        "-o/--output 'F'", "--topology slurm:FILE", SAME),
    row("sim-o-topology", {"F": TOPOLOGY},
        ["sim", "--topology", "slurm:F", "--measure-us", "1", "-o", "F"],
        "-o/--output 'F'", "--topology slurm:FILE", SAME),
    row("sweep-collect-o-manifest", {"DIR": sweep_dir},
        ["sweep", "collect", "DIR", "-o", "DIR/sweep.json"],
        "-o DIR/sweep.json is the input DIR's manifest", SAME),
    row("sim-o-is-counters", {}, [*SIM, "-o", "s.json", "--counters", "s.json"],
        "-o/--output", "--counters", "'s.json'", "are the same file"),
    row("jobs-sim-counters-o-missing-dir", {"F.job": JOB},
        ["jobs", "F.job", "--engine", "sim", "--topology", "switch:nodes=2",
         "--counters", "c.csv", "-o", "/nonexistent/x.json"],
        "-o/--output", "'/nonexistent/x.json'", "does not exist"),
    row("network-sim-counters-o-missing-dir", {},
        ["network", "--engine", "sim", "--topology", "switch:nodes=4",
         "--counters", "c.csv", "-o", "/nonexistent/x.json"],
        "-o/--output", "'/nonexistent/x.json'", "does not exist"),
    row("sweep-run-full-disk", {"s.txt": "sim --topology switch:nodes=2 --measure-us 1\n",
                                "full": full_tmpfs},
        ["sweep", "run", "s.txt", "-o", "full/sweep"],
        "full/sweep/sweep.json: cannot", "No space left on device"),
    # -- hangs and unbounded memory
    row("throttle-fifo-source", {"fifo": fifo},
        ["throttle", "--throttle", "dcqcn", "--throttle-source", "file:fifo", "--",
         "touch", "ran"],
        "--throttle-source", "'fifo'", "a FIFO"),
    row("jobs-doubling-vars", {"d.job": doubling_vars()}, ["jobs", "d.job"],
        "d.job:17:", "limit of 1048576 bytes"),
    row("mitigate-repeat-huge", {"F.job": MIX}, ["mitigate", "F.job", "--repeat", "99999999999"],
        "--repeat", "to 10000 (the limit)"),
    row("significance-resamples-huge", {"IN.json": RESULTS},
        ["significance", "a=IN.json", "b=IN.json", "--resamples", "1000000000"],
        "--resamples", "to 100000 (the limit)"),
    row("report-bootstrap-huge", {"IN.json": RESULTS},
        ["report", "IN.json", "--bootstrap", "100000000"], "--bootstrap", "(the limit)"),
    row("report-gzip-bomb", {"bomb.json.gz": gzip_bomb}, ["report", "bomb.json.gz"],
        "bomb.json.gz: decompresses to more than the 128 MiB limit"),
    # -- tracebacks: JSON 1,000 deep, TOML 100,000 deep, a directory in /proc
    *[
        row(f"deep-json-{name}", {"deep.json": DEEP_JSON, "F.job": MIX}, argv,
            "deep.json: JSON nested more than 64 levels")
        for name, argv in [
            ("report", ["report", "deep.json"]),
            ("compare", ["compare", "deep.json"]),
            ("html", ["html", "deep.json", "-o", "out.html"]),
            ("plot-hist", ["plot", "hist", "deep.json", "-o", "out.png"]),
            ("model-show", ["model", "show", "deep.json"]),
            ("model-fit-latency", ["model", "fit-latency", "deep.json", "-o", "m.json"]),
            ("mitigate-model", ["mitigate", "F.job", "--model", "milc=deep.json"]),
        ]
    ],
    row("deep-json-sweep-collect", {"DIR": sweep_dir, "DIR/sweep.json": DEEP_JSON},
        ["sweep", "collect", "DIR"], "DIR/sweep.json: JSON nested more than 64 levels"),
    row("deep-toml-study", {"deep.toml": "a = " + "[" * 100000 + "]" * 100000 + "\n"},
        ["study", "deep.toml"], "deep.toml: TOML nested more than 64 levels"),
    row("mitigate-keep-runs-proc", {"F.job": MIX}, ["mitigate", "F.job", "--keep-runs", "/proc/x"],
        "--keep-runs", "cannot create directory /proc/x", "proc pseudo file system"),
    # -- bad input accepted
    row("sim-flow-to-itself", {}, [*SIM, "--traffic", "flow:src=0,dst=0"],
        "--traffic", "src and dst are the same node"),
    row("sim-incast-no-senders", {}, [*SIM, "--traffic", "incast:senders=,dst=0"],
        "--traffic", "the senders list is empty"),
    row("compare-canaries-bogus", {"IN.json": RESULTS},
        ["compare", "IN.json", "--canaries", "bogus"], "--canaries", "unknown canary 'bogus'"),
    row("ldms-garbage", {"l.csv": ldms_garbage()}, ["counters", "replay", "l.csv", "-o", "o.csv"],
        "l.csv:2:", "no metric column"),
    row("common-csv-negative", {"c.csv": common_negative()}, ["counters", "pts", "c.csv"],
        "c.csv:2: field 'value' is negative"),
    row("jobs-results-slowest-minus-1e308", {"j.json": jobs_results_with(-1e308)},
        ["report", "j.json"], "j.json: jobs[0].results.isolated.slowest_rank_s[0] is -1e+308 s"),
    row("version-bogus", {}, ["version", "--bogus"], "contend version", "'--bogus'"),
    row("list-bogus-test", {}, ["list", "bogus_test"], "unknown test 'bogus_test'"),
    row("cluster-up-tcp-cc-bogus", {},
        ["cluster", "up", "--nodes", "2", "--leaves", "1", "--tcp-cc", "bogus", "--prefix", "zz"],
        "--tcp-cc 'bogus'", "not a TCP congestion control of this kernel", skip=no_tcp_cc_list),
    row("throttle-ca-twice", {},
        ["throttle", "--throttle", "netscope", "--throttle-ca", "a=1,a=2", "--", "touch", "ran"],
        "--throttle-ca", "is given twice"),
    row("load-dry-run-nodes-huge", {}, ["load", "--dry-run", "--nodes", "10000000"],
        "--nodes 10000000", "at most", "ulimit -v"),
    # -- vague messages
    row("c-o-proc-version", {}, [*SIM, "-o", "/proc/version"],
        "-o/--output", "'/proc", "proc pseudo file system"),
    row("py-o-proc-version", {"IN.json": RESULTS}, ["report", "IN.json", "-o", "/proc/version"],
        "/proc/version", "-o output in /proc", "proc pseudo file system"),
    row("c-o-6000-characters", {}, [*SIM, "-o", "a" * 6000],
        "-o/--output", "6000 characters", "limit of 4071", max_line=600),
    row("py-o-6000-characters", {"IN.json": RESULTS}, ["report", "IN.json", "-o", "a" * 6000],
        "-o output", "6000 characters", "limit of 4071", max_line=600),
    row("py-o-name-240-characters", {"IN.json": RESULTS}, ["report", "IN.json", "-o", "b" * 240],
        "-o output", "file name has 240 characters", "limit of 231", max_line=600),
    row("common-csv-3-fields", {"c.csv": common_with_row("1.0,host1:mlx5_0,1")},
        ["counters", "pts", "c.csv"], "c.csv:4: 3 fields, expected 6 (time_s,"),
    row("study-name-1mb", {"s.toml": f'name = "{"x" * 1_000_000}"\nrepetitions = 1\n'},
        ["study", "s.toml"], "s.toml", "job names are 1-64 letters", "(1000002 characters)",
        max_line=2000),
    row("pingpong-train-pairs-0", {}, ["pingpong-train", "-o", "t.json", "--pairs", "0"],
        "--pairs", "expected an integer from 1 to 100000"),
    row("c-o-symlink-loop", {"loop": symlink_to("loop")}, [*SIM, "-o", "loop"],
        "-o/--output 'loop'", "too many levels of symbolic links"),
    row("py-input-symlink-loop", {"a": symlink_to("b"), "b": symlink_to("a")}, ["report", "a"],
        "a: symbolic link loop"),
    row("significance-resamples-0-before-loading", {"IN.json": RESULTS},
        ["significance", "a=missing.json", "b=IN.json", "--resamples", "0"],
        "--resamples", "expected an integer from 1"),
    row("throttle-log-unwritable", {},
        ["throttle", "--throttle-log", "/nonexistent/log.csv", "--", "touch", "ran"],
        "--throttle-log", "/nonexistent/log.csv", "does not exist"),
    row("topology-conf-cycle", {"t.conf": "SwitchName=a Switches=b\nSwitchName=b Switches=a\n"},
        ["topology", "show", "t.conf"], "t.conf", "the switches form a cycle: 'a' -> 'b' -> 'a'"),
]  # fmt: skip


@pytest.fixture
def work(tmp_path):
    """The working directory; a tmpfs a row mounted in it is unmounted after."""
    yield tmp_path
    for p in tmp_path.iterdir():
        if os.path.ismount(p):
            subprocess.run(["umount", str(p)], check=False)


@pytest.mark.parametrize("case", ROWS)
def test_reproducer_is_refused(work, case):
    if case.skip and case.skip():
        pytest.skip(case.skip())
    for name, content in case.files.items():
        path = work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(path)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    before = listing(work)
    line = assert_refused(run(case.argv, cwd=work), *case.words, dirs=[work], before=[before])
    assert len(line) < case.max_line, line[:3000]
