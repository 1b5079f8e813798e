#!/usr/bin/env bash
# Builds npusim and runs the whole test suite (GoogleTest through CTest, one process per test).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
