#!/usr/bin/env bash
# Instruction counts of the DRAM engine's speed cases (docs/performance.md), under
# callgrind: instructions repeat from run to run where CPU time on a shared machine does not.
#   bench/dram_instructions.sh            one line per case: name, instructions
#   bench/dram_instructions.sh --branches one line per case: name, instructions, mispredicted
#                                         branches (cachegrind's branch simulation: where a burst
#                                         is bound by mispredictions, as on random reads, and the
#                                         machine has no hardware counters)
# Runs build/npusim and build/bench/bench_dram, or $NPUSIM and $BENCH_DRAM if set (saved copies
# of a binary before a change). Needs valgrind. Takes a few minutes (ResNet-50 under callgrind).
set -euo pipefail
cd "$(dirname "$0")/.."
branches=0
case "${1:-}" in
  "") ;;
  --branches) branches=1 ;;
  *) echo "usage: bench/dram_instructions.sh [--branches] (found '$1')" >&2; exit 2 ;;
esac
npusim=$(realpath "${NPUSIM:-build/npusim}")
bench=$(realpath "${BENCH_DRAM:-build/bench/bench_dram}")
for b in "$npusim" "$bench"; do
  [ -x "$b" ] || { echo "build first: cmake --build build --target npusim bench_dram (missing $b)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

count() {  # name, then the command; prints the name and the instructions of the whole process
  local name=$1
  shift
  [ -t 2 ] && printf '\r  valgrind %-40s' "$name" >&2
  if [ "$branches" = 1 ]; then
    valgrind --tool=cachegrind --branch-sim=yes --cache-sim=no --cachegrind-out-file="$work/cg.out" "$@" \
      >"$work/log" 2>&1 || { cat "$work/log" >&2; exit 1; }
  else
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$@" >"$work/log" 2>&1 ||
      { cat "$work/log" >&2; exit 1; }
  fi
  [ -t 2 ] && printf '\r%55s\r' '' >&2
  # callgrind's summary: Ir; cachegrind's with --branch-sim: Ir Bc Bcm Bi Bim (conditional and
  # indirect branches, and the mispredicted ones of each).
  printf '%-45s %s\n' "$name" "$(sed -n 's/^summary: //p' "$work/cg.out" |
    awk -v b="$branches" '{ if (b == 1) print $1, $3 + $5; else print $1 }')"
}

count "npusim run edge-m resnet50 greedy ops" "$npusim" run -c edge-m -w resnet50 -f greedy --trace-level ops \
  --out "$work/run"
for f in pattern:0 pattern:2 pattern:3 BM_DramTransfer/1048576/0/0 BM_DramTransfer/1048576/1/0; do
  count "bench_dram $f" "$bench" --benchmark_filter="$f" --benchmark_min_time=0.000001
done
