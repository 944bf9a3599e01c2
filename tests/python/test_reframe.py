"""The ReFrame checks (examples/reframe/) run with ReFrame's local scheduler
on this host (ranks as virtual nodes, examples/reframe/config.py), scaled
down to seconds: ReFrame must report the Congestion Impact and the canaries'
latency and bandwidth as performance variables with their units, in its
JSON run report and its performance log, and a check must fail when its
reference range is made impossible."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUILD, ROOT, mpi_env, run_bounded
from contend.results import parse_results

CHECKS = ROOT / "examples" / "reframe" / "contend_checks.py"
CONFIG = ROOT / "examples" / "reframe" / "config.py"
# seconds, not minutes: two canaries, one congestor, 2 measurements each
QUICK = [
    "-S",
    "canaries=rr_lat,rr_bw",
    "-S",
    "measurements=2",
    "-S",
    "timeout_s=0.3",
    "-S",
    "ContendLoadCheck.congestors=pairwise_a2a",
    "-S",
    "ContendLoadCheck.canary_fraction=0.5",
]


def _reframe() -> str:
    """The reframe command; installs reframe-hpc into this Python when it is
    missing, skips (saying why) only when that fails."""
    local = Path(sys.executable).parent / "reframe"
    if local.exists():
        return str(local)
    if shutil.which("reframe"):
        return shutil.which("reframe")
    try:
        r = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "reframe-hpc"],
            capture_output=True,
            check=False,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        pytest.skip(f"reframe-hpc is not installed and pip could not install it: {e}")
    if r.returncode != 0 or not local.exists():
        pytest.skip(f"reframe-hpc is not installed and pip could not install it: {r.stderr[-500:]}")
    return str(local)


def run_reframe(tmp: Path, *args, timeout=240):
    """Runs ReFrame on the checks in tmp; returns (CompletedProcess, report)."""
    env = mpi_env()
    env["CONTEND"] = str(BUILD / "bin" / "contend")
    env["HOME"] = str(tmp)  # ReFrame keeps its results database under ~/.reframe
    cmd = [
        _reframe(),
        "-C",
        CONFIG,
        "-c",
        CHECKS,
        "--prefix",
        tmp,
        "--report-file",
        tmp / "report.json",
        *QUICK,
        *args,
        "-r",
    ]
    r = run_bounded(cmd, timeout=timeout, cwd=tmp, env=env)
    report = tmp / "report.json"
    assert report.exists(), r.stdout[-3000:] + r.stderr[-3000:]
    return r, json.loads(report.read_text())


def perfvars(report: dict) -> dict:
    """{check name: {variable: (value, ref, lower, upper, unit, result)}}."""
    out = {}
    for case in report["runs"][-1]["testcases"]:
        out[case["name"]] = {
            key.rsplit(":", 1)[-1]: tuple(v) for key, v in (case.get("perfvalues") or {}).items()
        }
    return out


@pytest.fixture(scope="module")
def passing_run(tmp_path_factory):
    binary = BUILD / "bin" / "contend"
    if not binary.exists():
        pytest.fail(f"{binary} not built: run `make build` (or set CONTEND_BUILD)")
    tmp = tmp_path_factory.mktemp("reframe")
    r, report = run_reframe(tmp)
    return tmp, r, report


def test_checks_pass_and_report_perf_variables(passing_run):
    _, r, report = passing_run
    assert r.returncode == 0, r.stdout[-4000:]
    cases = {c["name"]: c for c in report["runs"][-1]["testcases"]}
    assert set(cases) == {"ContendNetworkCheck", "ContendLoadCheck"}
    for c in cases.values():
        assert c["result"] == "pass", (
            c["name"],
            c["fail_phase"],
            c["fail_reason"],
            r.stdout[-3000:],
        )
    # the local system ran on this host, every rank a virtual node
    for c in cases.values():
        assert c["system"] == "local" and c["partition"] == "default"
        assert "--virtual-nodes" in c["executable_opts"]
    pv = perfvars(report)
    units = {
        "ContendNetworkCheck": {
            "rr_lat_mean": "usec",
            "rr_lat_p99": "usec",
            "rr_bw_mean": "MiB/s/rank",
            "rr_bw_p99": "MiB/s/rank",
        },
        "ContendLoadCheck": {
            "ci_rr_lat_mean": "x",
            "ci_rr_lat_p99": "x",
            "ci_rr_bw_mean": "x",
            "ci_rr_bw_p99": "x",
            "rr_lat_iso_mean": "usec",
            "rr_bw_iso_mean": "MiB/s/rank",
        },
    }
    for check, want in units.items():
        got = pv[check]
        assert set(got) == set(want), (check, got)
        for name, unit in want.items():
            value, _ref, _lo, _hi, u, result = got[name]
            assert u == unit and result == "pass", (check, name, got[name])
            assert isinstance(value, float), (check, name, value)
    net, load = pv["ContendNetworkCheck"], pv["ContendLoadCheck"]
    # plausible on one host over shared memory: a latency of 0.05 us .. 1 ms,
    # a bandwidth of 10 MiB/s .. 1 TiB/s per rank, an impact of 0.05x .. 50x
    for lat in (net["rr_lat_mean"][0], load["rr_lat_iso_mean"][0]):
        assert 0.05 < lat < 1000
    for bw in (net["rr_bw_mean"][0], load["rr_bw_iso_mean"][0]):
        assert 10 < bw < 1 << 20
    for name in ("ci_rr_lat_mean", "ci_rr_lat_p99", "ci_rr_bw_mean", "ci_rr_bw_p99"):
        assert 0.05 < load[name][0] < 50, (name, load[name])
        # the loose Congestion Impact range of the local system: 0.01x .. 50x
        assert load[name][1:4] == (1.0, -0.99, 49.0)


def test_values_come_from_the_results_file(passing_run):
    # what ReFrame reports is what contend wrote, not a parse of its tables
    tmp, _, report = passing_run
    pv = perfvars(report)["ContendLoadCheck"]
    results = next((tmp / "output").rglob("ContendLoadCheck/contend.json"))
    doc = parse_results(results.read_text(), str(results))  # the schema holds
    impact = {i["name"]: i for i in doc["impact"]}
    assert pv["ci_rr_lat_mean"][0] == pytest.approx(impact["rr_lat"]["ci_mean"])
    assert pv["ci_rr_bw_p99"][0] == pytest.approx(impact["rr_bw"]["ci_tail_99"])
    assert doc["command"] == "load" and doc["config"]["options"]["virtual_nodes"] == 1


def test_performance_log_has_every_variable(passing_run):
    tmp, _, report = passing_run
    pv = perfvars(report)
    for check, variables in pv.items():
        log = tmp / "perflogs" / "local" / "default" / f"{check}.log"
        lines = log.read_text().splitlines()
        header, last = lines[0], lines[-1]
        assert header.startswith("job_completion_time|name|system:partition|")
        fields = last.split("|")
        assert fields[1] == check and fields[2] == "local:default"
        # name=value|unit|ref|lower|upper|result, per variable
        logged = {}
        for i, f in enumerate(fields):
            if "=" in f:
                name, value = f.split("=", 1)
                logged[name] = (float(value), fields[i + 1], fields[i + 5])
        assert set(logged) == set(variables)
        for name, (value, unit, result) in logged.items():
            assert value == pytest.approx(variables[name][0])
            assert unit == variables[name][4] and result == "pass"


def test_impossible_reference_fails_the_check(tmp_path):
    # every Congestion Impact at most 0.001x: no run can meet that
    r, report = run_reframe(
        tmp_path, "-n", "^ContendLoadCheck$", "-S", "ContendLoadCheck.impact_limit=0.001"
    )
    assert r.returncode != 0
    (case,) = report["runs"][-1]["testcases"]
    assert case["result"] == "fail" and case["fail_phase"] == "performance"
    pv = perfvars(report)["ContendLoadCheck"]
    for name in ("ci_rr_lat_mean", "ci_rr_bw_mean"):
        value, ref, lower, upper, unit, result = pv[name]
        assert (ref, lower, upper, unit, result) == (0.001, None, 0.0, "x", "fail")
        assert value > 0.001
    # the canaries' own values have no range and pass
    assert pv["rr_lat_iso_mean"][5] == "pass"
    assert os.path.exists(tmp_path / "report.json")


# A stand-in for contend (-S contend=STUB): writes a stored results file,
# edited, to the -o path and prints what the sanity function looks for.
STUB = """#!{python}
import gzip, json, os, sys
args = sys.argv[1:]
doc = json.loads(gzip.decompress(open({fixtures!r}[args[0]], "rb").read()))
{edit}
if os.environ.get("OMPI_COMM_WORLD_RANK", "0") == "0":
    out = args[args.index("-o") + 1]
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(out + ".tmp", out)
print("Wall time: 0.01 s")
"""
# every value the checks read as a whole number, as the JSON writer may print
# them (a Congestion Impact of exactly 1.0 was `1`: an int to JSON readers)
WHOLE = """
for t in doc["tests"]:
    stats = t.get(t["metric"]) or {}
    for key in ("mean", "tail_99"):
        if isinstance(stats.get(key), float):
            stats[key] = max(1, round(stats[key]))
for ci in doc.get("impact", []):
    for key in list(ci):
        if key.startswith("ci_"):
            ci[key] = 1
"""


def run_stub(tmp_path, edit, *args):
    """ReFrame's checks on a stand-in for contend that writes the stored
    network and load results (tests/fixtures/results/) after `edit`."""
    results = ROOT / "tests" / "fixtures" / "results"
    fixtures = {
        "network": str(results / "network_vn1_n4.json.gz"),
        "load": str(results / "load_vn1_n10.json.gz"),
    }
    stub = tmp_path / "contend-stub"
    stub.write_text(STUB.format(python=sys.executable, fixtures=fixtures, edit=edit))
    stub.chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    return run_reframe(run, "-S", f"contend={stub}", *args)


def test_whole_numbers_in_the_results_are_reported_as_floats(tmp_path):
    """Deterministically what failed one run in three: a results file whose
    values are whole numbers (CI exactly 1) is still reported as floats."""
    r, report = run_stub(tmp_path, WHOLE)
    assert r.returncode == 0, r.stdout[-4000:]
    pv = perfvars(report)
    assert set(pv) == {"ContendNetworkCheck", "ContendLoadCheck"}
    for check, variables in pv.items():
        assert variables, check
        for name, (value, *_rest, result) in variables.items():
            assert type(value) is float and result == "pass", (check, name, value)
    load = pv["ContendLoadCheck"]
    assert {"ci_rr_lat_p99", "ci_rr_bw_sync_p99", "ci_allreduce_mean"} <= set(load), load
    assert all(v[0] == 1.0 for n, v in load.items() if n.startswith("ci_")), load
    assert pv["ContendNetworkCheck"]["rr_lat_mean"][0] >= 1.0


def test_a_null_value_fails_the_check_naming_it(tmp_path):
    edit = 'doc["impact"][1]["ci_tail_99"] = None'  # rr_bw_sync: no samples
    r, report = run_stub(tmp_path, edit, "-n", "^ContendLoadCheck$")
    assert r.returncode != 0
    (case,) = report["runs"][-1]["testcases"]
    assert case["result"] == "fail", case
    assert "impact rr_bw_sync.ci_tail_99 is null, not a finite number" in case["fail_reason"], (
        case["fail_phase"],
        case["fail_reason"],
    )
