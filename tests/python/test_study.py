"""`contend study`: the study runner on the simulator (a 16-node fat tree,
tiny motifs with seeded compute noise so that repetitions differ).

One study (control + 2 conditions x 4 repetitions) feeds most tests; its
statistics are recomputed here from the kept contend-jobs files with scipy.
Also: the recorded randomized order, a study killed after k runs and
restarted (exactly R repetitions per condition, finished runs not redone, a
half-written results file redone), refusals (exit 2 before anything runs),
and the --slurm batch script (bash -n, node lists against topology.conf)."""

import json
import math
import random
import re
import shlex
import subprocess
from pathlib import Path

import jsonschema
import matplotlib.image as mpimg
import pytest
from conftest import SCHEMAS, mpi_env, run_bounded
from contend import cli
from contend.studies.study import bully_bandwidth
from contend.studies.study import main as study_main
from scipy import stats

TOPO = "fattree:leaves=4,nodes=4,uplinks=2"
R = 4
SEED = 11
STUDY = f"""\
name = "tiny"
seed = {SEED}
repetitions = {R}
engine = "sim"
jobs_args = ["--routing", "dmodk"]

[sim]
topology = "{TOPO}"

[[app]]
name = "amg"
job = '''
[MOTIF] compute dist=gaussian mean=40us stddev=8us
[MOTIF] amg_like n=8 iters=2
'''

[[app]]
name = "umt"
job = '''
[REPEAT] 2
[MOTIF] compute dist=gaussian mean=30us stddev=6us
[MOTIF] halo3d nx=64 ny=64 nz=32
'''

[control]
placement = {{ amg = "linear nodes=4", umt = "[NID_LIST] 4-7" }}

[[condition]]
name = "full bully"
[[condition.bully]]
name = "bully"
placement = "[NID_LIST] 8-15"
job = '''
[REPEAT] 4
[MOTIF] pingpong msg_bytes=256KiB iters=40 pairs=all
'''

[[condition]]
name = "interleaved"
placement = {{ amg = "random nodes=4", umt = "random nodes=4" }}
"""
CONDITIONS = ["control", "full bully", "interleaved"]


def study(contend_bin, *args, timeout=120, env=None):
    return run_bounded([contend_bin, "study", *map(str, args)], timeout=timeout, env=env)


def write_study(path: Path, text: str = STUDY) -> Path:
    path.write_text(text)
    return path


@pytest.fixture
def inproc(contend_bin, monkeypatch, capsys):
    """`contend study ...` in this process: (exit status, stdout, stderr)."""
    monkeypatch.setenv("CONTEND_BIN", str(contend_bin))

    def run(*args):
        capsys.readouterr()
        rc = study_main([str(a) for a in args])
        out = capsys.readouterr()
        return subprocess.CompletedProcess(args, rc, out.out, out.err)

    return run


def analysis(capsys, *args):
    """`contend report|plot|html ...` in this process (the commands' startup
    costs seconds on a loaded machine); (exit status, stdout, stderr)."""
    capsys.readouterr()
    rc = cli.main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def done(contend_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("study")
    sf = write_study(tmp / "tiny.toml")
    out, d = tmp / "tiny.json", tmp / "runs"
    r = study(contend_bin, sf, "--dir", d, "-o", out, "--parallel", 2)
    assert r.returncode == 0, r.stderr
    return {"tmp": tmp, "file": sf, "out": out, "dir": d, "proc": r}


def load(path):
    return json.loads(Path(path).read_text())


def runtimes_from_files(d: Path, doc: dict) -> dict:
    """{(condition, app): [runtime per repetition]} read from the contend-jobs files."""
    out = {}
    for run in doc["runs"]:
        jobs = load(d / run["results_file"])
        for job in jobs["jobs"]:
            if job["name"] in ("amg", "umt"):
                res = job["results"]["concurrent"]
                t = res["perform_end_s"] - res["perform_start_s"]
                out.setdefault((run["condition"], job["name"]), []).append(t)
    return out


# ------------------------------------------------------------------ results


def test_schema_and_runs(done):
    doc = load(done["out"])
    schema = json.loads((SCHEMAS / "contend-study.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["schema"] == "contend-study"
    assert [c["name"] for c in doc["study"]["conditions"]] == CONDITIONS
    assert len(doc["runs"]) == R * len(CONDITIONS)
    for run in doc["runs"]:
        assert (done["dir"] / run["job_file"]).is_file()
        jobs = load(done["dir"] / run["results_file"])
        assert jobs["seed"] == run["seed"] == SEED + run["repetition"] - 1
        want = ["amg", "umt"] + (["bully"] if run["condition"] == "full bully" else [])
        assert [j["name"] for j in jobs["jobs"]] == want
        assert set(run["runtime_s"]) == {"amg", "umt"}
    # the control's placements: the study file's
    ctl = next(r for r in doc["runs"] if r["condition"] == "control")
    assert ctl["nodes"] == {"amg": [0, 1, 2, 3], "umt": [4, 5, 6, 7]}
    bully_run = next(r for r in doc["runs"] if r["condition"] == "full bully")
    assert bully_run["nodes"]["bully"] == list(range(8, 16))


def test_order_recorded_and_reproducible(done):
    doc = load(done["out"])
    state = load(done["dir"] / "state.json")
    pairs = [(c, r) for c in CONDITIONS for r in range(1, R + 1)]
    random.Random(SEED).shuffle(pairs)
    assert [(o["condition"], o["repetition"]) for o in state["order"]] == pairs
    assert [o["order_index"] for o in state["order"]] == list(range(len(pairs)))
    assert [(r["condition"], r["repetition"]) for r in doc["runs"]] == pairs
    assert pairs != sorted(pairs, key=lambda p: (CONDITIONS.index(p[0]), p[1]))  # shuffled
    assert sorted(state["finished"]) == list(range(len(pairs)))
    # the runs started in that order: their results files' start times are
    # non-decreasing in order (with 2 at once, each starts no earlier than
    # the run two places before it)
    starts = [load(done["dir"] / r["results_file"])["started_utc"] for r in doc["runs"]]
    assert all(starts[i] >= starts[i - 2] for i in range(2, len(starts)))


def test_statistics_match_scipy(done, capsys):
    doc = load(done["out"])
    by = runtimes_from_files(done["dir"], doc)
    rc, out, err = analysis(capsys, "report", done["out"], "-f", "json")
    assert rc == 0, err
    rep = json.loads(out)
    rows = {(x["app"], x["condition"]): x for x in rep["difference"]}
    some_varied = False
    for app in ("amg", "umt"):
        ctl = by[("control", app)]
        assert len(ctl) == R
        for cond in CONDITIONS[1:]:
            vals = by[(cond, app)]
            assert len(vals) == R
            row = rows[(app, cond)]
            ctl_mean, mean = sum(ctl) / R, sum(vals) / R
            assert row["n"] == R and row["n_control"] == R
            assert math.isclose(row["mean_s"], mean, rel_tol=1e-12)
            assert math.isclose(
                row["difference_pct"], 100 * (ctl_mean - mean) / ctl_mean, rel_tol=1e-9
            )
            res = stats.ttest_ind(vals, ctl, equal_var=False)
            if math.isnan(res.pvalue):
                assert row["p"] is None
                continue
            some_varied = True
            assert math.isclose(row["p"], res.pvalue, rel_tol=1e-9)
            assert math.isclose(row["t"], res.statistic, rel_tol=1e-9)
            want = "**" if res.pvalue < 0.01 else "*" if res.pvalue < 0.05 else ""
            assert row["marker"] == want
    assert some_varied  # the compute noise made the repetitions differ


def test_report_table_one_layout(done, contend_bin, capsys):
    r = run_bounded([contend_bin, "report", done["out"]], timeout=60)  # through the binary
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith("Congestion type"))
    assert lines[i].split() == ["Congestion", "type", "amg", "umt"]
    rep = json.loads(analysis(capsys, "report", done["out"], "-f", "json")[1])
    cells = {row["condition"]: row for row in rep["table_one"]}
    assert list(cells) == CONDITIONS[1:]  # one row per condition, the control not
    for k, cond in enumerate(CONDITIONS[1:]):
        row = lines[i + 2 + k]
        assert row.startswith(cond)
        for app in ("amg", "umt"):
            cell = cells[cond][app]
            assert re.fullmatch(r"-?\d+\.\d\d%\*{0,2}", cell), cell
            assert cell in row
            d = next(x for x in rep["difference"] if x["app"] == app and x["condition"] == cond)
            assert cell == f"{d['difference_pct']:.2f}%{d['marker']}"
    assert "Bully bandwidth per rank" in r.stdout
    md = analysis(capsys, "report", done["out"], "-f", "markdown")[1]
    assert "| Congestion type | amg | umt |" in md


def test_plot_and_html(done, capsys):
    png = done["tmp"] / "study.png"
    rc, _, err = analysis(capsys, "plot", "study", done["out"], "-o", png)
    assert rc == 0, err
    img = mpimg.imread(png)
    assert img.shape[0] > 200 and img.shape[1] > 400
    html = done["tmp"] / "study.html"
    rc, _, err = analysis(capsys, "html", done["out"], "-o", html)
    assert rc == 0, err
    text = html.read_text()
    assert "contend study" in text and "Table I" in text and "data:image/png;base64" in text


def test_bully_bandwidth_read_from_motif_results():
    stat = {"count": 8, "min": 30.5, "mean": 47.25, "max": 60.0, "stddev": 1.0}
    job = {
        "motifs": [
            {"name": "compute", "results": {"concurrent": {"bandwidth_gbps_per_rank": None}}},
            {"name": "bully_pairs", "results": {"concurrent": {"bandwidth_gbps_per_rank": stat}}},
        ]
    }
    got = bully_bandwidth(job)
    assert got == {
        "motif": "bully_pairs",
        "key": "bandwidth_gbps_per_rank",
        "min_rank_gbps": 30.5,
        "mean_rank_gbps": 47.25,
    }
    assert (
        bully_bandwidth({"motifs": [{"name": "pingpong", "results": {"concurrent": {}}}]}) is None
    )


def test_bully_bandwidth_in_report(contend_bin, tmp_path):
    listing = run_bounded([contend_bin, "jobs", "--list"], timeout=30).stdout
    if "bully_pairs" not in listing:
        pytest.skip("this build has no bully_pairs motif")
    text = STUDY.replace(
        "[MOTIF] pingpong msg_bytes=256KiB iters=40 pairs=all",
        "[MOTIF] bully_pairs msg_bytes=256KiB window=4 iters=8",
    ).replace(f"repetitions = {R}", "repetitions = 2")
    sf = write_study(tmp_path / "bw.toml", text)
    out = tmp_path / "bw.json"
    r = study(contend_bin, sf, "--dir", tmp_path / "d", "-o", out, "--conditions", "full bully")
    assert r.returncode == 0, r.stderr
    doc = load(out)
    runs = [x for x in doc["runs"] if x["condition"] == "full bully"]
    for run in runs:
        bw = run["bully_bandwidth"]["bully"]
        assert bw is not None and 0 < bw["min_rank_gbps"] <= bw["mean_rank_gbps"]
    row = doc["summary"]["bully_bandwidth"][0]
    assert row["slowest_rank_gbps_min"] == min(
        x["bully_bandwidth"]["bully"]["min_rank_gbps"] for x in runs
    )


# ------------------------------------------------------------------ resume


def test_killed_study_resumes_with_exactly_r_repetitions(contend_bin, inproc, tmp_path):
    sf = write_study(tmp_path / "tiny.toml")
    d, out = tmp_path / "d", tmp_path / "out.json"
    r = study(
        contend_bin,
        sf,
        "--dir",
        d,
        "-o",
        out,
        "-q",
        env={**mpi_env(), "CONTEND_STUDY_KILL_AFTER": "5"},
    )
    assert r.returncode in (-9, 137), r.stderr  # SIGKILL, by itself, after 5 runs
    assert not out.exists()
    state = load(d / "state.json")
    assert sorted(state["finished"]) == [0, 1, 2, 3, 4]
    order = state["order"]
    kept = {o["results_file"]: (d / o["results_file"]).stat().st_mtime_ns for o in order[:5]}
    # --collect runs nothing: it needs every run's results
    r = inproc(sf, "--dir", d, "--collect")
    assert r.returncode == 3 and "7 of 12 run(s) have no valid results" in r.stderr
    # a run killed while writing: a truncated results file, redone on restart
    half = d / order[5]["results_file"]
    half.write_text('{"schema": "contend-jobs", "schema_version": "1.2", "jobs": [')
    r = inproc(sf, "--dir", d, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "5 of 12 run(s) already finished" in r.stderr
    doc = load(out)
    per = {
        c: sorted(x["repetition"] for x in doc["runs"] if x["condition"] == c) for c in CONDITIONS
    }
    assert per == {c: list(range(1, R + 1)) for c in CONDITIONS}
    assert [x["reused"] for x in doc["runs"]] == [True] * 5 + [False] * 7
    for path, mtime in kept.items():
        assert (d / path).stat().st_mtime_ns == mtime  # finished runs not redone
    assert load(half)["jobs"]  # redone, complete
    assert sorted(load(d / "state.json")["finished"]) == list(range(12))
    # --collect now finds every run (as after the --slurm batch script)
    r = inproc(sf, "--dir", d, "-o", out, "--collect")
    assert r.returncode == 0, r.stderr
    assert all(x["reused"] for x in load(out)["runs"])


def test_changed_study_refused_in_the_same_dir(inproc, tmp_path):
    sf = write_study(tmp_path / "tiny.toml", STUDY.replace(f"repetitions = {R}", "repetitions = 1"))
    d = tmp_path / "d"
    assert inproc(sf, "--dir", d, "-q").returncode == 0
    write_study(sf, STUDY.replace(f"repetitions = {R}", "repetitions = 2"))
    r = inproc(sf, "--dir", d)
    assert r.returncode == 2
    assert "different study" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    "edit, message",
    [
        ((f"repetitions = {R}", "repetitions = 0"), "repetitions: must be in [1, 100000]"),
        (("seed = 11", "seed = 11\nbogus = 1"), "bogus: unknown key"),
        (('amg = "linear nodes=4", ', 'amg = "linear nodes=4", zz = "linear nodes=1", '),
         "no application named 'zz'"),
        (('name = "interleaved"', 'name = "control"'), "'control' is already a condition"),
        (('engine = "sim"', 'engine = "torus"'), "engine: 'torus'"),
        (("[MOTIF] amg_like n=8 iters=2", "[MOTIF] amg_like n=8 iters=2 nosuch=1"), "nosuch"),
        (("[NID_LIST] 8-15", "[NID_LIST] 6-15"), "full bully"),  # overlaps umt
        (("[NID_LIST] 8-15", "[NID_LIST] 8-99"), "full bully"),  # past the topology
        (('name = "amg"\njob', 'name = "amg"\nfile = "nosuch.job"\njob'), "exactly one of"),
        (("seed = 11", "seed = 11\n[[[bad"), "not a TOML study file"),
    ],
)  # fmt: skip
def test_bad_study_file_exit_2_before_running(inproc, tmp_path, edit, message):
    assert edit[0] in STUDY
    sf = write_study(tmp_path / "bad.toml", STUDY.replace(edit[0], edit[1], 1))
    d = tmp_path / "d"
    r = inproc(sf, "--dir", d)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not list((d / "runs").glob("*.json")) if (d / "runs").exists() else True


def test_bad_command_line_exit_2(contend_bin, inproc, tmp_path):
    sf = write_study(tmp_path / "tiny.toml")
    cases = [
        (["--conditions", "nosuch"], "unknown condition 'nosuch'"),
        (["-o", tmp_path / "no" / "dir" / "x.json"], "x.json"),
        (["--slurm"], "--topology-conf"),
        (["--slurm", "--topology-conf", tmp_path / "none.conf"], "none.conf"),
    ]
    for args, message in cases:
        r = inproc(sf, "--dir", tmp_path / "d", *args)
        assert r.returncode == 2, (args, r.stderr)
        assert message in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1
    r = study(contend_bin, tmp_path / "missing.toml")
    assert r.returncode == 2 and "missing.toml: no such file (expected a study file" in r.stderr
    (tmp_path / "file").write_text("")
    r = inproc(sf, "--dir", tmp_path / "file")
    assert r.returncode == 2 and "not a directory" in r.stderr
    assert not (tmp_path / "d" / "runs").exists()


# ------------------------------------------------------------------ --slurm

TOPOLOGY_CONF = """\
# 2 pods of 2 leaves, 4 nodes per leaf
SwitchName=leaf0 Nodes=q[001-004]
SwitchName=leaf1 Nodes=q[005-008]
SwitchName=leaf2 Nodes=q[009-010],q011,q012
SwitchName=leaf3 Nodes=q[013-016]
SwitchName=pod0 Switches=leaf[0-1]
SwitchName=pod1 Switches=leaf[2-3]
SwitchName=top Switches=pod[0-1]
"""
LEAF = {f"q{i:03d}": f"leaf{(i - 1) // 4}" for i in range(1, 17)}


def test_slurm_script(contend_bin, tmp_path):
    text = STUDY + '\n[slurm]\nsbatch = ["--time=01:00:00"]\nsrun = ["--mpi=pmix"]\n'
    sf = write_study(tmp_path / "tiny.toml", text)
    conf = tmp_path / "topology.conf"
    conf.write_text(TOPOLOGY_CONF)
    d = tmp_path / "d"
    r = study(contend_bin, sf, "--dir", d, "--slurm", "--topology-conf", conf)
    assert r.returncode == 0, r.stderr
    script = d / "slurm" / "study.sbatch"
    syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, check=False)
    assert syntax.returncode == 0, syntax.stderr
    body = script.read_text()
    assert body.startswith("#!/bin/bash\n")
    assert "#SBATCH --time=01:00:00" in body
    state = load(d / "state.json")
    sruns = [line for line in body.splitlines() if " srun " in line]
    assert len(sruns) == len(state["order"]) == R * len(CONDITIONS)
    union = set()
    for line, entry in zip(sruns, state["order"]):
        argv = shlex.split(line.split("|| ", 1)[1])
        hosts = next(a for a in argv if a.startswith("--nodelist=")).split("=", 1)[1].split(",")
        assert all(h in LEAF for h in hosts)
        assert f"--nodes={len(hosts)}" in argv and "--mpi=pmix" in argv
        assert argv[argv.index("--seed") + 1] == str(entry["seed"])
        assert argv[argv.index("-o") + 1] == entry["results_file"]
        job_text = (d / argv[argv.index("jobs") + 1]).read_text()
        nids = dict(re.findall(r"\[JOB_NAME\] (\S+)\n\[NID_LIST\] (\S+)", job_text))
        on = {job: [hosts[int(i)] for i in nid.split(",")] for job, nid in nids.items()}
        union.update(hosts)
        assert on["umt"] == ["q005", "q006", "q007", "q008"] or entry["condition"] == "interleaved"
        if entry["condition"] == "control":
            assert on["amg"] == ["q001", "q002", "q003", "q004"]  # linear: leaf0
            assert {LEAF[h] for h in on["umt"]} == {"leaf1"}
        if entry["condition"] == "full bully":
            assert on["bully"] == [f"q{i:03d}" for i in range(9, 17)]  # nodes 8-15: pod1
        every = [h for nodes in on.values() for h in nodes]
        assert sorted(every) == sorted(hosts)  # every node of the list used once
    allocated = re.search(r"#SBATCH --nodelist=(\S+)", body).group(1).split(",")
    assert set(allocated) == union
    assert "--collect" in body.splitlines()[-1]
