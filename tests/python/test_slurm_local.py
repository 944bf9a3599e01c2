"""The batch scripts of examples/slurm/ under a real Slurm on this host
(slurmkit.LocalSlurm: slurmctld and two slurmd "nodes", munge, all in a
temporary directory), scaled down by their variables to seconds: sbatch
submits them, srun starts Open MPI's ranks through PMIx, and every results
file they write must hold to the results schema.

What one host cannot show: the nodes share a kernel, so "inter-node"
messages cross loopback TCP, not a network, and placement, switches and
PMI across hosts are not exercised (docs/slurm-reframe.md)."""

import json
import os
import shutil
import subprocess

import pytest
import slurmkit
from conftest import BUILD, ROOT
from contend.results import parse_results

SCRIPTS = ROOT / "examples" / "slurm"
NODES = 2
JOB_TIMEOUT = 150  # s: a job that takes longer is cancelled and the test fails
QUICK = "--measurements 2 --timeout 0.3 --canaries rr_lat,rr_bw"


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    reason = slurmkit.ensure_installed()
    if reason:
        pytest.skip(f"no local Slurm: {reason}")
    binary = BUILD / "bin" / "contend"
    if not binary.exists():
        pytest.fail(f"{binary} not built: run `make build` (or set CONTEND_BUILD)")
    cluster = slurmkit.LocalSlurm(tmp_path_factory.mktemp("slurm"), nodes=NODES)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
    assert cluster.procs == {}


@pytest.fixture
def job_env():
    """The variables every job gets (sbatch exports the submitting environment)."""
    return {
        "CONTEND": BUILD / "bin" / "contend",
        "OMPI_ALLOW_RUN_AS_ROOT": 1,
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": 1,
        # Slurm "nodes" sharing one host: Open MPI names its shared-memory
        # segments after the hostname and the node-local rank, so ranks of two
        # nodes would open the same segment; TCP over loopback only
        "OMPI_MCA_btl": "self,tcp",
        "OMPI_MCA_btl_tcp_if_include": "lo",
    }


def run_job(slurm, tmp_path, args, env):
    """Submits from tmp_path, waits; every task must have completed with exit
    0.  Returns (job id, scontrol fields of its first task, the job's output)."""
    job = slurm.sbatch(args, cwd=tmp_path, env=env)
    states = slurm.wait_job(job, JOB_TIMEOUT)
    outputs = "\n".join(p.read_text(errors="replace") for p in sorted(tmp_path.glob("*.out")))
    for st in states:
        assert st["JobState"] == "COMPLETED" and st["ExitCode"] == "0:0", (
            f"job {job}: {st['JobState']} exit {st['ExitCode']}\n{outputs[-4000:]}"
        )
    return job, states[0], outputs


def valid_results(path):
    assert path.exists(), f"{path.name} missing"
    return parse_results(path.read_text(), str(path))  # raises on a schema violation


def test_nodes_are_up_and_srun_speaks_pmix(slurm):
    r = slurm.run(["sinfo", "-h", "-N", "-o", "%N %T %c"])
    rows = [line.split() for line in r.stdout.splitlines()]
    assert [n for n, _, _ in rows] == slurm.nodes and {t for _, t, _ in rows} == {"idle"}
    assert {int(c) for _, _, c in rows} == {os.cpu_count()}
    assert (
        "pmix"
        in slurm.run(["srun", "--mpi=list"]).stdout + slurm.run(["srun", "--mpi=list"]).stderr
    )


def test_network_sbatch(slurm, tmp_path, job_env):
    job, state, out = run_job(
        slurm,
        tmp_path,
        ["-N", NODES, "--ntasks-per-node=1", SCRIPTS / "network.sbatch"],
        {**job_env, "EXTRA": QUICK},
    )
    assert state["NumNodes"] == str(NODES)
    doc = valid_results(tmp_path / f"contend-network-{job}.json")
    assert doc["command"] == "network"
    # srun's ranks are on two Slurm nodes, which contend sees as two nodes
    # (Open MPI's locality comes from PMIx, which has them on n1 and n2)
    assert f"{NODES} ranks, {NODES} nodes, 1 ranks per node" in out
    assert {t["name"] for t in doc["tests"]} == {"rr_lat", "rr_bw"}


def test_load_ppn_sweep_sbatch(slurm, tmp_path, job_env):
    # 2 nodes x 2 ranks as 4 virtual nodes: 2 canary, 2 congestor nodes
    extra = f"{QUICK} --virtual-nodes 1 --canary-fraction 0.5 --congestors pairwise_a2a"
    job, _, out = run_job(
        slurm,
        tmp_path,
        ["-N", NODES, SCRIPTS / "load-ppn-sweep.sbatch"],
        {**job_env, "PPN_LIST": "2", "EXTRA": extra, "SEED": 7},
    )
    doc = valid_results(tmp_path / f"contend-results-{job}" / "load-ppn2.json")
    assert f"== {NODES} nodes x 2 ranks per node" in out
    assert doc["seed"] == 7 and doc["command"] == "load"
    assert {i["name"] for i in doc["impact"]} == {"rr_lat", "rr_bw"}
    assert all(i["ci_mean"] > 0 for i in doc["impact"])
    # the Python layer reads it too
    report = shutil.which("contend-report", path=str(ROOT / ".venv" / "bin")) or shutil.which(
        "contend-report"
    )
    if report:
        r = subprocess.run(
            [report, tmp_path / f"contend-results-{job}" / "load-ppn2.json"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert r.returncode == 0 and "Congestion Impact" in r.stdout, r.stderr


def test_single_congestor_sbatch(slurm, tmp_path, job_env):
    extra = f"{QUICK} --virtual-nodes 1 --canary-fraction 0.5"
    job, _, _ = run_job(
        slurm,
        tmp_path,
        ["-N", NODES, "--ntasks-per-node=2", SCRIPTS / "single-congestor.sbatch"],
        {**job_env, "CONGESTORS": "p2p_incast", "EXTRA": extra},
    )
    files = sorted(tmp_path.glob(f"contend-load-*-{job}.json"))
    assert [f.name for f in files] == [f"contend-load-p2p_incast-{job}.json"]
    doc = valid_results(files[0])
    congestors = [g["name"] for g in doc["placement"]["groups"] if g["role"] == "congestor"]
    assert congestors == ["p2p_incast"]


def test_sim_sweep_array(slurm, tmp_path, job_env):
    scenarios = ROOT / "examples" / "sim" / "routing-sweep.txt"
    job, _, _ = run_job(
        slurm,
        tmp_path,
        ["--array=0-1", SCRIPTS / "sim-sweep.sbatch", scenarios],
        {**job_env, "OUT": tmp_path / "sweep"},
    )
    tasks = sorted(st["ArrayTaskId"] for st in slurm.job_states(job))
    assert tasks == ["0", "1"]
    files = sorted((tmp_path / "sweep").glob("[0-9]*.json"))
    assert [f.name[:4] for f in files] == ["0000", "0001"]
    for f in files:
        assert json.loads(f.read_text())


def test_load_sim_parallel_sbatch(slurm, tmp_path, job_env):
    """One simulated load test spread over 2 Slurm tasks (srun, PMIx): the
    JSON is the one process's (apart from wall-clock and process fields)."""
    short = " ".join(f"--{m}.iters 8" for m in ("pairwise_a2a", "p2p_incast", "rma_put_incast",
                                                   "rma_get_bcast"))  # fmt: skip
    # two dragonfly groups, one a task (a window is the global links' 100 ns;
    # the ib-like tree's 10 ns links make windows 10x as many over loopback TCP)
    sizes = {"NETWORK": "", "TOPOLOGY": "dragonfly:a=4,p=2,h=1,g=2", "NODES": 16, "RPN": 1,
             "EXTRA": short}  # fmt: skip
    args = ["-N", NODES, "--ntasks-per-node=1", "--mem-per-cpu=200M", "--time=5",
            SCRIPTS / "load-sim-parallel.sbatch"]  # fmt: skip
    job, _, out = run_job(
        slurm,
        tmp_path,
        args,
        # both "nodes" are this host and bind their task to CPU 0: two processes
        # busy-polling each other on one core take minutes unless they yield
        {**job_env, **sizes, "SLURM_CPU_BIND": "none", "OMPI_MCA_mpi_yield_when_idle": 1},
    )
    got = tmp_path / f"contend-load-sim-parallel-{job}.json"
    doc = valid_results(got)
    procs = doc["environment"]["simulation"]["processes"]
    assert procs["count"] == 2 and min(procs["events_per_process"]) > 10_000
    one = tmp_path / "one.json"
    argv = [BUILD / "bin" / "contend", "load", "--engine", "sim", "--topology", sizes["TOPOLOGY"],
            "--nodes", "16", "--ranks-per-node", "1", "--timeout", "0.0002", "--seed", "1",
            *short.split(), "-o", one]  # fmt: skip
    r = subprocess.run(
        [str(a) for a in argv], check=False, capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    a = json.loads(one.read_text())["impact"]
    b = json.loads(got.read_text())["impact"]
    assert a == b, out[-2000:]
