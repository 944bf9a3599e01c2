"""The GPCNeT schedule and the jobs orchestrator on the simulated fabric
(`--engine sim`): the unchanged motifs run as simulated MPI, time is
simulated time, results validate against the schemas, and bad engine
options are refused before anything runs."""

import json
import subprocess

import jsonschema
import pytest
from conftest import BUILD, SCHEMAS

BIN = BUILD / "bin" / "contend"


def run(*args, timeout=300):
    return subprocess.run(
        [str(BIN), *map(str, args)], check=False, capture_output=True, text=True, timeout=timeout
    )


def test_network_latency_is_the_fabric_zero_load_latency(tmp_path):
    out = tmp_path / "n.json"
    r = run(
        "network",
        "--engine",
        "sim",
        "--topology",
        "switch:nodes=8",
        "--timeout",
        "0.001",
        "--seed",
        "3",
        "-q",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, json.loads((SCHEMAS / "contend-results.schema.json").read_text()))
    assert doc["engine"] == "sim"
    sim = doc["environment"]["simulation"]
    assert sim["topology"] == "switch:nodes=8" and sim["packets"] > 0
    # an 8 B eager message crosses NIC link, router, NIC link: ser(8 B at
    # 100 Gbit/s) + 2 x 5 ns + 100 ns; each rank sends two (left, right)
    # back to back, so the second leaves one serialization later.  GPCNeT's
    # RR latency is half the exchange's time.
    ser_ns = 8 * 8 / 100.0
    exchange_us = (2 * ser_ns + 2 * 5 + 100) / 1000.0
    lat = next(t for t in doc["tests"] if t["name"] == "rr_lat")
    assert lat["lat_us"]["mean"] == pytest.approx(exchange_us / 2, rel=1e-6)
    get = next(t for t in doc["tests"] if t["name"] == "rr_get_lat")
    # a get is a request and a response: about one round trip
    assert get["lat_us"]["mean"] == pytest.approx(exchange_us, rel=0.02)


def test_load_on_a_tapered_tree_shows_congestion(tmp_path):
    out = tmp_path / "l.json"
    r = run(
        "load",
        "--engine",
        "sim",
        "--topology",
        "fattree:leaves=8,nodes=4,uplinks=1",
        "--timeout",
        "0.001",
        "--seed",
        "5",
        "-q",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    ci = {i["name"]: i for i in doc["impact"]}
    assert ci["rr_lat"]["ci_mean"] > 1.5, ci["rr_lat"]
    stalled = doc["environment"]["simulation"]["counters"]["top_stalled"]
    assert stalled and stalled[0]["stall_fraction"] > 0


def test_jobs_on_the_fabric(tmp_path):
    out = tmp_path / "j.json"
    jobfile = SCHEMAS.parent / "examples" / "jobs" / "quickstart.job"
    r = run(
        "jobs",
        jobfile,
        "--engine",
        "sim",
        "--topology",
        "switch:nodes=4",
        "--mode",
        "both",
        "--seed",
        "2",
        "-q",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, json.loads((SCHEMAS / "contend-jobs.schema.json").read_text()))
    assert doc["engine"] == "sim"
    assert doc["environment"]["simulation"]["payload_bytes"] > 0


@pytest.mark.parametrize(
    "args,words",
    [
        (["network", "--topology", "switch:nodes=4"], "--engine sim"),
        (["network", "--engine", "sim", "--topology", "switch:nodes=4", "--nodes", "9"], "4 nodes"),
        (["network", "--engine", "sim", "--topology", "ring:n=4"], "ring"),
        (["load", "--engine", "sim", "--network", "bogus-like"], "bogus-like"),
        (["network", "--engine", "sim", "--virtual-nodes", "2"], "virtual"),
    ],
)
def test_bad_engine_options(tmp_path, args, words):
    out = tmp_path / "x.json"
    r = run(*args, "-o", out, timeout=60)
    assert r.returncode == 2, r.stderr
    assert words in r.stderr
    assert not out.exists()


def test_file_io_on_the_fabric_is_volume_only(tmp_path):
    # the simulated fabric has no file system: files hold no data, so the
    # read-back check (always on for io_read) and --verify must not report
    # the blocks as corrupted; the volume is still counted
    job = tmp_path / "rw.job"
    data = tmp_path / "f-{run}-{job}-{rank}.dat"
    io = f"api=posix layout=per_rank block_bytes=1MiB transfer_bytes=256KiB path={data}"
    job.write_text(
        f"[JOB_NAME] rw\n[PLACEMENT] linear nodes=4\n[MOTIF] io_write {io}\n[MOTIF] io_read {io}\n"
    )
    out = tmp_path / "rw.json"
    r = run(
        "jobs",
        job,
        "--engine",
        "sim",
        "--topology",
        "switch:nodes=4",
        "--verify",
        "--seed",
        "1",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr + r.stdout
    assert "corrupted" not in r.stdout + r.stderr
    assert "no file system" in r.stdout
    doc = json.loads(out.read_text())
    assert doc["verify"]["errors"] == 0
    io = [m["io"] for m in doc["jobs"][0]["motifs"]]
    assert io[0]["bytes_written"] == 4 << 20 and io[1]["bytes_read"] == 4 << 20
    assert not list(tmp_path.glob("f-*.dat"))


def gpcnet_on_fabric(tmp_path, cc):
    # GPCNeT's load test with its default congestors on a 342-node
    # dragonfly, minimal routing; the congestors' rounds are shortened (64
    # iterations) so that they stop soon after the canaries.  (On 72 nodes
    # an incast has so few sources that a perflow counting only the last
    # period's sources passed too; here it does not.)
    out = tmp_path / f"gpcnet-{cc}.json"
    short = [a for m in CONGESTORS for a in (f"--{m}.iters", "64")]
    r = run(
        "load", "--engine", "sim", "--topology", DF342, "--routing", "minimal", "--cc", cc,
        "--timeout", "0.0002", "--seed", "1", *short, "-q", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    rr = next(i for i in doc["impact"] if i["name"] == "rr_lat")
    return doc, rr["ci_tail_99"]


DF342 = "dragonfly:a=6,p=3,h=3"
CONGESTORS = ("pairwise_a2a", "p2p_incast", "rma_put_incast", "rma_get_bcast")


def test_gpcnet_congestion_and_perflow_on_the_fabric(tmp_path):
    doc, ci_none = gpcnet_on_fabric(tmp_path, "none")
    assert ci_none >= 5
    # the most stalled ports are on the incast congestors' trees: the
    # stalled NICs are incast senders
    group = {n: g["name"] for g in doc["placement"]["groups"] for n in g["nodes"]}
    top = doc["environment"]["simulation"]["counters"]["top_stalled"][:5]
    nics = [int(p["component"][3:]) for p in top if p["component"].startswith("nic")]
    assert nics and all(group[n] in ("p2p_incast", "rma_put_incast") for n in nics), top
    _, ci_perflow = gpcnet_on_fabric(tmp_path, "perflow")
    assert ci_perflow <= ci_none / 2, (ci_perflow, ci_none)


def test_host_overhead_is_logp_o(tmp_path):
    # --mpi-overhead-ns o larger than the wire: a random-ring exchange is two
    # sends and two receives of one CPU each, 4 o; GPCNeT halves it
    out = tmp_path / "o.json"
    r = run(
        "network", "--engine", "sim", "--topology", "switch:nodes=8", "--canaries",
        "rr_lat,rr_get_lat", "--mpi-overhead-ns", "1000", "--timeout", "0.0002",
        "--seed", "3", "-q", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    tests = {t["name"]: t for t in json.loads(out.read_text())["tests"]}
    assert tests["rr_lat"]["lat_us"]["mean"] == pytest.approx(2.0, rel=1e-9)
    # a get: the request's send and the response's receive, twice
    assert tests["rr_get_lat"]["lat_us"]["mean"] == pytest.approx(2.0, rel=1e-9)


def test_verify_on_the_fabric(tmp_path):
    # --verify moves payload through the simulated MPI layer: point-to-point
    # and one-sided data arrive intact (and an injected corruption is
    # caught); collectives are timed, not computed, so their checks are
    # skipped rather than reported as corrupted
    out = tmp_path / "v.json"
    base = ["network", "--engine", "sim", "--topology", "switch:nodes=8", "--timeout", "0.0002",
            "--seed", "3", "--verify", "-q", "-o", out]  # fmt: skip
    r = run(*base)
    assert r.returncode == 0, r.stderr
    v = {t["name"]: t["verify"] for t in json.loads(out.read_text())["tests"]}
    assert all(v[n]["checked"] > 0 and v[n]["errors"] == 0 for n in ("rr_lat", "rr_put_bw"))
    assert v["allreduce"]["checked"] == 0 and v["alltoall"]["checked"] == 0
    r = run(*base, "--verify-inject", "100")
    assert r.returncode == 1 and "corrupted" in r.stderr


def test_get_to_a_target_that_finished_first(tmp_path):
    # rr_get_lat: a rank's gets go to its ring neighbours, which are passive
    # targets.  A target that finished its own gets used to close its
    # context while a neighbour's get to it was still on its way, and the
    # run ended with exit 3 ("a message for group rank N, which has no open
    # context"); closing is now collective, as MPI_Win_free is.
    out = tmp_path / "g.json"
    r = run(
        "network", "--engine", "sim", "--topology", "dragonfly:a=8,p=4,h=4", "--nodes", "64",
        "--measurements", "1", "--iters", "2", "--warmup", "0", "--canaries", "rr_get_lat",
        "--seed", "1", "-q", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    get = next(t for t in json.loads(out.read_text())["tests"] if t["name"] == "rr_get_lat")
    assert get["lat_us"]["mean"] > 0


@pytest.mark.parametrize(
    "fabric, want_ns",
    [
        (["--topology", "switch:nodes=8"], 0.0),  # no link between routers
        (["--topology", "dragonfly:a=4,p=2,h=2", "--global-latency-ns", "250"], 250.0),
        (["--topology", "dragonfly:a=4,p=2,h=2", "--global-latency-ns", "20",
          "--local-latency-ns", "30"], 30.0),
    ],
)  # fmt: skip
def test_control_latency_is_the_largest_router_link_latency(tmp_path, fabric, want_ns):
    # the NIC links (400 ns here) never count: they join a node to its router
    out = tmp_path / "n.json"
    r = run("network", "--engine", "sim", *fabric, "--node-latency-ns", "400", "--nodes", "8",
            "--timeout", "0.0001", "--seed", "3", "-q", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    sim = json.loads(out.read_text())["environment"]["simulation"]
    assert sim["control_latency_ns"] == want_ns
