"""The fat-tree study's motifs (bully_pairs, bully_incast, umt_like,
pf3d_like): on the trace engine, the simulated fabric and Open MPI (4
ranks, virtual nodes) their traffic per node pair is what their parameters
imply, computed here by hand from the parameters; the bullies' achieved
bandwidth per rank (bandwidth_gbps_per_rank, Gb/s) is bytes x 8 / time of
each sampling rank; payloads verify; bad parameters exit 2 before anything
runs; the example job files plan."""

import json
from collections import Counter

import jsonschema
import pytest
from conftest import BUILD, ROOT, SCHEMAS, run_bounded

CONTEND = BUILD / "bin" / "contend"
ENV = {"PATH": "/usr/bin:/bin"}
KIB = 1024
FATTREE = ["--engine", "sim", "--topology", "fattree:leaves=4,nodes=4,uplinks=2"]


def contend_jobs(job, *args, timeout=60):
    """contend jobs JOB ARGS... in process (no MPI), bounded."""
    return run_bounded([CONTEND, "jobs", job, *args], timeout=timeout, env=ENV)


@pytest.fixture(scope="module")
def jobs_schema():
    return json.loads((SCHEMAS / "contend-jobs.schema.json").read_text())


class Plan:
    """Rank-level sends of one motif, folded into node pairs."""

    def __init__(self, node_of):
        self.node_of = node_of
        self.bytes = Counter()
        self.msgs = Counter()
        self.sent = Counter()  # bytes per rank
        self.received = Counter()

    def send(self, src, dst, nbytes, times):
        key = (self.node_of[src], self.node_of[dst])
        self.bytes[key] += nbytes * times
        self.msgs[key] += times
        self.sent[src] += nbytes * times
        self.received[dst] += nbytes * times

    def pairs(self):
        return {k: (self.bytes[k], self.msgs[k]) for k in self.bytes}


def p_int(params, key, default):
    for kv in params.split():
        k, v = kv.split("=")
        if k == key:
            return int(v[:-3]) * KIB if v.endswith("KiB") else int(v)
    return default


def expect_pairs(params, n, node_of):
    """bully_pairs pairing=ranks: 2i <-> 2i+1, window messages each way."""
    plan = Plan(node_of)
    b, w, it = (
        p_int(params, "msg_bytes", 1 << 20),
        p_int(params, "window", 8),
        p_int(params, "iters", 4),
    )
    for r in range(n):
        plan.send(r, r ^ 1, b, w * it)
    return plan


def expect_incast(params, n, node_of):
    plan = Plan(node_of)
    b, w, it = (
        p_int(params, "msg_bytes", 1 << 20),
        p_int(params, "window", 8),
        p_int(params, "iters", 4),
    )
    recv = p_int(params, "receivers", 1)
    for s in range(recv, n):
        plan.send(s, (s - recv) % recv, b, w * it)
    return plan


def expect_umt(params, dims, node_of):
    """7-point faces on a non-periodic grid, axis 0 fastest."""
    plan = Plan(node_of)
    face, it = p_int(params, "face_bytes", 53000), p_int(params, "iters", 10)
    px, py, pz = dims
    for r in range(px * py * pz):
        c = [r % px, r // px % py, r // (px * py)]
        for axis in range(3):
            for step in (1, -1):
                d = list(c)
                d[axis] += step
                if 0 <= d[axis] < dims[axis]:
                    plan.send(r, d[0] + px * (d[1] + py * d[2]), face, it)
    return plan


def expect_pf3d(params, n, node_of):
    """Row (px) and column (py) all-to-alls within slab groups of px x py
    consecutive ranks; forward and backward: each twice per iteration."""
    plan = Plan(node_of)
    px, py, it = p_int(params, "px", 18), p_int(params, "py", 8), p_int(params, "iters", 4)
    local = (
        p_int(params, "lx", 64)
        * p_int(params, "ly", 64)
        * p_int(params, "lz", 8)
        * p_int(params, "elem_bytes", 8)
    )
    row, col = -(-local // px), -(-local // py)  # rounded up
    for r in range(n):
        base, x, y = r // (px * py) * px * py, r % px, r % (px * py) // px
        for i in range(px):
            if i != x:
                plan.send(r, base + y * px + i, row, 2 * it)
        for i in range(py):
            if i != y:
                plan.send(r, base + i * px + x, col, 2 * it)
    return plan


# (motif, params, nodes, hand-computed plan from (params, nodes, node_of))
CASES = [
    ("bully_pairs", "msg_bytes=64KiB window=3 iters=5", 4, expect_pairs),
    ("bully_incast", "msg_bytes=48KiB window=2 iters=3 receivers=2", 6, expect_incast),
    (
        "umt_like",
        "face_bytes=1000 px=2 py=2 pz=1 iters=3 compute_time=1us",
        4,
        lambda p, n, no: expect_umt(p, (2, 2, 1), no),
    ),
    (
        "umt_like",
        "face_bytes=53000 px=2 py=1 pz=3 iters=2 reduce_count=0",
        6,
        lambda p, n, no: expect_umt(p, (2, 1, 3), no),
    ),
    ("pf3d_like", "px=3 py=2 lx=10 ly=8 lz=2 iters=2 stage_time=1us", 12, expect_pf3d),
]


def job_file(cases):
    text = ""
    for i, (motif, params, nodes, _) in enumerate(cases):
        text += f"[JOB_NAME] j{i}\n[PLACEMENT] linear nodes={nodes}\n[MOTIF] {motif} {params}\n"
    return text


def assert_plan(doc, cases):
    for job, (motif, params, nodes, fn) in zip(doc["jobs"], cases):
        (m,) = job["motifs"]
        assert m["name"] == motif
        want = fn(params, nodes, job["nodes"])
        got = {(s, d): (b, n) for s, d, b, n in m["traffic"]["pairs"]}
        assert got == want.pairs(), (motif, params)
    return doc


@pytest.mark.parametrize("engine", ["trace", "sim"])
def test_traffic_per_node_pair_is_the_hand_computed_one(tmp_path, engine, jobs_schema):
    job = tmp_path / "study.job"
    job.write_text(job_file(CASES))
    out = tmp_path / "out.json"
    extra = (
        ["--topology", "fattree:leaves=8,nodes=4,uplinks=2", "--verify"] if engine == "sim" else []
    )
    r = contend_jobs(job, "--engine", engine, "--nodes", 32, "--seed", 2, "-q", "-o", out, *extra)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, jobs_schema)
    assert_plan(doc, CASES)
    # worked figures: a pair moves 5 x 3 x 64 KiB each way; receiver 0 of the
    # incast gets 2 senders x 3 x 2 x 48 KiB
    pairs = {(s, d): b for s, d, b, _ in doc["jobs"][0]["motifs"][0]["traffic"]["pairs"]}
    n0 = doc["jobs"][0]["nodes"]
    assert pairs[(n0[0], n0[1])] == 5 * 3 * 64 * KIB == 983040
    inc = doc["jobs"][1]
    into0 = sum(b for s, d, b, _ in inc["motifs"][0]["traffic"]["pairs"] if d == inc["nodes"][0])
    assert into0 == 2 * 3 * 2 * 48 * KIB
    for jb in doc["jobs"]:
        if engine == "trace":  # a plan has no times, so no results
            assert jb["motifs"][0]["results"] == {}
            continue
        res = jb["motifs"][0]["results"]["concurrent"]
        bw = res["bandwidth_gbps_per_rank"]
        if jb["motifs"][0]["name"].startswith("bully_"):
            assert bw["count"] > 0 and 0 < bw["min"] <= bw["mean"] <= bw["max"]
        else:
            assert bw is None
        assert res["verify"]["errors"] == 0 and res["verify"]["checked"] > 0


def test_pairing_nodes_pairs_the_kth_ranks_of_two_nodes(tmp_path):
    job = tmp_path / "p.job"
    job.write_text(
        "[JOB_NAME] b\n[NID_LIST] 0-3\n[MOTIF] bully_pairs pairing=nodes msg_bytes=1KiB window=2 iters=1\n"
    )
    out = tmp_path / "p.json"
    r = contend_jobs(job, "--dry-run", "--nodes", 4, "--ranks-per-node", 3, "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    pairs = {
        (s, d): (b, n) for s, d, b, n in json.loads(out.read_text())["jobs"][0]["traffic"]["pairs"]
    }
    # 3 ranks per node, each sends 2 x 1 KiB to the same-index rank of the paired node
    assert pairs == {
        (0, 1): (6 * KIB, 6),
        (1, 0): (6 * KIB, 6),
        (2, 3): (6 * KIB, 6),
        (3, 2): (6 * KIB, 6),
    }
    # pairing=ranks with 3 ranks per node keeps two of three pairs on a node
    job.write_text(
        "[JOB_NAME] b\n[NID_LIST] 0-3\n[MOTIF] bully_pairs msg_bytes=1KiB window=2 iters=1\n"
    )
    r = contend_jobs(job, "--dry-run", "--nodes", 4, "--ranks-per-node", 3, "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    pairs = {(s, d): b for s, d, b, _ in json.loads(out.read_text())["jobs"][0]["traffic"]["pairs"]}
    assert pairs[(0, 0)] == 2 * 2 * KIB and pairs[(0, 1)] == 2 * KIB


def check_bandwidth(job, motif, plan, sampling, even=False):
    """bandwidth_gbps_per_rank against the traffic and the motif's times:
    each sampling rank moves the same bytes B per invocation, so the
    slowest rank's Gb/s is B x 8 / max time and the fastest B x 8 / min."""
    res = motif["results"]["concurrent"]
    bw, t = res["bandwidth_gbps_per_rank"], res["time_s"]
    per_rank = {r: max(plan.sent[r], plan.received[r]) for r in sampling}
    assert len(set(per_rank.values())) == 1
    b = next(iter(per_rank.values())) / job["repeat"]
    assert bw["count"] == t["count"] == len(sampling) * job["repeat"]
    assert bw["min"] == pytest.approx(b * 8 / t["max"] / 1e9, rel=1e-9)
    assert bw["max"] == pytest.approx(b * 8 / t["min"] / 1e9, rel=1e-9)
    assert bw["min"] <= bw["mean"] <= bw["max"]
    # 1/t is convex: the mean of B/t_i is at least B / the mean of t_i
    assert bw["mean"] >= b * 8 / t["mean"] / 1e9 * (1 - 1e-9)
    if even:  # ranks that take about the same time (the simulator)
        assert bw["mean"] == pytest.approx(b * 8 / t["mean"] / 1e9, rel=0.05)
    return bw


def test_bandwidth_on_the_simulated_fat_tree(tmp_path, jobs_schema):
    """Pairs across leaves reach the 100 Gb/s link rate; an incast of 3
    senders shares one receiver link, so each sender gets about a third."""
    job = tmp_path / "bw.job"
    job.write_text(
        "[JOB_NAME] pairs\n[NID_LIST] 0,4,1,5\n[REPEAT] 2\n"
        "[MOTIF] bully_pairs msg_bytes=256KiB window=4 iters=4\n"
        "[JOB_NAME] incast\n[NID_LIST] 8,12,13,14\n"
        "[MOTIF] bully_incast msg_bytes=256KiB window=4 iters=4\n"
    )
    out = tmp_path / "bw.json"
    r = contend_jobs(job, *FATTREE, "--seed", 1, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "Achieved network bandwidth per rank (Gb/s" in r.stdout
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, jobs_schema)
    pj, ij = doc["jobs"]
    plan = expect_pairs("msg_bytes=262144 window=4 iters=8", 4, pj["nodes"])  # 2 repeats x 4
    bw = check_bandwidth(pj, pj["motifs"][0], plan, range(4), even=True)
    assert 50 < bw["min"] <= bw["max"] < 100.5
    plan = expect_incast("msg_bytes=262144 window=4 iters=4", 4, ij["nodes"])
    bw = check_bandwidth(ij, ij["motifs"][0], plan, [0], even=True)  # only the receiver samples
    assert 50 < bw["min"] < 100.5
    inc = ij["motifs"][0]["results"]["concurrent"]["time_s"]
    # the receiver's 3 x 4 MiB take at least 3 x the time of one sender's 4 MiB at 100 Gb/s
    assert inc["max"] >= 3 * 4 * 4 * 262144 * 8 / 100e9 / 4 * 0.99


def test_under_mpi_payloads_verify_and_bandwidth_is_bytes_over_time(mpirun, tmp_path, jobs_schema):
    cases = [
        ("bully_pairs", "msg_bytes=64KiB window=4 iters=6", 4, expect_pairs),
        ("bully_incast", "msg_bytes=32KiB window=2 iters=5 receivers=1", 4, expect_incast),
        (
            "umt_like",
            "face_bytes=53000 iters=3 compute_time=10us",
            4,
            lambda p, n, no: expect_umt(p, (1, 2, 2), no),
        ),
        ("pf3d_like", "px=2 py=2 lx=16 ly=8 lz=2 iters=2 stage_time=0", 4, expect_pf3d),
    ]
    text = "[JOB_NAME] j\n[NID_LIST] 0-3\n" + "".join(f"[MOTIF] {m} {p}\n" for m, p, _, _ in cases)
    job = tmp_path / "mpi.job"
    job.write_text(text)
    out = tmp_path / "mpi.json"
    r = mpirun(
        4,
        "jobs",
        job,
        "--virtual-nodes",
        1,
        "--verify",
        "--seed",
        5,
        "-q",
        "-o",
        out,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, jobs_schema)
    (jb,) = doc["jobs"]
    for motif, (name, params, n, fn) in zip(jb["motifs"], cases):
        plan = fn(params, n, jb["nodes"])
        got = {(s, d): (b, k) for s, d, b, k in motif["traffic"]["pairs"]}
        assert got == plan.pairs(), name
        v = motif["results"]["concurrent"]["verify"]
        assert v["errors"] == 0 and v["checked"] > 0, name
        if name == "bully_pairs":
            check_bandwidth(jb, motif, plan, range(4))
        elif name == "bully_incast":
            check_bandwidth(jb, motif, plan, [0])
        else:
            assert motif["results"]["concurrent"]["bandwidth_gbps_per_rank"] is None


@pytest.mark.parametrize(
    "ranks, motif, needle",
    [
        (3, "bully_pairs", "needs an even number of ranks (rank pairs); the job has 3"),
        (4, "bully_pairs pairing=leaf", "pairing='leaf' is not valid"),
        (4, "bully_pairs msg_bytes=0", "msg_bytes"),
        (4, "bully_pairs window=0", "window"),
        (4, "bully_incast receivers=3", "receivers=3 needs a job of at least 6 ranks"),
        (4, "umt_like px=3", "px=3"),
        (4, "pf3d_like", "do not split into slab groups of px x py = 18 x 8 = 144"),
        (6, "pf3d_like px=2 py=2", "use a multiple of 4"),
    ],
)
def test_bad_parameters_exit_2_before_anything_runs(tmp_path, ranks, motif, needle):
    job = tmp_path / "bad.job"
    job.write_text(f"[JOB_NAME] bad\n[NID_LIST] 0-{ranks - 1}\n[MOTIF] {motif}\n")
    out = tmp_path / "bad.json"
    for engine in (["--dry-run"], FATTREE):
        r = contend_jobs(job, *engine, "--nodes", 16, "-o", out)
        assert r.returncode == 2, r.stdout + r.stderr
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and f"{job}:3:" in lines[0] and needle in lines[0], r.stderr
        assert not out.exists() and r.stdout == ""


def test_pairing_nodes_refuses_an_odd_node_count(tmp_path):
    job = tmp_path / "odd.job"
    job.write_text("[JOB_NAME] b\n[NID_LIST] 0-2\n[MOTIF] bully_pairs pairing=nodes\n")
    r = contend_jobs(job, "--dry-run", "--nodes", 4, "--ranks-per-node", 2)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "pairing=nodes needs an even number of nodes; the job has 3" in r.stderr


@pytest.mark.parametrize("name", ["bully_pairs", "bully_incast", "umt_like", "pf3d_like"])
def test_example_job_files_plan_and_are_fuzz_seeds(tmp_path, name):
    path = ROOT / "examples" / "jobs" / f"{name}.job"
    assert (
        ROOT / "fuzz" / "seeds" / "jobfile" / f"jobs-{name}.job"
    ).read_text() == path.read_text()
    out = tmp_path / "plan.json"
    r = contend_jobs(path, "--dry-run", "--nodes", 12, "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    motifs = [m["name"] for j in doc["jobs"] for m in j["motifs"]]
    assert name in motifs
    sent = sum(m["traffic"]["bytes"] for j in doc["jobs"] for m in j["motifs"] if m["name"] == name)
    assert sent > 0


def test_amg_like_stencil_27_adds_edge_and_corner_neighbours(tmp_path):
    """On a 2 x 2 x 2 grid every rank is a face, edge or corner neighbour of
    every other: one message to each of the 7, of m^2, m or 1 points."""
    job = tmp_path / "amg.job"
    job.write_text(
        "[JOB_NAME] amg\n[NID_LIST] 0-7\n"
        "[MOTIF] amg_like n=4 levels=1 px=2 py=2 pz=2 stencil=27 iters=2 point_time=0\n"
    )
    out = tmp_path / "amg.json"
    r = contend_jobs(job, *FATTREE, "--verify", "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    (m,) = json.loads(out.read_text())["jobs"][0]["motifs"]
    got = {(s, d): (b, n) for s, d, b, n in m["traffic"]["pairs"]}
    want = {}
    for a in range(8):
        for b in range(8):
            differ = sum(((a >> i) & 1) != ((b >> i) & 1) for i in range(3))
            if differ:
                want[(a, b)] = ({1: 16, 2: 4, 3: 1}[differ] * 8 * 2, 2)
    assert got == want
    v = m["results"]["concurrent"]["verify"]
    assert v["errors"] == 0 and v["checked"] > 0
