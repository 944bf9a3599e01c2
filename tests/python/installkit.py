"""What the tests that install contend into a prefix share
(test_install.py, test_packaging.py): a copy of the sources as a clone
would hold them, a "site Python" that has the dependencies but not this
checkout's editable contend, and a scrubbed environment to run the
installed commands in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from conftest import ROOT


def scrubbed_env(home: Path) -> dict:
    """A minimal environment: system PATH, its own HOME, MPI allowed as root."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "OMPI_ALLOW_RUN_AS_ROOT": "1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
        "OMPI_MCA_rmaps_base_oversubscribe": "1",
    }


def site_python(dest: Path) -> Path:
    """A venv at dest whose site-packages point (.pth) at this interpreter's
    site-packages: the dependencies without the editable contend (a .pth
    file inside a directory named by a .pth is not processed).  Returns its
    python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", dest], check=True)
    purelib = Path(sysconfig.get_paths()["purelib"])
    (site,) = dest.glob("lib/python3*/site-packages")
    (site / "contend-deps.pth").write_text(f"{purelib}\n")
    return dest / "bin" / "python"


def copy_sources(dest: Path, *paths: str) -> None:
    """Copies what a clone of the next commit would hold (tracked and not
    ignored files) under `paths` (all of it without) to dest, keeping
    modification times (a build over an earlier copy stays incremental)."""
    files = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
        + list(paths),
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for f in filter(None, (x.decode() for x in files)):
        src, to = ROOT / f, dest / f
        to.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            os.symlink(os.readlink(src), to)
        elif src.is_file():
            shutil.copy2(src, to)


def is_git_checkout() -> bool:
    return (ROOT / ".git").exists() and shutil.which("git") is not None
