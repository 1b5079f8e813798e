#!/usr/bin/env bash
# Lays out every C++ file of the tree by .clang-format (Google's style at 120 columns).
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list the files that differ from the layout; exit 1 if any do
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cpp' '*.h')
if [ "${1:-}" = "--check" ]; then
  "${CLANG_FORMAT:-clang-format}" --dry-run --Werror "${files[@]}" 2>&1 | sed -n 's/^\([^:]*\):[0-9]*:[0-9]*: error.*/\1/p' | sort -u |
    { differ=0; while read -r f; do echo "$f"; differ=1; done; exit $differ; }
else
  "${CLANG_FORMAT:-clang-format}" -i "${files[@]}"
fi
