#!/usr/bin/env bash
# Installs what contend needs to build and test, when it is missing:
# Debian packages via apt-get (when running as root), Python packages into
# a local virtual environment (.venv).  Idempotent; fast when all is there.
#   scripts/bootstrap.sh build   compiler, CMake, Open MPI
#   scripts/bootstrap.sh test    + MPICH, clang-format, iproute2, HDF5, Chromium, .venv
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
if [[ $what == test ]]; then
  need mpicc.mpich mpich libmpich-dev
  need clang-format clang-format
  need ip iproute2
  need tc iproute2
  need chromium chromium
  python3 -c 'import venv, ensurepip' 2>/dev/null || pkgs+=(python3-venv)
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

if [[ $what == test ]]; then
  if [[ ! -x .venv/bin/python ]]; then
    echo "[bootstrap] creating .venv" >&2
    python3 -m venv .venv
  fi
  stamp=.venv/.contend-installed
  if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
    echo "[bootstrap] installing Python packages into .venv" >&2
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q -e '.[test]'
    touch "$stamp"
  fi
fi
