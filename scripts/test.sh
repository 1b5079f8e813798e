#!/usr/bin/env bash
# Builds npusim and runs the whole test suite (GoogleTest through CTest, one process per test).
set -euo pipefail
cd "$(dirname "$0")/.."
# --sanitize: the ASan + UBSan suite and whole runs; --fuzz [SECONDS]: a short bounded fuzz pass
# of every reader (docs/fuzzing.md), in build-asan/ and build-fuzz/.
if [ "${1:-}" = "--sanitize" ]; then exec scripts/sanitize.sh; fi
if [ "${1:-}" = "--fuzz" ]; then exec scripts/fuzz.sh "${2:-10}"; fi
start=$SECONDS
scripts/build.sh
echo "test.sh: the build took $((SECONDS - start)) s" >&2
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
