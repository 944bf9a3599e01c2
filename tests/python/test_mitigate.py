"""`contend mitigate`: the Netscope comparison harness on the simulator.

One small harness run (a MILC-like proxy on 6 nodes beside a p2p_incast
congestor on 18 nodes of a 30-node dragonfly, 3 seeds, the four default
modes plus two c_a errors, 2 simulations at once) feeds most tests; its
statistics are recomputed here from the kept contend-jobs files, by hand."""

import io
import json
import os
import re
import stat
from pathlib import Path

import jsonschema
import matplotlib.image as mpimg
import numpy as np
import pytest
from conftest import SCHEMAS, mpi_env, mpirun_path, run_bounded

TOPO = "dragonfly:a=2,p=3,h=2"
MIX = """\
[VAR] LOAD=40
[JOB_NAME] milc
[PLACEMENT] random nodes=6
[REPEAT] 1
[MOTIF] milc_like iters=40

[JOB_NAME] incast
[PLACEMENT] random nodes=18
[REPEAT] {LOAD}
[MOTIF] p2p_incast iters=64 warmup=0
"""
MODES = ["off", "static:50%", "dcqcn", "netscope"]
SEEDS = [5, 6, 7]
CA = 6.67
ERRORS = [-100.0, 50.0]


def mitigate(contend_bin, *args, timeout=240, env=None):
    return run_bounded([contend_bin, "mitigate", *args], timeout=timeout, env=env)


@pytest.fixture(scope="module")
def harness(contend_bin, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mitigate")
    mix = tmp / "mix.job"
    mix.write_text(MIX)
    out, keep = tmp / "mit.json", tmp / "runs"
    args = [
        mix, "--topology", TOPO, "--repeat", "3", "--seed", "5", "--ca", f"milc={CA}",
        "--ca-error", "-100,0,50", "--parallel", "2", "--keep-runs", keep, "-o", out,
        "--", "--throttle-window-us", "20",
    ]  # fmt: skip
    r = mitigate(contend_bin, *args)
    assert r.returncode == 0, r.stderr
    return {"tmp": tmp, "mix": mix, "out": out, "keep": keep, "args": args, "proc": r}


def load(path):
    return json.loads(path.read_text())


def runtime(job, pass_):
    res = job["results"][pass_]
    return res["perform_end_s"] - res["perform_start_s"]


def argv_value(argv, option):
    return argv[argv.index(option) + 1]


def test_schema_validates(harness):
    doc = load(harness["out"])
    schema = json.loads((SCHEMAS / "contend-mitigate.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert doc["schema"] == "contend-mitigate"
    labels = [c["label"] for c in doc["config"]["conditions"]]
    # the 0 % error is netscope's own runs, not run again
    assert labels == MODES + ["netscope c_a-100%", "netscope c_a+50%"]
    assert len(doc["runs"]) == len(labels) * len(SEEDS)
    assert [i["seed"] for i in doc["isolated"]] == SEEDS


def test_seeds_placements_and_throttle_equal_across_modes(harness):
    doc = load(harness["out"])
    base = harness["out"].parent
    placements = {}
    for iso in doc["isolated"]:
        kept = load(base / iso["file"])
        assert kept["mode"] == "isolated" and kept["seed"] == iso["seed"]
        assert "--throttle" not in kept["argv"]
        placements[iso["seed"]] = {j["name"]: j["nodes"] for j in kept["jobs"]}
    by_cond = {}
    for run in doc["runs"]:
        kept = load(base / run["file"])
        by_cond.setdefault(run["condition"], []).append(run["seed"])
        assert kept["seed"] == run["seed"] and kept["mode"] == "concurrent"
        assert argv_value(kept["argv"], "--throttle") == run["throttle"]
        assert argv_value(kept["argv"], "--throttle-window-us") == "20"
        assert {j["name"]: j["nodes"] for j in kept["jobs"]} == placements[run["seed"]]
        ca = dict(kv.split("=") for kv in argv_value(kept["argv"], "--throttle-ca").split(","))
        m = re.match(r"netscope c_a([+-]\d+)%", run["condition"])
        expect = CA * (1 + float(m.group(1)) / 100) if m else CA
        assert float(ca["milc"]) == pytest.approx(expect) and float(ca["incast"]) == 0
    assert all(sorted(seeds) == SEEDS for seeds in by_cond.values()), by_cond
    assert len(by_cond) == len(MODES) + len(ERRORS)


def recompute(doc, base):
    """Per condition: {job: increases}, node-seconds increases -- from the kept files."""
    iso = {}
    for entry in doc["isolated"]:
        kept = load(base / entry["file"])
        iso[entry["seed"]] = {
            j["name"]: (runtime(j, "isolated"), len(j["nodes"])) for j in kept["jobs"]
        }
    inc, ns = {}, {}
    for run in doc["runs"]:
        kept = load(base / run["file"])
        alone = iso[run["seed"]]
        total = total_iso = 0.0
        for j in kept["jobs"]:
            t = runtime(j, "concurrent")
            t0, nodes = alone[j["name"]]
            inc.setdefault(run["condition"], {}).setdefault(j["name"], []).append(t / t0)
            total += nodes * t
            total_iso += nodes * t0
        ns.setdefault(run["condition"], []).append(total / total_iso)
    return inc, ns


def test_statistics_recomputed_from_kept_runs(harness, capsys):
    from contend.cli import main

    doc = load(harness["out"])
    inc, ns = recompute(doc, harness["out"].parent)
    assert main(["report", str(harness["out"]), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    for source in (doc["summary"]["runtime_increase"], rep["runtime_increase"]):
        assert len(source) == len(inc) * 2
        for row in source:
            vals = inc[row["condition"]][row["job"]]
            assert row["runs"] == len(SEEDS)
            assert row["mean"] == pytest.approx(np.mean(vals), rel=1e-12)
            for q in (50, 90, 99):
                assert row[f"p{q}"] == pytest.approx(np.percentile(vals, q), rel=1e-12)
    for source in (doc["summary"]["node_seconds_increase"], rep["node_seconds_increase"]):
        for row in source:
            assert row["p99"] == pytest.approx(np.percentile(ns[row["condition"]], 99), rel=1e-12)
    # the headline ratio and the paper's proxy numbers as they are defined
    ns99 = np.percentile(inc["netscope"]["milc"], 99)
    for row in rep["runtime_increase"]:
        if row["job"] == "milc" and ns99 > 1:
            want = (np.percentile(inc[row["condition"]]["milc"], 99) - 1) / (ns99 - 1)
            assert row["p99_excess_vs_netscope"] == pytest.approx(want, rel=1e-12)
    # the congestion is real: the proxy is slower beside the congestor without a throttle
    assert np.percentile(inc["off"]["milc"], 50) > 1.2
    # Welch rows: netscope vs. every other condition, on the proxy
    from scipy import stats

    for row in rep["welch_proxy_vs_netscope"]:
        a, b = inc[row["condition"]]["milc"], inc["netscope"]["milc"]
        if np.std(a) > 0 or np.std(b) > 0:
            assert row["p"] == pytest.approx(stats.ttest_ind(b, a, equal_var=False).pvalue)
    assert {r["condition"] for r in rep["welch_proxy_vs_netscope"]} == set(inc) - {"netscope"}
    # Fig. 7 table: c_a and points
    errs = {r["ca_error_percent"]: r for r in rep["ca_error"]}
    assert sorted(errs) == [-100.0, 0.0, 50.0]
    assert errs[-100.0]["c_a"] == 0 and errs[50.0]["c_a"] == pytest.approx(CA * 1.5)
    assert errs[0.0]["p99"] == pytest.approx(ns99)
    assert errs[0.0]["dcqcn_p99"] == pytest.approx(np.percentile(inc["dcqcn"]["milc"], 99))


def test_runtimes_in_file_are_the_kept_runs(harness):
    doc = load(harness["out"])
    base = harness["out"].parent
    for run in doc["runs"]:
        kept = load(base / run["file"])
        assert run["runtime_s"] == {j["name"]: runtime(j, "concurrent") for j in kept["jobs"]}
    assert {j["name"]: j["nodes"] for j in doc["jobs"]} == {"milc": 6, "incast": 18}


def test_headline_ratio_is_the_papers():
    from contend.studies.mitigatestats import headline_ratio

    assert headline_ratio(2.8, 1.11) == pytest.approx(16.36, abs=0.01)  # "16.3x"
    assert headline_ratio(2.3, 1.11) == pytest.approx(11.82, abs=0.01)  # "11.8x"
    assert np.isnan(headline_ratio(2.0, 1.0))  # netscope without excess: no ratio


def test_text_table_and_progress(harness):
    r = harness["proc"]
    text = r.stdout
    assert "Runtime increase per job and mode" in text and "p99 (x)" in text
    assert "Node-seconds increase of the mix" in text
    assert "The paper's numbers (published reference)" in text
    assert re.search(r"MILC p99 runtime increase \(Voltrino.*2\.800\s+2\.300\s+1\.110", text)
    assert re.search(r"mode dcqcn: run \d/3 \(seed [567]\)", r.stderr)
    assert "isolated: run 1/3 (seed 5)" in r.stderr


def test_report_markdown_csv(harness, capsys):
    from contend.cli import main

    assert main(["report", str(harness["out"]), "-f", "markdown"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("## contend mitigate") and "| Job | Mode |" in md
    assert main(["report", str(harness["out"]), "-f", "csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    conds = len(MODES) + len(ERRORS)
    assert len(rows) == 1 + conds * 2 + conds  # header, per job, per mix


def assert_png_with_content(data):
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    img = mpimg.imread(io.BytesIO(data))
    assert img.shape[1] > 2 * img.shape[0] > 400  # three panels side by side
    rgb = np.round(img[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    assert len(np.unique(rgb, axis=0)) > 40
    assert np.any(rgb < 250, axis=1).mean() > 0.03


def test_plot_mitigate_png(harness, tmp_path, capsys):
    from contend.cli import main

    png = tmp_path / "mit.png"
    assert main(["plot", "mitigate", str(harness["out"]), "-o", str(png)]) == 0
    assert_png_with_content(png.read_bytes())


def test_html_embeds_the_figure(harness, tmp_path):
    import base64

    from contend.cli import main

    out = tmp_path / "m.html"
    assert main(["html", str(harness["out"]), "-o", str(out)]) == 0
    html = out.read_text()
    assert "contend mitigate" in html and "Node-seconds increase of the mix" in html
    pngs = re.findall(r'src="data:image/png;base64,([^"]+)"', html)
    assert len(pngs) == 1
    assert_png_with_content(base64.b64decode(pngs[0]))


def test_keep_runs_reused(contend_bin, harness):
    before = {p.name: p.stat().st_mtime_ns for p in harness["keep"].iterdir()}
    out = harness["tmp"] / "again.json"
    args = [a if a != harness["out"] else out for a in harness["args"]]
    # another command (an extra contend jobs option) reuses nothing: it runs, and fails
    r = mitigate(contend_bin, *args, "--bogus-option")
    assert r.returncode == 2 and "unknown option '--bogus-option'" in r.stderr
    r = mitigate(contend_bin, *args)
    assert r.returncode == 0, r.stderr
    assert f"reusing {len(before)} finished run(s)" in r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in harness["keep"].iterdir()} == before
    again, first = load(out), load(harness["out"])
    assert all(run["reused"] for run in again["runs"] + again["isolated"])
    assert again["summary"] == first["summary"]


def test_isolated_once(contend_bin, harness, tmp_path):
    out = tmp_path / "once.json"
    r = mitigate(
        contend_bin, harness["mix"], "--topology", TOPO, "--repeat", "2", "--modes", "off",
        "--isolated-once", "--keep-runs", tmp_path / "k", "-q", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = load(out)
    assert [i["seed"] for i in doc["isolated"]] == [1]
    iso = doc["isolated"][0]["runtime_s"]["milc"]
    got = {row["job"]: row for row in doc["summary"]["runtime_increase"]}
    vals = [run["runtime_s"]["milc"] / iso for run in doc["runs"]]
    assert got["milc"]["p50"] == pytest.approx(np.percentile(vals, 50))
    assert doc["summary"]["welch_proxy_vs_netscope"] == []  # no netscope: nothing to test


def test_ranks_per_node_reach_every_run(contend_bin, harness, tmp_path):
    """GPCNeT's several processes per port (bench/mitigate_sim --ranks-per-node 4):
    after -- every run, isolated and throttled, plays that many ranks per node, at the
    same placement, with one throttle controller per node (not per rank)."""
    out, keep = tmp_path / "rpn.json", tmp_path / "k"
    r = mitigate(
        contend_bin, harness["mix"], "--topology", TOPO, "--repeat", "1", "--seed", "5",
        "--modes", "dcqcn", "--ca", f"milc={CA}", "--keep-runs", keep, "-q", "-o", out,
        "--", "--throttle-window-us", "20", "--ranks-per-node", "2",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = load(out)
    assert {j["name"]: (j["nodes"], j["ranks"]) for j in doc["jobs"]} == {
        "milc": (6, 12),
        "incast": (18, 36),
    }
    for run in doc["isolated"] + doc["runs"]:
        jobs = load(keep / Path(run["file"]).name)["jobs"]
        assert {j["name"]: int(j["ranks"]) for j in jobs} == {"milc": 12, "incast": 36}
    (run,) = doc["runs"]
    assert run["throttle_summary"]["incast"]["rate_cuts"] > 0
    # one controller per node, not per rank: the incast's 18 nodes, not its 36 ranks
    sim = load(keep / Path(run["file"]).name)["environment"]["simulation"]["throttle"]
    assert {j["job"]: j["nodes"] for j in sim["jobs"] if j["job"]} == {"milc": 6, "incast": 18}
    # the same placement as 1 rank per node at this seed: the nodes are the harness's
    one = load(harness["out"])
    iso = {i["seed"]: i for i in one["isolated"]}[5]
    assert doc["isolated"][0]["nodes"] == iso["nodes"]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--modes", "off,turbo"], "unknown mode 'turbo'"),
        (["--modes", "static:0%"], "static takes a rate"),
        (["--ca", "milc=abc"], "--ca: milc=abc"),
        (["--ca", "nosuchjob=1"], "nosuchjob not in"),
        (["--repeat", "0"], "--repeat"),
        (["--model", "milc=MODEL"], "--model milc="),
        (["--engine", "mpi"], "--launcher"),
        (
            ["--engine", "mpi", "--launcher", "mpirun -n 4", "--nodes", "4", "--parallel", "2"],
            "--parallel 2",
        ),
        (["--ca-error", "-50"], "c_a 0"),
        (["--", "--mode", "both"], "--mode after --"),
    ],
)
def test_bad_input_exits_2_before_any_run(contend_bin, harness, tmp_path, args, needle):
    model = tmp_path / "garbage.json"
    model.write_text("{not json")
    args = [f"milc={model}" if a == "milc=MODEL" else a for a in args]
    keep, out = tmp_path / "keep", tmp_path / "x.json"
    opts = ["--topology", TOPO, "-o", out, "--keep-runs", keep]
    full = [harness["mix"], *opts, *args]  # a "--" in args comes last
    r = mitigate(contend_bin, *full, timeout=60)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not out.exists()
    assert not keep.exists() or not any(keep.iterdir())  # nothing ran


def test_missing_mix_exits_2(contend_bin, tmp_path):
    r = mitigate(contend_bin, tmp_path / "none.job", "-o", tmp_path / "x.json", timeout=60)
    assert r.returncode == 2 and "none.job: no such file (expected a job file)" in r.stderr
    assert not (tmp_path / "x.json").exists()


def test_failing_run_exits_3_without_output(contend_bin, harness, tmp_path):
    fake = tmp_path / "contend"
    fake.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" dcqcn "*) echo "simulated crash" >&2; exit 1;; esac\n'
        f'exec "{contend_bin}" "$@"\n'
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    env = dict(os.environ, CONTEND_BIN=str(fake))
    out = tmp_path / "x.json"
    r = mitigate(
        contend_bin, harness["mix"], "--topology", TOPO, "--repeat", "2", "-q", "-o", out,
        env=env, timeout=120,
    )  # fmt: skip
    assert r.returncode == 3, r.stderr
    assert "dcqcn run, seed 1 failed" in r.stderr and "simulated crash" in r.stderr
    assert not out.exists()
    assert not list(tmp_path.glob(".x.json*"))  # no temporary left


def test_model_file_gives_ca(monkeypatch):
    from contend.models import modelfile
    from contend.studies.mitigate import UsageError, read_model_ca

    apps = {
        "milc": {"delay_sensitivity": 4.6},
        "amg": {"delay_sensitivity": -0.2},
        "bad": {"delay_sensitivity": None},
    }
    monkeypatch.setattr(
        modelfile, "load_model_file", lambda path, expect=None: {"applications": apps}
    )
    assert read_model_ca("milc", "f.json") == 4.6
    assert read_model_ca("amg", "f.json") == 0.0  # clipped at 0 (docs/netscope.md)
    with pytest.raises(UsageError, match="no delay sensitivity"):
        read_model_ca("bad", "f.json")
    with pytest.raises(UsageError, match="none named 'lammps'"):
        read_model_ca("lammps", "f.json")
    one = {"applications": {"milc_like": {"delay_sensitivity": 2.0}}}
    monkeypatch.setattr(modelfile, "load_model_file", lambda path, expect=None: one)
    assert read_model_ca("proxy", "f.json") == 2.0  # the file's only application


def test_missing_binary_exits_2(contend_bin, harness, tmp_path):
    env = dict(os.environ, CONTEND_BIN=str(tmp_path / "no-such-contend"))
    r = mitigate(contend_bin, harness["mix"], "-o", tmp_path / "x.json", env=env, timeout=60)
    assert r.returncode == 2 and "cannot run the contend binary" in r.stderr
    assert "Traceback" not in r.stderr


MPI_MIX = """\
[JOB_NAME] proxy
[PLACEMENT] random nodes=2
[MOTIF] pingpong iters=500 warmup=10 msg_bytes=8
[JOB_NAME] cong
[PLACEMENT] random nodes=4
[REPEAT] 3
[MOTIF] pairwise_a2a iters=16 warmup=0
"""


def test_mpi_engine_runs_the_mix_under_the_throttle_library(contend_bin, tmp_path):
    """--engine mpi: every concurrent run is `LAUNCHER contend throttle ... --
    contend jobs`, so a static limit of 10 Mbit/s stretches the all-to-all
    (3 x 16 x 3 messages of 4 KiB a node: ~0.5 s at that rate) while `off`
    leaves it at milliseconds; the isolated runs are not throttled."""
    mix = tmp_path / "mpi.job"
    mix.write_text(MPI_MIX)
    out, keep = tmp_path / "mpi.json", tmp_path / "runs"
    launcher = f"{mpirun_path()} -n 6 --oversubscribe"
    args = [
        mix, "--engine", "mpi", "--launcher", launcher, "--nodes", "6",
        "--modes", "off,static:0.01", "--repeat", "1", "--keep-runs", keep, "-o", out,
        "--", "--virtual-nodes", "1", "--throttle-line-gbps", "10",
    ]  # fmt: skip
    r = mitigate(contend_bin, *args, timeout=240, env=mpi_env())
    assert r.returncode == 0, r.stderr
    doc = load(out)
    assert doc["config"]["engine"] == "mpi" and doc["config"]["launcher"] == launcher
    iso = doc["isolated"][0]["runtime_s"]["cong"]
    by = {run["throttle"]: run["runtime_s"]["cong"] for run in doc["runs"]}
    assert by["off"] < 0.2, by
    assert by["static:0.01"] > 0.3 and by["static:0.01"] > 5 * max(by["off"], iso), (by, iso)


def test_slurm_example_runs_the_harness(contend_bin, tmp_path):
    """examples/slurm/mitigate.sbatch, run as Slurm would run its body (the
    allocation's variables set, mpirun standing in for srun on this host)."""
    script = Path(__file__).resolve().parents[2] / "examples" / "slurm" / "mitigate.sbatch"
    assert run_bounded(["bash", "-n", script], timeout=30).returncode == 0
    mix = tmp_path / "mpi.job"
    mix.write_text(MPI_MIX)
    env = dict(
        mpi_env(),
        CONTEND=str(contend_bin),
        SLURM_JOB_NUM_NODES="6",
        SLURM_JOB_ID="77",
        LAUNCHER=f"{mpirun_path()} -n 6 --oversubscribe",
        MODES="off,netscope",
        CA="proxy=5",
        REPEAT="1",
        WINDOW_US="100000",
        EXTRA="--virtual-nodes 1",
    )
    r = run_bounded(["bash", script, mix], cwd=tmp_path, env=env, timeout=240)
    assert r.returncode == 0, r.stderr
    doc = load(tmp_path / "contend-mitigate-77.json")
    assert doc["config"]["engine"] == "mpi" and doc["config"]["c_a"]["proxy"] == 5
    assert sorted(run["throttle"] for run in doc["runs"]) == ["netscope", "off"]
    assert len(list((tmp_path / "contend-mitigate-77").glob("*.json"))) == 3
