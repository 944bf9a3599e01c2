"""The Netscope application proxies (milc_like, lammps_like, amg_like): under
Open MPI (4 ranks, virtual nodes) and on the simulator their payloads verify
and their traffic (peers, bytes and messages per node pair, allreduce calls,
requested compute) is what their parameters imply, computed here from the
parameters alone; beside GPCNeT-like congestors on the simulated dragonfly
their Congestion Impact orders MILC-like > LAMMPS-like > AMG-like; bad
parameter combinations are refused before anything runs."""

import itertools
import json
import math
from collections import Counter

import jsonschema
import pytest
from conftest import BUILD, ROOT, SCHEMAS, run_bounded

CONTEND = BUILD / "bin" / "contend"
ENV = {"PATH": "/usr/bin:/bin"}
SIM144 = ["--engine", "sim", "--topology", "dragonfly:a=4,p=4,h=2"]
RANKS = 4
REPEAT = 2

# Small sizes and compute so that 4 oversubscribed ranks finish quickly.
# The local lattice and the LAMMPS faces differ per axis, so a mixed-up axis
# shows in the byte counts; amg px=4 puts the level-1 neighbours 2 ranks away.
PROXIES = [
    ("milc_like", "iters=3 lx=4 ly=2 lz=3 lt=5 site_time=1e-8"),
    ("milc_like", "iters=2 px=4 site_bytes=24 reduce_count=2 site_time=0"),
    ("lammps_like", "iters=5 atoms=4000 thermo_every=2 thermo_count=3 atom_time=1e-8"),
    ("lammps_like", "iters=3 atoms=2000 newton=0 px=4 thermo_every=0 atom_time=0"),
    ("amg_like", "iters=2 n=8 px=4 point_time=1e-9"),
    ("amg_like", "iters=1 n=12 sweeps=2 levels=3 elem_bytes=16 point_time=0"),
]


def contend_jobs(job, *args, timeout=60):
    """contend jobs JOB ARGS... in process (no MPI), bounded."""
    return run_bounded([CONTEND, "jobs", job, *args], timeout=timeout, env=ENV)


def job_text(proxies):
    lines = ["[JOB_NAME] proxies", f"[NID_LIST] 0-{RANKS - 1}", f"[REPEAT] {REPEAT}"]
    for name, params in proxies:
        lines.append(f"[MOTIF] {name} {params}")
    return "\n".join(lines) + "\n"


# ---- what the parameters imply (independent of the C code) -----------------


def even_grid(nranks, fixed):
    """The most even process grid: smallest largest dimension, then smallest
    sum, then the first in lexicographic order; fixed (non-zero) entries kept."""
    best = None
    choices = [[f] if f else range(1, nranks + 1) for f in fixed]
    for dims in itertools.product(*choices):
        if math.prod(dims) != nranks:
            continue
        key = (max(dims), sum(dims))
        if best is None or key < best[0]:
            best = (key, dims)
    return best[1]


def coords_of(rank, dims):
    out = []
    for d in dims:
        out.append(rank % d)
        rank //= d
    return out


def rank_of(coords, dims):
    r = 0
    for c, d in zip(reversed(coords), reversed(dims)):
        r = r * d + c
    return r


def neighbours(rank, dims, axis, dist, periodic):
    """Ranks dist steps away along axis, +dist and -dist (self and
    off-grid excluded)."""
    out = []
    for step in (dist, -dist):
        c = coords_of(rank, dims)
        c[axis] += step
        if not 0 <= c[axis] < dims[axis]:
            if not periodic:
                continue
            c[axis] %= dims[axis]
        q = rank_of(c, dims)
        if q != rank:
            out.append(q)
    return out


class Expect:
    """Traffic of one motif over one pass (REPEAT invocations)."""

    def __init__(self):
        self.pairs = Counter()  # (src, dst) -> bytes
        self.msgs = Counter()
        self.allreduce_calls = 0
        self.allreduce_bytes = 0
        self.compute_s = 0.0
        self.halo_received = 0  # halo messages received per pass (payload checks)
        self.allreduce_checks = 0

    def send(self, src, dst, nbytes, times):
        self.pairs[(src, dst)] += nbytes * times
        self.msgs[(src, dst)] += times
        self.halo_received += times

    def allreduce(self, doubles, times):
        self.allreduce_calls += times
        self.allreduce_bytes += 8 * doubles * times
        self.allreduce_checks += times


def expect_milc(p):
    e = Expect()
    dims = even_grid(RANKS, [p["px"], p["py"], p["pz"], p["pt"]])
    local = [p["lx"], p["ly"], p["lz"], p["lt"]]
    runs = REPEAT * p["iters"]
    for r in range(RANKS):
        for axis in range(4):
            face = p["site_bytes"] * math.prod(local) // local[axis]
            for q in neighbours(r, dims, axis, 1, periodic=True):
                e.send(r, q, face, runs)
        e.allreduce(p["reduce_count"], runs)
        e.compute_s += runs * p["site_time"] * math.prod(local)
    return e


def expect_lammps(p):
    e = Expect()
    dims = even_grid(RANKS, [p["px"], p["py"], p["pz"]])
    side = (p["atoms"] / p["density"]) ** (1 / 3)
    rc, rho = p["cutoff"], p["density"]
    area = [side * side, side * (side + 2 * rc), (side + 2 * rc) ** 2]
    ways = 2 if p["newton"] else 1  # forward positions, reverse forces
    runs = REPEAT * p["iters"]
    thermo = REPEAT * (p["iters"] // p["thermo_every"]) if p["thermo_every"] else 0
    for r in range(RANKS):
        for axis in range(3):
            face = math.floor(rho * rc * area[axis] + 0.5) * p["atom_bytes"]
            for q in neighbours(r, dims, axis, 1, periodic=True):
                e.send(r, q, face, ways * runs)
        e.allreduce(p["thermo_count"], thermo)
        e.compute_s += runs * p["atoms"] * p["atom_time"]
    return e


def expect_amg(p):
    e = Expect()
    dims = even_grid(RANKS, [p["px"], p["py"], p["pz"]])
    levels = p["levels"] or int(math.log2(p["n"])) + 1
    runs = REPEAT * p["iters"]
    for r in range(RANKS):
        for lv in range(levels):
            m = max(1, p["n"] >> lv)
            # relaxed on the way down and up; the coarsest level once
            visits = p["sweeps"] * (1 if lv == levels - 1 else 2)
            for axis in range(3):
                for q in neighbours(r, dims, axis, 2**lv, periodic=False):
                    e.pairs[(r, q)] += m * m * p["elem_bytes"] * visits * runs
                    e.msgs[(r, q)] += visits * runs
                    e.halo_received += runs  # checked once per V-cycle
            e.compute_s += runs * visits * m**3 * p["point_time"]
        e.allreduce(1, runs)
    return e


EXPECT = {"milc_like": expect_milc, "lammps_like": expect_lammps, "amg_like": expect_amg}


def expected(motif, given):
    """The traffic implied by the parameters the results record (the ones
    given in the job file, the motif's defaults for the rest)."""
    p = motif["params"]
    for kv in given.split():
        key, value = kv.split("=")
        assert p[key] == pytest.approx(float(value)), (motif["name"], key)
    return EXPECT[motif["name"]](p)


def assert_traffic(motif, want):
    where = (motif["name"], motif["position"])
    tr = motif["traffic"]
    got = {(s, d): (b, m) for s, d, b, m in tr["pairs"]}
    assert got == {k: (want.pairs[k], want.msgs[k]) for k in want.pairs}, where
    assert tr["collectives"]["allreduce"] == {
        "calls": want.allreduce_calls,
        "bytes": want.allreduce_bytes,
    }, where
    assert tr["compute_s"] == pytest.approx(want.compute_s, rel=1e-9, abs=1e-15), where


# ---- (a) MPI, simulator, trace: payloads and traffic -----------------------


@pytest.fixture(scope="module")
def jobs_schema():
    return json.loads((SCHEMAS / "contend-jobs.schema.json").read_text())


def test_proxies_under_mpi_verify_and_carry_the_traffic_their_parameters_imply(
    mpirun, tmp_path, jobs_schema
):
    job = tmp_path / "proxies.job"
    job.write_text(job_text(PROXIES))
    out = tmp_path / "mpi.json"
    r = mpirun(
        RANKS,
        "jobs",
        job,
        "--virtual-nodes",
        1,
        "--verify",
        "--seed",
        3,
        "-q",
        "-o",
        out,
        timeout=120,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, jobs_schema)
    assert doc["jobs"][0]["nodes"] == list(range(RANKS))
    motifs = doc["jobs"][0]["motifs"]
    assert [m["name"] for m in motifs] == [n for n, _ in PROXIES]
    for motif, (name, params) in zip(motifs, PROXIES):
        want = expected(motif, params)
        assert_traffic(motif, want)
        # every received face and every allreduce result was checked
        v = motif["results"]["concurrent"]["verify"]
        assert v == {"checked": want.halo_received + want.allreduce_checks, "errors": 0}, name
    assert doc["verify"]["errors"] == 0


@pytest.mark.parametrize("engine", ["sim", "trace"])
def test_proxies_on_the_in_process_engines(tmp_path, engine):
    """The same traffic on the simulated fabric (with payloads verified:
    the fabric's collectives carry no data, so only halo faces are checked)
    and in the trace engine's plan."""
    job = tmp_path / "proxies.job"
    job.write_text(job_text(PROXIES))
    out = tmp_path / f"{engine}.json"
    extra = ["--topology", "switch:nodes=4", "--verify"] if engine == "sim" else []
    r = contend_jobs(
        job, "--engine", engine, "--nodes", RANKS, "--seed", 3, "-q", "-o", out, *extra
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    for motif, (name, params) in zip(doc["jobs"][0]["motifs"], PROXIES):
        want = expected(motif, params)
        assert_traffic(motif, want)
        if engine == "sim":
            v = motif["results"]["concurrent"]["verify"]
            assert v == {"checked": want.halo_received, "errors": 0}, name


def test_milc_uses_eight_neighbours_on_a_4d_grid(tmp_path):
    """16 ranks: the chosen grid is 2 x 2 x 2 x 2, every rank sends its 8
    faces of 4^3 sites x 48 B = 3 KiB (two to each of its 4 neighbours)."""
    job = tmp_path / "milc16.job"
    job.write_text("[JOB_NAME] m\n[NID_LIST] 0-15\n[MOTIF] milc_like iters=1\n")
    out = tmp_path / "m.json"
    r = contend_jobs(job, "--dry-run", "--nodes", 16, "-q", "-o", out)
    assert r.returncode == 0, r.stderr
    pairs = json.loads(out.read_text())["jobs"][0]["motifs"][0]["traffic"]["pairs"]
    sent = Counter()
    for s, d, nbytes, msgs in pairs:
        assert (nbytes, msgs) == (2 * 3072, 2)
        assert bin(s ^ d).count("1") == 1  # grid neighbours differ in one coordinate bit
        sent[s] += msgs
    assert sent == {r: 8 for r in range(16)}


# ---- (b) delay sensitivity on the simulator -------------------------------


def test_congestion_impact_orders_milc_lammps_amg_on_the_simulator(tmp_path):
    """The shipped job file in its calibrated setting, the 144-node
    dragonfly: each proxy alone, then beside the congestors; the congestors
    outlast every proxy."""
    out = tmp_path / "sim.json"
    job = ROOT / "examples/jobs/netscope_proxies.job"
    r = contend_jobs(
        job, *CALIBRATED["proxies"], *SIM144, "--mode", "both", "--seed", 1, "-q", "-o", out
    )
    assert r.returncode == 0, r.stderr
    jobs = {j["name"]: j for j in json.loads(out.read_text())["jobs"]}
    ci = {n: jobs[n]["ci"]["mean"] for n in ("milc", "lammps", "amg")}
    assert ci["milc"] > ci["lammps"] > ci["amg"] >= 0.99, ci
    assert ci["milc"] > 2, ci  # the congestors do congest
    conc = {n: j["results"]["concurrent"] for n, j in jobs.items()}
    proxies_end = max(conc[n]["perform_end_s"] for n in ci)
    for name in ("a2a", "incast", "rma_incast", "rma_bcast"):
        assert conc[name]["perform_end_s"] > proxies_end, name


# The settings the job files' comments and docs/jobfile.md give for 144 nodes.
CALIBRATED = {
    "proxies": ["-D", "PROXY=16", "-D", "CONGESTOR=24", "-D", "LOAD=90"],
    "milc": ["-D", "PROXY=16", "-D", "CONGESTOR=32", "-D", "LOAD=90"],
}
CALIBRATED["lammps"] = CALIBRATED["amg"] = CALIBRATED["milc"]


@pytest.mark.parametrize("name", ["proxies", "milc", "lammps", "amg"])
def test_job_files_plan(tmp_path, name):
    """Every Netscope job file fills 32 nodes with its defaults and the
    144-node dragonfly in its calibrated setting, and runs its proxies."""
    job = ROOT / f"examples/jobs/netscope_{name}.job"
    for nodes, extra in ((32, []), (144, CALIBRATED[name])):
        out = tmp_path / f"{name}{nodes}.json"
        r = contend_jobs(job, "--dry-run", "--nodes", nodes, "-q", "-o", out, *extra)
        assert r.returncode == 0, (name, r.stderr)
        jobs = json.loads(out.read_text())["jobs"]
        assert sorted(n for j in jobs for n in j["nodes"]) == list(range(nodes)), name
        proxies = [m["name"] for j in jobs for m in j["motifs"] if m["name"].endswith("_like")]
        want = [f"{name}_like"] if name != "proxies" else ["milc_like", "lammps_like", "amg_like"]
        assert proxies == want


# ---- (c) refusals --------------------------------------------------------


@pytest.mark.parametrize(
    "motif, needle",
    [
        ("milc_like px=3", "px=3 py=0 pz=0 pt=0"),
        ("milc_like px=2 py=2 pz=2", "no process grid of 4 ranks"),
        ("lammps_like atoms=10", "cutoff=2.8 sigma exceeds the subdomain side"),
        ("lammps_like pz=3", "px=0 py=0 pz=3"),
        ("amg_like n=8 levels=5", "levels=5 is more than n=8"),
        ("amg_like px=8", "no process grid of 4 ranks"),
    ],
)
@pytest.mark.parametrize("engine", ["trace", "sim"])
def test_bad_parameters_are_refused(tmp_path, motif, needle, engine):
    job = tmp_path / "bad.job"
    job.write_text(f"[JOB_NAME] bad\n[NID_LIST] 0-3\n[MOTIF] {motif}\n")
    out = tmp_path / "bad.json"
    r = contend_jobs(job, "--engine", engine, "--nodes", RANKS, "-o", out)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{job}:3:" in lines[0] and needle in lines[0], r.stderr
    assert not out.exists() and r.stdout == ""
