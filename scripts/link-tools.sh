#!/usr/bin/env bash
# Makes the Python commands (contend-report, contend-cluster, ...) of .venv
# reachable from the build's bin directory, where `contend COMMAND` looks
# for contend-COMMAND before PATH.  No-op without .venv.
set -euo pipefail
bin=$1
venv="$(cd "$(dirname "$0")/.." && pwd)/.venv/bin"
[[ -d $venv ]] || exit 0
for tool in "$venv"/contend-*; do
  [[ -x $tool ]] && ln -sf "$tool" "$bin/$(basename "$tool")"
done
exit 0
