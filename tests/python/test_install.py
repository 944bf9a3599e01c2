"""A prefix install works with nothing of the source tree: `cmake --install`
of the build ($CONTEND_BUILD) and `pip install --prefix` of the Python
layer into one prefix, the prefix copied elsewhere, the source copy it was
installed from and the first prefix deleted; then every command, the man
pages, `contend version`, a load run and its report run from the copy,
with a scrubbed environment and the working directory outside the repo.

The Python layer's interpreter is a "site Python": a venv that sees the
packages of this repo's .venv (numpy, pandas, ...; a .pth file) but not
its editable install of contend, so contend can only come from the
prefix (the binary puts the prefix's site-packages on PYTHONPATH for the
commands beside it)."""

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import BUILD, ROOT, run_bounded
from installkit import copy_sources, is_git_checkout, scrubbed_env, site_python

PARTS = ("hdf5", "simulator", "throttle", "otf2")


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """The relocated prefix, its environment and the site Python."""
    if not is_git_checkout():
        pytest.skip("not a git checkout: cannot tell which files a clone would hold")
    if not (BUILD / "bin" / "contend").exists() or not (BUILD / "man" / "contend.1").exists():
        pytest.fail(f"{BUILD}: no contend or no man pages built (make build, or set CONTEND_BUILD)")
    tmp = tmp_path_factory.mktemp("install")
    src, first, final = tmp / "src", tmp / "prefix-first", tmp / "elsewhere" / "contend"
    # what pip needs: pyproject.toml, setup.cfg, python/, schemas/
    copy_sources(src, "pyproject.toml", "setup.cfg", "python", "schemas")
    py = site_python(tmp / "sitepy")
    pip = run_bounded(
        [py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--ignore-installed", "--prefix", first, src],
        timeout=300,
    )
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    assert (first / "bin" / "contend").exists()  # the Python launcher, for now
    launcher = tmp / "launcher" / "contend"
    launcher.parent.mkdir()
    shutil.copy2(first / "bin" / "contend", launcher)
    assert not (src / "build").exists()  # setup.cfg: pip stays out of CMake's build/
    inst = run_bounded(["cmake", "--install", BUILD, "--prefix", first], timeout=300)
    assert inst.returncode == 0, inst.stdout[-3000:] + inst.stderr[-3000:]
    shutil.copytree(first, final, symlinks=True)
    shutil.rmtree(first)
    shutil.rmtree(src)
    home = tmp / "home"
    home.mkdir()
    (home / "run").mkdir()
    return {
        "P": final,
        "env": scrubbed_env(home),
        "cwd": home / "run",
        "py": py,
        "launcher": launcher,
    }


def run(prefix, *args, env=None, timeout=120):
    return run_bounded(
        [prefix["P"] / "bin" / "contend", *args],
        timeout=timeout,
        cwd=prefix["cwd"],
        env=env or prefix["env"],
    )


def listed_commands(help_text: str) -> list[str]:
    block = help_text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^  ([a-z][a-z-]*)\s", block, flags=re.MULTILINE)


def test_layout(prefix):
    P = prefix["P"]
    for rel in (
        "bin/contend",
        "lib/libcontend-throttle.so",
        "lib/libcontend-record.so",
        "share/contend/schemas/contend-results.schema.json",
        "share/contend/data/gpcnet_sc19_table2.csv",
        "share/contend/examples/slurm",
        "share/man/man1/contend.1",
        "share/man/man1/contend-load.1",
        "bin/contend-report",
    ):
        assert (P / rel).exists(), rel
    assert (P / "bin" / "contend").read_bytes()[:4] == b"\x7fELF"  # CMake's binary won
    shebang = (P / "bin" / "contend-report").read_text().splitlines()[0]
    assert shebang == f"#!{prefix['py']}", shebang
    (site,) = P.glob("lib/python3*/site-packages")
    assert (site / "contend" / "schemas" / "contend-results.schema.json").is_file()
    # nothing installed names the prefix it was installed into
    for f in (P / "bin").iterdir():
        assert b"prefix-first" not in f.read_bytes(), f


def test_version_shows_commit_mpi_and_parts(prefix):
    r = run(prefix, "version")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    version = re.search(r'^version = "(.*)"', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)[
        1
    ]
    assert lines[0] == f"contend {version}"
    assert re.search(r"^git commit: +([0-9a-f]{7,}|unknown \(.*\))$", r.stdout, re.MULTILINE), (
        r.stdout
    )
    assert re.search(
        r"^MPI library: +(Open MPI|MPICH|.*MPI).*\(compiled against ", r.stdout, re.MULTILINE
    )
    parts = dict(re.findall(r"^  (\w+) +(yes|no)\b", r.stdout, re.MULTILINE))
    assert set(parts) == set(PARTS), r.stdout
    assert parts["simulator"] == parts["throttle"] == "yes", r.stdout
    # the throttle library is found in the copied prefix, not where it was installed
    lib = re.search(r"^  throttle +yes: (.*)$", r.stdout, re.MULTILINE)[1]
    assert Path(lib) == (prefix["P"] / "lib" / "libcontend-throttle.so").resolve()
    # so is the trace recorder's (this build has OTF2)
    assert parts["otf2"] == "yes", r.stdout
    lib = re.search(r"^  otf2 +yes: .*\((.*)\)$", r.stdout, re.MULTILINE)[1]
    assert Path(lib) == (prefix["P"] / "lib" / "libcontend-record.so").resolve()
    assert run(prefix, "--version").stdout == r.stdout


def test_every_command_runs_from_the_prefix(prefix):
    h = run(prefix, "help")
    assert h.returncode == 0, h.stderr
    assert "[not installed]" not in h.stdout and "[not built]" not in h.stdout, h.stdout
    listed = listed_commands(h.stdout)
    assert {"load", "network", "report", "plot", "cluster", "version"} <= set(listed)
    for command in listed:
        r = run(prefix, command, "--help")
        assert r.returncode == 0, f"contend {command} --help: {r.returncode}\n{r.stderr[-2000:]}"
        assert r.stdout.strip(), f"contend {command} --help printed nothing"


def test_load_then_report(prefix):
    out = prefix["cwd"] / "X.json"
    load = run_bounded(
        ["mpirun", "-n", "4", prefix["P"] / "bin" / "contend", "load", "--virtual-nodes", "1"]
        + ["--canary-fraction", "0.5", "--canaries", "rr_lat", "--congestors", "pairwise_a2a"]
        + ["--timeout", "0.2", "--measurements", "2", "-q", "-o", out],
        timeout=180,
        cwd=prefix["cwd"],
        env=prefix["env"],
    )
    assert load.returncode == 0, load.stderr[-3000:]
    # the results name the build that made them, as `contend version` does
    commit = re.search(r"^git commit: +(\S+)", run(prefix, "version").stdout, re.MULTILINE)[1]
    tool = json.loads(out.read_text())["tool"]
    assert tool["git_commit"] == (None if commit == "unknown" else commit), tool
    rep = run(prefix, "report", out)
    assert rep.returncode == 0, rep.stderr[-3000:]
    assert "rr_lat" in rep.stdout and "Congestion Impact" in rep.stdout, rep.stdout[:2000]
    # the published data (GPCNeT's Table 2) comes with the installed package
    cmp = run(prefix, "compare", "--published", out)
    assert cmp.returncode == 0, cmp.stderr[-2000:]
    assert "rr_lat" in cmp.stdout and len(cmp.stdout.splitlines()) > 3, cmp.stdout


def test_man_pages(prefix):
    P = prefix["P"]
    man1 = P / "share" / "man" / "man1"
    listed = listed_commands(run(prefix, "help").stdout)
    for command in listed:
        assert (man1 / f"contend-{command}.1").is_file(), command
    env = dict(prefix["env"], MANWIDTH="120", MANPAGER="cat", PAGER="cat")
    if shutil.which("man"):
        r = run_bounded(["man", "-l", man1 / "contend-load.1"], env=env, cwd=prefix["cwd"])
        assert r.returncode == 0 and "--virtual-nodes" in r.stdout.replace("\u2010", "-"), r.stderr
        r = run_bounded(["man", "-M", P / "share" / "man", "contend-report"], env=env)
        assert r.returncode == 0 and "results" in r.stdout, r.stderr
    r = run_bounded(["groff", "-man", "-Tutf8", "-ww", man1 / "contend-load.1"], env=env)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    assert not r.stderr.strip(), r.stderr  # no groff warnings

    # the page lists exactly the options `contend load --help` lists
    def help_options(text):
        return set(re.findall(r"^ {1,8}(--?[A-Za-z0-9][\w.-]*)", text, re.MULTILINE))

    roff = (man1 / "contend-load.1").read_text()
    page = set(re.findall(r"^\.B (\\-\\?-?[A-Za-z0-9][\w.\\-]*)", roff, re.MULTILINE))
    page = {o.replace("\\-", "-").rstrip(",") for o in page}
    helped = {o.rstrip(",") for o in help_options(run(prefix, "load", "--help").stdout)}
    assert len(helped) > 50 and page == helped, page ^ helped


def test_python_launcher_finds_the_binary(prefix):
    """pip's `contend` script (replaced by CMake's binary in a shared
    prefix) runs the binary from CONTEND_BIN or PATH, else says why."""
    P, launcher = prefix["P"], prefix["launcher"]
    (site,) = P.glob("lib/python3*/site-packages")
    env = dict(prefix["env"], PYTHONPATH=str(site))
    r = run_bounded([launcher, "version"], env=env, cwd=prefix["cwd"])
    assert r.returncode == 2 and "CONTEND_BIN" in r.stderr, r.stderr
    on_path = dict(env, PATH=f"{P / 'bin'}:{env['PATH']}")
    r = run_bounded([launcher, "version"], env=on_path, cwd=prefix["cwd"])
    assert r.returncode == 0 and r.stdout.startswith("contend "), r.stderr
    named = dict(env, CONTEND_BIN=str(P / "bin" / "contend"))
    r = run_bounded([launcher, "report", "--help"], env=named, cwd=prefix["cwd"])
    assert r.returncode == 0 and "results" in r.stdout, r.stderr
