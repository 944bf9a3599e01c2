"""`contend network` and `contend load` under MPI on one host with virtual
nodes: every canary and congestor runs with --verify and produces samples;
the split, the sub-communicators, the seed and the impact are checked from
the results file, which must validate against the schema."""

import json
import math

import jsonschema
import pytest

SHORT = ["--timeout", "0.3", "--measurements", "2", "-q"]


def load_results(path, schema):
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, schema)
    return doc


def stats(test):
    return test[test["metric"]]


def by_phase(doc, phase):
    return {t["name"]: t for t in doc["tests"] if t["phase"] == phase}


def expected_split(nodes, fraction, ncong):
    """GPCNeT split: round(fraction * nodes) canary nodes, the rest evenly
    over the congestors (the first ones take one more)."""
    canary = math.floor(fraction * nodes + 0.5)
    per, extra = divmod(nodes - canary, ncong)
    return [canary] + [per + (1 if k < extra else 0) for k in range(ncong)]


def test_network_runs_every_canary_with_verify(mpirun, tmp_path, results_schema):
    out = tmp_path / "net.json"
    r = mpirun(4, "network", "--virtual-nodes", "1", "--verify", *SHORT, "-o", out)
    assert r.returncode == 0, r.stderr
    doc = load_results(out, results_schema)
    iso = by_phase(doc, "isolated")
    assert sorted(iso) == sorted(
        [
            "rr_lat",
            "rr_get_lat",
            "rr_bw",
            "rr_put_bw",
            "rr_bw_sync",
            "nat_bw",
            "allreduce",
            "alltoall",
        ]
    )
    for name, t in iso.items():
        s = stats(t)
        assert s["count"] > 0, name
        assert s["min"] <= s["p50"] <= s["p99"] <= s["max"], name
        assert t["verify"]["enabled"] and t["verify"]["checked"] > 0 and t["verify"]["errors"] == 0
        assert sum(t["histogram"]["count"]) == s["count"]
    assert iso["rr_lat"]["units"] == "usec" and iso["rr_bw"]["units"] == "MiB/s/rank"
    # the table is a view of the same results
    assert "RR Two-sided Lat (8 B)" in r.stdout and "Multiple Alltoall (4096 B)" in r.stdout
    assert doc["impact"] == []


def test_load_with_every_congestor(mpirun, tmp_path, results_schema):
    out = tmp_path / "load.json"
    r = mpirun(
        16,
        "load",
        "--virtual-nodes",
        "1",
        "--congestors",
        "all",
        "--verify",
        "--seed",
        "11",
        *SHORT,
        "--iters",
        "16",
        "-o",
        out,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    doc = load_results(out, results_schema)
    congestors = [
        "pairwise_a2a",
        "p2p_incast",
        "rma_put_incast",
        "rma_get_bcast",
        "dl_allreduce",
        "p2p_bcast",
    ]
    groups = doc["placement"]["groups"]
    assert [g["name"] for g in groups] == ["canaries"] + congestors
    assert [len(g["nodes"]) for g in groups] == expected_split(16, 0.2, 6)
    assert all(len(g["nodes"]) >= 2 for g in groups)
    assert sorted(n for g in groups for n in g["nodes"]) == list(range(16))
    for phase in ("congestor_alone", "congestor_loading"):
        names = {t["name"] for t in doc["tests"] if t["phase"] == phase and stats(t)["count"] > 0}
        assert names == set(congestors), phase
    for t in doc["tests"]:
        assert t["verify"]["errors"] == 0, t["name"]
        # every row's histogram holds its own samples (the table's merged
        # congestor rows must not leak into them)
        assert sum(t["histogram"]["count"]) == stats(t)["count"], (t["name"], t["phase"])
        if t["phase"] in ("isolated", "congested", "congestor_alone"):
            assert t["verify"]["checked"] > 0, (t["name"], t["phase"])
    iso, cong = by_phase(doc, "isolated"), by_phase(doc, "congested")
    assert sorted(iso) == sorted(cong) == ["allreduce", "rr_bw_sync", "rr_lat"]
    # Congestion Impact from the recorded (unrounded) values, GPCNeT eq. 1-2
    for imp in doc["impact"]:
        i, c = stats(iso[imp["name"]]), stats(cong[imp["name"]])
        if imp["metric"] == "lat_us":
            assert imp["ci_mean"] == pytest.approx(c["mean"] / i["mean"], rel=1e-12)
            assert imp["ci_tail_99"] == pytest.approx(c["tail_99"] / i["tail_99"], rel=1e-12)
        else:
            assert imp["ci_mean"] == pytest.approx(i["mean"] / c["mean"], rel=1e-12)
            assert imp["ci_tail_99"] == pytest.approx(i["tail_99"] / c["tail_99"], rel=1e-12)
    assert {imp["name"] for imp in doc["impact"]} == set(iso)
    assert "Congestion Impact" in r.stdout


def test_subcommunicators_hold_one_rank_per_node(mpirun, tmp_path, results_schema):
    out = tmp_path / "ppn2.json"
    r = mpirun(
        16,
        "load",
        "--virtual-nodes",
        "2",
        "--canary-fraction",
        "0.25",
        "--congestors",
        "pairwise_a2a,rma_put_incast",
        "--canaries",
        "rr_lat,rr_put_bw",
        "--verify",
        *SHORT,
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    doc = load_results(out, results_schema)
    env = doc["environment"]
    assert (env["nodes"], env["ranks_per_node_min"], env["ranks_per_node_max"]) == (8, 2, 2)
    sizes = {g["name"]: len(g["nodes"]) for g in doc["placement"]["groups"]}
    assert list(sizes.values()) == expected_split(8, 0.25, 2)
    subs = doc["placement"]["subcommunicators"]
    assert len(subs) == 2 * len(sizes)  # one per node-local rank and group
    for s in subs:
        assert s["ranks"] == s["distinct_nodes"] == sizes[s["group"]]
    assert sorted((s["group"], s["local_rank"]) for s in subs) == sorted(
        (g, lr) for g in sizes for lr in (0, 1)
    )


def test_seed_reproduces_split(mpirun, tmp_path, results_schema):
    docs = []
    for i, seed in enumerate(["42", "42", "43"]):
        out = tmp_path / f"s{i}.json"
        r = mpirun(
            10,
            "load",
            "--virtual-nodes",
            "1",
            "--seed",
            seed,
            "--canaries",
            "rr_lat",
            "--congestor-baseline=false",
            *SHORT,
            "-o",
            out,
        )
        assert r.returncode == 0, r.stderr
        docs.append(load_results(out, results_schema))
    assert docs[0]["seed"] == 42 and docs[0]["seed_source"] == "user"
    assert docs[0]["placement"] == docs[1]["placement"]
    assert docs[0]["placement"]["node_order"] != docs[2]["placement"]["node_order"]
    assert sorted(docs[0]["placement"]["node_order"]) == list(range(10))


def test_time_seed_is_recorded_and_replays(mpirun, tmp_path, results_schema):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    r = mpirun(10, "load", "--virtual-nodes", "1", "--canaries", "rr_lat", *SHORT, "-o", a)
    assert r.returncode == 0, r.stderr
    first = load_results(a, results_schema)
    assert first["seed_source"] == "time" and str(first["seed"]) in r.stdout
    r = mpirun(
        10,
        "load",
        "--virtual-nodes",
        "1",
        "--canaries",
        "rr_lat",
        "--seed",
        str(first["seed"]),
        *SHORT,
        "-o",
        b,
    )
    assert r.returncode == 0, r.stderr
    assert load_results(b, results_schema)["placement"] == first["placement"]


def test_congestor_only_mode(mpirun, tmp_path, results_schema):
    out = tmp_path / "conly.json"
    r = mpirun(8, "load", "--virtual-nodes", "1", "--congestor-only", "--verify", *SHORT, "-o", out)
    assert r.returncode == 0, r.stderr
    doc = load_results(out, results_schema)
    assert {t["phase"] for t in doc["tests"]} == {"congestor_alone"}
    assert {t["name"] for t in doc["tests"] if stats(t)["count"] > 0} == {
        "pairwise_a2a",
        "p2p_incast",
        "rma_put_incast",
        "rma_get_bcast",
    }
    assert [len(g["nodes"]) for g in doc["placement"]["groups"]] == [0, 2, 2, 2, 2]
    assert doc["impact"] == []


def test_verify_detects_corrupted_payloads(mpirun, tmp_path, results_schema):
    out = tmp_path / "bad.json"
    r = mpirun(
        4,
        "network",
        "--virtual-nodes",
        "1",
        "--canaries",
        "rr_lat,allreduce",
        "--verify",
        "--verify-inject",
        "50",
        *SHORT,
        "-o",
        out,
    )
    assert r.returncode == 1, r.stderr
    assert "corrupted" in r.stderr
    doc = load_results(out, results_schema)
    assert all(t["verify"]["errors"] > 0 for t in doc["tests"])


def test_tiny_timeout_ends_in_bounded_time(mpirun, tmp_path, results_schema):
    out = tmp_path / "t.json"
    # paper-default counts (10000 x 30 x 200 ...) would take hours: the timeout ends each test
    r = mpirun(
        4, "network", "--virtual-nodes", "1", "--timeout", "0.05", "-q", "-o", out, timeout=120
    )
    assert r.returncode == 0, r.stderr
    doc = load_results(out, results_schema)
    for t in doc["tests"]:
        assert t["timed_out"] and 1 <= t["measurements_done"] < 10000, t["name"]


def test_watchdog_aborts_a_stuck_phase(mpirun, tmp_path):
    out = tmp_path / "w.json"
    r = mpirun(
        4,
        "network",
        "--virtual-nodes",
        "1",
        "--timeout",
        "60",
        "--watchdog",
        "2",
        "--canaries",
        "rr_lat",
        "-q",
        "-o",
        out,
        timeout=60,
    )
    assert r.returncode != 0
    assert "watchdog" in r.stderr
    assert not out.exists()
