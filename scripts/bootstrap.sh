#!/usr/bin/env bash
# Installs what contend needs to build and test, when it is missing:
# Debian packages via apt-get (when running as root), Python packages into
# a local virtual environment (.venv).  Idempotent; fast when all is there.
#   scripts/bootstrap.sh build   compiler, CMake, Open MPI, HDF5, Boost.Context, METIS, OTF2, and
#                                .venv with the Python layer (report, plot, html, ...),
#                                so that every `contend COMMAND` works after `make demo`
#   scripts/bootstrap.sh test    + MPICH, clang-format, clang with libFuzzer, iproute2,
#                                Chromium, Slurm and munge, pytest, ruff, ReFrame, Hypothesis
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-build}

pkgs=()
need() { # need COMMAND-or-FILE PACKAGE...
  local probe=$1
  shift
  if [[ $probe == /* ]]; then [[ -e $probe ]] && return 0; else command -v "$probe" >/dev/null 2>&1 && return 0; fi
  pkgs+=("$@")
}
need cc gcc
need make make
need cmake cmake
need mpicc.openmpi openmpi-bin libopenmpi-dev
need python3 python3
need ip iproute2
need unshare util-linux
need /usr/include/hdf5/openmpi/hdf5.h libhdf5-openmpi-dev # the HDF5 I/O back end, found at configure
need /usr/include/boost/context/detail/fcontext.hpp libboost-context-dev # user-level contexts of the in-process engines
need /usr/include/metis.h libmetis-dev # graph partitions of a fabric (contend topology partition)
need pkg-config pkg-config # finds OTF2 at configure
need /usr/include/otf2/otf2.h libopen-trace-format2-dev # OTF2 traces: contend record, the replay motif (found at configure)
need otf2-print otf2-tools                 # reading a recorded archive by hand (and in the tests)
python3 -c 'import venv, ensurepip' 2>/dev/null || pkgs+=(python3-venv) # .venv for the Python layer
if [[ $what == test ]]; then
  need mpicc.mpich mpich libmpich-dev
  need clang-format clang-format
  need clang clang # the fuzz harnesses (make fuzz, and briefly in make test)
  compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null ||
    pkgs+=(libclang-rt-14-dev) # libFuzzer and the sanitizers' runtimes
  need ip iproute2
  need tc iproute2
  need chromium chromium
  # a throw-away Slurm for tests/python/test_slurm_local.py (its own config,
  # key and daemons in a temp dir; the packages' system services are not used)
  need slurmctld slurm-wlm
  need munged munge
fi

if ((${#pkgs[@]})); then
  mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | sort -u)
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "[bootstrap] installing Debian packages: ${pkgs[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  else
    echo "contend: missing packages: ${pkgs[*]}" >&2
    echo "  install them (Debian/Ubuntu: sudo apt-get install ${pkgs[*]}) and run again." >&2
    exit 2
  fi
fi

# The Python layer (and, for tests, pytest and ruff) in .venv; a stamp per
# level, redone when pyproject.toml changes.
if [[ ! -x .venv/bin/python ]]; then
  echo "[bootstrap] creating .venv" >&2
  python3 -m venv .venv
fi
runtime=.venv/.contend-runtime tested=.venv/.contend-installed
if [[ $what == test && (! -f $tested || pyproject.toml -nt $tested) ]]; then
  echo "[bootstrap] installing Python packages into .venv (the Python layer, pytest, ruff)" >&2
  .venv/bin/pip install -q --upgrade pip >/dev/null
  .venv/bin/pip install -q -e '.[test]'
  touch "$tested" "$runtime"
elif [[ ! -f $runtime || pyproject.toml -nt $runtime ]]; then
  # not fatal for a build: the measurements and the emulated cluster need
  # only the standard library; report, plot, html and friends need these
  echo "[bootstrap] installing the Python layer into .venv" >&2
  if .venv/bin/pip install -q --upgrade pip >/dev/null && .venv/bin/pip install -q -e .; then
    touch "$runtime"
  else
    echo "[bootstrap] warning: could not install the Python layer (numpy, pandas, scipy," >&2
    echo "  matplotlib, jsonschema) into .venv: contend report/plot/html/compare will not" >&2
    echo "  work until '.venv/bin/pip install -e .' succeeds; measurements are unaffected" >&2
  fi
fi
