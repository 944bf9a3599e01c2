"""contend sweep: scenario files run as independent processes (in parallel,
or one array task at a time as under Slurm) and collected into one table.
The results of a parallel sweep must equal those of the same contend
commands run directly (sim runs are deterministic for a seed)."""

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import BUILD, ROOT, run_bounded
from contend.studies.sweep import SweepError, parse_scenarios

BIN = BUILD / "bin" / "contend"
EXAMPLE = ROOT / "examples" / "sim" / "routing-sweep.txt"
SBATCH = ROOT / "examples" / "slurm" / "sim-sweep.sbatch"

SCENARIOS = """\
# four small scenarios: two dragonfly routings, a fat tree, a load test
name=df-ugal  sim --topology dragonfly:a=4,p=2,h=2 --traffic group_shift --routing ugal \\
              --sweep 0.3,0.9 --seed 5
name=df-min   sim --topology dragonfly:a=4,p=2,h=2 --traffic group_shift --routing minimal --load 0.6 --seed 5

sim --topology fattree:leaves=4,nodes=4,uplinks=2 --traffic uniform --routing adaptive --load 0.7 --seed 5
name=ld  load --engine sim --topology fattree:leaves=4,nodes=4,uplinks=2 --timeout 0.001 --seed 3
"""
STEMS = ["0000-df-ugal", "0001-df-min", "0002", "0003-ld"]


def sweep(*args, timeout=120, env=None):
    """`python -m contend sweep ARGS` (the same parser as `contend sweep`)."""
    return run_bounded(
        [sys.executable, "-m", "contend", "sweep", *map(str, args)],
        timeout=timeout,
        env=env or dict(os.environ),
    )


def run_direct(args, out: Path) -> dict:
    r = subprocess.run(
        [str(BIN), *args, "-o", str(out)], capture_output=True, text=True, timeout=120, check=False
    )
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("scen") / "scenarios.txt"
    path.write_text(SCENARIOS)
    return path


@pytest.fixture(scope="module")
def swept(scenario_file, tmp_path_factory):
    """The scenario file run with -j 2: (output dir, completed process)."""
    out = tmp_path_factory.mktemp("sweep") / "out"
    r = sweep("run", scenario_file, "-j", 2, "-o", out, "--contend", BIN)
    assert r.returncode == 0, r.stderr
    return out, r


def test_scenario_file_syntax():
    text = textwrap.dedent(
        """\
        # comment line

        name=a.1  sim --load 0.5   # trailing comment
        contend sim --traffic 'flow:src=0,dst=1;x=uniform' \\
            --load 1
        name=b network --engine=sim --topology switch:nodes=8
        """
    )
    s = parse_scenarios(text, "f.txt")
    assert [x.index for x in s] == [0, 1, 2]
    assert [x.name for x in s] == ["a.1", "1", "b"]
    assert [x.stem for x in s] == ["0000-a.1", "0001", "0002-b"]
    assert s[0].args == ("sim", "--load", "0.5")
    assert s[1].args == ("sim", "--traffic", "flow:src=0,dst=1;x=uniform", "--load", "1")
    assert [x.source for x in s] == ["f.txt:3", "f.txt:4", "f.txt:6"]
    out = Path("/o")
    assert s[0].argv("/bin/contend", out) == [
        "/bin/contend",
        "sim",
        "--load",
        "0.5",
        "-o",
        "/o/0000-a.1.json",
    ]


@pytest.mark.parametrize(
    "line, message",
    [
        ("simulate --load 0.5", "unknown command 'simulate'"),
        ("sim --topology slurm:/no/such/topology.conf", "no such file /no/such/topology.conf"),
        ("load --topology switch:nodes=8", "needs --engine sim"),
        ("sim --load 0.5 -o x.json", "-o/--output is set by contend sweep"),
        ("jobs /no/such.job --engine sim", "no such job file"),
        ("name=a/b sim", "bad name 'a/b'"),
        ("sim --traffic 'uniform", "no closing quotation"),
    ],
)
def test_bad_line_names_file_and_line(tmp_path, line, message):
    with pytest.raises(SweepError) as e:
        parse_scenarios(f"# header\nsim --load 0.5\n{line}\nsim --load 0.7\n", "bad.txt")
    assert str(e.value).startswith("bad.txt:3: ") and message in str(e.value), str(e.value)


def test_bad_line_exit_2_and_nothing_runs(tmp_path):
    f = tmp_path / "bad.txt"
    f.write_text("# header\nsim --load 0.5\nsimulate --load 0.5\nsim --load 0.7\n")
    out = tmp_path / "out"
    r = sweep("run", f, "-o", out, "--contend", BIN)
    assert r.returncode == 2
    assert f"{f}:3: unknown command 'simulate'" in r.stderr, r.stderr
    assert not out.exists()
    assert sweep("count", f).returncode == 2


def test_output_dir_that_is_a_file_is_refused(tmp_path, scenario_file):
    target = tmp_path / "file"
    target.write_text("x")
    r = sweep("run", scenario_file, "-o", target, "--contend", BIN)
    assert r.returncode == 2 and "not a directory" in r.stderr
    assert target.read_text() == "x"


def test_parallel_sweep_equals_direct_runs(swept, scenario_file, tmp_path):
    out, r = swept
    assert sorted(p.name for p in out.glob("*.json")) == sorted(
        [f"{s}.json" for s in STEMS] + ["sweep.json"]
    )
    assert all((out / f"{s}.log").exists() for s in STEMS)
    # one progress line per finished scenario, counting up to 4/4
    progress = [line for line in r.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 4 and progress[-1].startswith("[4/4]")
    assert "4 scenarios, 4 ok, 0 failed" in r.stderr
    for s in parse_scenarios(SCENARIOS, "x")[:3]:  # the sim scenarios
        direct = run_direct(list(s.args), tmp_path / f"{s.stem}.json")
        swept_doc = json.loads((out / f"{s.stem}.json").read_text())
        assert [p["accepted_load"] for p in swept_doc["points"]] == [
            p["accepted_load"] for p in direct["points"]
        ]
        assert [p["latency_ns"]["mean"] for p in swept_doc["points"]] == [
            p["latency_ns"]["mean"] for p in direct["points"]
        ]
    load = json.loads((out / "0003-ld.json").read_text())
    assert load["command"] == "load" and load["engine"] == "sim" and len(load["impact"]) == 3


def test_task_runs_exactly_one_scenario(swept, scenario_file, tmp_path):
    out = tmp_path / "task"
    r = sweep("run", scenario_file, "--task", 1, "-o", out, "--contend", BIN)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "0001-df-min.json",
        "0001-df-min.log",
        "sweep.json",
    ]
    a = json.loads((out / "0001-df-min.json").read_text())["points"]
    b = json.loads((swept[0] / "0001-df-min.json").read_text())["points"]
    assert [p["accepted_load"] for p in a] == [p["accepted_load"] for p in b]
    # chunks: 4 scenarios in tasks of 3 are 2 tasks; task 1 is scenario 3 alone
    assert sweep("count", scenario_file, "--chunk", 3).stdout.strip() == "2"
    assert sweep("run", scenario_file, "--count").stdout.strip() == "4"
    bad = sweep("run", scenario_file, "--task", 4, "-o", tmp_path / "t4", "--contend", BIN)
    assert bad.returncode == 2 and "out of range" in bad.stderr
    assert not (tmp_path / "t4").exists()


def test_collect_rows_and_values(swept, tmp_path):
    out, _ = swept
    csv_path, json_path = tmp_path / "s.csv", tmp_path / "s.json"
    r = sweep("collect", out, "-o", csv_path)
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(csv_path.open()))
    # df-ugal 2 points + df-min 1 + fat tree 1 + load 3 impact rows
    assert [(row["index"], row["scenario"]) for row in rows] == [
        ("0", "df-ugal"),
        ("0", "df-ugal"),
        ("1", "df-min"),
        ("2", "2"),
        ("3", "ld"),
        ("3", "ld"),
        ("3", "ld"),
    ]
    doc = json.loads((out / "0000-df-ugal.json").read_text())
    for row, point in zip(rows[:2], doc["points"]):
        assert float(row["offered_load"]) == point["offered_load"]
        assert float(row["accepted_load"]) == point["accepted_load"]
        assert float(row["latency_p99_ns"]) == point["latency_ns"]["p99"]
        assert row["topology"] == "dragonfly:a=4,p=2,h=2,g=9"
        assert (row["traffic"], row["routing"], row["cc"]) == ("group_shift", "ugal", "none")
    impact = json.loads((out / "0003-ld.json").read_text())["impact"]
    assert [r["test"] for r in rows[4:]] == [i["name"] for i in impact]
    assert [float(r["ci_tail_99"]) for r in rows[4:]] == [i["ci_tail_99"] for i in impact]
    # the text table on stdout: a header, a rule, one line per row
    assert len(r.stdout.strip().splitlines()) == 2 + 7
    assert sweep("collect", out, "-o", json_path).returncode == 0
    records = json.loads(json_path.read_text())
    assert len(records) == 7
    assert all(re.fullmatch(r"[a-z0-9_]+", k) for k in records[0])
    assert {"latency_mean_ns", "latency_p99_ns", "accepted_load", "wall_s"} <= set(records[0])


def test_collect_reports_missing_and_corrupt_files(swept, tmp_path):
    out = tmp_path / "copy"
    shutil.copytree(swept[0], out)
    (out / "0001-df-min.json").unlink()
    (out / "0002.json").write_text('{"schema": "contend-sim/1", "poi')
    r = sweep("collect", out, "-o", tmp_path / "t.csv")
    assert r.returncode == 2
    assert "0001-df-min.json: missing" in r.stderr
    assert "0002.json: corrupt" in r.stderr
    assert not (tmp_path / "t.csv").exists()
    r = sweep("collect", out, "--allow-missing", "-f", "csv")
    assert r.returncode == 0 and len(r.stdout.strip().splitlines()) == 1 + 5


def test_failures_exit_1_and_are_named(tmp_path):
    f = tmp_path / "s.txt"
    f.write_text(
        "name=good sim --topology switch:nodes=8 --load 0.5\nname=broken sim --topology bogus:x=1\n"
    )
    out = tmp_path / "out"
    r = sweep("run", f, "-j", 2, "-o", out, "--contend", BIN)
    assert r.returncode == 1
    assert "FAIL 0001-broken: exit status 2" in r.stderr
    assert f"failed: 0001-broken ({f}:2)" in r.stderr and "--task 1" in r.stderr
    assert (out / "0000-good.json").exists() and not (out / "0001-broken.json").exists()
    assert "unknown topology kind 'bogus'" in (out / "0001-broken.log").read_text()


FAKE = """\
#!{python}
# stands in for contend: records when it ran, sleeps, writes a results file
import json, os, sys, time
t0 = time.time()
time.sleep(float(sys.argv[sys.argv.index("--sleep") + 1]))
with open(os.environ["FAKE_TIMES"], "a") as f:
    f.write(f"{{t0}} {{time.time()}}\\n")
with open(sys.argv[sys.argv.index("-o") + 1], "w") as f:
    json.dump({{"schema": "contend-sim/1", "points": []}}, f)
"""


def test_at_most_j_scenarios_run_at_once(tmp_path):
    fake = tmp_path / "contend"
    fake.write_text(FAKE.format(python=sys.executable))
    fake.chmod(0o755)
    times = tmp_path / "times"
    f = tmp_path / "s.txt"
    f.write_text("sim --sleep 0.4\n" * 5 + "name=slow sim --sleep 30\n")
    env = dict(os.environ, FAKE_TIMES=str(times), CONTEND=str(fake))  # found via $CONTEND
    r = sweep("run", f, "-j", 2, "-o", tmp_path / "out", "--timeout", 1.5, env=env)
    assert r.returncode == 1
    assert "FAIL 0005-slow: timed out after 1.5 s" in r.stderr
    spans = [tuple(map(float, line.split())) for line in times.read_text().splitlines()]
    assert len(spans) == 5
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    running, most = 0, 0
    for _, step in events:
        running += step
        most = max(most, running)
    assert most == 2


def test_example_sweep_runs_and_shows_the_routing_effects(tmp_path):
    assert sweep("count", EXAMPLE).stdout.strip() == "24"
    out = tmp_path / "out"
    r = sweep("run", EXAMPLE, "-j", 2, "-o", out, "--contend", BIN)
    assert r.returncode == 0, r.stderr
    r = sweep("collect", out, "-f", "json")
    assert r.returncode == 0, r.stderr
    rows = {row["scenario"]: row for row in json.loads(r.stdout)}
    # minimal routing under group_shift: one global link per group pair, ~1/8
    assert 0.1 < rows["df-min-shift-0.9"]["accepted_load"] < 0.15
    assert rows["df-ugal-shift-0.9"]["accepted_load"] > 0.4
    assert rows["df-val-shift-0.9"]["accepted_load"] > 0.4
    assert rows["df-val-uniform-0.9"]["accepted_load"] < rows["df-min-uniform-0.9"]["accepted_load"]
    assert rows["df-ugalg-shift-0.9"]["accepted_load"] > 0.4
    assert rows["df-par-shift-0.9"]["accepted_load"] > 0.4
    # without head-of-line blocking minimal routing carries more than the
    # input-queued routers' saturation (~0.61 here)
    for router in ("voq", "oq"):
        acc = rows[f"df-min-uniform-1-{router}"]["accepted_load"]
        assert acc > rows["df-min-uniform-0.9"]["accepted_load"] + 0.15


def test_sbatch_example_runs_one_array_task(tmp_path):
    assert subprocess.run(["bash", "-n", str(SBATCH)], check=False).returncode == 0
    f = tmp_path / "s.txt"
    f.write_text("sim --topology switch:nodes=8 --load 0.3\nname=two sim --load 0.5\n")
    env = dict(
        os.environ,
        SLURM_ARRAY_JOB_ID="42",
        SLURM_ARRAY_TASK_ID="1",
        CONTEND=str(BIN),
    )
    r = run_bounded(["bash", SBATCH, f], cwd=tmp_path, env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "contend-sweep-42").glob("*.json")) == [
        "0001-two.json",
        "sweep.json",
    ]


def test_contend_binary_dispatches_sweep(scenario_file):
    if not (BUILD / "bin" / "contend-sweep").exists():
        pytest.fail("build/bin/contend-sweep missing: run scripts/link-tools.sh build/bin")
    r = run_bounded([BIN, "sweep", "count", scenario_file], timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "4", r.stderr


def test_parse_errors_are_all_listed():
    with pytest.raises(SweepError) as e:
        parse_scenarios("bogus\nsim\nname=x sim\nname=x sim\n", "f")
    assert "2 errors in f" in str(e.value)
    assert "f:1: unknown command" in str(e.value) and "f:4: name 'x' is also used at f:3" in str(
        e.value
    )
