"""A stand-in for the part of Spack's package API that the recipe
packaging/spack/contend/package.py uses, so that a test can import the
recipe and run its install the way `spack install` would, for real, into a
prefix (Spack itself cannot be installed here).

What it mimics (Spack's CMakePackage): the directives record what the
class body declares; the phases cmake, build and install run in that
order, each preceded by its run_before and followed by its run_after
callbacks (in the order the class defines them); cmake is given Spack's
standard arguments and then cmake_args(); build makes the default target
and install the `install` target, in a build directory under the stage.
Every command run, the phases' and those the recipe makes itself
(spec["python"].command), is appended to Package.steps as (what, argv).
Anything of the API the recipe uses that is not here fails its import or
its call, so the test fails instead of passing on a stand-in."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path


class Prefix(str):
    """A path whose attributes are its subdirectories (prefix.share.man)."""

    def __getattr__(self, name: str) -> Prefix:
        if name.startswith("__"):
            raise AttributeError(name)
        return Prefix(os.path.join(self, name))

    def join(self, name: str) -> Prefix:
        return Prefix(os.path.join(self, name))


class Executable:
    """spec[...].command: runs the program, records it, raises on failure."""

    def __init__(self, path, steps: list, name: str):
        self.path, self.steps, self.name = str(path), steps, name

    def __call__(self, *args):
        argv = [self.path, *map(str, args)]
        self.steps.append((self.name, argv))
        r = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {r.returncode}\n{r.stderr[-3000:]}")
        return r.stdout


class Spec:
    """The concrete spec: variant values and the dependencies used."""

    def __init__(self, variants: dict, deps: dict):
        self.variants = {k: types.SimpleNamespace(value=v) for k, v in variants.items()}
        self.deps = deps

    def __getitem__(self, name: str):
        return self.deps[name]

    def satisfies(self, constraint: str) -> bool:
        """Only what the recipe asks: one +variant or ~variant."""
        sign, name = constraint[0], constraint[1:]
        if sign not in "+~" or name not in self.variants:
            raise ValueError(f"stand-in satisfies(): cannot evaluate {constraint!r}")
        return self.variants[name].value == (sign == "+")


def _directive(kind: str):
    def record(*args, **kwargs):
        _DECLARED.append((kind, args, kwargs))

    return record


_DECLARED: list = []


def _callback(when: str, phase: str):
    def mark(fn):
        fn._spack_callback = (when, phase)
        return fn

    return mark


class CMakePackage:
    phases = ("cmake", "build", "install")
    build_type = "RelWithDebInfo"  # Spack's default build_type variant
    jobs = int(os.environ.get("JOBS", "2"))

    def __init__(self, spec: Spec, prefix: Path, source: Path, stage: Path, steps: list):
        self.spec, self.prefix, self.steps = spec, Prefix(prefix), steps
        self.stage = types.SimpleNamespace(path=str(stage), source_path=str(source))
        self.build_directory = os.path.join(stage, "spack-build")

    # the helpers cmake_args() calls
    @staticmethod
    def define(var: str, value) -> str:
        if isinstance(value, bool):
            return f"-D{var}:BOOL={'ON' if value else 'OFF'}"
        return f"-D{var}:STRING={value}"

    def define_from_variant(self, var: str, variant: str) -> str:
        return self.define(var, self.spec.variants[variant].value)

    @property
    def std_cmake_args(self) -> list:
        return [
            "-G",
            "Unix Makefiles",
            self.define("CMAKE_INSTALL_PREFIX", self.prefix),
            self.define("CMAKE_BUILD_TYPE", self.build_type),
            self.define("CMAKE_INSTALL_RPATH_USE_LINK_PATH", False),
            self.define("CMAKE_INSTALL_RPATH", f"{self.prefix}/lib;{self.prefix}/lib64"),
        ]

    def _run(self, what: str, argv: list, timeout: float = 300) -> None:
        self.steps.append((what, argv))
        r = subprocess.run(
            argv,
            cwd=self.build_directory,
            capture_output=True,
            text=True,
            check=False,
            timeout=timeout,
        )
        if r.returncode != 0:
            raise RuntimeError(f"{what}: {' '.join(argv)}: exit {r.returncode}\n{r.stdout[-3000:]}")

    # the phases
    def cmake(self, spec, prefix):
        os.makedirs(self.build_directory, exist_ok=True)
        args = self.std_cmake_args + self.cmake_args() + [self.stage.source_path]
        self._run("cmake", ["cmake", *args])

    def build(self, spec, prefix):
        self._run("build", ["make", f"-j{self.jobs}"], timeout=3600)

    def install(self, spec, prefix):
        self._run("install", ["make", "install"])

    def do_install(self) -> None:
        """What `spack install` runs once the dependencies are there."""
        callbacks = [
            getattr(self, name)
            for cls in reversed(type(self).__mro__)
            for name, fn in vars(cls).items()
            if hasattr(fn, "_spack_callback")
        ]
        for phase in self.phases:
            for fn in callbacks:
                if fn._spack_callback == ("before", phase):
                    fn()
            getattr(self, phase)(self.spec, self.prefix)
            for fn in callbacks:
                if fn._spack_callback == ("after", phase):
                    fn()


def load_recipe(path: Path):
    """Imports the recipe with this stand-in as spack.package; returns its
    package class and the directives its body declared [(kind, args, kw)]."""
    api = types.ModuleType("spack.package")
    api.CMakePackage = CMakePackage
    for kind in ("version", "variant", "depends_on", "extends", "conflicts"):
        setattr(api, kind, _directive(kind))
    api.run_before = lambda phase: _callback("before", phase)
    api.run_after = lambda phase: _callback("after", phase)
    api.__all__ = [n for n in vars(api) if not n.startswith("_")]
    spack = types.ModuleType("spack")
    spack.package = api
    saved = {k: sys.modules.get(k) for k in ("spack", "spack.package")}
    sys.modules.update({"spack": spack, "spack.package": api})
    _DECLARED.clear()
    try:
        spec = importlib.util.spec_from_file_location("contend_spack_recipe", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    (cls,) = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and issubclass(v, CMakePackage) and v is not CMakePackage
    ]
    return cls, list(_DECLARED)


def default_variants(declared: list) -> dict:
    """{variant: default} of the declared variants."""
    return {args[0]: kw["default"] for kind, args, kw in declared if kind == "variant"}
