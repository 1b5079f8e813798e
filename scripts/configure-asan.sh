#!/usr/bin/env bash
# Configures a clang 14 build with the sanitizers, tests on:
#   scripts/configure-asan.sh          build-asan/: ASan + UBSan at -O2 (scripts/sanitize.sh)
#   scripts/configure-asan.sh --fuzz   build-fuzz/: the same with libFuzzer's coverage at -O1 (scripts/fuzz.sh)
# Two folders, because the fuzzer's coverage hooks (a call at every comparison) and -O1 make the
# test suite about 3.7 times slower: a sanitizer pass in build-fuzz/ spent 35 s where build-asan/
# spends 9.5 s on the DRAM engine's equivalence test.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ccache-env.sh
if [ "${1:-}" = "--fuzz" ]; then
  dir=build-fuzz options=(-DNPUSIM_FUZZ=ON -DNPUSIM_SANITIZE=OFF) opt="-O1"
else
  dir=build-asan options=(-DNPUSIM_SANITIZE=ON -DNPUSIM_FUZZ=OFF) opt="-O2"
fi
# Configured every time (a second or two): the options above win over an older folder's cache.
CC=clang-14 CXX=clang++-14 cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$opt -gline-tables-only" \
  "${options[@]}" "${CCACHE_LAUNCHER[@]}" >/dev/null
