#!/usr/bin/env bash
# The demo: `contend load` on this one host, 10 virtual nodes of 1 rank
# (2 canary nodes, 2 nodes for each of the 4 congestors), short timeouts so
# it ends in about a minute on 2 cores.  Prints the table, writes the JSON.
set -euo pipefail
contend=${1:-build/bin/contend}
out=${CONTEND_DEMO_OUT:-contend-demo.json}
ranks=${CONTEND_DEMO_RANKS:-10}
mpirun=$(command -v mpirun.openmpi || command -v mpirun)
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
echo "[demo] one host, ${ranks} ranks as ${ranks} virtual nodes (shared memory: the congestion" >&2
echo "[demo] seen here is CPU and memory sharing, not a network; see docs for real clusters)" >&2
"$mpirun" -n "$ranks" --oversubscribe "$contend" load --virtual-nodes 1 --timeout 4 \
  --seed "${CONTEND_DEMO_SEED:-2019}" -o "$out"
echo "[demo] results: $out (read them with: $contend report $out)" >&2
