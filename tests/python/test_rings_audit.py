"""Rings become auditable: every ring test records which ring each measurement
used (a digest per measurement; --record-rings: the rings whole), the same seed
gives the same rings, the dry run plans exactly the rings the MPI run uses, and
the records agree with rings computed here from the seed alone (a port of
src/core/rng.c and of the ring draw)."""

import json
import re
import struct

import jsonschema
import pytest
from conftest import BUILD, ROOT, run_bounded

SMALL = ["--measurements", "3", "--rings", "2", "--iters", "10", "--warmup", "2"]
SMALL += ["--timeout", "60", "-q"]
CANARIES = "rr_lat,rr_get_lat,nat_bw,allreduce"
RANDOM_RINGS = ("rr_lat", "rr_get_lat")
NRANKS = 4

MASK = (1 << 64) - 1


# --- the rings from the seed alone (src/core/rng.c, contend_ring_neighbours) ---


def _splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return x, z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


class Rng:
    """xoshiro256** seeded as contend_rng_init(seed, a, b, c, d)."""

    def __init__(self, seed, *words):
        x, h = _splitmix(seed & MASK)
        for i, w in enumerate(words):
            x = h ^ ((w * 0xD1342543DE82EF95 + i) & MASK)
            x, h = _splitmix(x)
        x = h
        self.s = []
        for _ in range(4):
            x, v = _splitmix(x)
            self.s.append(v)

    def next(self):
        s = self.s
        result = (_rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def below(self, n):
        limit = MASK - (MASK % n)
        while True:
            v = self.next()
            if v < limit:
                return v % n

    def shuffle(self, items):
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]


def expected_ring(seed, test_id, measurement, rnd, n, natural=False):
    """The ring of a canary's round: stream (seed, 2, test id, measurement, round)."""
    order = list(range(n))
    if not natural:
        Rng(seed, 2, test_id, measurement, rnd).shuffle(order)
    return order


def fnv(h, value, nbytes):
    for b in range(nbytes):
        h ^= (value >> (8 * b)) & 0xFF
        h = (h * 0x100000001B3) & MASK
    return h


FNV_OFFSET = 0xCBF29CE484222325


def measurement_digest(rounds):
    h = FNV_OFFSET
    for ring in rounds:
        for rank in ring:
            h = fnv(h, rank, 4)
    return f"{h:016x}"


def combined_digest(digests):
    h = FNV_OFFSET
    for d in digests:
        h = fnv(h, int(d, 16), 8)
    return f"{h:016x}"


# --- runs ---


@pytest.fixture(scope="module")
def test_ids(contend_bin):
    """Registry index of every test (`contend list` order): the test id of its streams."""
    r = run_bounded([contend_bin, "list"], timeout=30)
    names = [
        line.split()[1] for line in r.stdout.splitlines() if re.match(r"(canary|congestor) ", line)
    ]
    return {name: i for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def network_runs(mpirun, tmp_path_factory, results_schema):
    """Three MPI runs: seed 5 twice with --record-rings, seed 6 with digests only."""
    tmp = tmp_path_factory.mktemp("rings")
    docs = {}
    for name, seed, extra in (
        ("a", 5, ["--record-rings"]),
        ("b", 5, ["--record-rings"]),
        ("c", 6, []),
    ):
        out = tmp / f"{name}.json"
        r = mpirun(
            NRANKS,
            "network",
            "--virtual-nodes",
            "1",
            "--seed",
            str(seed),
            "--canaries",
            CANARIES,
            *SMALL,
            *extra,
            "-o",
            out,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        docs[name] = json.loads(out.read_text())
        jsonschema.validate(docs[name], results_schema)
        docs[name + "_path"] = out
    return docs


VALUE_KEY = {"rr_lat": "lat_us", "rr_get_lat": "lat_us", "nat_bw": "bw_mib_s"}


def rings_only(rings):
    """A test's ring record without its measured values (they differ run to run)."""
    return {k: v for k, v in rings.items() if k not in ("lat_us", "bw_mib_s")}


def rings_by_test(doc, phase="isolated"):
    return {t["name"]: t.get("rings") for t in doc["tests"] if t["phase"] == phase}


def dry_run(tmp_path, *args, name="plan.json"):
    out = tmp_path / name
    r = run_bounded(
        [BUILD / "bin" / "contend", *args, "--dry-run", "-o", out],
        timeout=60,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


# --- (a) the same seed records the same rings, another seed other ones ---


def test_same_seed_same_rings_other_seed_other_rings(network_runs):
    a, b, c = (rings_by_test(network_runs[k]) for k in "abc")
    assert a["allreduce"] is None  # no ring, no record
    for name in (*RANDOM_RINGS, "nat_bw"):
        assert rings_only(a[name]) == rings_only(b[name]), name  # digests and whole rings
        assert len(a[name]["digests"]) == 3 and a[name]["rounds"] == [2, 2, 2]
        assert len(a[name]["orders"]) == 3 and all(len(m) == 2 for m in a[name]["orders"])
        values = a[name][VALUE_KEY[name]]  # every rank's value, aligned with the orders
        assert [[len(r) for r in m] for m in values] == [[NRANKS] * 2] * 3, name
        assert all(v > 0 for m in values for r in m for v in r), name
        assert "orders" not in c[name]  # digests only without --record-rings
        assert VALUE_KEY[name] not in c[name]
    for name in RANDOM_RINGS:
        assert a[name]["digests"] != c[name]["digests"], name
        assert a[name]["digest"] != c[name]["digest"], name
    assert a["nat_bw"]["digests"] == c["nat_bw"]["digests"]  # the natural ring is constant
    assert len(set(a["nat_bw"]["digests"])) == 1


def test_one_digest_per_measurement_done(network_runs):
    for t in network_runs["c"]["tests"]:
        if "rings" in t:
            assert len(t["rings"]["digests"]) == t["measurements_done"] == 3
            assert t["rings"]["nodes"] == list(range(NRANKS))  # one rank per virtual node


# --- (c) the records are the rings the seed names, and the digest follows the ring ---


def test_records_equal_rings_computed_from_the_seed(network_runs, test_ids):
    for key, seed in (("a", 5), ("c", 6)):
        rings = rings_by_test(network_runs[key])
        for name in (*RANDOM_RINGS, "nat_bw"):
            rec = rings[name]
            want = [
                [
                    expected_ring(seed, test_ids[name], m, r, NRANKS, natural=name == "nat_bw")
                    for r in range(2)
                ]
                for m in range(3)
            ]
            if "orders" in rec:
                assert rec["orders"] == want, (key, name)
            assert rec["digests"] == [measurement_digest(m) for m in want], (key, name)
            assert rec["digest"] == combined_digest(rec["digests"])


def test_digest_changes_with_the_ring(network_runs):
    rec = rings_by_test(network_runs["a"])["rr_lat"]
    orders = rec["orders"]
    assert measurement_digest(orders[0]) == rec["digests"][0]
    changed = [list(ring) for ring in orders[0]]
    changed[1][0], changed[1][1] = changed[1][1], changed[1][0]  # two ranks trade places
    assert measurement_digest(changed) != rec["digests"][0]
    swapped = [orders[0][1], orders[0][0]]  # the same rings in the other order
    assert measurement_digest(swapped) != rec["digests"][0]
    digests = list(rec["digests"])
    digests[2] = measurement_digest(changed)
    assert combined_digest(digests) != rec["digest"]


def test_digest_is_fnv1a_over_little_endian_ranks():
    """The documented definition, by hand for one tiny ring."""
    data = b"".join(struct.pack("<I", r) for r in (1, 0))
    h = FNV_OFFSET
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & MASK
    assert measurement_digest([[1, 0]]) == f"{h:016x}"


# --- (b) the dry run plans the rings the MPI run uses ---


def parse_shown_rings(text, test):
    """{measurement: [[(rank, node), ...] per round]} printed by --show-rings for a test."""
    block = text.split(f"canary {test} ", 1)[1].split("\n  canary ", 1)[0]
    out, digests, m = {}, {}, None
    for line in block.splitlines():
        head = re.match(r"\s+measurement (\d+)(?: \(digest ([0-9a-f]{16})\))?$", line)
        if head:
            m = int(head.group(1))
            out[m] = []
            digests[m] = head.group(2)
            continue
        rnd = re.match(r"\s+round (\d+):((?: \d+@\d+)+)$", line)
        if rnd:
            out[m].append([tuple(map(int, p.split("@"))) for p in rnd.group(2).split()])
    return out, digests


def test_dry_run_prints_and_records_the_mpi_run_rings(network_runs, tmp_path, plan_schema):
    plan, text = dry_run(
        tmp_path,
        "network",
        "--nodes",
        str(NRANKS),
        "--seed",
        "5",
        "--canaries",
        CANARIES,
        *SMALL,
        "--record-rings",
        "--show-rings",
    )
    jsonschema.validate(plan, plan_schema)
    real = rings_by_test(network_runs["a"])
    planned = {t["name"]: t.get("rings") for t in plan["tests"]}
    for name in (*RANDOM_RINGS, "nat_bw"):
        assert planned[name] == rings_only(real[name]), name
        shown, digests = parse_shown_rings(text, name)
        nodes = real[name]["nodes"]
        assert shown == {
            m: [[(rank, nodes[rank]) for rank in ring] for ring in rounds]
            for m, rounds in enumerate(real[name]["orders"])
        }, name
        assert [digests[m] for m in range(3)] == real[name]["digests"]
    assert planned["allreduce"] is None
    assert "digest of all measurements: " + real["rr_lat"]["digest"] in text


def test_dry_run_rings_match_its_first_round_traffic(tmp_path):
    """The recorded ring of round 0 is the ring the motif ran: its node pairs
    are exactly the traffic of the planned iteration."""
    plan, _ = dry_run(
        tmp_path,
        "network",
        "--nodes",
        "9",
        "--seed",
        "21",
        "--canaries",
        "rr_lat",
        *SMALL,
        "--record-rings",
    )
    t = plan["tests"][0]
    ring, nodes = t["rings"]["orders"][0][0], t["rings"]["nodes"]
    n = len(ring)
    want = set()
    for i, rank in enumerate(ring):
        for peer in (ring[i - 1], ring[(i + 1) % n]):
            want.add((nodes[rank], nodes[peer]))
    assert {(src, dst) for src, dst, _, _ in t["pairs"]} == want


def test_load_dry_run_equals_mpi_run_with_two_ranks_per_node(
    mpirun, tmp_path, results_schema, plan_schema
):
    """Shuffled canary nodes and two sub-communicators per node: the same
    rings over the same nodes in both phases, in the MPI run and the plan."""
    args = ["load", "--seed", "11", "--canaries", "rr_lat,rr_bw_sync", "--congestors", "p2p_incast"]
    args += ["--canary-fraction", "0.5", *SMALL, "--record-rings"]
    out = tmp_path / "load.json"
    r = mpirun(8, *args, "--virtual-nodes", "2", "-o", out, timeout=120)
    assert r.returncode == 0, r.stderr
    real = json.loads(out.read_text())
    jsonschema.validate(real, results_schema)
    plan, _ = dry_run(tmp_path, *args, "--nodes", "4", "--ranks-per-node", "2")
    jsonschema.validate(plan, plan_schema)
    canary_nodes = real["placement"]["groups"][0]["nodes"]
    planned = {t["name"]: t.get("rings") for t in plan["tests"]}
    for phase in ("isolated", "congested"):
        rings = rings_by_test(real, phase)
        for name in ("rr_lat", "rr_bw_sync"):
            assert rings_only(rings[name]) == planned[name], (phase, name)
            assert rings[name]["nodes"] == sorted(canary_nodes)
            values = rings[name]["lat_us" if name == "rr_lat" else "bw_mib_s"]
            shape = [[len(r) for r in m] for m in rings[name]["orders"]]
            assert [[len(r) for r in m] for m in values] == shape, (phase, name)
            assert all(v > 0 for m in values for r in m for v in r), (phase, name)
    assert all("rings" not in t for t in real["tests"] if t["role"] == "congestor")


# --- bounded output, bad input, readers ---


def test_show_rings_is_bounded_unless_asked_for_all(tmp_path):
    args = ["network", "--nodes", "40", "--seed", "3", "--canaries", "rr_lat"]
    args += ["--measurements", "40", "--rings", "2", "--show-rings"]
    _, text = dry_run(tmp_path, *args)
    rounds = re.findall(r"^\s+round \d+:.*$", text, re.MULTILINE)
    assert len(rounds) == 64  # --show-rings-max default
    assert all(line.endswith("... (8 more ranks)") for line in rounds)
    assert "... 16 more rounds not shown (--show-rings-max N shows N rounds, 0 every round)" in text
    _, text = dry_run(tmp_path, *args, "--show-rings-max", "0", name="all.json")
    rounds = re.findall(r"^\s+round \d+:(.*)$", text, re.MULTILINE)
    assert len(rounds) == 80 and all(len(line.split()) == 40 for line in rounds)
    assert "more rounds not shown" not in text and "digest of all measurements" in text
    _, text = dry_run(tmp_path, *args[:-1], name="none.json")
    assert "round 1:" not in text  # not asked: the plan as before


def test_show_rings_needs_a_dry_run(contend_bin):
    r = run_bounded([contend_bin, "network", "--show-rings"], timeout=30)
    assert r.returncode == 2
    assert "--show-rings prints the rings of a dry run" in r.stderr
    assert r.stdout == ""


def test_help_names_the_ring_options(contend_bin):
    r = run_bounded([contend_bin, "network", "--help"], timeout=30)
    assert "--record-rings" in r.stdout and "large" in r.stdout
    assert "--show-rings" in r.stdout and "--show-rings-max" in r.stdout


def test_report_reads_new_and_old_files(network_runs, contend_bin):
    old = ROOT / "tests" / "fixtures" / "results" / "network_vn1_n4.json.gz"
    for path in (network_runs["a_path"], network_runs["c_path"], old):
        r = run_bounded([contend_bin, "report", path], timeout=120)
        assert r.returncode == 0, r.stderr
        assert "rr_lat" in r.stdout
