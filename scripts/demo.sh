#!/usr/bin/env bash
# The demo: `contend load` on this one host, in about 2 minutes on 2 cores.
# Prints the results tables (Congestion Impact last) and writes the JSON.
#
# Cluster mode (as root on Linux with working network namespaces): an emulated
# cluster of 12 nodes on 3 leaf switches (contend cluster, see
# docs/emulated-cluster.md) with 100 Mbit/s node links and 8:1 tapered leaf
# uplinks, so the congestors fill real (shaped, bounded) queues that the
# canaries' messages cross; the cluster is always removed at the end.
# Virtual mode (otherwise): 10 ranks as 10 virtual nodes over shared memory,
# where the slow-down comes from sharing CPU and memory, not from a network.
#
# Usage: scripts/demo.sh [PATH/TO/contend]
# Environment: CONTEND_DEMO_MODE=auto|cluster|virtual (auto: cluster if it can
# be set up, else virtual), CONTEND_DEMO_OUT (contend-demo.json),
# CONTEND_DEMO_SEED (2019), CONTEND_DEMO_TIMEOUT (per test and phase, s),
# CONTEND_DEMO_RANKS (virtual mode, 10), CONTEND_DEMO_NODES (12),
# CONTEND_DEMO_LEAVES (3), CONTEND_DEMO_NODE_RATE (100mbit),
# CONTEND_DEMO_TAPER (8:1), CONTEND_DEMO_QUEUE (512kb) for cluster mode.
set -euo pipefail
contend=${1:-build/bin/contend}
out=${CONTEND_DEMO_OUT:-contend-demo.json}
seed=${CONTEND_DEMO_SEED:-2019}
mode=${CONTEND_DEMO_MODE:-auto}
say() { echo "[demo] $*" >&2; }
die() { echo "[demo] error: $*" >&2; exit 2; }

case $mode in
  auto | cluster | virtual) ;;
  *) die "CONTEND_DEMO_MODE must be auto, cluster or virtual (got '$mode')" ;;
esac
[[ -x $contend ]] || die "$contend not found or not executable: build it first (make build)"
contend=$(cd "$(dirname "$contend")" && pwd)/$(basename "$contend")
case $out in /*) ;; *) out=$PWD/$out ;; esac
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# Why the emulated cluster cannot be used here ("" if it can be tried).
cluster_unavailable() {
  [[ $(uname -s) == Linux ]] || { echo "not Linux"; return; }
  [[ $(id -u) == 0 ]] || { echo "not root (network namespaces need root)"; return; }
  local t
  for t in ip tc unshare; do
    command -v "$t" >/dev/null || { echo "'$t' not found (iproute2, util-linux)"; return; }
  done
  command -v mpirun.openmpi >/dev/null || command -v mpirun >/dev/null ||
    { echo "no Open MPI mpirun"; return; }
  ip netns list >/dev/null 2>&1 || { echo "'ip netns' does not work here"; return; }
  "$contend" cluster --help >/dev/null 2>&1 ||
    { echo "'contend cluster' unavailable (build/bin/contend-cluster missing: run make build)"; return; }
  echo ""
}

run_virtual() {
  local ranks=${CONTEND_DEMO_RANKS:-10} mpirun
  mpirun=$(command -v mpirun.openmpi || command -v mpirun) || die "no mpirun found"
  say "mode: virtual nodes: ${ranks} ranks as ${ranks} virtual nodes on this host (shared"
  say "memory: the congestion seen here is CPU and memory sharing, not a network)"
  fg_run "$mpirun" -n "$ranks" --oversubscribe "$contend" load --virtual-nodes 1 \
    --timeout "${CONTEND_DEMO_TIMEOUT:-4}" --seed "$seed" -o "$out"
}

prefix=demo$(($$ % 100000))
cluster_up=0
child=
cleanup() {
  if [[ $cluster_up == 1 ]]; then
    cluster_up=0
    "$contend" cluster down --prefix "$prefix" >&2 ||
      say "warning: 'contend cluster down --prefix $prefix' failed"
  fi
}
on_signal() {
  if [[ -n $child ]]; then kill -TERM "$child" 2>/dev/null || true; fi
  exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM
trap 'on_signal 129' HUP

# Runs a command in the background and waits for it, so that a signal reaches
# the traps above at once (bash defers traps while a foreground command runs).
fg_run() {
  local rc=0
  "$@" &
  child=$!
  wait "$child" || rc=$?
  child=
  return $rc
}

# Tries to create the cluster; returns non-zero if it cannot ('up' then leaves
# nothing behind: it rolls back on failure or interruption by itself).
cluster_start() {
  local nodes=${CONTEND_DEMO_NODES:-12} leaves=${CONTEND_DEMO_LEAVES:-3}
  fg_run "$contend" cluster up --prefix "$prefix" --nodes "$nodes" --leaves "$leaves" \
    --node-rate "${CONTEND_DEMO_NODE_RATE:-100mbit}" --taper "${CONTEND_DEMO_TAPER:-8:1}" \
    --queue "${CONTEND_DEMO_QUEUE:-512kb}" >&2 || return 1
  cluster_up=1
}

run_cluster() {
  say "mode: emulated cluster '$prefix': one network namespace per node, shaped links"
  say "(MPI over TCP: the congestion seen here is queueing on the emulated network)"
  # Large congestor messages fill the links; few iterations per measurement so
  # the congestors notice soon that the canaries are done.
  local big=1048576 rc=0
  fg_run "$contend" cluster run --prefix "$prefix" -- "$contend" load \
    --timeout "${CONTEND_DEMO_TIMEOUT:-4}" --seed "$seed" -o "$out" \
    --rr_lat.rings 4 --rr_lat.iters 100 --rr_lat.warmup 20 \
    --rr_bw_sync.rings 2 --allreduce.iters 50 \
    --pairwise_a2a.msg_bytes $big --pairwise_a2a.iters 1 \
    --p2p_incast.msg_bytes $big --p2p_incast.iters 2 \
    --rma_put_incast.msg_bytes $big --rma_put_incast.iters 2 \
    --rma_get_bcast.msg_bytes $big --rma_get_bcast.iters 2 || rc=$?
  if [[ $rc == 0 ]]; then
    say "leaf uplinks during the run (overlimits: the uplink held packets back; drops: its queue was full):"
    "$contend" cluster stats --prefix "$prefix" | sed -n '2,3p;/uplink/p' >&2
  fi
  return $rc
}

used=virtual
if [[ $mode != virtual ]]; then
  why=$(cluster_unavailable)
  if [[ -z $why ]] && cluster_start; then
    used=cluster
  elif [[ $mode == cluster ]]; then
    die "CONTEND_DEMO_MODE=cluster but the emulated cluster cannot be used: ${why:-setup failed}"
  else
    say "emulated cluster unavailable (${why:-setup failed}); using virtual nodes"
  fi
fi
if [[ $used == cluster ]]; then run_cluster; else run_virtual; fi
say "used: $([[ $used == cluster ]] && echo "emulated cluster" || echo "virtual nodes")"
say "results: $out (read them with: $contend report $out)"
