"""The Spack recipe (packaging/spack/contend/package.py) against
CMakeLists.txt: one variant per optional part (option CONTEND_WITH_X), each
passed as -DCONTEND_WITH_X by define_from_variant, with the same default;
MPI a dependency; the Python layer a variant that extends Python.  The
recipe is read with ast (Spack itself cannot be installed here).  And the
Lmod modulefile sets the variables an installed prefix needs.

Then the recipe's install is run for real: the recipe imported with a
stand-in for Spack's package API (spackkit.py) that runs its phases and
callbacks in Spack's order (cmake, build, install) into a temporary prefix,
and the prefix's `contend version` and `contend report` run.  This is the
one test that builds contend from scratch (a copy of the sources, default
variants, minutes on 2 cores); its stage is kept in $CONTEND_BUILD/spack-stage
so that a later run rebuilds only what changed."""

import ast
import re
import shutil
import types
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python before 3.11
    import tomli as tomllib

import pytest
from conftest import BUILD, ROOT, run_bounded
from installkit import copy_sources, is_git_checkout, scrubbed_env, site_python
from spackkit import Executable, Spec, default_variants, load_recipe

RECIPE = ROOT / "packaging" / "spack" / "contend" / "package.py"
# Variants without a CMake option, and why: the Python layer is installed
# by pip after the CMake install.
NOT_CMAKE = {"python"}


def cmake_parts() -> dict:
    """{option: default ON/OFF} of the optional parts, from option() calls."""
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.findall(r'^\s*option\((CONTEND_WITH_\w+)\s+"[^"]*"\s+(ON|OFF)\)', text, re.MULTILINE)
    return {name: default == "ON" for name, default in found}


def call_name(node: ast.Call) -> str:
    f = node.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def recipe():
    tree = ast.parse(RECIPE.read_text())
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    calls = [n for n in ast.walk(cls) if isinstance(n, ast.Call)]
    variants = {}
    for c in calls:
        if call_name(c) == "variant":
            kw = {k.arg: ast.literal_eval(k.value) for k in c.keywords}
            variants[ast.literal_eval(c.args[0])] = kw["default"]
    (args_fn,) = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "cmake_args"]
    defines = {}
    for c in ast.walk(args_fn):
        if isinstance(c, ast.Call) and call_name(c) == "define_from_variant":
            option, variant = (ast.literal_eval(a) for a in c.args)
            defines[option] = variant
    deps = [
        (
            call_name(c),
            ast.literal_eval(c.args[0]),
            {k.arg: ast.unparse(k.value) for k in c.keywords},
        )
        for c in calls
        if call_name(c) in ("depends_on", "extends")
    ]
    return cls, variants, defines, deps


def test_variants_and_cmake_options_correspond():
    cls, variants, defines, _ = recipe()
    assert [ast.unparse(b) for b in cls.bases] == ["CMakePackage"]
    parts = cmake_parts()
    assert {"CONTEND_WITH_HDF5", "CONTEND_WITH_SIM", "CONTEND_WITH_THROTTLE"} <= set(parts)
    # every CMake part has exactly one variant passed as its -D option ...
    assert set(defines) == set(parts), set(defines) ^ set(parts)
    # ... named after it, with the same default, and every other variant is known
    for option, variant in defines.items():
        assert option == f"CONTEND_WITH_{variant.upper()}", (option, variant)
        assert variants[variant] == parts[option], (option, variant)
    assert set(variants) == set(defines.values()) | NOT_CMAKE


def test_dependencies():
    _, _, _, deps = recipe()
    names = {(kind, spec.split("@")[0].split("+")[0]): kw for kind, spec, kw in deps}
    assert ("depends_on", "mpi") in names and "when" not in names[("depends_on", "mpi")]
    assert names[("extends", "python")]["when"] == "'+python'"
    assert names[("depends_on", "hdf5")]["when"] == "'+hdf5'"
    assert any(spec.startswith("hdf5+mpi") for _, spec, _ in deps)
    assert names[("depends_on", "otf2")]["when"] == "'+otf2'"
    # the Python layer's runtime dependencies are pyproject.toml's
    pyproject = (ROOT / "pyproject.toml").read_text()
    wanted = re.search(r"^dependencies = \[(.*)\]", pyproject, re.MULTILINE)[1]
    for dep, marker in re.findall(
        r'"([\w-]+)\s*(?:;\s*python_version\s*<\s*\\"3\.(\d+)\\")?', wanted
    ):
        kw = names.get(("depends_on", f"py-{dep.lower()}"))
        # an environment marker python_version < "3.N" is Spack's ^python@:3.(N-1)
        when = f"'+python ^python@:3.{int(marker) - 1}'" if marker else "'+python'"
        assert kw and kw.get("when") == when and "run" in kw.get("type", ""), (dep, kw)


def test_modulefile_sets_the_prefix_variables():
    lua = (ROOT / "packaging" / "modules" / "contend.lua").read_text()
    code = "\n".join(line.split("--", 1)[0] for line in lua.splitlines())
    paths = dict(re.findall(r'prepend_path\("(\w+)",\s*(pathJoin\(root, "[^"]+"\)|dir)\)', code))
    assert paths == {
        "PATH": 'pathJoin(root, "bin")',
        "MANPATH": 'pathJoin(root, "share/man")',
        "LD_LIBRARY_PATH": 'pathJoin(root, "lib")',
        "PYTHONPATH": "dir",
    }
    assert '"/lib/python3*/site-packages' in code


@pytest.fixture(scope="module")
def spack_install(tmp_path_factory):
    """The recipe's install with its default variants (+python among them)
    into a fresh prefix; returns (prefix, steps run, environment, cwd)."""
    if not is_git_checkout():
        pytest.skip("not a git checkout: cannot tell which files a clone would hold")
    if not BUILD.is_dir():
        pytest.fail(f"{BUILD}: no build directory (make build, or set CONTEND_BUILD)")
    mpicc = shutil.which("mpicc.openmpi") or shutil.which("mpicc")
    if not mpicc:
        pytest.fail("no mpicc on PATH")
    tmp = tmp_path_factory.mktemp("spack")
    stage = BUILD / "spack-stage"
    source = stage / "src"  # Spack's stage: a clone, here a copy of the next commit
    shutil.rmtree(source, ignore_errors=True)
    copy_sources(source)
    steps = []
    python = Executable(site_python(tmp / "sitepy"), steps, "python")
    cls, declared = load_recipe(RECIPE)
    spec = Spec(
        default_variants(declared),
        {
            "mpi": types.SimpleNamespace(mpicc=mpicc),
            "python": types.SimpleNamespace(command=python),
        },
    )
    pkg = cls(spec, tmp / "prefix", source, stage, steps)
    pkg.do_install()
    home = tmp / "home"
    (home / "run").mkdir(parents=True)
    return pkg.prefix, steps, scrubbed_env(home), home / "run"


def console_scripts() -> list:
    """The console scripts pip installs (pyproject.toml's [project.scripts])."""
    return list(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])


def test_spack_install_layout(spack_install):
    P, steps, _, _ = spack_install
    kinds = [what for what, _ in steps]
    assert kinds[:2] == ["cmake", "build"] and kinds.count("install") == 1, kinds
    pips = [argv for what, argv in steps if what == "python"]
    assert len(pips) == 1 and pips[0][1:4] == ["-m", "pip", "install"], pips
    assert f"--prefix={P}" in pips[0], pips
    # the C binary is P/bin/contend; every other console script is pip's
    scripts = console_scripts()
    assert "contend" in scripts and "contend-report" in scripts, scripts
    bindir = Path(P.bin)
    assert (bindir / "contend").read_bytes()[:4] == b"\x7fELF", "P/bin/contend is not the binary"
    for name in set(scripts) - {"contend"}:
        assert (bindir / name).read_bytes()[:2] == b"#!", name
    assert Path(P.lib.join("libcontend-throttle.so")).is_file()
    assert Path(P.share.man.man1.join("contend.1")).is_file()


def test_spack_prefix_contend_version(spack_install):
    P, _, env, cwd = spack_install
    r = run_bounded([P.bin.join("contend"), "version"], timeout=60, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("contend "), r.stdout
    assert re.search(r"^MPI library: +.*\(compiled against ", r.stdout, re.MULTILINE), r.stdout
    lib = re.search(r"^  throttle +yes: (.*)$", r.stdout, re.MULTILINE)
    assert lib and lib[1] == P.lib.join("libcontend-throttle.so"), r.stdout


def test_spack_prefix_contend_report(spack_install):
    P, _, env, cwd = spack_install
    fixture = ROOT / "tests" / "fixtures" / "results" / "load_vn1_n10.json.gz"
    r = run_bounded([P.bin.join("contend"), "report", fixture], timeout=120, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Congestion Impact" in r.stdout and "rr_lat" in r.stdout, r.stdout[:2000]
