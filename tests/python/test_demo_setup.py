"""The new user's path: `make build` (what `make demo` runs before the demo
itself) on a clean copy of the source tree, without .venv, leaves every
`contend` command working, the Python ones too.

The copy holds the files a clone of the next commit would hold (tracked
and not ignored, with their working tree contents), and no build directory and no .venv; the test then runs
`make build` there, `contend help`, `--help` of every command help lists,
and `contend report` on a results file, with a PATH that holds nothing of
this checkout."""

import gzip
import os
import re
import shutil
import subprocess

import pytest
from conftest import ROOT, run_bounded


def clean_copy(dest):
    files = subprocess.run(
        ["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for f in filter(None, files):
        src = ROOT / f.decode()
        if src.is_file():  # a tracked file deleted in the working tree is skipped
            (dest / f.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f.decode())


def test_make_build_alone_sets_up_every_command(tmp_path):
    if not shutil.which("git") or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: cannot tell which files a clone would hold")
    src = tmp_path / "contend"
    clean_copy(src)
    assert not (src / ".venv").exists() and not (src / "build").exists()
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if str(ROOT) not in p
    )
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    b = run_bounded(["make", "-C", src, "build"], timeout=1500, env=env)
    assert b.returncode == 0, b.stdout[-3000:] + b.stderr[-3000:]
    contend = src / "build" / "bin" / "contend"

    h = run_bounded([contend, "help"], timeout=60, env=env)
    assert h.returncode == 0, h.stderr
    commands = h.stdout.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^  ([a-z][a-z-]*)\s", commands, flags=re.MULTILINE)
    assert "[not installed]" not in commands, commands
    for python_command in ("report", "compare", "significance", "plot", "html", "cluster"):
        assert python_command in listed, h.stdout
    for command in listed:
        r = run_bounded([contend, command, "--help"], timeout=120, env=env)
        assert r.returncode == 0, f"contend {command} --help: {r.returncode}\n{r.stderr[-2000:]}"
        assert r.stdout.strip(), f"contend {command} --help printed nothing"

    results = tmp_path / "load.json"
    with gzip.open(ROOT / "tests/fixtures/results/load_vn1_n10.json.gz", "rb") as f:
        results.write_bytes(f.read())
    r = run_bounded([contend, "report", results], timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "Congestion Impact" in r.stdout or "impact" in r.stdout.lower(), r.stdout[:2000]
