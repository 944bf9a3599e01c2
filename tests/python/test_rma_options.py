"""--rma-window / --rma-flush: bad values and engines they do not apply to
are refused before anything runs (exit 2, one message naming the option);
the recorded choice shows in the configuration tables.  (The choices
themselves, per MPI library, are checked in test_build.py.)"""

import gzip

import pytest
from conftest import ROOT, run_bounded
from contend.results import Results, parse_results


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--rma-window", "shared"], "--rma-window: expected auto, allocate or create"),
        (["--rma-flush", "local"], "--rma-flush: expected auto, all or target"),
        (["--rma-window", "create", "--engine", "sim"], "it needs --engine mpi"),
        (["--rma-flush", "target", "--dry-run", "--nodes", "4"], "it needs --engine mpi"),
    ],
)
def test_bad_rma_options(contend_bin, tmp_path, args, needle):
    r = run_bounded([contend_bin, "network", "-o", tmp_path / "r.json", *args], timeout=60)
    assert r.returncode == 2, r.stderr
    errors = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert len(errors) == 1 and needle in errors[0], r.stderr
    assert list(tmp_path.iterdir()) == []


def test_rma_options_in_help(contend_bin):
    r = run_bounded([contend_bin, "network", "--help"], timeout=60)
    assert "--rma-window" in r.stdout and "MPI_Win_allocate" in r.stdout
    assert "--rma-flush" in r.stdout and "MPI_Win_flush_all" in r.stdout


def test_rma_choice_shown_in_configuration_tables():
    fixture = ROOT / "tests/fixtures/results/network_vn1_n4.json.gz"
    with gzip.open(fixture, "rt") as fh:
        doc = parse_results(fh.read(), str(fixture))
    r = Results(path=fixture, doc=doc, label="x", tests=None, histograms=None, impact=None)
    assert "RMA" not in dict(r.run_pairs())  # files without the record: no row
    r.doc["environment"]["rma"] = {
        "window": "MPI_Win_create",
        "window_choice": "auto: MPICH 4.0 ...",
        "flush": "MPI_Win_flush",
        "flush_choice": "forced by --rma-flush",
    }
    row = dict(r.run_pairs())["RMA"]
    assert row.startswith("MPI_Win_create (auto: MPICH 4.0") and "MPI_Win_flush (forced" in row
