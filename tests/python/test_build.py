"""Warnings-clean builds (-Wall -Wextra -Werror) with Open MPI and MPICH, and
a short MPICH run (busy-polling: 2 ranks, bounded)."""

import shutil

import pytest
from conftest import ROOT, run_bounded


@pytest.mark.parametrize("flavour", ["openmpi", "mpich"])
def test_werror_build_and_run(tmp_path, flavour):
    mpicc = shutil.which(f"mpicc.{flavour}")
    if not mpicc:
        pytest.skip(f"mpicc.{flavour} not installed (scripts/bootstrap.sh test installs it)")
    build = tmp_path / "build"
    cfg = run_bounded(
        [
            "cmake",
            "-S",
            ROOT,
            "-B",
            build,
            f"-DMPI_C_COMPILER={mpicc}",
            "-DCONTEND_WERROR=ON",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
        ],
        timeout=300,
    )
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    b = run_bounded(["cmake", "--build", build, "-j", "2"], timeout=600)
    assert b.returncode == 0, b.stdout[-4000:] + b.stderr[-4000:]
    warnings = [ln for ln in (b.stdout + b.stderr).splitlines() if "warning:" in ln]
    assert warnings == []
    launcher = shutil.which(f"mpirun.{flavour}")
    r = run_bounded(
        [
            launcher,
            "-n",
            "2",
            build / "bin" / "contend",
            "network",
            "--virtual-nodes",
            "1",
            "--canaries",
            "rr_lat,rr_get_lat,allreduce",
            "--timeout",
            "0.2",
            "--measurements",
            "2",
            "--verify",
            "-q",
        ],
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert ("MPICH" if flavour == "mpich" else "Open MPI") in r.stdout
