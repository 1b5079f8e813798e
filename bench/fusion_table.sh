#!/usr/bin/env bash
# Fusion policies side by side: simulated cycles and DRAM traffic (MB = 10^6 bytes read + written,
# summary.json's dram_read_bytes + dram_write_bytes) of every workload under each policy.
# Usage: bench/fusion_table.sh [npusim binary] [configs] [policies] [workloads...]
#   defaults: build/npusim, "edge-s edge-m", "none greedy search", the zoo.
# Compare two builds by running it with each binary (e.g. main's and a branch's).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/npusim}
configs=${2:-edge-s edge-m}
policies=${3:-none greedy search}
shift $(($# < 3 ? $# : 3))
workloads=("$@")
[ ${#workloads[@]} -gt 0 ] || workloads=(small_cnn ds_cnn_kws mobilenet_v2 resnet18 resnet50 bert_base_layer vit_s16_block)
[ -x "$bin" ] || { echo "no npusim binary at $bin (build first: cmake --build build --target npusim)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
printf '%-40s %-7s' workload config
for f in $policies; do printf ' %14s %10s' "$f cycles" "$f MB"; done
printf '\n'
for w in "${workloads[@]}"; do
  for c in $configs; do
    printf '%-40s %-7s' "$(basename "$w")" "$c"
    for f in $policies; do
      if "$bin" run --config "$c" --workload "$w" --fusion "$f" --out "$out/run" >/dev/null 2>"$out/err"; then
        printf ' %14s %10s' "$(field "$out/run/summary.json" "d['cycles']")" \
          "$(field "$out/run/summary.json" "'%.3f' % ((d['dram_read_bytes'] + d['dram_write_bytes']) / 1e6)")"
      else
        printf ' %14s %10s' "error" "-"
      fi
      rm -rf "$out/run"
    done
    printf '\n'
  done
done
