#!/usr/bin/env bash
# Configures build-asan/ (clang 14, ASan + UBSan + libFuzzer coverage, tests on) once; shared by
# scripts/sanitize.sh and scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build-asan/CMakeCache.txt ] && exit 0
source scripts/ccache-env.sh
CC=clang-14 CXX=clang++-14 cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="-O1 -gline-tables-only" \
  -DNPUSIM_FUZZ=ON "${CCACHE_LAUNCHER[@]}" >/dev/null
