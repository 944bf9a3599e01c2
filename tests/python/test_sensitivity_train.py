"""`contend sensitivity-train`: congested runs keep the congestors running past
the application, the same congestor repeats in every congested run, and bad
input refused (exit 2, one message) before any run."""

import json

import jsonschema
import pytest
from conftest import ROOT, SCHEMAS, run_bounded

JOB = ROOT / "examples" / "netscope" / "milc.job"
TOPO = "dragonfly:a=4,p=2,h=2"


def test_congested_runs_outlast_the_job(contend_bin, tmp_path):
    out = tmp_path / "m.json"
    r = run_bounded(
        [
            contend_bin,
            "sensitivity-train",
            JOB,
            "--job",
            "milc",
            "--topology",
            TOPO,
            "--runs",
            "4",
            "-D",
            "NODES=8",
            "-q",
            "-o",
            out,
        ],
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    schema = json.loads((SCHEMAS / "contend-sensitivity-train.schema.json").read_text())
    jsonschema.validate(doc, schema)
    assert [x["congestion"] for x in doc["runs"]] == ["none", "gpcnet:1"] * 2
    congested = [x for x in doc["runs"] if x["congestors"]]
    assert all(x["congestors_outlasted_job"] for x in congested)
    assert congested[0]["congestors"] == congested[1]["congestors"]
    quiet, loud = doc["runs"][0]["runtime_s"], congested[0]["runtime_s"]
    assert loud > quiet
    for x in doc["runs"]:
        res = json.loads((tmp_path / x["results"]).read_text())
        app = next(j for j in res["jobs"] if j["name"] == "milc")
        assert len(app["nodes"]) == 8 and (tmp_path / x["counters"]).exists()
        for j in res["jobs"]:
            if j["name"] != "milc":
                assert (
                    j["results"]["concurrent"]["perform_end_s"]
                    >= app["results"]["concurrent"]["perform_end_s"]
                )


def test_ranks_per_node_after_dashes(contend_bin, tmp_path):
    """GPCNeT-like runs with several ranks per node: the option reaches every run
    (application and congestors), not the fabric query, which does not take it."""
    out = tmp_path / "m.json"
    r = run_bounded(
        [contend_bin, "sensitivity-train", JOB, "--job", "milc", "--topology", TOPO,
         "--runs", "2", "-D", "NODES=8", "-q", "-o", out, "--", "--ranks-per-node", "2"],
        timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["jobs_args"][-2:] == ["--ranks-per-node", "2"]
    for x in doc["runs"]:
        res = json.loads((tmp_path / x["results"]).read_text())
        for j in res["jobs"]:
            assert int(j["ranks"]) == 2 * len(j["nodes"]), j["name"]
        assert len(res["jobs"]) == (5 if x["congestors"] else 1)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--job", "nope"], "no job named 'nope'"),
        (["--job", "milc", "--congestion", "gpcnet:0"], "(0, 1]"),
        (["--job", "milc", "-D", "NODES=70"], "fewer than the 8"),
        (["--job", "milc", "--runs", "0"], "--runs: expected an integer from 1 to"),
        # a stray word before -- is refused, not dropped (what follows -- goes to the runs)
        (
            ["--job", "milc", "stray", "--", "--ranks-per-node", "2"],
            "unrecognized arguments: stray",
        ),
    ],
)
def test_bad_input_exits_2(contend_bin, tmp_path, args, needle):
    r = run_bounded(
        [
            contend_bin,
            "sensitivity-train",
            JOB,
            "--topology",
            TOPO,
            "-o",
            tmp_path / "x.json",
            *args,
        ],
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_directory_as_job_file(contend_bin, tmp_path):
    r = run_bounded(
        [contend_bin, "sensitivity-train", tmp_path, "--job", "x", "-o", tmp_path / "x.json"],
        timeout=60,
    )
    assert r.returncode == 2 and "is a directory" in r.stderr
