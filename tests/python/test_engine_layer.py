"""The engine-neutral run layer: only the MPI engine calls MPI, control
traffic travels on communicators of its own, and the control plane passes
the same conformance test on every engine."""

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest
from conftest import BUILD, ROOT, mpirun_path, run_bounded

# Where MPI may be called: the MPI engine, and the PMPI libraries (the
# throttle, the trace recorder), which wrap MPI by nature.  (Program entry
# points of the benchmarks and the PMPI test tools live outside src/ and
# include/.)
ALLOWED = ("src/engine_mpi/", "src/throttle/pmpi.c", "src/record/pmpi.c")
SCANNED = ("src", "include", "apps")
MPI_USE = [
    (re.compile(r"\bP?MPI_[A-Z][A-Za-z_]*\s*\("), "MPI call"),
    (re.compile(r"\bMPI_(Comm|Request|Win|Datatype|Op|Status|Info)\b"), "MPI type"),
    (re.compile(r"\bMPI_(COMM_|IN_PLACE|STATUS)"), "MPI constant"),
    (re.compile(r"#\s*include\s*[<\"]mpi\.h[>\"]"), "include of mpi.h"),
]


def strip_comments(text):
    """C comments and string literals removed, line numbers kept."""
    pattern = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", re.DOTALL)

    def blank(m):
        s = m.group(0)
        if s.startswith('"'):
            return '""'
        return "\n" * s.count("\n")

    return pattern.sub(blank, text)


def mpi_uses(root):
    found = []
    for top in SCANNED:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in (".c", ".h"):
                continue
            rel = path.relative_to(root).as_posix()
            if rel.startswith(ALLOWED):
                continue
            text = path.read_text(errors="replace")
            # the include line survives comment stripping; check it on raw text
            for n, line in enumerate(text.splitlines(), 1):
                if MPI_USE[3][0].search(line):
                    found.append(f"{rel}:{n}: {MPI_USE[3][1]}")
            for n, line in enumerate(strip_comments(text).splitlines(), 1):
                for rx, what in MPI_USE[:3]:
                    if rx.search(line):
                        found.append(f"{rel}:{n}: {what}: {line.strip()}")
    return found


def test_no_mpi_outside_the_mpi_engine():
    found = mpi_uses(ROOT)
    assert not found, "MPI used outside src/engine_mpi/:\n" + "\n".join(found)


def test_the_scan_finds_mpi_where_it_is(tmp_path):
    """The scan itself: an MPI call in a run-layer file is reported, one in
    a comment is not."""
    (tmp_path / "src" / "run").mkdir(parents=True)
    (tmp_path / "include").mkdir()
    (tmp_path / "apps").mkdir()
    (tmp_path / "src" / "run" / "bad.c").write_text(
        "/* MPI_Barrier(x) in a comment */\nint f(void) {\n  return MPI_Barrier(c);\n}\n"
    )
    (tmp_path / "src" / "run" / "ok.c").write_text(
        '// MPI_Send(...)\nconst char *s = "MPI_Send(";\n'
    )
    found = mpi_uses(tmp_path)
    assert found == ["src/run/bad.c:3: MPI call: return MPI_Barrier(c);"]


# The engine-neutral layers ask an engine's capabilities, never its name:
# engine names are compared in the registry only, and the layers include
# no engine header (DESIGN section 9; contend/inproc.h states the direction).
REGISTRY = "src/run/engines.c"
ENGINE_DIRS = "src/engine_"
NEUTRAL_DIRS = ("src/run/", "src/suite/", "src/jobs/", "src/fabric/")
ENGINE_DEF = re.compile(r"const contend_engine contend_engine_\w+ = \{\s*\.name = \"([^\"]+)\"")
COMPARE = re.compile(r"\bstr(?:n|case|ncase)?cmp\s*\(")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def c_files(root):
    for path in sorted((root / "src").rglob("*")):
        if path.suffix in (".c", ".h"):
            yield path.relative_to(root).as_posix(), path.read_text(errors="replace")


def without_comments(text):
    """C comments blanked (line numbers kept), string literals kept."""
    pattern = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\])*\"", re.DOTALL)
    return pattern.sub(
        lambda m: m.group(0) if m.group(0).startswith('"') else "\n" * m.group(0).count("\n"), text
    )


def engine_name_compares(root):
    """file:line of every string compare with an engine's name as a literal
    outside the engine folders and the registry."""
    names = {n for _, text in c_files(root) for n in ENGINE_DEF.findall(text)}
    assert names, "no engine definitions found"
    found = []
    for rel, text in c_files(root):
        if rel.startswith(ENGINE_DIRS) or rel == REGISTRY:
            continue
        text = without_comments(text)
        for m in COMPARE.finditer(text):
            depth, end = 1, m.end()
            while depth and end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            args = text[m.end() : end]
            if any(f'"{n}"' in args for n in names):
                found.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}")
    return found


def layer_includes(root):
    """file: include of every include that goes against the layers."""
    found = []
    for rel, text in c_files(root):
        for inc in INCLUDE.findall(text):
            if rel.startswith(NEUTRAL_DIRS) and "engine_" in inc:
                found.append(f"{rel}: {inc}")
            if rel.startswith(ENGINE_DIRS) and inc.startswith(("../run/", "../suite/", "../jobs/")):
                found.append(f"{rel}: {inc}")
            if (
                rel.startswith("src/fabric/")
                and inc.startswith("../")
                and not inc.startswith("../core/")
            ):
                found.append(f"{rel}: {inc}")
    return found


def test_engine_names_are_compared_in_the_registry_only():
    found = engine_name_compares(ROOT)
    assert not found, "engine names compared outside the registry:\n" + "\n".join(found)


def test_run_layers_include_no_engine_header():
    found = layer_includes(ROOT)
    assert not found, "includes against the layers:\n" + "\n".join(found)


def test_the_layer_scans_find_what_they_look_for(tmp_path):
    """The scans themselves: a name compare and an engine include in a
    run-layer file are reported; the same in a comment, in the engine's own
    folder or as a plain string are not."""
    for d in ("src/run", "src/jobs", "src/engine_x", "src/fabric"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "src/engine_x/x.c").write_text(
        'const contend_engine contend_engine_x = {\n    .name = "x",\n};\n'
        'int f(const char *e) { return !strcmp(e, "x"); }\n#include "../run/envelope.h"\n'
    )
    (tmp_path / "src/run/bad.c").write_text(
        '/* strcmp(e, "x") */\nconst char *d = "x";\nint g(const char *e) {\n'
        '  return e && !strcmp(e,\n                  "x");\n}\n#include "../engine_x/x.h"\n'
    )
    (tmp_path / "src/fabric/t.c").write_text(
        '#include "../core/error.h"\n#include "../jobs/jobs.h"\n'
    )
    assert engine_name_compares(tmp_path) == ["src/run/bad.c:4"]
    assert layer_includes(tmp_path) == [
        "src/engine_x/x.c: ../run/envelope.h",
        "src/fabric/t.c: ../jobs/jobs.h",
        "src/run/bad.c: ../engine_x/x.h",
    ]


def counts(directory):
    """{(communicator, call): total over ranks}"""
    total = defaultdict(int)
    files = sorted(Path(directory).glob("rank*.txt"))
    assert files, "the interposer wrote nothing"
    for f in files:
        for line in f.read_text().splitlines():
            comm, call, n = line.split("\t")
            total[(comm, call)] += int(n)
    return total


P2P = {"Isend", "Irecv", "Send", "Recv", "Sendrecv"}
RMA = {"Put", "Get", "Accumulate"}
CONTROL = {"Barrier", "Ibarrier", "Allreduce", "Reduce", "Bcast", "Gather", "Gatherv", "Allgather"}


@pytest.mark.parametrize(
    "ranks, args, steps",
    [
        (4, ["network", "--canaries", "rr_lat,rr_bw"], {"Isend", "Irecv"}),
        (
            10,
            ["load", "--canaries", "rr_lat", "--congestors", "p2p_incast,pairwise_a2a"],
            {"Isend", "Irecv"},
        ),
        # one-sided: windows are mapped to the communicator they were made on
        (4, ["network", "--canaries", "rr_put_bw"], {"Put"}),
    ],
)
def test_control_traffic_on_its_own_communicator(tmp_path, ranks, args, steps):
    lib = BUILD / "lib" / "libcontend_pmpi_counter.so"
    if not lib.exists():
        pytest.fail(f"{lib} not built")
    cmd = [mpirun_path(), "-n", str(ranks), "--oversubscribe", "-x", f"LD_PRELOAD={lib}"]
    cmd += ["-x", f"CONTEND_PMPI_COUNT_DIR={tmp_path}", BUILD / "bin" / "contend", *args]
    cmd += ["--virtual-nodes", "1", "--measurements", "3", "--seed", "1", "-q"]
    cmd += ["--timeout", "2", "-o", tmp_path / "out.json"]
    r = run_bounded(cmd, timeout=240)
    assert r.returncode == 0, r.stderr
    c = counts(tmp_path)
    measured = {call for (comm, call) in c if comm == "contend-measured"}
    control = {call for (comm, call) in c if comm == "contend-control"}
    # the measured communicators carry the motifs' own point-to-point or
    # one-sided steps (pairwise_a2a is point-to-point too) and nothing else ...
    assert steps <= measured <= P2P | RMA, measured
    assert c[("contend-measured", "Isend")] == c[("contend-measured", "Irecv")]
    # ... and the timeout decisions, handshakes and gathers run on the
    # control communicators, nothing on MPI_COMM_WORLD itself
    assert {"Allreduce", "Barrier", "Reduce", "Gather"} <= control, control
    if args[0] == "load":
        assert "Ibarrier" in control
    assert not [k for k in c if k[0] not in ("contend-measured", "contend-control")], dict(c)


def test_world_conformance_on_mpi():
    binary = BUILD / "bin" / "test_world"
    r = run_bounded([mpirun_path(), "-n", "4", "--oversubscribe", binary, "--engine", "mpi"], 120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"world conformance: \d+ checks passed on engine mpi with 4 ranks", r.stdout)


def test_world_conformance_on_mpich(tmp_path):
    """The MPI control plane under MPICH too (a build of its own, 2 ranks)."""
    mpicc = shutil.which("mpicc.mpich")
    mpiexec = shutil.which("mpiexec.mpich") or shutil.which("mpirun.mpich")
    if not mpicc or not mpiexec:
        pytest.skip("MPICH not installed")
    b = tmp_path / "build"
    r = run_bounded(
        ["cmake", "-S", ROOT, "-B", b, f"-DMPI_C_COMPILER={mpicc}", "-DCONTEND_WITH_HDF5=OFF"],
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    r = run_bounded(["cmake", "--build", b, "-j", "2", "--target", "test_world"], timeout=600)
    assert r.returncode == 0, r.stderr
    r = run_bounded([mpiexec, "-n", "2", b / "bin" / "test_world", "--engine", "mpi"], timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "checks passed on engine mpi with 2 ranks" in r.stdout
