"""The reproduction report (bench/fidelity, contend.fidelity, the fidelity
view): the document and its schema, every claim's verdict rule on hand-made
per-seed values, `contend report`/`html` listing every registered claim, a
--quick run of the cheapest claim end to end (and its reuse), bad input."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import BUILD, ROOT, run_bounded
from contend.fidelity import fattree, gpcnet, netscope, stressbench
from contend.fidelity.claim import (
    FAILS,
    HOLDS,
    NOT_MEASURED,
    QUALITATIVE,
    VERDICTS,
    SeedValue,
)
from contend.fidelity.document import claim_entry, document, load_fidelity, validate_document
from contend.fidelity.registry import CLAIMS
from contend.fidelity.runner import run_claims
from contend.results import ResultsError

BENCH = ROOT / "bench" / "fidelity"


def seeds(values, **detail):
    """SeedValues 1.. of ``values``, each with ``detail`` (per-seed lists allowed)."""
    out = []
    for i, v in enumerate(values):
        d = {k: (x[i] if isinstance(x, list) else x) for k, x in detail.items()}
        out.append(SeedValue(i + 1, v, d))
    return out


def hand_made_document() -> dict:
    """Every registered claim: the first measured with made-up values, the rest not."""
    entries = []
    for k, c in enumerate(CLAIMS):
        if k == 0:
            vals = seeds([5.0, 6.0, 7.5, 8.0, 9.0])
            verdict, reason = c.judge(vals, c)
            builds = {1: ["0123456789ab"], 2: ["0123456789ab"], 3: ["fedcba987654"]}
            entries.append(
                claim_entry(c, vals, {6: "failed"}, verdict, reason, ["x"], False, builds)
            )
        else:
            entries.append(claim_entry(c, [], {}, NOT_MEASURED, "not run", ["contend x"], False))
    return document(["bench/fidelity"], [1, 2, 3, 4, 5, 6], False, [], None, entries)


# --- the document -------------------------------------------------------------


def test_the_document_validates_and_a_broken_one_is_named(tmp_path):
    doc = hand_made_document()
    validate_document(doc, "doc")
    assert next(c["verdict"] for c in doc["claims"]) in VERDICTS
    first = doc["claims"][0]
    assert first["median"] == 7.5 and first["min"] == 5.0 and first["max"] == 9.0
    assert first["seeds_measured"] == 5 and first["seeds"][-1]["error"] == "failed"
    bad = json.loads(json.dumps(doc))
    bad["claims"][1]["verdict"] = "probably"
    with pytest.raises(ResultsError, match="verdict"):
        validate_document(bad, "bad.json")
    bad = json.loads(json.dumps(doc))
    bad["claims"][2]["id"] = bad["claims"][1]["id"]
    with pytest.raises(ResultsError, match="twice"):
        validate_document(bad, "bad.json")
    path = tmp_path / "f.json"
    path.write_text(json.dumps(doc))
    assert load_fidelity(path)["claims"][0]["id"] == CLAIMS[0].id


def test_every_claim_is_a_complete_record():
    ids = [c.id for c in CLAIMS]
    assert len(set(ids)) == len(ids)
    for c in CLAIMS:
        assert c.rule and c.figure and c.where and c.quantity and c.settings, c.id
        steps = c.steps(1, False)
        assert steps, c.id
        # seeds differ in their runs (a claim measured at 5 seeds runs 5 different things)
        assert [s.text() for s in steps] != [s.text() for s in c.steps(2, False)], c.id
    # claims a quick run can measure do it with other runs than a full one
    for c in CLAIMS:
        if c.quick is not None and not c.unmeasured:
            assert {s.where for s in c.steps(1, True)}.isdisjoint(
                s.where for s in c.steps(1, False)
            )


def test_the_paper_figures_come_from_the_papers():
    by = {c.id: c for c in CLAIMS}
    assert by["gpcnet_crystal_aries_like"].paper_value == pytest.approx(47.1 / 6.6, abs=1e-3)
    assert by["gpcnet_summit_ib_like"].paper_value == pytest.approx(613.5 / 6.6, abs=1e-3)
    assert by["gpcnet_malbec_slingshot_like"].paper_value == pytest.approx(9.7 / 9.1, abs=1e-3)


# --- the verdict rules ---------------------------------------------------------


@pytest.mark.parametrize(
    "values, detail, verdict",
    [
        ([0.72, 0.8, 0.55, 0.9, 0.75], {}, HOLDS),
        ([0.72, 0.8, 0.45, 0.9, 0.75], {}, QUALITATIVE),  # minimum below 0.5
        ([0.72, 0.8, 0.55, 0.9, 0.75], {"rank_deficient": [0, 0, 1, 0, 0]}, QUALITATIVE),
        ([0.6, 0.65, 0.55, 0.52, 0.66], {}, QUALITATIVE),  # median below 0.7
        ([0.3, 0.45, 0.6, 0.2, 0.4], {}, FAILS),
    ],
)
def test_latency_model_rule(values, detail, verdict):
    c = netscope.LATENCY
    assert c.judge(seeds(values, **detail), c)[0] == verdict


@pytest.mark.parametrize(
    "gaps, verdict",
    [([0.5, 1.2, 0.1, 0.3, 2.0], HOLDS), ([0.5, -0.2, 0.1, 0.3, -2.0], QUALITATIVE),
     ([0.5, -0.2, -0.1, 0.3, -2.0], FAILS)],
)  # fmt: skip
def test_sensitivity_order_rule(gaps, verdict):
    c = netscope.SENSITIVITY
    assert c.judge(seeds(gaps), c)[0] == verdict


def mitigation(net, dcqcn, static):
    n = len(net)
    ratio = [(d - 1) / (x - 1) for x, d in zip(net, dcqcn)]
    return seeds(ratio, netscope_p99=net, dcqcn_p99=dcqcn, static_p99=static), n


@pytest.mark.parametrize(
    "net, dcqcn, static, verdict",
    [
        ([1.1] * 5, [2.0, 1.8, 1.5, 1.6, 1.9], [3.0] * 5, HOLDS),  # ratios 5-10: within 3x of 11.8
        ([1.5] * 5, [2.0, 1.8, 1.9, 1.7, 2.2], [3.0] * 5, QUALITATIVE),  # lowest, ratio ~2
        ([1.5, 1.5, 2.5, 1.5, 1.5], [2.0] * 5, [3.0] * 5, FAILS),  # one seed set not lowest
        ([1.1] * 5, [2.0] * 5, [1.05, 3, 3, 3, 3], FAILS),  # static beats it once
    ],
)
def test_mitigation_rule(net, dcqcn, static, verdict):
    c = netscope.MITIGATION_4
    values, _ = mitigation(net, dcqcn, static)
    assert c.judge(values, c)[0] == verdict


@pytest.mark.parametrize(
    "cis, verdict",
    [([5.0, 9.0, 20.0, 7.0, 8.0], HOLDS), ([40.0, 30.0, 25.0, 50.0, 60.0], QUALITATIVE),
     ([1.2, 1.1, 1.5, 1.0, 1.3], FAILS)],
)  # fmt: skip
def test_gpcnet_ci_rule(cis, verdict):
    c = gpcnet.SYSTEM_CLAIMS[0]  # Crystal: 7.14
    assert c.judge(seeds(cis), c)[0] == verdict


def test_gpcnet_ci_rule_at_a_paper_value_below_two():
    c = next(x for x in gpcnet.SYSTEM_CLAIMS if x.id.startswith("gpcnet_malbec"))  # 1.07
    assert c.judge(seeds([1.0, 1.2, 1.1, 2.5, 1.0]), c)[0] == HOLDS
    assert c.judge(seeds([1.9, 1.8, 1.7, 1.9, 1.6]), c)[0] == HOLDS  # within 3x
    assert c.judge(seeds([4.0, 5.0, 3.9, 4.5, 4.1]), c)[0] == FAILS  # beyond 3x and above 2


@pytest.mark.parametrize(
    "malbec, crystal, summit, verdict",
    [([1.1] * 5, [7.0] * 5, [90.0] * 5, HOLDS),
     ([2.5] * 5, [7.0] * 5, [90.0] * 5, QUALITATIVE),  # lowest, not <= 2
     ([1.1] * 5, [95.0] * 5, [90.0] * 5, QUALITATIVE),  # aries and ib swapped
     ([1.1, 1.1, 9.0, 1.1, 1.1], [7.0] * 5, [90.0] * 5, FAILS)],
)  # fmt: skip
def test_gpcnet_order_rule(malbec, crystal, summit, verdict):
    c = gpcnet.ORDER_CLAIM
    v = seeds(malbec, malbec_ci_p99=malbec, crystal_ci_p99=crystal, summit_ci_p99=summit)
    assert c.judge(v, c)[0] == verdict


@pytest.mark.parametrize(
    "worst, lowest, verdict",
    [([1] * 5, [-6.0] * 5, HOLDS), ([1, 1, 1, 0, 0], [-6.0] * 5, QUALITATIVE),
     ([1] * 5, [-6.0, -8.0, -6.0, -6.0, -6.0], QUALITATIVE), ([1, 0, 0, 0, 1], [-6.0] * 5, FAILS)],
)  # fmt: skip
def test_fattree_rule(worst, lowest, verdict):
    c = fattree.FATTREE
    v = seeds([-6.0] * 5, amg_worst_is_bisection=worst, worst_difference_pct=lowest,
              signs_as_poster=10, signs_compared=12)  # fmt: skip
    assert c.judge(v, c)[0] == verdict


@pytest.mark.parametrize(
    "ratios, verdict",
    [([1.0, 1.1, 0.9, 1.14, 0.86], HOLDS), ([1.0, 1.3, 0.9, 1.1, 0.7], QUALITATIVE),
     ([1.3, 1.4, 1.2, 1.1, 1.5], FAILS)],
)  # fmt: skip
def test_stressbench_rule(ratios, verdict):
    c = stressbench.STRESSBENCH
    assert c.judge(seeds(ratios), c)[0] == verdict


def test_not_measured_claims_keep_their_commands(tmp_path):
    """Not selected, too long for --quick, or not measurable yet: not measured,
    nothing run, the commands that would measure it recorded."""
    entries = run_claims(CLAIMS, [], [1, 2], True, tmp_path, "/nonexistent/contend")
    assert [e["verdict"] for e in entries] == [NOT_MEASURED] * len(CLAIMS)
    assert all(e["commands"] and e["seeds"] == [] for e in entries)
    long = [c for c in CLAIMS if c.quick is None]
    entries = run_claims(long, long, [1], True, tmp_path, "/nonexistent/contend")
    assert all(e["verdict"] == NOT_MEASURED for e in entries)
    assert all("--quick" in e["verdict_reason"] or "output" in e["verdict_reason"] for e in entries)
    assert list(tmp_path.iterdir()) == []  # nothing ran


def test_each_seed_names_the_builds_whose_results_it_read(tmp_path):
    """A seed's builds are the tool.git_commit of the contend results its
    commands wrote; other files and older results name none."""
    from contend.fidelity.runner import build_of
    from contend.reports.views.fidelity import builds_text

    cases = {
        "new.json": {"tool": {"name": "contend", "version": "0.1.0", "git_commit": "abc123def456"}},
        "old.json": {"tool": {"name": "contend", "version": "0.1.0"}},
        "unknown.json": {"tool": {"name": "contend", "version": "0.1.0", "git_commit": None}},
        "python.json": {"tool": {"name": "contend-study", "git_commit": "abc123def456"}},
        "list.json": [1, 2],
    }
    for name, body in cases.items():
        (tmp_path / name).write_text(json.dumps(body))
    (tmp_path / "text.json").write_text("not json")
    got = {p.name: build_of(p) for p in tmp_path.iterdir()}
    assert got == {"new.json": "abc123def456", "old.json": None, "unknown.json": None,
                   "python.json": None, "list.json": None, "text.json": None}  # fmt: skip
    assert build_of(tmp_path / "missing.json") is None
    first = hand_made_document()["claims"][0]
    assert [s.get("builds") for s in first["seeds"]][:4] == [
        ["0123456789ab"],
        ["0123456789ab"],
        ["fedcba987654"],
        [],
    ]
    assert builds_text(first) == "0123456789ab (seeds 1, 2); fedcba987654 (seed 3)"
    assert builds_text(hand_made_document()["claims"][1]) == ""


def test_a_failed_run_costs_its_seed_not_the_report(tmp_path):
    c = netscope.LATENCY
    entries = run_claims([c], [c], [1], True, tmp_path, "/bin/false")
    (e,) = entries
    assert e["verdict"] == NOT_MEASURED and "failed (status 1" in e["verdict_reason"]
    assert e["seeds"][0]["error"] and e["seeds"][0]["value"] is None


# --- contend report / html ------------------------------------------------------


def contend(*args, **kw):
    return run_bounded([BUILD / "bin" / "contend", *args], timeout=kw.get("timeout", 120))


@pytest.fixture
def doc_file(tmp_path):
    path = tmp_path / "fidelity.json"
    path.write_text(json.dumps(hand_made_document()))
    return path


def test_report_names_the_builds(doc_file):
    r = contend("report", doc_file)
    assert r.returncode == 0, r.stderr
    assert "builds 0123456789ab (seeds 1, 2); fedcba987654 (seed 3)" in r.stdout


def test_report_lists_every_claim(doc_file):
    for form in ("text", "markdown", "csv", "json"):
        r = contend("report", doc_file, "--format", form)
        assert r.returncode == 0, r.stderr
        for c in CLAIMS:
            assert c.id in r.stdout, (form, c.id)
    text = contend("report", doc_file).stdout
    assert "7.500 [5.000, 9.000]" in text and "5/6" in text  # median [range], seeds


def test_html_has_a_section_per_paper_and_coloured_verdicts(doc_file, tmp_path):
    out = tmp_path / "f.html"
    r = contend("html", doc_file, "-o", out)
    assert r.returncode == 0, r.stderr
    page = out.read_text()
    for c in CLAIMS:
        assert c.id in page
    for title in ("GPCNeT", "StressBench", "Netscope", "Fat-tree"):
        assert f"<h3>{title}" in page
    assert page.count("background:#e0e0e0") == len(CLAIMS) - 1  # not measured: grey


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["claims"][0].update(verdict="probably"),
        lambda d: d["claims"][0].update(median=None, seeds="x"),
        lambda d: d.update(schema_version="2.0"),
        lambda d: d["claims"][0]["seeds"][0].update(value="fast"),
    ],
)
def test_bad_documents_exit_2_with_one_line(tmp_path, change):
    doc = hand_made_document()
    change(doc)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    for cmd in (("report", path), ("html", path, "-o", tmp_path / "bad.html")):
        r = contend(*cmd)
        assert r.returncode == 2
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
        assert str(path) in r.stderr
    assert not (tmp_path / "bad.html").exists()


# --- bench/fidelity -----------------------------------------------------------------


def bench(*args, timeout=120):
    env = dict(os.environ, CONTEND_BUILD=str(BUILD))
    return run_bounded([sys.executable, BENCH, *args], timeout=timeout, env=env)


def test_quick_run_of_the_latency_model_end_to_end_and_rerun_reuses(tmp_path):
    work, out = tmp_path / "work", tmp_path / "fidelity.json"
    args = ["--quick", "--seeds", "2", "--only", "netscope_latency_model", "--workdir", work]
    r = bench(*args, "-o", out, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = load_fidelity(out)
    assert doc["config"]["quick"] is True and doc["config"]["seeds"] == [1, 2]
    (lat,) = [c for c in doc["claims"] if c["id"] == "netscope_latency_model"]
    assert lat["verdict"] in (HOLDS, QUALITATIVE, FAILS) and lat["seeds_measured"] == 2
    assert all(-1 <= s["value"] <= 1 for s in lat["seeds"]) and lat["quick_changes"]
    assert {c["id"] for c in doc["claims"]} == {c.id for c in CLAIMS}
    assert all(c["verdict"] == NOT_MEASURED for c in doc["claims"] if c is not lat)
    again = bench(*args, "-o", tmp_path / "again.json")
    assert again.returncode == 0 and "ran in" not in again.stderr and "reused" in again.stderr
    assert load_fidelity(tmp_path / "again.json")["claims"] == doc["claims"]


@pytest.mark.parametrize(
    "args, named",
    [
        (["--only", "no_such_claim", "-o", "{tmp}/f.json"], "no_such_claim"),
        (["--seeds", "3", "-o", "{tmp}/f.json"], "--seeds"),
        (["--seeds", "0", "--quick", "-o", "{tmp}/f.json"], "--seeds"),
        (["--seeds", "101", "-o", "{tmp}/f.json"], "--seeds"),
        (["-o", "{tmp}/missing/f.json"], "missing"),
        (["--workdir", "{tmp}/w", "-o", "{tmp}/w/f.json"], "--workdir"),
        ([], "-o"),
    ],
)
def test_bench_bad_input_exits_2_before_any_run(tmp_path, args, named):
    (tmp_path / "w").mkdir()
    r = bench(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    assert r.returncode == 2, r.stderr
    assert named in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "f.json").exists() and not (tmp_path / "w" / "f.json").exists()


def test_bench_help_and_list():
    r = bench("--help")
    assert r.returncode == 0 and "--quick" in r.stdout and "--workdir" in r.stdout
    listing = bench("--list").stdout
    assert all(c.id in listing for c in CLAIMS)


def test_the_schema_is_shipped_beside_the_others():
    assert (ROOT / "schemas" / "contend-fidelity.schema.json").is_file()
    assert Path(ROOT / "python" / "contend" / "schemas" / "contend-fidelity.schema.json").is_file()


def test_record_overhead_json_is_for_replay_into_an_existing_directory(tmp_path):
    """bench/record_overhead --json (StressBench's claim reads it): refused
    with the other modes and into a missing directory, before any run."""
    env = dict(os.environ, CONTEND_BUILD=str(BUILD))
    tool = ROOT / "bench" / "record_overhead"
    for args in (["call", "--json", tmp_path / "r.json"],
                 ["replay", "--json", tmp_path / "missing" / "r.json"]):  # fmt: skip
        r = run_bounded([sys.executable, tool, *args], timeout=60, env=env)
        assert r.returncode == 2 and "--json" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []


def test_record_overhead_warns_on_a_busy_machine(monkeypatch, capsys):
    """A busy host makes the recorded runtime wait for a CPU (the ratio then
    reads low): the bench says so, and only then."""
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader(
        "record_overhead", str(ROOT / "bench" / "record_overhead")
    )
    spec = importlib.util.spec_from_loader("record_overhead", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    monkeypatch.setattr(mod.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(mod.os, "getloadavg", lambda: (0.1, 0.1, 0.1))
    mod.busy(2)
    assert "busy" not in capsys.readouterr().err
    monkeypatch.setattr(mod.os, "getloadavg", lambda: (2.3, 2.0, 2.0))
    mod.busy(2)
    err = capsys.readouterr().err
    assert "warning: the machine is busy (1-minute load 2.3 on 2 CPUs" in err


def test_stressbench_reads_the_load_beside_the_ratio(tmp_path):
    """The host's load at a run's start is in the seed's detail; an output
    written before it was recorded reads as null, not an error."""
    run = {"run": 0, "clock": "cpu", "recorded_s": 0.5, "replay_s": 0.45, "comm_only_s": 0.001,
           "sim_s": 0.07, "ratio": 0.9}  # fmt: skip
    d = tmp_path / "stressbench" / "run1"
    d.mkdir(parents=True)
    for load, want in ((None, None), (1.75, 1.75)):
        row = dict(run) if load is None else dict(run, load_avg_1min=load, cpus=2)
        (d / "replay.json").write_text(json.dumps({"runs": [row], "pass": True}))
        v = stressbench.extract(lambda *parts: tmp_path.joinpath(*parts), 1, False)
        assert v.value == 0.9 and v.detail["load_avg_1min"] == want


def test_interrupt_writes_no_document_and_keeps_the_finished_runs(tmp_path):
    """Ctrl-C (SIGINT to the group) after the first command: exit 130, one
    line, no document; the finished command's output stays for a rerun."""
    work, out = tmp_path / "work", tmp_path / "f.json"
    env = dict(os.environ, CONTEND_BUILD=str(BUILD))
    cmd = [sys.executable, BENCH, "--quick", "--seeds", "2", "--only", "netscope_latency_model",
           "--workdir", work, "-o", out]  # fmt: skip
    # SIGINT as from a terminal: a shell that starts the suite in the background leaves
    # SIGINT ignored, and an ignored signal stays ignored across exec; the default does not
    undo = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
            "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")  # fmt: skip
    proc = subprocess.Popen(
        [sys.executable, "-c", undo, *map(str, cmd[1:])], stderr=subprocess.PIPE, text=True,
        env=env, start_new_session=True,
    )  # fmt: skip
    try:
        for line in proc.stderr:
            if "step 1/2 ran in" in line:
                os.killpg(proc.pid, signal.SIGINT)
                break
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert "interrupted: no document written" in rest and "Traceback" not in rest
    assert not out.exists()
    assert (work / "netscope-latency-quick" / "seed1" / "train.json").is_file()


def test_claims_that_share_runs_name_the_same_steps():
    """The order claim runs nothing of its own (the three systems' load tests),
    and the sensitivity claim uses the latency claim's model of its seed."""
    from contend.fidelity.runner import commands_of

    systems = [c for c in gpcnet.SYSTEM_CLAIMS if c.id.split("_")[1] in gpcnet.ORDER]
    shared = {cmd for c in systems for cmd in commands_of(c, [1, 2], False)}
    assert set(commands_of(gpcnet.ORDER_CLAIM, [1, 2], False)) == shared
    latency = set(commands_of(netscope.LATENCY, [3], True))
    assert latency <= set(commands_of(netscope.SENSITIVITY, [3], True))


@pytest.mark.parametrize("bench", ["fidelity", "sim_gpcnet", "sim_scale", "report_speed"])
def test_bench_runs_as_typed_outside_the_venv(bench):
    """`bench/X --help` as the docs print it: /usr/bin/env python3 is the
    system's interpreter (the venv's bin is not on PATH), which lacks the
    scientific stack on a fresh machine; the bench re-runs itself under the
    checkout's .venv instead of dying on an ImportError."""
    venv_bin = str(ROOT / ".venv" / "bin")
    path = os.pathsep.join(
        p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p != venv_bin
    )
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = path or "/usr/bin:/bin"
    r = subprocess.run(
        [str(ROOT / "bench" / bench), "--help"],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "usage:" in r.stdout and "Traceback" not in r.stderr
