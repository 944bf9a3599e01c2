"""Property-based tests (Hypothesis) of the Python readers of user input:
results files of `contend network`/`load` and `contend jobs`, counter
files (the common CSV, the simulator's and the emulated cluster's),
sweep scenario files (the study files of `contend sweep`) and mitigate
results.  Inputs are valid files mutated (a field deleted or replaced by
an arbitrary JSON value or nested far too deep, the text truncated, bytes
spliced in, gzip inflating past the size limit) or plain garbage.  Properties: a reader returns or raises a ValueError (one
message, naming the file); the command-line front end exits 0 or 2 and,
on 2, prints one line on stderr: never a traceback."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import tempfile
from pathlib import Path
from unittest import mock

import pytest
from contend import cli, limits
from contend.jobsresults import parse_jobs
from contend.results import parse_results
from contend.studies import sweep
from contend.telemetry import cli as counters_cli
from contend.telemetry.reader import read_counters
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutations import deeply_nested, inflating, mutate, mutated_text, paths_of

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "tests" / "fixtures" / "results"
TELEMETRY = ROOT / "tests" / "fixtures" / "telemetry"
SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,  # the same examples on every run: CI failures reproduce
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---- strategies ----

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=8,
)


def mutated_documents(doc):
    paths = paths_of(doc)
    return st.builds(
        lambda i, op, value: mutate(doc, paths[i], op, value),
        st.integers(0, len(paths) - 1),
        st.integers(0, 2),
        json_value,
    )


# ---- harness ----


def _fixture_doc(name):
    return json.loads(gzip.decompress((RESULTS / name).read_bytes()))


def _run_cli(main, argv):
    """Runs a command's main in-process: (status, stderr text).  Any
    exception escaping main fails the test (a traceback for the user)."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse's own exit
            status = exc.code
    return status, err.getvalue()


def _assert_refused_or_read(status, stderr, prog):
    """Status 0, or 2 with one message: a first line naming the command,
    then only indented lines (a list of the file's errors)."""
    assert status in (0, 2), (status, stderr)
    if status == 2:
        lines = [ln for ln in stderr.splitlines() if ln.strip()]
        assert lines and lines[0].startswith(prog), stderr
        assert all(ln.startswith((" ", "\t")) for ln in lines[1:]), stderr
        assert "Traceback" not in stderr


def _write(tmp, name, text):
    path = Path(tmp) / name
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


# ---- results files (contend network / load) ----

LOAD_DOC = _fixture_doc("load_vn1_n10.json.gz")
JOBS_DOC = _fixture_doc("jobs_both_vn1_n4.json.gz")


@SETTINGS
@given(mutated_documents(LOAD_DOC))
def test_results_reader_mutated_document(doc):
    text = json.dumps(doc)
    try:
        parsed = parse_results(text, "r.json")
    except ValueError as exc:
        assert str(exc).startswith("r.json"), exc
        assert "\n" not in str(exc).strip()
    else:
        assert isinstance(parsed, dict)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, "r.json", text)
        status, stderr = _run_cli(cli.main, ["report", str(path)])
    _assert_refused_or_read(status, stderr, "contend report")


@SETTINGS
@given(mutated_text(json.dumps(LOAD_DOC, indent=1)[:6000]))
def test_results_reader_mutated_text(text):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, "r.json", text)
        status, stderr = _run_cli(cli.main, ["report", str(path)])
    _assert_refused_or_read(status, stderr, "contend report")


@SETTINGS
@given(st.binary(max_size=300))
def test_results_reader_arbitrary_bytes(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "r.json"
        path.write_bytes(data)
        status, stderr = _run_cli(cli.main, ["report", str(path)])
    assert status == 2, stderr  # no byte string under 300 B is a valid results file
    _assert_refused_or_read(status, stderr, "contend report")


@SETTINGS
@given(deeply_nested(LOAD_DOC))
def test_results_reader_deeply_nested(text):
    """Nesting beyond the limit anywhere: refused with one line, never a
    RecursionError (the parser's or a later walk's)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, "r.json", text)
        for argv in (["report", str(path)], ["compare", str(path)]):
            status, stderr = _run_cli(cli.main, argv)
            _assert_refused_or_read(status, stderr, f"contend {argv[0]}")
            assert "RecursionError" not in stderr


@SETTINGS
@given(inflating(json.dumps(LOAD_DOC), 3 * 4096))
def test_results_reader_inflating_gzip(data):
    """A gzip file inflating past the limit (4 KiB here) is refused naming it;
    one within it is read."""
    with (
        tempfile.TemporaryDirectory() as tmp,
        mock.patch.object(limits, "MAX_INPUT_BYTES", len(json.dumps(LOAD_DOC)) + 4096),
    ):
        path = Path(tmp) / "r.json.gz"
        path.write_bytes(data)
        status, stderr = _run_cli(cli.main, ["report", str(path)])
        inflated = len(gzip.decompress(data))
        assert status == (2 if inflated > limits.MAX_INPUT_BYTES else 0), stderr
    _assert_refused_or_read(status, stderr, "contend report")
    if status == 2:
        assert "decompresses to more than" in stderr


# ---- results of contend jobs ----


@SETTINGS
@given(mutated_documents(JOBS_DOC))
def test_jobs_results_reader_mutated_document(doc):
    text = json.dumps(doc)
    try:
        parse_jobs(text, "j.json")
    except ValueError as exc:
        assert str(exc).startswith("j.json"), exc
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, "j.json", text)
        status, stderr = _run_cli(cli.main, ["report", str(path)])
    _assert_refused_or_read(status, stderr, "contend report")


# ---- counter files ----

COUNTER_FILES = {
    "csv": (TELEMETRY / "csv" / "common.csv").read_text(),
    "sim": (TELEMETRY / "sim" / "counters.csv").read_text(),
    "cluster": (TELEMETRY / "cluster" / "stats.csv").read_text(),
}


@SETTINGS
@given(
    st.sampled_from(sorted(COUNTER_FILES)).flatmap(
        lambda src: st.tuples(st.just(src), mutated_text(COUNTER_FILES[src]))
    )
)
def test_counter_readers_mutated(case):
    source, text = case
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, f"{source}.csv", text)
        try:
            frame = read_counters(path, source)
        except ValueError as exc:
            assert str(path) in str(exc) or "source" in str(exc), exc
        else:
            assert list(frame.columns[:4]) == ["time_s", "component", "port", "counter"]
        status, stderr = _run_cli(counters_cli.main, ["pts", str(path), "--source", source])
    _assert_refused_or_read(status, stderr, "contend counters")


# ---- sweep scenario files (studies of `contend sweep`) ----

SWEEP_TEXT = (ROOT / "examples" / "sim" / "routing-sweep.txt").read_text()


@SETTINGS
@given(mutated_text(SWEEP_TEXT))
def test_sweep_scenario_reader_mutated(text):
    try:
        scenarios = sweep.parse_scenarios(text, "s.txt")
    except ValueError as exc:
        assert "s.txt" in str(exc).splitlines()[0], exc
    else:
        assert isinstance(scenarios, list)
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, "s.txt", text)
        status, stderr = _run_cli(cli.main, ["sweep", "count", str(path)])
    _assert_refused_or_read(status, stderr, "contend sweep")


def test_the_properties_can_fail(tmp_path):
    """The CLI check itself: a traceback-free refusal passes, a second
    line or a wrong status does not."""
    _assert_refused_or_read(2, "contend report: error: x\n", "contend report")
    _assert_refused_or_read(
        2, "contend sweep: error: 2 errors:\n  a:1: x\n  a:2: y\n", "contend sweep"
    )
    with pytest.raises(AssertionError):
        _assert_refused_or_read(2, "contend report: error: x\nTraceback\n", "contend report")
    with pytest.raises(AssertionError):
        _assert_refused_or_read(2, "Traceback (most recent call last):\n", "contend report")
    with pytest.raises(AssertionError):
        _assert_refused_or_read(1, "", "contend report")
