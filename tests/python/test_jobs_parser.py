"""`contend jobs` input handling without MPI: the job-file grammar through
`--dry-run`, every malformed case reported once as FILE:LINE with exit
status 2, placements, the motif list, the dry-run JSON against its schema."""

import json

import jsonschema
import pytest
from conftest import BUILD, ROOT, SCHEMAS, otf2_built, run_bounded

ENV = {"PATH": "/usr/bin:/bin"}  # no MPI launcher environment: a dry run needs none


@pytest.fixture(scope="session")
def jobs_schema():
    return json.loads((SCHEMAS / "contend-jobs.schema.json").read_text())


def contend(*args, cwd=None):
    return run_bounded([BUILD / "bin" / "contend", *args], timeout=60, cwd=cwd, env=ENV)


def dry(tmp_path, text, *args, nodes=8, ppn=1, name="plan.json"):
    job = tmp_path / "t.job"
    job.write_text(text)
    out = tmp_path / name
    r = contend(
        "jobs", job, "--dry-run", "--nodes", nodes, "--ranks-per-node", ppn, "-o", out, *args
    )
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


def motif(doc, job, pos):
    return next(j for j in doc["jobs"] if j["name"] == job)["motifs"][pos]


GRAMMAR = """\
# comments start with '#', also after a directive
[VAR] N=64        # a variable
[VAR] SIZE=2KiB
[VAR] LAST=3

[JOB_NAME] halo
[NID_LIST] 0-{LAST},
           6          # an indented line continues the node list
[REPEAT] 3
[MOTIF] halo2d nx={N} ny={N} \\
        depth=2 iters=2
[MOTIF] compute dist=gaussian mean=350us stddev=10us
[JOB_ID] io              # Ember's spelling
[PLACEMENT] linear nodes=2
[MOTIF] incast msg_bytes={SIZE} root=1
[MOTIF] io_write api=posix layout=per_rank path="/tmp/x {job}-{rank}.dat"
"""


def test_grammar_features(tmp_path, jobs_schema):
    doc, text = dry(tmp_path, GRAMMAR, "--seed", "3")
    jsonschema.validate(doc, jobs_schema)
    assert doc["dry_run"] is True and doc["passes"] == [] and doc["seed"] == 3
    halo, io = doc["jobs"]
    assert halo["nodes"] == [0, 1, 2, 3, 6] and halo["repeat"] == 3 and halo["line"] == 6
    assert halo["placement"] == {"kind": "list", "line": 7, "seed": None}
    h = halo["motifs"][0]
    assert h["line"] == 10 and h["params"]["nx"] == 64 and h["params"]["depth"] == 2
    assert h["iterations_per_invocation"] == 2
    assert halo["motifs"][1]["params"]["mean"] == pytest.approx(350e-6)
    # linear placement takes the lowest free nodes
    assert io["nodes"] == [4, 5] and io["placement"]["kind"] == "linear"
    inc = io["motifs"][0]
    assert inc["params"]["msg_bytes"] == 2048
    assert io["motifs"][1]["params"]["path"] == "/tmp/x {job}-{rank}.dat"
    # incast: rank 0 (node 4) sends 2 KiB to the root (rank 1, node 5), once
    assert inc["traffic"]["pairs"] == [[4, 5, 2048, 1]]
    assert io["motifs"][1]["io"]["bytes_written"] == 2 * 1048576
    assert "job halo" in text and "job io" in text


def test_defines_override_variables(tmp_path):
    text = "[VAR] N=16\n[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] barrier iters={N}\n"
    doc, _ = dry(tmp_path, text, "-D", "N=5")
    assert motif(doc, "a", 0)["params"]["iters"] == 5
    doc, _ = dry(tmp_path, text, "-DN=7")
    assert motif(doc, "a", 0)["params"]["iters"] == 7


def test_placements(tmp_path):
    text = """\
[JOB_NAME] fixed
[NID_LIST] 1,3
[MOTIF] barrier
[JOB_NAME] lin
[PLACEMENT] linear nodes=3
[MOTIF] barrier
[JOB_NAME] i1
[PLACEMENT] interleaved nodes=2
[MOTIF] barrier
[JOB_NAME] i2
[PLACEMENT] interleaved nodes=3
[MOTIF] barrier
[JOB_NAME] rnd
[PLACEMENT] random nodes=3 seed=11
[MOTIF] barrier
"""
    doc, _ = dry(tmp_path, text, nodes=16)
    nodes = {j["name"]: j["nodes"] for j in doc["jobs"]}
    assert nodes["fixed"] == [1, 3]
    assert nodes["lin"] == [0, 2, 4]
    assert nodes["i1"] == [5, 7] and nodes["i2"] == [6, 8, 9]  # dealt round-robin
    used = [n for v in nodes.values() for n in v]
    assert len(used) == len(set(used)) == 13
    again, _ = dry(tmp_path, text, "--seed", "99", nodes=16, name="again.json")
    assert {j["name"]: j["nodes"] for j in again["jobs"]}["rnd"] == nodes["rnd"]  # seed=11 wins
    assert next(j for j in doc["jobs"] if j["name"] == "rnd")["placement"]["seed"] == 11


def test_random_placement_follows_the_run_seed(tmp_path):
    text = "[JOB_NAME] r\n[PLACEMENT] random nodes=4\n[MOTIF] barrier\n"
    a, _ = dry(tmp_path, text, "--seed", "1", nodes=64, name="a.json")
    b, _ = dry(tmp_path, text, "--seed", "1", nodes=64, name="b.json")
    c, _ = dry(tmp_path, text, "--seed", "2", nodes=64, name="c.json")
    assert a["jobs"][0]["nodes"] == b["jobs"][0]["nodes"] != c["jobs"][0]["nodes"]


def test_ranks_per_node_maps_ranks_to_nodes(tmp_path):
    doc, _ = dry(tmp_path, "[JOB_NAME] p\n[NID_LIST] 2,5\n[MOTIF] pingpong iters=3\n", ppn=2)
    pp = motif(doc, "p", 0)
    # 4 ranks: 0,1 on node 2 and 2,3 on node 5; rank 0 pings rank 2
    assert pp["traffic"]["pairs"] == [[2, 5, 8 * 13, 13], [5, 2, 8 * 13, 13]]
    assert doc["jobs"][0]["ranks"] == 4


MALFORMED = {
    "unknown_motif": ("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] nosuch\n", 3, "unknown motif"),
    "unknown_parameter": (
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] halo2d nz=4\n",
        3,
        "motif 'halo2d': no parameter 'nz'",
    ),
    "ill_typed_parameter": (
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] halo2d \\\n  nx=big\n",
        4,
        "nx='big' is not valid",
    ),
    "out_of_range_parameter": (
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] compute mean=-1\n",
        3,
        "mean='-1' is not valid",
    ),
    "overlapping_node_lists": (
        (
            "[JOB_NAME] a\n[NID_LIST] 0-3\n[MOTIF] barrier\n"
            "[JOB_NAME] b\n[NID_LIST] 3,4\n[MOTIF] barrier\n"
        ),
        5,
        "also in job 'a'",
    ),
    "more_nodes_than_available_list": (
        "[JOB_NAME] a\n[NID_LIST] 0-8\n[MOTIF] barrier\n",
        2,
        "the run has 8 nodes",
    ),
    "more_nodes_than_available_placement": (
        (
            "[JOB_NAME] a\n[NID_LIST] 0-5\n[MOTIF] barrier\n"
            "[JOB_NAME] b\n[PLACEMENT] random nodes=3\n[MOTIF] barrier\n"
        ),
        5,
        "needs 3 nodes but only 2",
    ),
    "unterminated_continuation_eof": (
        "[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier \\\n",
        3,
        "unterminated continuation",
    ),
    "unterminated_continuation_directive": (
        "[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier \\\n[MOTIF] barrier\n",
        3,
        "unterminated continuation",
    ),
    "undefined_variable": (
        "[JOB_NAME] a\n[NID_LIST] 0\n\n[MOTIF] barrier iters={ITERS}\n",
        4,
        "undefined variable '{ITERS}'",
    ),
    "variable_defined_too_late": (
        "[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier iters={K}\n[VAR] K=2\n",
        3,
        "undefined variable",
    ),
    "unknown_directive": ("[JOB_NAME] a\n[NODES] 0\n", 2, "unknown directive"),
    "motif_before_job": ("[MOTIF] barrier\n", 1, "before any [JOB_NAME]"),
    "job_without_nodes": ("[JOB_NAME] a\n[MOTIF] barrier\n", 1, "has no nodes"),
    "grid_does_not_fit": (
        "[JOB_NAME] a\n[NID_LIST] 0-2\n[MOTIF] halo2d px=2 py=2\n",
        3,
        "process grid",
    ),
    "pingpong_alone": ("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] pingpong\n", 3, "at least 2 ranks"),
    "io_layout_path": (
        "[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] io_read layout=per_rank path=/tmp/f\n",
        3,
        "{rank}",
    ),
    "measurements_in_job_file": (
        "[JOB_NAME] a\n[NID_LIST] 0-1\n[MOTIF] rr_lat measurements=5\n",
        3,
        "use [REPEAT]",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_job_files(tmp_path, case):
    text, line, what = MALFORMED[case]
    job = tmp_path / "bad.job"
    job.write_text(text)
    out = tmp_path / "plan.json"
    r = contend("jobs", job, "--dry-run", "--nodes", "8", "-o", out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("error:") == 1, r.stderr
    assert f"{job}:{line}: " in r.stderr, r.stderr
    assert what in r.stderr, r.stderr
    assert not out.exists() and not list(tmp_path.glob("plan.json*"))


@pytest.mark.parametrize(
    "args,what",
    [
        (["--mode", "sometimes"], "--mode"),
        (["--bogus"], "unknown option"),
        (["--dry-run"], "needs --nodes"),
        (["--nodes", "4"], "only applies with --dry-run"),
        (["-D", "9=1", "--dry-run", "--nodes", "2"], "-D"),
    ],
)
def test_bad_options(tmp_path, args, what):
    job = tmp_path / "ok.job"
    job.write_text("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier\n")
    r = contend("jobs", job, *args)
    assert r.returncode == 2 and what in r.stderr, r.stderr


def test_missing_and_unreadable_files(tmp_path):
    r = contend("jobs", "--dry-run", "--nodes", "2")
    assert r.returncode == 2 and "missing the job file" in r.stderr
    r = contend("jobs", tmp_path / "none.job", "--dry-run", "--nodes", "2")
    assert r.returncode == 2 and "cannot read job file" in r.stderr
    job = tmp_path / "ok.job"
    job.write_text("[JOB_NAME] a\n[NID_LIST] 0\n[MOTIF] barrier\n")
    r = contend("jobs", job, "--dry-run", "--nodes", "2", "-o", tmp_path / "no" / "dir.json")
    assert r.returncode == 2 and "cannot write" in r.stderr


def test_list_and_help():
    r = contend("jobs", "--list")
    assert r.returncode == 0
    for name in (
        "wl_allreduce",
        "compute",
        "halo2d",
        "halo3d",
        "halo3d_unstructured",
        "sweep3d",
        "fft",
        "incast",
        "pingpong",
        "pingpong_sweep",
        "io_write",
        "io_read",
        "barrier",
        "alltoall",
        "rr_lat",
        "pairwise_a2a",
    ):
        assert f" {name} " in r.stdout, name
    assert "kblock" in r.stdout and "transfer_bytes" in r.stdout
    assert "measurements" not in r.stdout  # not used in job files
    assert "I/O back ends" in r.stdout
    h = contend("jobs", "--help")
    assert h.returncode == 0 and "[PLACEMENT]" in h.stdout and "--mode" in h.stdout
    top = contend("list")
    assert "pingpong_sweep" in top.stdout and "I/O back ends" in top.stdout


def test_examples_plan(tmp_path, jobs_schema):
    examples = sorted((ROOT / "examples" / "jobs").glob("*.job"))
    assert len(examples) >= 3
    for ex in examples:
        if "replay trace=" in ex.read_text() and not otf2_built():
            continue  # a replay needs the OTF2 reader
        out = tmp_path / (ex.stem + ".json")
        # from the top: paths in the examples (trace=) are relative to it
        r = contend("jobs", ex, "--dry-run", "--nodes", "32", "--seed", "1", "-o", out, cwd=ROOT)
        assert r.returncode == 0, (ex, r.stderr)
        jsonschema.validate(json.loads(out.read_text()), jobs_schema)
