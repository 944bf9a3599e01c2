"""The Netscope workflow end to end on a 144-node simulated dragonfly (issue
acceptance 3): ping-pong training under GPCNeT congestors -> latency model
with held-out Pearson r >= 0.7; training runs of the three proxies ->
dimensionless delay sensitivities ordered MILC-like > LAMMPS-like > AMG-like,
runtime fits with r >= 0.7 for the first two.  The simulator is deterministic for a seed, so
these figures are reproducible; they are recorded in docs/netscope.md."""

import json

import pytest
from conftest import ROOT, run_bounded

TOPO = "dragonfly:a=4,p=4,h=2"  # 144 nodes
README_TRAIN = ["--runs", "24", "--exchanges", "2000"]  # README, with the default 16 pairs


def train_and_fit(contend_bin, d, seed):
    """The README's two commands at ``seed``: (model document, fit-latency's stderr)."""
    train, model = d / f"train{seed}.json", d / f"latency{seed}.json"
    r = run_bounded(
        [contend_bin, "pingpong-train", "--topology", TOPO, *README_TRAIN, "--seed", str(seed)]
        + ["-q", "-o", train],
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    r = run_bounded([contend_bin, "model", "fit-latency", train, "-o", model], timeout=600)
    assert r.returncode == 0, r.stderr
    return json.loads(model.read_text()), r.stderr


@pytest.fixture(scope="module")
def latency(contend_bin, tmp_path_factory):
    d = tmp_path_factory.mktemp("netscope")
    doc, err = train_and_fit(contend_bin, d, 1)  # writes latency1.json
    return d, doc, err


def test_latency_model_predicts_held_out_rtts(latency):
    _, model, err = latency
    held = model["accuracy"]["holdout"]
    assert held["samples"] >= 90
    assert held["pearson_r"] >= 0.7
    assert "warning" not in err


@pytest.mark.parametrize("seed", [2, 3])
def test_latency_model_holds_at_other_seeds(contend_bin, tmp_path, seed):
    """Issue 31: the README's workflow at other seeds (with seed 1 above, three):
    held-out r >= 0.5 and an identifiable design (no rank warning).  Ping-pong
    pairs never make their own NIC links stall, so the injection and ejection
    classes are folded into k_2 rather than left collinear with it."""
    doc, err = train_and_fit(contend_bin, tmp_path, seed)
    assert doc["accuracy"]["holdout"]["pearson_r"] >= 0.5
    assert "warning" not in err
    assert doc["fit"]["design_rank"] == doc["fit"]["parameters"]
    assert set(doc["fit"]["folded_classes"]) == {
        "injection (nic->router)",
        "ejection (router->nic)",
    }
    assert doc["k_link_ns_per_q"]["local"] > 0 and doc["k_link_ns_per_q"]["global"] > 0


@pytest.fixture(scope="module")
def sensitivities(contend_bin, latency):
    d, _, _ = latency
    out = {}
    for app in ("milc", "lammps", "amg"):
        r = run_bounded(
            [
                contend_bin,
                "sensitivity-train",
                ROOT / "examples" / "netscope" / f"{app}.job",
                "--job",
                app,
                "--topology",
                TOPO,
                "--runs",
                "10",
                "-q",
                "-o",
                d / f"{app}.json",
            ],
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        runs = [d / f"{app}.run{i}.json" for i in range(10)]
        r = run_bounded(
            [
                contend_bin,
                "model",
                "sensitivity",
                *runs,
                "--job",
                app,
                "--latency",
                d / "latency1.json",
                "-q",
                "-o",
                d / f"{app}.sens.json",
            ],
            timeout=600,
        )
        assert r.returncode == 0, r.stderr
        out[app] = json.loads((d / f"{app}.sens.json").read_text())
    return out


def _uniform(doc, app):
    return doc["applications"][app]


def test_sensitivities_are_ordered(sensitivities):
    """The paper's order (Table 3) is of its delay sensitivity normalised to the
    ping-pong's 1, here the dimensionless one; c_a in s/us grows with a run's
    length, so its order across proxies of different runtimes is not the claim
    (bench/sensitivity_seeds: at 5 of 5 seeds by the first, 3 of 5 by c_a)."""
    ds = {app: _uniform(doc, app)["delay_sensitivity"] for app, doc in sensitivities.items()}
    assert ds["milc"] > 1.5 * ds["lammps"] > 1.5 * ds["amg"]


def test_runtime_fits_correlate(sensitivities):
    for app in ("milc", "lammps"):
        assert _uniform(sensitivities[app], app)["r"] >= 0.7


def test_milc_estimate_converges_within_10_percent_by_5_runs(sensitivities):
    """Synthetic extremes (no congestion, full congestors) in turn: the c_a fitted
    on the first 5 runs is within 10 % of the 10-run value (the paper: 5 runs)."""
    rows = sensitivities["milc"]["applications"]["milc"]["estimates"]["uniform"]["convergence"][
        "rows"
    ]
    after5 = next(r for r in rows if r["runs"] == 5)
    assert abs(after5["c_a_error_percent"]) <= 10
