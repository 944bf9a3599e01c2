"""The throttle on the simulated fabric (--throttle with --engine sim).

A static limit is held by two nodes streaming to each other; the AIMD decisions in the
throttle log follow eq. 14-15 recomputed here from the logged signals; the
netscope job with a large c_a is cut less than under dcqcn; bad options exit
2 before anything runs.
"""

import csv
import json
import subprocess

import pytest
from conftest import BUILD

CONTEND = str(BUILD / "bin" / "contend")

# 100 iterations of 16 x 128 KiB from each node to the other: 200 MiB a node
STREAM = """[JOB_NAME] bw
[NID_LIST] 0,5
[MOTIF] rr_bw rings=1 iters=100 warmup=0
"""

MIX = """[JOB_NAME] proxy
[PLACEMENT] random nodes=6
[MOTIF] milc_like iters=60
[JOB_NAME] cong
[PLACEMENT] random nodes=18
[REPEAT] 40
[MOTIF] p2p_incast iters=64 warmup=0
"""

TOPO = ["--engine", "sim", "--topology", "dragonfly:a=2,p=3,h=2", "-q", "--seed", "3"]


def run(tmp_path, text, *opts, out="r.json"):
    job = tmp_path / "mix.job"
    job.write_text(text)
    p = subprocess.run(
        [CONTEND, "jobs", str(job), *TOPO, "-o", str(tmp_path / out), *opts],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    return json.loads((tmp_path / out).read_text())


def job_time(doc, name):
    job = next(j for j in doc["jobs"] if j["name"] == name)
    r = job["results"]["concurrent"]
    return r["perform_end_s"] - r["perform_start_s"]


def node_gbps(doc):
    job = doc["jobs"][0]
    return job["traffic"]["bytes"] / 2 * 8 / job_time(doc, "bw") / 1e9


@pytest.mark.parametrize("rate, gbps", [("10", 10.0), ("25%", 25.0), ("40000Mbps", 40.0)])
def test_static_rate_is_held(tmp_path, rate, gbps):
    free = node_gbps(run(tmp_path, STREAM, out="free.json"))
    assert free > 90  # unthrottled: the 100 Gbit/s links
    doc = run(tmp_path, STREAM, "--throttle", f"static:{rate}")
    # the first millisecond of reservations is forgiven (CT_SLACK_S): +1-4 %
    assert node_gbps(doc) == pytest.approx(gbps, rel=0.05)
    assert node_gbps(doc) >= gbps
    thr = doc["environment"]["simulation"]["throttle"]
    assert thr["mode"].startswith("static")
    (bw,) = [j for j in thr["jobs"] if j["job"] == "bw"]
    assert bw["injected_delay_s"] > 0 and bw["rate_cuts"] == 0


def aimd_replay(rows, gain, ca, increase, line, floor, threshold):
    """eq. 14-15 over a node's logged signals; returns (alphas, rates)."""
    alpha, rate, alphas, rates = 0.0, line, [], []
    for r in rows:
        s = float(r["signal"])
        alpha = (1 - gain) * alpha + gain * s
        rate = rate * (1 - alpha / (2 + ca)) if s > threshold else rate + increase
        rate = min(max(rate, floor * line), line)
        alphas.append(alpha)
        rates.append(rate)
    return alphas, rates


def test_aimd_log_follows_the_equations(tmp_path):
    log = tmp_path / "decisions.csv"
    doc = run(
        tmp_path,
        MIX,
        "--throttle",
        "netscope",
        "--throttle-ca",
        "proxy=3",
        "--throttle-window-us",
        "5",
        "--throttle-gain",
        "0.25",
        "--throttle-log",
        str(log),
    )
    thr = doc["environment"]["simulation"]["throttle"]
    assert thr["window_us"] == 5 and thr["gain"] == 0.25 and thr["signal"] == "stall"
    by_job = {j["job"]: j for j in thr["jobs"]}
    assert by_job["proxy"]["ca"] == 3 and by_job["cong"]["ca"] == 0
    assert by_job["cong"]["rate_cuts"] > 0  # the incast's senders stall
    with open(log) as fh:
        rows = list(csv.DictReader(fh))
    assert rows and set(rows[0]) == {"time_s", "node", "job", "signal", "alpha", "rate_gbps"}
    nodes = {}
    for r in rows:
        nodes.setdefault(r["node"], []).append(r)
    cut_nodes = 0
    for rs in nodes.values():
        ca = 3.0 if rs[0]["job"] == "proxy" else 0.0
        alphas, rates = aimd_replay(rs, 0.25, ca, thr["increase_gbps"], 100.0, 0.01, 0.01)
        for r, a, rate in zip(rs, alphas, rates):
            assert float(r["alpha"]) == pytest.approx(a, rel=1e-4, abs=1e-6)
            assert float(r["rate_gbps"]) == pytest.approx(rate, rel=1e-4)
        cut_nodes += min(rates) < 100.0
        times = [float(r["time_s"]) for r in rs]
        steps = {round(b - a, 9) for a, b in zip(times, times[1:])}
        assert steps == {5e-6}
    assert cut_nodes >= 6


def test_netscope_cuts_the_sensitive_job_less(tmp_path):
    common = ["--throttle-window-us", "5", "--throttle-signal", "occupancy"]
    common += ["--throttle-stall-threshold", "0.05"]
    d = run(tmp_path, MIX, "--throttle", "dcqcn", *common, out="d.json")
    n = run(tmp_path, MIX, "--throttle", "netscope", "--throttle-ca", "proxy=50", *common)

    def frac(doc, job):
        jobs = doc["environment"]["simulation"]["throttle"]["jobs"]
        return next(j for j in jobs if j["job"] == job)["mean_rate_fraction"]

    assert frac(d, "proxy") < 1.0
    assert frac(n, "proxy") > frac(d, "proxy")
    assert n["environment"]["simulation"]["throttle"]["signal"] == "occupancy"


@pytest.mark.parametrize(
    "opts, words",
    [
        (["--throttle", "aimd"], "throttle mode 'aimd'"),
        (["--throttle", "static:500"], "above the line rate"),
        (["--throttle-ca", "proxy=-2"], "--throttle-ca"),
        (["--throttle-signal", "ecn"], "expected stall, occupancy or blocked"),
        (["--throttle-window-us", "0"], "--throttle-window-us"),
    ],
)
def test_bad_throttle_options_exit_2(tmp_path, opts, words):
    job = tmp_path / "mix.job"
    job.write_text(MIX)
    out = tmp_path / "never.json"
    p = subprocess.run(
        [CONTEND, "jobs", str(job), *TOPO, "-o", str(out), *opts],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert words in p.stderr
    assert not out.exists()


def test_throttle_needs_the_simulator(tmp_path):
    job = tmp_path / "mix.job"
    job.write_text(MIX)
    p = subprocess.run(
        [CONTEND, "jobs", str(job), "--dry-run", "--nodes", "24", "--throttle", "dcqcn"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "--engine sim" in p.stderr and "contend throttle" in p.stderr


@pytest.mark.parametrize("signal", ["stall", "occupancy", "blocked"])
def test_each_signal_sees_the_incast_senders_held_back(tmp_path, signal):
    """The incast's senders are held back by the network in every sense the
    signals measure (no credit, credits in use, head of the first buffer
    waiting); the latency-bound proxy far less."""
    log = tmp_path / "decisions.csv"
    opts = ["--throttle", "dcqcn", "--throttle-window-us", "5", "--throttle-signal", signal]
    opts += ["--throttle-stall-threshold", "0.99", "--throttle-log", str(log)]
    doc = run(tmp_path, MIX, *opts)
    assert doc["environment"]["simulation"]["throttle"]["signal"] == signal
    with open(log) as fh:
        rows = list(csv.DictReader(fh))
    mean = {}
    for job in ("proxy", "cong"):
        sig = [float(r["signal"]) for r in rows if r["job"] == job]
        assert sig and all(0 <= s <= 1 for s in sig)
        mean[job] = sum(sig) / len(sig)
    assert mean["cong"] > 0.05 and mean["cong"] > 3 * mean["proxy"], mean
