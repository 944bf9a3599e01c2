# Spack recipe of contend (packaging/spack/contend/package.py): the binary,
# the PMPI throttle, the man pages, the schemas, data and examples
# (`cmake --install`), and with +python the Python layer (pip into the same
# prefix, before CMake's install so that the binary, not pip's launcher
# script, is P/bin/contend; `contend report` and the other Python commands
# work beside the binary).  One variant per optional part of CMakeLists.txt
# (CONTEND_WITH_<VARIANT>); tests/python/test_packaging.py checks that they
# correspond and runs the install's steps in Spack's order into a prefix.
# Use it from a Spack repository of your own:
#   spack repo create myrepo && cp -r packaging/spack/contend myrepo/packages/
#   spack repo add myrepo && spack install contend@main +python ^openmpi
# (or `spack develop contend@main` in a clone).
from spack.package import *


class Contend(CMakePackage):
    """Measure, reproduce and mitigate network congestion on HPC systems:
    GPCNeT-style canaries and congestors under MPI, job-file workloads, a
    simulated fabric, a PMPI throttle, and a Python analysis layer."""

    # The project's public repository: set both before use (a local clone
    # works too: `spack develop --path CLONE contend@main`).
    homepage = "https://example.org/contend"
    git = "https://example.org/contend.git"

    version("main", branch="main")

    variant("hdf5", default=True, description="HDF5 I/O back end of the I/O motifs (parallel HDF5)")
    variant("sim", default=True, description="Simulated fabric (--engine sim, contend sim)")
    variant("throttle", default=True, description="PMPI throttle libcontend-throttle.so")
    variant("otf2", default=True, description="OTF2 traces: replay motif, contend record")
    variant("python", default=True, description="Python layer: report, plot, html, cluster, ...")

    depends_on("c", type="build")
    depends_on("cmake@3.16:", type="build")
    depends_on("mpi")
    depends_on("boost+context")  # user-level contexts of the in-process engines
    depends_on("metis")  # graph partitions of a fabric
    depends_on("hdf5+mpi", when="+hdf5")
    depends_on("otf2", when="+otf2")
    depends_on("pkgconfig", type="build", when="+otf2")
    # the man pages are made at build time from the commands' --help
    depends_on("python@3.9:", type="build")

    extends("python", when="+python")
    depends_on("python@3.9:", type=("build", "run"), when="+python")
    depends_on("py-pip", type="build", when="+python")
    depends_on("py-setuptools@61:", type="build", when="+python")
    depends_on("py-wheel", type="build", when="+python")
    depends_on("py-numpy", type="run", when="+python")
    depends_on("py-pandas", type="run", when="+python")
    depends_on("py-scipy", type="run", when="+python")
    depends_on("py-matplotlib", type="run", when="+python")
    depends_on("py-jsonschema", type="run", when="+python")
    depends_on("py-tomli", type="run", when="+python ^python@:3.10")  # tomllib before 3.11

    def cmake_args(self):
        return [
            self.define("MPI_C_COMPILER", self.spec["mpi"].mpicc),
            self.define_from_variant("CONTEND_WITH_HDF5", "hdf5"),
            self.define_from_variant("CONTEND_WITH_SIM", "sim"),
            self.define_from_variant("CONTEND_WITH_THROTTLE", "throttle"),
            self.define_from_variant("CONTEND_WITH_OTF2", "otf2"),
        ]

    @run_before("install")
    def install_python_layer(self):
        """pip install of pyproject.toml into this prefix (contend-report,
        ...).  Before CMake's install: pip also installs a `contend` script
        (pyproject.toml's console scripts), which the binary must replace,
        so that P/bin/contend is the binary.  After the build, so the man
        pages of the Python commands are short ones that point to
        `contend CMD --help`."""
        if self.spec.satisfies("+python"):
            python = self.spec["python"].command
            python(
                "-m",
                "pip",
                "install",
                "--no-deps",
                "--no-build-isolation",
                "--no-index",
                f"--prefix={self.prefix}",
                self.stage.source_path,
            )

    def setup_run_environment(self, env):
        env.prepend_path("MANPATH", self.prefix.share.man)
