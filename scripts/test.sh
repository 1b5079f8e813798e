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
# The tests' temporary files and run folders (hundreds of MB a run) go to a folder of the build's
# own, emptied before each run, not to /tmp, where they would pile up run after run.
export TMPDIR="$PWD/build/test-tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
