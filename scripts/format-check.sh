#!/usr/bin/env bash
# clang-format for C, ruff for Python: the checks CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
while IFS= read -r f; do
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then
    echo "format: $f is not clang-formatted (run: clang-format -i $f)" >&2
    bad=1
  fi
done < <(git ls-files '*.c' '*.h' 2>/dev/null || find include src apps tests bench -name '*.[ch]')
# the bench commands are Python scripts without a .py suffix: named one by
# one, as ruff finds only *.py in a directory
bench_py=()
for f in bench/*; do
  [[ -f $f && $(head -c 64 "$f") == '#!'*python* ]] && bench_py+=("$f")
done
if [[ -x .venv/bin/ruff ]]; then
  .venv/bin/ruff check --quiet python tests bench "${bench_py[@]}" || bad=1
  .venv/bin/ruff format --check --quiet python tests bench "${bench_py[@]}" || bad=1
fi
exit $bad
