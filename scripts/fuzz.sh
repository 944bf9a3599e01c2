#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) in build-fuzz and
# runs each for a while: `make fuzz` (docs/fuzzing.md).
#   scripts/fuzz.sh [--seconds N | --runs N] [--ci] [HARNESS ...]
#     --seconds N   fuzzing time per harness (default 60; FUZZ_SECONDS)
#     --runs N      instead: N executions per harness (at most an hour each)
#     --ci          CI mode: N defaults to 5 and the stored corpus is not
#                   changed (findings still fail the run)
#     HARNESS       jobfile options topology topology_conf counters (all)
# Inputs: the hand-made seeds (fuzz/seeds/H), the stored corpus
# (fuzz/corpus/H) and the regression inputs (tests/fuzz/H).  Outside --ci,
# the inputs that add coverage are merged, minimised, into fuzz/corpus/H.
# A finding (crash, sanitizer report, leak, input slower than 1 s, more
# than 2 GiB) is saved under build-fuzz/findings/H/ and fails the run
# (exit 1); bad usage exits 2.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=${FUZZ_SECONDS:-} runs=-1 ci=0 harnesses=()
all=(jobfile options topology topology_conf counters)
while (($#)); do
  case $1 in
  --seconds)
    seconds=${2:-}
    shift 2 || true
    ;;
  --runs)
    runs=${2:-}
    seconds=3600
    shift 2 || true
    [[ $runs =~ ^[0-9]+$ && $runs -gt 0 ]] || {
      echo "fuzz: --runs '$runs': expected a whole number >= 1" >&2
      exit 2
    }
    ;;
  --ci) ci=1 && shift ;;
  -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' && exit 0 ;;
  -*) echo "fuzz: unknown option '$1' (see --help)" >&2 && exit 2 ;;
  *) harnesses+=("$1") && shift ;;
  esac
done
((${#harnesses[@]})) || harnesses=("${all[@]}")
[[ -z $seconds ]] && { ((ci)) && seconds=5 || seconds=60; }
[[ $seconds =~ ^[0-9]+$ && $seconds -gt 0 ]] || {
  echo "fuzz: --seconds '$seconds': expected a whole number of seconds >= 1" >&2
  exit 2
}
for h in "${harnesses[@]}"; do
  [[ " ${all[*]} " == *" $h "* ]] || {
    echo "fuzz: no harness '$h' (valid: ${all[*]})" >&2
    exit 2
  }
done
clang=$(command -v clang || command -v clang-14 || true)
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
if [[ -z $clang ]] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' |
  "$clang" -x c -fsanitize=fuzzer,address,undefined -o "$probe/probe" - 2>/dev/null; then
  echo "fuzz: needs clang with libFuzzer (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi

bdir=$root/build-fuzz
mpicc=$(command -v mpicc.openmpi || command -v mpicc)
mkdir -p "$bdir"
cmake -S . -B "$bdir" -DCMAKE_C_COMPILER="$clang" -DCONTEND_FUZZ=ON -DMPI_C_COMPILER="$mpicc" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$bdir/configure.log" 2>&1 || {
  echo "fuzz: cmake failed; see $bdir/configure.log" >&2
  exit 1
}
echo "fuzz: building the harnesses in $bdir (clang, ASan, UBSan)" >&2
cmake --build "$bdir" -j "${JOBS:-2}" --target fuzz_all >"$bdir/build.log" 2>&1 || {
  echo "fuzz: the build failed; see $bdir/build.log" >&2
  exit 1
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
printf '%-14s %10s %8s %6s %6s %9s %7s  %s\n' harness executions "exec/s" cov ft "slowest s" "time s" \
  result
for h in "${harnesses[@]}"; do
  find=$bdir/findings/$h && mkdir -p "$find"
  fresh=$(mktemp -d) && log=$bdir/fuzz-$h.log
  inputs=("$root/fuzz/seeds/$h")
  [[ -d $root/fuzz/corpus/$h ]] && inputs+=("$root/fuzz/corpus/$h")
  [[ -d $root/tests/fuzz/$h ]] && inputs+=("$root/tests/fuzz/$h")
  seed=() && ((ci)) && seed=(-seed=1) # CI: the same inputs on every run
  rc=0 t0=$SECONDS
  (cd "$fresh" && "$bdir/bin/fuzz_$h" -max_total_time="$seconds" -runs="$runs" -timeout=1 -rss_limit_mb=2048 \
    -dict="$root/fuzz/dict/$h.dict" -print_final_stats=1 -artifact_prefix="$find/" \
    -close_fd_mask=3 "${seed[@]}" "$fresh" "${inputs[@]}") >"$log" 2>&1 || rc=$?
  units=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  slowest=$(sed -n 's/^stat::slowest_unit_time_sec: *//p' "$log" | tail -1)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' "$log" | tail -1)
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' "$log" | tail -1)
  result=ok
  if ((rc)); then
    result="FINDING (exit $rc): $(ls -t "$find" | head -1), log $log"
    status=1
  fi
  printf '%-14s %10s %8s %6s %6s %9s %7s  %s\n' "$h" "${units:-?}" "${speed:-?}" "${cov:-?}" \
    "${ft:-?}" "${slowest:-?}" "$((SECONDS - t0))" "$result"
  if ((!ci && !rc)); then
    # keep what adds coverage: a minimised merge of the stored corpus and the new inputs
    min=$(mktemp -d) && mkdir -p "$root/fuzz/corpus/$h"
    "$bdir/bin/fuzz_$h" -merge=1 -timeout=1 -close_fd_mask=3 "$min" "$root/fuzz/corpus/$h" \
      "$fresh" >>"$log" 2>&1
    rm -rf "$root/fuzz/corpus/$h" && mv "$min" "$root/fuzz/corpus/$h"
  fi
  rm -rf "$fresh"
done
((status)) && echo "fuzz: findings under $bdir/findings/ (replay one: $bdir/bin/fuzz_H FILE)" >&2
exit $status
