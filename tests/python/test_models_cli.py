"""``contend model`` end to end on files: fit-latency, sensitivity, show.

Inputs are synthetic files on the 6-node fabric of models_synth (paths JSON,
simulator-format counter CSVs, a ping-pong training file, contend-jobs results)
read through contend.telemetry; expected values are computed by plain loops.
"""

import json

import jsonschema
import matplotlib.image as mpimg
import numpy as np
import pytest
from conftest import BUILD, SCHEMAS, run_bounded
from contend.models.cli import main
from models_synth import (
    RunTruth,
    never_stalled,
    steady_intervals,
    tied_local_and_global,
    write_jobs_results,
    write_paths,
    write_sim_counters,
    write_training,
)
from test_models_latency import K_CLASS, K_CONST, make_training

C_A, K_A = 0.0005, 0.004  # s per us, s: runtimes of 5-12 ms inside the 20 ms of counters
JOB_NODES = [0, 1, 2, 4, 5]
TRAFFIC = [[0, 2, 65536, 16], [2, 4, 262144, 64], [5, 0, 16384, 4], [1, 1, 4096, 1]]
OVERHEAD_US = 0.5


def schema(name):
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def assert_png(path):
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and float(img[..., :3].std()) > 0.05


@pytest.fixture(scope="module")
def latency(tmp_path_factory):
    """(dir, model path, model doc) of fit-latency on a synthetic training file."""
    tmp = tmp_path_factory.mktemp("fit")
    _, samples, frames = make_training(seed=21)
    train = write_training(tmp, frames, samples)
    out = tmp / "latency.json"
    code = main(
        [
            "fit-latency",
            str(train),
            "--holdout",
            "0.3",
            "--seed",
            "4",
            "-o",
            str(out),
            "--plot",
            str(tmp / "fit.png"),
            "-q",
        ]
    )
    assert code == 0
    return tmp, out, json.loads(out.read_text())


def truth_m(frame, window, msg_bytes, nic_gbps, k_class, k_const):
    truth = RunTruth(frame)
    nodes = JOB_NODES
    d = [
        (
            truth.one_way_ns(k_class, k_const, a, b, *window)
            + truth.one_way_ns(k_class, k_const, b, a, *window)
        )
        / 2
        for i, a in enumerate(nodes)
        for b in nodes[i + 1 :]
    ]
    return 2 * OVERHEAD_US + msg_bytes * 8 / (nic_gbps * 1e3) + np.mean(d) / 1e3


@pytest.fixture(scope="module")
def job_runs(latency):
    """Results files of 8 runs whose runtimes follow T = C_A * M + K_A (M from the fitted model)."""
    tmp, _, doc = latency
    rng = np.random.default_rng(8)
    k_class, k_const = doc["k_link_ns_per_q"], doc["k_const_ns"]
    msg = sum(p[2] for p in TRAFFIC) / sum(p[3] for p in TRAFFIC)
    files, m_true = [], []
    for i, level in enumerate(np.linspace(2, 70, 8)):
        frame = steady_intervals(rng, level)
        csv = write_sim_counters(frame, tmp / f"job.run{i}.csv")
        m = truth_m(frame, (0.001, 0.002), msg, 100.0, k_class, k_const)  # steady: any window
        t = (C_A * m + K_A) * (1 + rng.normal(0, 0.002))
        files.append(
            write_jobs_results(
                tmp / f"job.run{i}.json",
                csv.name,
                "app",
                JOB_NODES,
                TRAFFIC,
                0.001,
                0.001 + t,
                seed=i + 1,
                t0_clock_s=0.0005,
            )
        )
        m_true.append(m)
    return files, np.array(m_true)


def test_fit_latency_writes_a_valid_model_with_the_constants(latency):
    tmp, _, doc = latency
    jsonschema.validate(doc, schema("contend-latency-model"))
    for cls, k in K_CLASS.items():
        assert doc["k_link_ns_per_q"][cls] == pytest.approx(k, rel=0.05)
    assert doc["k_const_ns"] == pytest.approx(K_CONST, rel=0.05)
    assert doc["split"]["seed"] == 4 and doc["split"]["holdout_fraction"] == 0.3
    n = len(doc["samples"])
    assert doc["split"]["holdout_samples"] == round(0.3 * n)
    assert sum(s["set"] == "holdout" for s in doc["samples"]) == doc["split"]["holdout_samples"]
    assert doc["accuracy"]["holdout"]["pearson_r"] > 0.99
    assert doc["training"]["pts_clamped_intervals"] > 0
    assert doc["paths"]["file"] == "synthetic.paths.json"
    assert_png(tmp / "fit.png")


@pytest.mark.parametrize(
    "frame_map, folded, warned",
    [(never_stalled("nic"), ["injection"], False), (tied_local_and_global, [], True)],
    ids=["unexcited-class-folded", "collinear-classes-warned"],
)
def test_fit_latency_reports_folded_classes_and_warns_on_rank(
    tmp_path, capsys, frame_map, folded, warned
):
    """A class that never stalled is folded into k_2 (a note, no warning); two
    classes that stall alike on every path still give the rank warning."""
    pairs = None if folded else [(0, 4), (4, 0), (1, 5), (5, 1), (1, 4)]
    _, samples, frames = make_training(seed=13, pairs=pairs, frame_map=frame_map)
    train = write_training(tmp_path, frames, samples)
    out = tmp_path / "latency.json"
    assert main(["fit-latency", str(train), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema("contend-latency-model"))
    assert doc["fit"]["folded_classes"] == folded
    assert ("warning: design rank 4 < 5 constants" in err) == warned
    assert ("folded into k_2" in err) == bool(folded)


def test_sensitivity_gives_c_a_back(latency, job_runs, tmp_path):
    _, model, _ = latency
    files, m_true = job_runs
    out = tmp_path / "sens.json"
    code = main(
        [
            "sensitivity",
            *map(str, files),
            "--latency",
            str(model),
            "--job",
            "app",
            "--overhead-us",
            str(OVERHEAD_US),
            "-o",
            str(out),
            "--plot",
            str(tmp_path / "s.png"),
            "-q",
        ]
    )
    assert code == 0
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema("contend-sensitivity"))
    app = doc["applications"]["app"]
    assert app["runs"] == 8 and app["pass"] == "concurrent"
    assert [r["m_a_us"] for r in app["run_table"]] == pytest.approx(m_true, rel=1e-6)
    assert app["c_a_s_per_us"] == pytest.approx(C_A, rel=0.05)
    assert app["k_a_s"] == pytest.approx(K_A, rel=0.05)
    m_ref = min(m_true)
    # D_ref = M_ref less o + size/bw + o (mean message of the job's traffic, 100 Gbit/s NIC)
    msg = sum(p[2] for p in TRAFFIC) / sum(p[3] for p in TRAFFIC)
    d_ref = m_ref - (2 * OVERHEAD_US + msg * 8 / 100e3)
    t_ref = C_A * m_ref + K_A  # the runtime written for that run
    assert app["delay_sensitivity"] == pytest.approx(C_A * d_ref / t_ref, rel=0.05)
    weighted = app["estimates"]["traffic_weighted"]
    assert weighted is not None and len(weighted["convergence"]["rows"]) == 8
    assert app["delivery"]["msg_bytes_source"] == "traffic"
    assert app["run_table"][0]["msg_bytes"] == pytest.approx(348160 / 85)
    assert app["run_table"][0]["window_start_s"] == pytest.approx(0.0015)
    assert doc["provenance"]["order"] == "given"
    assert_png(tmp_path / "s.png")


def test_sensitivity_shuffled_order_is_recorded(latency, job_runs, tmp_path):
    _, model, _ = latency
    files, _ = job_runs
    out = tmp_path / "sens.json"
    args = [
        "sensitivity",
        *map(str, files),
        "--latency",
        str(model),
        "--job",
        "app",
        "--order",
        "shuffled",
        "--seed",
        "3",
        "-o",
        str(out),
        "-q",
    ]
    assert main(args) == 0
    doc = json.loads(out.read_text())
    order = np.random.default_rng(3).permutation(8)
    names = [r["file"].rsplit("/", 1)[-1] for r in doc["applications"]["app"]["run_table"]]
    assert names == [f"job.run{i}.json" for i in order]
    assert doc["provenance"]["order_seed"] == 3


def test_degenerate_sensitivity_input_exits_2(latency, job_runs, tmp_path, capsys):
    tmp, model, _ = latency
    files, _ = job_runs
    out = tmp_path / "sens.json"
    base = ["--latency", str(model), "--job", "app", "-o", str(out)]
    assert main(["sensitivity", str(files[0]), *base]) == 2
    assert "at least two" in capsys.readouterr().err
    # two runs on the same counters and window: M_a constant
    twin = write_jobs_results(
        tmp_path / "twin.json",
        tmp / "job.run0.csv",
        "app",
        JOB_NODES,
        TRAFFIC,
        0.001,
        0.009,
        seed=9,
    )
    twin2 = write_jobs_results(
        tmp_path / "twin2.json",
        tmp / "job.run0.csv",
        "app",
        JOB_NODES,
        TRAFFIC,
        0.001,
        0.012,
        seed=10,
    )
    assert main(["sensitivity", str(twin), str(twin2), *base]) == 2
    err = capsys.readouterr().err
    assert "same in every run" in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".sens.json*"))


@pytest.mark.parametrize(
    "args, match",
    [
        (["--job", "nope"], "no job named 'nope'"),
        (["--job", "app", "--pass", "isolated"], "no 'isolated' pass"),
        (["--job", "app", "--counters-dir", "/nonexistent"], "not a directory"),
        (["--job", "app", "--paths", "MISSING.json"], "no such file"),
        (["--job", "app", "--plot", "fig.jpg"], ".png, .svg or .pdf"),
    ],
)
def test_sensitivity_bad_input_exits_2(latency, job_runs, tmp_path, capsys, args, match):
    _, model, _ = latency
    files, _ = job_runs
    out = tmp_path / "sens.json"
    code = main(
        ["sensitivity", *map(str, files[:3]), "--latency", str(model), *args, "-o", str(out)]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1
    assert not out.exists()


def test_bad_option_values_exit_2(latency, job_runs, tmp_path, capsys):
    _, model, _ = latency
    files, _ = job_runs
    for bad in (["--overhead-us", "-1"], ["--nic-gbps", "0"], ["--order", "sorted"]):
        with pytest.raises(SystemExit) as exc:
            main(
                [
                    "sensitivity",
                    *map(str, files[:3]),
                    "--latency",
                    str(model),
                    "--job",
                    "app",
                    *bad,
                    "-o",
                    str(tmp_path / "s.json"),
                ]
            )
        assert exc.value.code == 2
        assert bad[0] in capsys.readouterr().err


def test_sensitivity_needs_paths_of_the_job_pairs(latency, tmp_path, capsys):
    tmp, model, _ = latency
    doc = json.loads((tmp / "synthetic.paths.json").read_text())
    doc["pairs"] = [p for p in doc["pairs"] if (p["src"], p["dst"]) != (5, 4)]
    small = tmp_path / "small.paths.json"
    small.write_text(json.dumps(doc))
    res = write_jobs_results(
        tmp_path / "r.json", tmp / "job.run0.csv", "app", JOB_NODES, TRAFFIC, 0.001, 0.01, seed=1
    )
    res2 = write_jobs_results(
        tmp_path / "r2.json", tmp / "job.run1.csv", "app", JOB_NODES, TRAFFIC, 0.001, 0.01, seed=2
    )
    code = main(
        [
            "sensitivity",
            str(res),
            str(res2),
            "--latency",
            str(model),
            "--job",
            "app",
            "--paths",
            str(small),
            "-o",
            str(tmp_path / "s.json"),
        ]
    )
    assert code == 2
    assert "5->4" in capsys.readouterr().err


def test_fit_latency_bad_input_exits_2(tmp_path, capsys):
    out = tmp_path / "m.json"
    bad = tmp_path / "train.json"
    bad.write_text('{"schema": "contend-pingpong-train",\n "runs": [}')
    assert main(["fit-latency", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: not valid JSON" in err and "at line 2 column" in err
    write_paths(tmp_path / "p.json")
    bad.write_text(
        json.dumps(
            {
                "schema": "contend-pingpong-train",
                "schema_version": "1.0",
                "paths": "p.json",
                "runs": [
                    {
                        "run": 0,
                        "counters": "gone.csv",
                        "samples": [
                            {"src": 0, "dst": 1, "t_start_s": 0.0, "t_end_s": 0.01, "rtt_us": 3.0}
                        ],
                    }
                ],
            }
        )
    )
    assert main(["fit-latency", str(bad), "-o", str(out)]) == 2
    assert "gone.csv not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["fit-latency", str(bad), "--holdout", "1.5", "-o", str(out)])
    assert exc.value.code == 2
    assert not out.exists()


def test_show_prints_both_files_with_units(latency, job_runs, tmp_path, capsys):
    _, model, doc = latency
    files, _ = job_runs
    sens = tmp_path / "sens.json"
    assert (
        main(
            [
                "sensitivity",
                *map(str, files),
                "--latency",
                str(model),
                "--job",
                "app",
                "-o",
                str(sens),
                "-q",
            ]
        )
        == 0
    )
    assert main(["show", str(model)]) == 0
    text = capsys.readouterr().out
    assert "k_2 (per one-way path)" in text and "Unit" in text and "RMSE (us)" in text
    assert f"{doc['k_link_ns_per_q']['global']:.1f}" in text
    assert main(["show", str(sens), "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    assert "c_a (s per us)" in text and "| app |" in text and "M_a (us)" in text
    assert main(["show", str(files[0])]) == 2  # a results file is not a model file
    assert "expected" in capsys.readouterr().err


def test_contend_binary_runs_contend_model(latency):
    binary = BUILD / "bin" / "contend"
    if not binary.exists():
        pytest.skip("contend not built")
    _, model, _ = latency
    res = run_bounded([binary, "model", "show", model], timeout=60)
    assert res.returncode == 0, res.stderr
    assert "Latency model" in res.stdout
    res = run_bounded([binary, "model", "fit-latency", "--help"], timeout=60)
    assert res.returncode == 0 and "Example" in res.stdout
