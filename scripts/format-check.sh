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
if [[ -x .venv/bin/ruff ]]; then
  .venv/bin/ruff check --quiet python tests bench || bad=1
  .venv/bin/ruff format --check --quiet python tests bench || bad=1
fi
exit $bad
