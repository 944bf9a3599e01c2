"""The run layer of the harnesses (contend.runs): the engine registry and the
command lines it makes, the one binary lookup, the executor's exit-status
mapping, timeouts, process groups and failure policies, the reuse test, the
harness shell's exit statuses -- and that no module outside the registry
compares engine names."""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest
from contend.runs import binary, command, engines
from contend.runs.command import harness_main
from contend.runs.errors import RunError, UsageError
from contend.runs.executor import Executor, reusable, run_command
from contend.runs.spec import RunSpec
from contend.studies.studyfile import StudyFileError, parse_study

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "contend"
NAMES = {"sim", "mpi", "cluster"}
TRUE = shutil.which("true")  # an executable that is no script

SPEC = RunSpec(
    job_file="mix.job",
    seed=5,
    mode="concurrent",
    throttle=("--throttle", "dcqcn", "--throttle-ca", "milc=6.67"),
    defines=("LOAD=40",),
    extra=("--throttle-window-us", "20"),
    output="out.json",
)


# ------------------------------------------------------------------ one list of names


def _engine_name_uses(path: Path) -> list:
    """Compares with an engine name, and literals listing two or more."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            consts = [c for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant)]
            if any(c.value in NAMES for c in consts):
                found.append(f"{path.name}:{node.lineno}: compares an engine name")
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            values = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if len(values & NAMES) >= 2:
                found.append(f"{path.name}:{node.lineno}: lists engine names")
    return found


def test_engine_names_only_in_the_registry():
    files = [PACKAGE / "launcher.py"]
    for sub in ("runs", "studies", "training"):
        files += sorted((PACKAGE / sub).glob("*.py"))
    found = [u for f in files if f.name != "engines.py" for u in _engine_name_uses(f)]
    assert found == []
    assert engines.names() == ["sim", "mpi", "cluster"]


# ------------------------------------------------------------------ command lines


def test_sim_run_throttles_its_nics():
    sim = engines.make_engine("sim", "/b/contend", {"topology": "dragonfly:a=2,p=3,h=2"})
    assert sim.command(SPEC) == [
        "/b/contend", "jobs", "mix.job", "--engine", "sim", "--topology", "dragonfly:a=2,p=3,h=2",
        "-DLOAD=40", "--throttle-window-us", "20", "--seed", "5", "-q", "--mode", "concurrent",
        "--throttle", "dcqcn", "--throttle-ca", "milc=6.67", "-o", "out.json",
    ]  # fmt: skip
    assert sim.jobs_argv(SPEC) == sim.command(SPEC)  # no launcher, no throttle library


def test_launcher_runs_the_throttle_library_around_the_job():
    mpi = engines.make_engine("mpi", "/b/contend", {"launcher": "mpirun -n 6", "nodes": 6})
    jobs = [
        "/b/contend", "jobs", "mix.job", "-DLOAD=40", "--throttle-window-us", "20",
        "--seed", "5", "-q", "--mode", "concurrent", "-o", "out.json",
    ]  # fmt: skip
    assert mpi.jobs_argv(SPEC) == jobs
    assert mpi.command(SPEC) == [
        "mpirun", "-n", "6", "/b/contend", "throttle", "--throttle", "dcqcn",
        "--throttle-ca", "milc=6.67", "--", *jobs,
    ]  # fmt: skip
    assert mpi.nodes() == 6
    cluster = engines.make_engine("cluster", "/b/contend", {})
    plain = RunSpec(job_file="j.job", seed=1, output="o.json")
    assert cluster.command(plain)[:5] == ["/b/contend", "cluster", "run", "--", "/b/contend"]
    assert cluster.hand_command(["--x"]) == (
        "contend cluster run -- contend jobs FILE --x --seed SEED -o OUT.json"
    )


def test_sim_records_its_counters_on_its_clock():
    sim = engines.make_engine("sim", "/b/contend", {})
    spec = RunSpec(job_file="j.job", seed=1, output="o.json", counters=Path("c.csv"))
    spec = RunSpec(**{**spec.__dict__, "counter_interval_us": 12.5})
    argv = sim.command(spec)
    assert argv[argv.index("--counters") : argv.index("-o")] == [
        "--counters", "c.csv", "--counter-interval-us", "12.5",
    ]  # fmt: skip
    assert sim.options["topology"] == engines.DEFAULT_TOPOLOGY
    assert (sim.clock_key, sim.records_counters) == ("perform_t0_clock_s", True)
    mpi = engines.make_engine("mpi", "/b/contend", {"launcher": "srun", "nodes": 2})
    assert (mpi.clock_key, mpi.records_counters) == ("perform_t0_unix_s", False)
    assert "--counters" not in mpi.command(spec)


def test_engine_options_checked_against_the_engine():
    with pytest.raises(UsageError, match="--engine mpi needs --launcher CMD .* and --nodes N"):
        engines.engine_from_options("mpi", "b", {"launcher": None, "nodes": None})
    with pytest.raises(UsageError, match="--launcher is for --engine mpi or cluster"):
        engines.engine_from_options("sim", "b", {"launcher": "srun", "topology": None})
    with pytest.raises(UsageError, match="--nodes is for --engine mpi$"):
        engines.engine_from_options("cluster", "b", {"nodes": 4})
    # --topology has a default: engines without a simulated fabric ignore it
    cl = engines.engine_from_options("cluster", "b", {"topology": "x", "launcher": ""})
    assert cl.launch_prefix() == ["b", "cluster", "run", "--"]
    with pytest.raises(UsageError, match="unknown engine 'gpu'"):
        engines.engine_class("gpu")


def test_study_file_tables_are_the_engines_parameters():
    base = 'name = "s"\nrepetitions = 1\nengine = "mpi"\n[[app]]\nname = "a"\njob = "[MOTIF] compute"\n'
    base += '[control]\nplacement = { a = "linear nodes=1" }\n'
    with pytest.raises(StudyFileError, match=r"mpi.nodes: missing: the nodes the launcher"):
        parse_study(base + '[mpi]\nlauncher = "srun"\n')
    with pytest.raises(StudyFileError, match=r"mpi.nodes: must be in \[1, 1000000\]"):
        parse_study(base + '[mpi]\nlauncher = "srun"\nnodes = 0\n')
    with pytest.raises(StudyFileError, match=r"cluster: unknown key 'nodes'"):
        parse_study(base + '[mpi]\nlauncher = "srun"\nnodes = 2\n[cluster]\nnodes = 2\n')
    study = parse_study(base + '[mpi]\nlauncher = "srun -N 2"\nnodes = 2\n')
    assert study.engine_options == {"launcher": "srun -N 2", "nodes": 2}
    assert study.hand_command() == "srun -N 2 contend jobs FILE --seed SEED -o OUT.json"


def test_one_row_gives_every_harness_a_run_option(monkeypatch):
    """A harness-level option passed to every run is one row of OPTIONS:
    mitigate, study and the training commands take it, and it reaches the
    command line of each run right after the engine's options."""
    from contend.studies import mitigate, study
    from contend.training import pingpong

    row = command.Option("foo", ("--foo",), "a run option", str, run_flag="--jobs-foo")
    monkeypatch.setitem(command.OPTIONS, "foo", row)
    for parser, argv in (
        (mitigate.build_parser(), ["mix.job"]),
        (study.build_parser(), ["s.toml"]),
        (pingpong.build_parser(), ["-o", "t.json"]),
    ):
        assert command.run_options(parser.parse_args(argv)) == ()
        assert command.run_options(parser.parse_args([*argv, "--foo", "x"])) == ("--jobs-foo", "x")
    args = mitigate.build_parser().parse_args(["mix.job", "--foo", "x", "--seed", "3"])
    args.jobs_args = ["--routing", "ugal"]
    sim = engines.make_engine("sim", "/b/contend", {"topology": "T"})
    runs = [mitigate.Run("isolated", 3, None, Path("iso.json"))]
    mitigate.plan(runs, args, sim, {})
    assert sim.command(runs[0].spec) == [
        "/b/contend", "jobs", "mix.job", "--engine", "sim", "--topology", "T",
        "--jobs-foo", "x", "--routing", "ugal", "--seed", "3", "-q", "--mode", "isolated",
        "-o", "iso.json",
    ]  # fmt: skip


# ------------------------------------------------------------------ the binary


def _script(path: Path, body: str = "exit 0") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _binary(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(TRUE, path)
    return path


@pytest.fixture
def lookup(tmp_path, monkeypatch):
    """find_binary with nothing named and no build tree: only what a test adds."""
    for var in ("CONTEND_BIN", "CONTEND", "CONTEND_BUILD"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(binary, "SOURCE_TREE", tmp_path / "tree")
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "prog" / "contend-x")])
    monkeypatch.setenv("PATH", "")
    return tmp_path


def test_binary_named_first(lookup, monkeypatch):
    fake = _script(lookup / "fake" / "contend")
    other = _script(lookup / "other" / "contend")
    monkeypatch.setenv("CONTEND", str(other))
    assert binary.find_binary() == str(other)
    monkeypatch.setenv("CONTEND_BIN", str(fake))  # before $CONTEND; a script is taken as named
    assert binary.find_binary() == str(fake)
    assert binary.find_binary(str(other)) == str(other)  # --contend PATH before both
    monkeypatch.setenv("CONTEND_BIN", str(lookup / "none"))
    with pytest.raises(binary.BinaryNotFound, match="CONTEND_BIN=.*none: not an executable") as e:
        binary.find_binary()
    assert e.value.named == str(lookup / "none")


def test_binary_searched_skips_scripts_and_itself(lookup, monkeypatch):
    with pytest.raises(binary.BinaryNotFound, match="contend binary not found"):
        binary.find_binary()
    script = _script(lookup / "prog" / "contend")  # pip's launcher beside the program
    real = _binary(lookup / "onpath" / "contend")
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{real.parent}")
    assert binary.find_binary() == str(real)
    build = _binary(lookup / "tree" / "build" / "bin" / "contend")  # before PATH
    assert binary.find_binary() == str(build)
    assert binary.find_binary(exclude=build) == str(real)
    monkeypatch.setenv("CONTEND", "contend")  # a bare name on PATH, which is the launcher
    assert binary.find_binary(exclude=script) == str(build)


@pytest.fixture
def fresh_build_commit():
    """build_commit's per-process cache, empty before and after the test
    (a failing test leaves no fake commit for later ones)."""
    binary.build_commit.cache_clear()
    yield
    binary.build_commit.cache_clear()


def test_documents_name_the_build_that_contend_version_names(
    lookup, monkeypatch, fresh_build_commit
):
    """The Python tools' documents carry tool.git_commit as the binary's
    `contend version` prints it; null for "unknown" or no binary."""
    from contend.runs.files import document_head

    def head_with(version_text):
        fake = _script(lookup / "v" / "contend", f"echo 'contend 0.1.0'; echo '{version_text}'")
        monkeypatch.setenv("CONTEND_BIN", str(fake))
        binary.build_commit.cache_clear()
        return document_head("contend-study", "1.0", ["study", Path("x.toml")])

    head = head_with("git commit:   0123abcd4567")
    assert head["tool"] == {"name": "contend", "version": "0.1.0", "git_commit": "0123abcd4567"}
    assert head["argv"] == ["study", "x.toml"]
    assert head_with("git commit:   unknown")["tool"]["git_commit"] is None
    monkeypatch.setenv("CONTEND_BIN", str(lookup / "none"))
    binary.build_commit.cache_clear()
    assert document_head("contend-study", "1.0", [])["tool"]["git_commit"] is None


# ------------------------------------------------------------------ the executor


def test_exit_statuses_map_to_errors():
    err = "echo 'contend jobs: error: bad thing (see contend jobs --help)' >&2; exit 2"
    with pytest.raises(UsageError, match=r"^bad thing \(see contend jobs --help\)$"):
        run_command(["sh", "-c", err])
    with pytest.raises(RunError, match=r"-c failed \(exit status 1\): boom$"):
        run_command(["sh", "-c", "echo boom >&2; exit 1"])
    out, _ = run_command(["sh", "-c", "echo fine"])
    assert out == "fine\n"


def test_timeout_stops_the_whole_group(tmp_path):
    pid = tmp_path / "pid"
    t0 = time.monotonic()
    with pytest.raises(RunError, match=r"timed out after 0.5 s: sh -c"):
        run_command(["sh", "-c", f"sleep 60 & echo $! > {pid}; wait"], timeout=0.5)
    assert time.monotonic() - t0 < 20
    child = int(pid.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        stat_line = Path(f"/proc/{child}/stat").read_text()
        if stat_line[stat_line.rindex(")") + 2] == "Z":
            break
        time.sleep(0.05)
    else:
        assert not Path(f"/proc/{child}").exists(), "the run's child outlived its timeout"


def _specs(tmp_path, *codes):
    return [
        RunSpec(command=(f"echo ran > {tmp_path}/ran{i}; exit {c}",), name=f"run {i}")
        for i, c in enumerate(codes)
    ]


def _sh(spec):
    return ["sh", "-c", *spec.command]


def test_first_failure_stops_the_plan(tmp_path):
    lines = []
    ex = Executor("prog", parallel=1, log=lines.append)
    with pytest.raises(RunError, match=r"^run 1 failed: -c failed \(exit status 3\)"):
        ex.run_all(_specs(tmp_path, 0, 3, 0), _sh)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ran0", "ran1"]  # run 2 never started
    with pytest.raises(UsageError, match=r"^run 0: -c: bad input$"):
        ex.run_all(_specs(tmp_path, 2), _sh)


def test_keep_going_records_every_outcome(tmp_path):
    seen = []
    ex = Executor("prog", parallel=2, quiet=True)
    done = ex.run_all(
        _specs(tmp_path, 0, 5, 0), _sh, keep_going=True, after=lambda d: seen.append(d.spec.name)
    )
    assert [d.why for d in done] == ["", "exit status 5", ""]
    assert sorted(seen) == ["run 0", "run 1", "run 2"]
    assert all(d.wall_s is not None and d.wall_s >= 0 for d in done)


def test_progress_lines_and_closing_line(tmp_path):
    lines = []
    specs = [RunSpec(command=("true",), progress=f"run {i + 1}/2") for i in range(2)]
    Executor("contend x", log=lines.append).run_all(specs, _sh, reused=3)
    assert lines[0] == "contend x: run 1/2"
    assert lines[1].startswith("contend x: run 2/2, about ") and lines[1].endswith(" left")
    assert lines[2].startswith("contend x: 2 run(s) in ") and lines[2].endswith(", 3 reused")


def test_reusable_needs_the_same_command(tmp_path):
    path = tmp_path / "r.json"
    argv = ["jobs", "mix.job", "--seed", "5", "-q", "-o", "elsewhere.json"]
    path.write_text(json.dumps({"argv": argv, "passes": ["isolated"]}))
    cmd = ["/b/contend", "jobs", "mix.job", "--seed", "5", "-q", "-o", str(path)]
    assert reusable(path, cmd)["passes"] == ["isolated"]  # -o aside, the same
    assert reusable(path, [*cmd, "--x"]) is None
    path.write_text(json.dumps({"argv": argv, "passes": ["isolated"], "dry_run": True}))
    assert reusable(path, cmd) is None
    path.write_text("{half")
    assert reusable(path, cmd) is None


# ------------------------------------------------------------------ the shell


@pytest.mark.parametrize(
    "exc,status,line",
    [
        (UsageError("bad"), 2, "prog: error: bad"),
        (RunError("a run failed"), 3, "prog: a run failed"),
    ],
)
def test_harness_exit_statuses(capsys, exc, status, line):
    def body(args):
        assert args.jobs_args == ["--x", "1"] and args.argv == ["-v", "--", "--x", "1"]
        raise exc

    parser = argparse.ArgumentParser(prog="prog")
    parser.add_argument("-v", action="store_true")
    rc = harness_main("prog", parser, body, ["-v", "--", "--x", "1"], stopped="-", extra=True)
    assert rc == status and capsys.readouterr().err == line + "\n"
    with pytest.raises(SystemExit) as e:
        harness_main("prog", parser, body, ["--bogus"], stopped="-")
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert err == "prog: error: unrecognized arguments: --bogus (see prog --help)\n"
